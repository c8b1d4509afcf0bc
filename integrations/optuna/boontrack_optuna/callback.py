"""Summaries of a study while and after it is optimized: :class:`BoonCallback` and :func:`summarize_study`.

Optuna calls a callback after each finished trial and has no end-of-study hook: :class:`BoonCallback`
summarizes every ``every`` finished trials, and :meth:`BoonCallback.summarize` (or :func:`summarize_study`) once
after ``study.optimize`` returns.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from boontrack.integration import (
    CallbackOptions,
    InputError,
    JobResult,
    after_sweep,
    callback_options,
    mlflow_destination,
    option_name,
    resolve_direction,
    summarize_source,
)
from boontrack_optuna._source import OptunaSource, objective_names

#: Stands for the study's objective while the study is not known yet (when a callback is made).
_OBJECTIVE = "value"


def summarize_study(
    study: Any,
    *,
    val: str | None = None,
    test: str | None = None,
    n: int | Sequence[int] | None = None,
    group_by: str | Sequence[str] | None = None,
    seed_column: str | None = None,
    task_column: str | None = None,
    pick: str = "last",
    maximize: bool | None = None,
    n_resamples: int | str = "auto",
    confidence_level: float = 0.95,
    seed: int = 0,
    tracking_uri: str | None = None,
    out: str | Path | None = None,
    plots: bool = True,
    raise_on_error: bool = False,
    mlflow_experiment: str | None = None,
    **spec_options: Any,
) -> JobResult:
    """Summarize the trials of ``study`` and write the summary to ``out`` and/or an MLflow experiment.

    Call it once after ``study.optimize(...)`` returns (Optuna has no end-of-study hook). A rerun on unchanged
    trials writes nothing. Trials that did not complete (pruned, failed, running) are dropped and listed with
    their status. The keywords are those of every callback (see :mod:`boontrack.integration`).

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
    group_by, seed_column, task_column, pick, n_resamples, confidence_level, seed
        As the fields of :class:`boontrack.spec.Spec`. ``pick="best_val_step"`` takes the objective at each
        trial's best reported step (``trial.report``), which only the study's one objective has.
    maximize
        The direction of ``val``. None (default): the study's direction when ``val`` is an objective (a
        direction given that contradicts it is refused); else higher, except for a metric named like a loss.
    tracking_uri, mlflow_experiment
        Also write the summary as a summary run in this MLflow experiment (e.g. the one optuna-integration's
        ``MLflowCallback`` logs the trials to; it names it after the study) at this tracking URI (default:
        ``MLFLOW_TRACKING_URI``).
    out
        Directory that receives the summary (``summary.json``, ``report.md``, curves, plots).
    plots
        Render the PNG plots (most of the cost of a summary of few trials).
    raise_on_error
        False (default): nothing raises into the caller: trials that cannot be summarized (none completed, a
        missing metric, too few trials for ``n``) or a failed write warn
        :class:`~boontrack.exceptions.WriteBackWarning` and the result says so. True: they raise.
    **spec_options
        Any other field of :class:`boontrack.spec.Spec` (``estimator``, ``ci_method``, ``baseline``, ...).

    Returns
    -------
    JobResult
        Status (``"updated"``, ``"unchanged"``, ``"computed"`` without a destination, ``"write-failed"`` or
        ``"failed"``), the summary, where it went, and the error if any.

    Raises
    ------
    InputError
        Invalid options (a mistake in the call), also what the study makes of them: a study with several
        objectives and no ``val``, a direction that contradicts the study's, a loss without a direction.
    """
    options = callback_options(summarize_study, {**locals(), "val": val or _OBJECTIVE})
    also = mlflow_destination(mlflow_experiment, options.tracking_uri)
    # The study is given: what it makes of the options (its objective, its direction) is checked now.
    spec = dataclasses.replace(options.spec, val=val if val is not None else _one_objective(study))
    options = dataclasses.replace(options, spec=resolve_direction(_source(study), spec))
    return _summarize(study, options, val=options.spec.val, also=also)


def _source(study: Any) -> OptunaSource:
    return OptunaSource(study, sampler=type(study.sampler).__name__)


def _summarize(study: Any, options: CallbackOptions, *, val: str | None, also: dict[str, dict[str, Any]]) -> JobResult:
    """The summary of ``study`` under the one failure rule (:func:`~boontrack.integration.after_sweep`)."""

    def job() -> JobResult:
        spec = dataclasses.replace(options.spec, val=val if val is not None else _one_objective(study))
        return summarize_source(
            _source(study),
            spec,
            out=options.out,
            write_back=False,
            also=also,
            plots=options.plots,
            raise_on_write_error=options.raise_on_error,
        )

    return after_sweep(f"summarizing Optuna study {study.study_name!r}", job, raise_on_error=options.raise_on_error)


def _one_objective(study: Any) -> str:
    """The name of the study's objective; InputError for a study with several."""
    names = objective_names(study)
    if len(names) != 1:
        raise InputError(
            f"study {study.study_name!r} has {len(names)} objectives ({', '.join(names)}): name the validation one "
            f"with {option_name('val')}"
        )
    return names[0]


class BoonCallback:
    """A callback for ``study.optimize(..., callbacks=[...])``: summarize every ``every`` finished trials.

    Optuna has no end-of-study hook: call :meth:`summarize` once after ``optimize`` returns for the final
    summary (nothing is written when the trials did not change since the last one). Each summary goes where
    :func:`summarize_study` writes it; the keywords are its own, checked when the callback is made, and
    ``every``. Nothing raises into ``optimize`` (unless ``raise_on_error``): a summary that fails warns
    :class:`~boontrack.exceptions.WriteBackWarning`, and :attr:`result` says what happened. Trials finished in
    several threads (``n_jobs``) are counted once each, and summaries do not overlap.

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
        group_by: str | Sequence[str] | None = None,
        seed_column: str | None = None,
        task_column: str | None = None,
        pick: str = "last",
        maximize: bool | None = None,
        n_resamples: int | str = "auto",
        confidence_level: float = 0.95,
        seed: int = 0,
        tracking_uri: str | None = None,
        out: str | Path | None = None,
        plots: bool = True,
        raise_on_error: bool = False,
        every: int = 10,
        mlflow_experiment: str | None = None,
        **spec_options: Any,
    ) -> None:
        if isinstance(every, bool) or not isinstance(every, int) or every < 1:
            raise InputError(f"{option_name('every')} must be an integer >= 1, got {every!r}")
        # Mistakes in the options are found here, before the study runs (the objective's name may be unknown).
        self._options = callback_options(type(self).__init__, {**locals(), "val": val or _OBJECTIVE})
        self._val = val
        self._also = mlflow_destination(mlflow_experiment, self._options.tracking_uri)
        self.every = every
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
        """Summarize ``study`` now (e.g. once after ``optimize`` returns); never raises (unless
        ``raise_on_error``), see :attr:`result`.

        When the trials did not change since this callback's last summary, nothing is written and the result
        (status ``"unchanged"``) carries that summary.
        """
        with self._summary_lock:
            result = _summarize(study, self._options, val=self._val, also=self._also)
            previous = self.result
            if result.status == "unchanged" and previous is not None and previous.fingerprint == result.fingerprint:
                result = dataclasses.replace(result, summary=previous.summary)  # the summary it already made
            self.result = result
            return result
