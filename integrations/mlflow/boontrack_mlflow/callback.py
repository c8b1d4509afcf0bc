"""The post-sweep callback: summarize a finished MLflow sweep and write the summary back, in one call."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from boontrack.integration import CALLBACK_KEYWORDS, JobResult, after_sweep, callback_options, summarize_source
from boontrack_mlflow._client import import_mlflow, resolve_tracking_uri
from boontrack_mlflow._source import MlflowSource


def summarize_sweep(
    parent_run_id: str,
    *,
    val: str,
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
    experiment: str | None = None,
    **spec_options: Any,
) -> JobResult:
    """Summarize the child runs of ``parent_run_id`` and write the summary back as a child summary run.

    The last line of a sweep script. The summary run (named like ``boon test_acc V n=1,5,10``, tagged
    ``boontrack.role=summary``, the spec as params) carries the metrics ``boon/...``, the expected-validation
    curve as a step series over n, ``summary.json``, the report and the plots, and has one curve run per group
    under it; it is replaced when the runs change, repaired after an interrupted write, and left alone
    otherwise. The parent and trial runs are never modified. The keywords are those of every callback (see
    :mod:`boontrack.integration`).

    Parameters
    ----------
    parent_run_id
        The sweep's parent run; its active child runs are the trials.
    val, test
        Metric names of the validation and (optional) test scores.
    n
        Budgets for Boo_n. None (default): 1, 5 and 10, each where a group has at least that many runs (the
        others are left out and named in the summary's warnings); given, every group must have enough runs
        for every budget.
    group_by, seed_column, task_column, pick, n_resamples, confidence_level, seed
        As the fields of :class:`boontrack.spec.Spec` (``pick="best_val_step"``: each run's values at its
        best validation step).
    maximize
        True: higher is better; False: lower. None (default): higher, except that a metric named like a loss or
        an error (``val_loss``) raises :class:`~boontrack.exceptions.InputError` at once: MLflow does not record
        a metric's direction.
    tracking_uri
        The MLflow store of the sweep, where the summary run is written. Default: ``MLFLOW_TRACKING_URI`` (or
        :func:`mlflow.set_tracking_uri`); without any, or with a ``sqlite:`` URI whose file does not exist, the
        call raises :class:`~boontrack.exceptions.InputError` (a read never creates a store).
    out
        Also write the summary into this directory.
    plots
        Render the PNG plots.
    raise_on_error
        False (default): nothing raises into the finished sweep: runs that cannot be read or summarized (no
        runs, a missing metric, too few runs for the ``n`` given, a tracker failure) or a failed write-back
        warn :class:`~boontrack.exceptions.WriteBackWarning` and the result says so. True: they raise
        :class:`~boontrack.exceptions.InputError` or :class:`~boontrack.exceptions.BackendError`.
    experiment
        Name or id of the parent's experiment; found from the parent when omitted.
    **spec_options
        Any other field of :class:`boontrack.spec.Spec` (``estimator``, ``ci_method``, ``baseline``, ...).

    Returns
    -------
    JobResult
        Status (``"updated"``, ``"unchanged"``, ``"write-failed"`` or ``"failed"``), the summary, the
        fingerprint, where the summary goes, and the error if any.

    Raises
    ------
    InputError
        Invalid options (a mistake in the call); with ``raise_on_error=True`` also unknown experiment or
        parent run, a deleted parent, no usable runs, too few runs.
    BackendError
        With ``raise_on_error=True``: the runs could not be read or the summary not written.
    """
    options = callback_options(summarize_sweep, locals())
    # Mistakes in the call, found before anything is read, raise: no store to read, and a loss without a
    # direction (MLflow records none, so nothing else can tell it).
    tracking = resolve_tracking_uri(options.tracking_uri)
    spec = options.spec.resolve_direction()

    def job() -> JobResult:
        source = MlflowSource(experiment, parent=parent_run_id, tracking_uri=tracking)
        return summarize_source(
            source, spec, out=options.out, plots=options.plots, raise_on_write_error=options.raise_on_error
        )

    return after_sweep(f"summarizing the MLflow sweep {parent_run_id}", job, raise_on_error=options.raise_on_error)


@dataclass
class SweepHandle:
    """What :func:`sweep` yields: the parent run's id, and the summary once the block has exited."""

    parent_run_id: str
    experiment_id: str
    result: JobResult | None = None


@contextlib.contextmanager
def sweep(
    *,
    val: str,
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
    experiment: str | None = None,
    run_name: str | None = None,
    **spec_options: Any,
) -> Iterator[SweepHandle]:
    """Open a parent run for a sweep; on a clean exit, finish it and :func:`summarize_sweep` it.

    Inside the block, log each trial as a nested run (``with mlflow.start_run(nested=True): ...``). The parent
    is opened with MLflow's fluent API, so ``tracking_uri`` (when given) and ``experiment`` (a name, created if
    missing) become the process's active MLflow settings, as :func:`mlflow.set_tracking_uri` and
    :func:`mlflow.set_experiment` do. When the block raises, the parent ends as FAILED (KILLED on Ctrl-C), the
    exception propagates and nothing is summarized. The other keywords are :func:`summarize_sweep`'s, checked
    before the parent run is opened.

    Examples
    --------
    >>> with boontrack.mlflow.sweep(val="val_acc", test="test_acc", experiment="cnn") as handle:  # doctest: +SKIP
    ...     for seed in range(30):
    ...         with mlflow.start_run(nested=True):
    ...             mlflow.log_params({"seed": seed}); mlflow.log_metrics(train(seed))
    >>> handle.result.location  # doctest: +SKIP
    """
    arguments = dict(locals())
    callback_options(sweep, arguments)  # a mistake in the call is found before the sweep runs
    mlflow = import_mlflow()
    if tracking_uri:
        mlflow.set_tracking_uri(tracking_uri)
    if experiment:
        mlflow.set_experiment(experiment)
    parent = mlflow.start_run(run_name=run_name)
    handle = SweepHandle(parent_run_id=parent.info.run_id, experiment_id=parent.info.experiment_id)
    try:
        yield handle
    except BaseException as exc:
        mlflow.end_run("KILLED" if isinstance(exc, KeyboardInterrupt) else "FAILED")
        raise
    mlflow.end_run("FINISHED")
    keywords = {name: arguments[name] for name in CALLBACK_KEYWORDS}
    handle.result = summarize_sweep(
        handle.parent_run_id,
        **{**keywords, "tracking_uri": mlflow.get_tracking_uri()},
        experiment=handle.experiment_id,
        **spec_options,
    )
