"""The post-sweep callback: summarize a finished MLflow sweep and write the summary back, in one call."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from boontrack_mlflow._client import import_mlflow
from boontrack_mlflow._source import MlflowSource

if TYPE_CHECKING:
    from boontrack.pipeline import JobResult


def summarize_sweep(
    parent_run_id: str,
    *,
    val: str,
    test: str | None = None,
    n: int | Sequence[int] | None = None,
    tracking_uri: str | None = None,
    experiment: str | None = None,
    raise_on_error: bool = False,
    **spec_options: Any,
) -> JobResult:
    """Summarize the child runs of ``parent_run_id`` and write the summary back as a child summary run.

    The last line of a sweep script. The summary run (named like ``boon test_acc V n=1,5,10``, tagged
    ``boontrack.role=summary``, the spec as params) carries the metrics ``boon/...``, the expected-validation
    curve as a step series over n, ``summary.json``, the report and the plots, and has one curve run per group
    under it; it is replaced when the runs change, repaired after an interrupted write, and left alone
    otherwise. The parent and trial runs are never modified.

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
    tracking_uri
        Default: ``MLFLOW_TRACKING_URI`` (or :func:`mlflow.set_tracking_uri`); required without either.
    experiment
        Name or id of the parent's experiment; found from the parent when omitted.
    raise_on_error
        False (default): nothing raises into the finished sweep: runs that cannot be read or summarized (no
        runs, a missing metric, too few runs for the ``n`` given, a tracker failure) or a failed write-back
        warn :class:`~boontrack.exceptions.WriteBackWarning` and the result says so. True: they raise
        :class:`~boontrack.exceptions.InputError` or :class:`~boontrack.exceptions.BackendError`.
    **spec_options
        Any other field of :class:`boontrack.spec.Spec` (``estimator``, ``maximize``, ``group_by``,
        ``seed_column``, ``seed``, ``pick="best_val_step"``, ...).

    Returns
    -------
    JobResult
        Status (``"updated"``, ``"unchanged"``, ``"write-failed"`` or ``"failed"``), the summary, the
        fingerprint, where the summary goes, and the error if any.

    Raises
    ------
    InputError
        Invalid spec options (a mistake in the call); with ``raise_on_error=True`` also unknown experiment or
        parent run, a deleted parent, no usable runs, too few runs.
    BackendError
        With ``raise_on_error=True``: the runs could not be read or the summary not written.
    """
    from boontrack.pipeline import budgets, summarize_after_sweep
    from boontrack.spec import Spec

    spec = Spec(val=val, test=test, n=budgets(n), **spec_options)
    source = MlflowSource(experiment, parent=parent_run_id, tracking_uri=tracking_uri)
    return summarize_after_sweep(source, spec, raise_on_error=raise_on_error)


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
    experiment: str | None = None,
    run_name: str | None = None,
    tracking_uri: str | None = None,
    raise_on_error: bool = False,
    **spec_options: Any,
) -> Iterator[SweepHandle]:
    """Open a parent run for a sweep; on a clean exit, finish it and :func:`summarize_sweep` it.

    Inside the block, log each trial as a nested run (``with mlflow.start_run(nested=True): ...``). The parent
    is opened with MLflow's fluent API, so ``tracking_uri`` (when given) and ``experiment`` (a name, created if
    missing) become the process's active MLflow settings, as :func:`mlflow.set_tracking_uri` and
    :func:`mlflow.set_experiment` do. When the block raises, the parent ends as FAILED (KILLED on Ctrl-C), the
    exception propagates and nothing is summarized.

    Examples
    --------
    >>> with boontrack.mlflow.sweep(val="val_acc", test="test_acc", experiment="cnn") as handle:  # doctest: +SKIP
    ...     for seed in range(30):
    ...         with mlflow.start_run(nested=True):
    ...             mlflow.log_params({"seed": seed}); mlflow.log_metrics(train(seed))
    >>> handle.result.location  # doctest: +SKIP
    """
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
    handle.result = summarize_sweep(
        handle.parent_run_id,
        val=val,
        test=test,
        n=n,
        tracking_uri=mlflow.get_tracking_uri(),
        experiment=handle.experiment_id,
        raise_on_error=raise_on_error,
        **spec_options,
    )
