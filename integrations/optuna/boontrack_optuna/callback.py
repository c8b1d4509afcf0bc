"""Summaries of a study while and after it is optimized: :class:`BoonCallback` and :func:`summarize_study`.

Optuna calls a callback after each finished trial and has no end-of-study hook: :class:`BoonCallback`
summarizes every ``every`` finished trials, and :meth:`BoonCallback.summarize` (or :func:`summarize_study`) once
after ``study.optimize`` returns.
"""

from __future__ import annotations

import dataclasses
import threading
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from boontrack._redact import describe_error
from boontrack.exceptions import InputError, WriteBackWarning
from boontrack_optuna._source import OptunaSource, objective_names

if TYPE_CHECKING:
    from boontrack.pipeline import JobResult
    from boontrack.spec import Spec


def summarize_study(
    study: Any,
    *,
    val: str | None = None,
    test: str | None = None,
    n: int | Sequence[int] | None = None,
    out: str | Path | None = None,
    mlflow_experiment: str | None = None,
    tracking_uri: str | None = None,
    plots: bool = True,
    raise_on_error: bool = False,
    **spec_options: Any,
) -> JobResult:
    """Summarize the trials of ``study`` and write the summary to ``out`` and/or an MLflow experiment.

    Call it once after ``study.optimize(...)`` returns (Optuna has no end-of-study hook). A rerun on unchanged
    trials writes nothing. Trials that did not complete (pruned, failed, running) are dropped and listed with
    their status.

    Parameters
    ----------
    study
        The ``optuna.Study``.
    val
        The validation metric: an objective (``value``; ``values_0``, ``values_1``, ... for several
        objectives; the study's metric names when it has them) or a numeric user attribute. Default: the
        study's objective when it has one (a study with several must name one).
    test
        The test metric, usually a user attribute (``trial.set_user_attr("test_acc", ...)``); None: ``val``.
    n
        Budgets for Boo_n. None (default): 1, 5 and 10, each where a group has at least that many trials.
    out
        Directory that receives the summary (``summary.json``, ``report.md``, curves, plots).
    mlflow_experiment, tracking_uri
        Also write the summary as a summary run in this MLflow experiment (e.g. the one optuna-integration's
        ``MLflowCallback`` logs the trials to; it names it after the study), through boontrack's MLflow sink.
    plots
        Render the PNG plots (most of the cost of a summary of few trials).
    raise_on_error
        False (default): nothing raises into the caller: trials that cannot be summarized (none completed, a
        missing metric, too few trials for ``n``) or a failed write warn
        :class:`~boontrack.exceptions.WriteBackWarning` and the result says so. True: they raise.
    **spec_options
        Any other field of :class:`boontrack.spec.Spec` (``estimator``, ``group_by``, ``seed_column``,
        ``pick="best_val_step"``, ...). ``maximize`` defaults to the study's direction when ``val`` is an
        objective.

    Returns
    -------
    JobResult
        Status (``"updated"``, ``"unchanged"``, ``"computed"`` without a destination, ``"write-failed"`` or
        ``"failed"``), the summary, where it went, and the error if any.

    Raises
    ------
    InputError
        Invalid spec options or destinations (a mistake in the call).
    """
    from boontrack.pipeline import summarize_after_sweep

    spec = study_spec(study, val=val, test=test, n=n, **spec_options)
    source = OptunaSource(
        study,
        sampler=type(study.sampler).__name__,
        mlflow_experiment=mlflow_experiment,
        tracking_uri=tracking_uri,
    )
    return summarize_after_sweep(
        source, spec, out=out, write_back=mlflow_experiment is not None, plots=plots, raise_on_error=raise_on_error
    )


def study_spec(
    study: Any, *, val: str | None, test: str | None, n: int | Sequence[int] | None, **spec_options: Any
) -> Spec:
    """The :class:`~boontrack.spec.Spec` for ``study``: ``val`` defaults to its one objective, ``maximize`` to the
    direction of the objective ``val`` names."""
    from boontrack.pipeline import budgets
    from boontrack.spec import Spec

    names = objective_names(study)
    if val is None:
        if len(names) != 1:
            raise InputError(
                f"study {study.study_name!r} has {len(names)} objectives ({', '.join(names)}): name the validation one with `val`"
            )
        val = names[0]
    if "maximize" not in spec_options and val in names:
        spec_options["maximize"] = study.directions[names.index(val)].name == "MAXIMIZE"
    return Spec(val=val, test=test, n=budgets(n), **spec_options).check()


class BoonCallback:
    """A callback for ``study.optimize(..., callbacks=[...])``: summarize every ``every`` finished trials.

    Optuna has no end-of-study hook: call :meth:`summarize` once after ``optimize`` returns for the final
    summary (nothing is written when the trials did not change since the last one). Each summary goes where
    :func:`summarize_study` writes it, with the same options. Nothing raises into ``optimize``: a summary that
    fails warns :class:`~boontrack.exceptions.WriteBackWarning`, and :attr:`result` says what happened.
    Trials finished in several threads (``n_jobs``) are counted once each, and summaries do not overlap.

    Examples
    --------
    >>> boon = BoonCallback(test="test_acc", every=10, out="boon-summary")  # doctest: +SKIP
    >>> study.optimize(objective, n_trials=50, callbacks=[boon])  # doctest: +SKIP
    >>> boon.summarize(study).summary  # doctest: +SKIP
    """

    def __init__(
        self,
        *,
        val: str | None = None,
        test: str | None = None,
        n: int | Sequence[int] | None = None,
        every: int = 10,
        out: str | Path | None = None,
        mlflow_experiment: str | None = None,
        tracking_uri: str | None = None,
        plots: bool = True,
        **spec_options: Any,
    ) -> None:
        if isinstance(every, bool) or not isinstance(every, int) or every < 1:
            raise InputError(f"every must be an integer >= 1, got {every!r}")
        from boontrack.pipeline import budgets
        from boontrack.spec import Spec

        # Mistakes in the spec are found here, before the study runs (the objective's name may still be unknown).
        Spec(val=val or "value", test=test, n=budgets(n), **spec_options).check()
        self.every = every
        self._options = dict(
            val=val,
            test=test,
            n=n,
            out=out,
            mlflow_experiment=mlflow_experiment,
            tracking_uri=tracking_uri,
            plots=plots,
            **spec_options,
        )
        self._finished = 0
        self._count_lock = threading.Lock()
        self._summary_lock = threading.Lock()
        #: The last summary's :class:`~boontrack.pipeline.JobResult` (None before the first).
        self.result: JobResult | None = None

    def __call__(self, study: Any, trial: Any) -> None:
        with self._count_lock:
            self._finished += 1
            due = self._finished % self.every == 0
        if due:
            self.summarize(study)

    def summarize(self, study: Any) -> JobResult:
        """Summarize ``study`` now (e.g. once after ``optimize`` returns); never raises, see :attr:`result`.

        When the trials did not change since this callback's last summary, nothing is written and the result
        (status ``"unchanged"``) carries that summary.
        """
        from boontrack.pipeline import JobResult

        with self._summary_lock:
            try:
                result = summarize_study(study, **self._options)
            except Exception as exc:  # anything at all: an exception here would stop the user's optimize
                message = f"summarizing Optuna study {study.study_name!r} failed: {describe_error(exc)}"
                warnings.warn(message, WriteBackWarning, stacklevel=2)
                result = JobResult("failed", None, "", "", message)
            previous = self.result
            if result.status == "unchanged" and previous is not None and previous.fingerprint == result.fingerprint:
                result = dataclasses.replace(result, summary=previous.summary)  # the summary it already made
            self.result = result
            return result
