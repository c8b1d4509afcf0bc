"""The post-sweep callback: one call after ``wandb.agent(...)`` returns."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from boontrack.integration import InputError, JobResult, after_sweep, callback_options, option_name, summarize_source
from boontrack_wandb._client import DEFAULT_TIMEOUT_S
from boontrack_wandb._online import WandbSource


def parse_sweep_path(path: str) -> tuple[str, str, str]:
    """``entity/project/sweep_id`` (or ``entity/project/sweeps/sweep_id``, as in the W&B URL) -> its parts."""
    parts = [p for p in path.strip().strip("/").split("/") if p]
    if len(parts) == 4 and parts[2] == "sweeps":
        parts = [parts[0], parts[1], parts[3]]
    if len(parts) != 3:
        raise InputError(f"{option_name('sweep_path')} must be 'entity/project/sweep_id', got {path!r}")
    return parts[0], parts[1], parts[2]


def summarize_sweep(
    sweep_path: str,
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
    timeout: float = DEFAULT_TIMEOUT_S,
    mlflow_experiment: str | None = None,
    **spec_options: Any,
) -> JobResult:
    """Summarize the runs of a W&B sweep and log the result to the sweep's aggregate run.

    The last line of a sweep script, after ``wandb.agent(...)`` returns. The aggregate run (``job_type
    "boontrack"``, id derived from the sweep and the spec) receives the ``boon/...`` summary metrics, the
    expected-validation curve as a step series over n, a table and a chart of all groups' curves with their
    bootstrap bands (a custom chart preset; W&B's line-series chart where presets cannot be created), and an
    artifact with ``summary.json``, the report and the plots. It is left alone when the runs have not changed;
    the sweep's runs are never modified. The keywords are those of every callback (see
    :mod:`boontrack.integration`).

    Parameters
    ----------
    sweep_path
        ``"entity/project/sweep_id"``.
    val, test
        Summary metric names of the validation and (optional) test scores.
    n
        Budgets for Boo_n. None (default): 1, 5 and 10, each where a group has at least that many runs (the
        others are left out and named in the summary's warnings); given, every group must have enough runs
        for every budget.
    group_by, seed_column, task_column, pick, n_resamples, confidence_level, seed
        As the fields of :class:`boontrack.spec.Spec` (``pick="best_val_step"`` costs one request per run).
    maximize
        The direction of ``val``. None (default): the sweep's ``metric.goal`` when its ``metric.name`` is
        ``val`` (a direction given that contradicts it is refused); else higher, except for a metric named like
        a loss or an error.
    tracking_uri, mlflow_experiment
        Also write the summary as an MLflow summary run at this tracking URI, in this experiment (default: the
        W&B project's name; created when missing).
    out
        Also write the summary into this directory.
    plots
        Render the PNG plots.
    raise_on_error
        False (default): nothing raises into the finished sweep: a failure to reach W&B or to write back, and
        runs that cannot be summarized (no runs, a missing metric, too few runs for the ``n`` given), warn
        :class:`~boontrack.exceptions.WriteBackWarning` and the result says so (status ``"failed"`` or
        ``"write-failed"``). True: they raise :class:`~boontrack.exceptions.InputError` or
        :class:`~boontrack.exceptions.BackendError`. A malformed ``sweep_path`` or invalid options always
        raise :class:`~boontrack.exceptions.InputError`.
    timeout
        Seconds to wait for each W&B API call, retries included.
    **spec_options
        Any other field of :class:`boontrack.spec.Spec` (``estimator``, ``ci_method``, ``baseline``, ...).

    Returns
    -------
    JobResult
        Status, the summary, the fingerprint, the aggregate run's URL, and the error if any.
    """
    options = callback_options(summarize_sweep, locals())
    entity, project, sweep = parse_sweep_path(sweep_path)
    also = {}
    if options.tracking_uri is not None or mlflow_experiment is not None:
        uri = {} if options.tracking_uri is None else {"tracking_uri": options.tracking_uri}
        also[f"mlflow:{mlflow_experiment or project}"] = uri

    def job() -> JobResult:
        source = WandbSource(entity, project, sweep=sweep, timeout_s=timeout)
        return summarize_source(
            source,
            options.spec,
            out=options.out,
            also=also,
            plots=options.plots,
            raise_on_write_error=options.raise_on_error,
        )

    return after_sweep(f"summarizing W&B sweep {sweep_path}", job, raise_on_error=options.raise_on_error)
