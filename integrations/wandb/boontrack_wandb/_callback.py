"""The post-sweep callback: one call after ``wandb.agent(...)`` returns."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from boontrack.exceptions import InputError
from boontrack_wandb._client import DEFAULT_TIMEOUT_S
from boontrack_wandb._online import WandbSource

if TYPE_CHECKING:
    from boontrack.pipeline import JobResult


def parse_sweep_path(path: str) -> tuple[str, str, str]:
    """``entity/project/sweep_id`` (or ``entity/project/sweeps/sweep_id``, as in the W&B URL) -> its parts."""
    parts = [p for p in path.strip().strip("/").split("/") if p]
    if len(parts) == 4 and parts[2] == "sweeps":
        parts = [parts[0], parts[1], parts[3]]
    if len(parts) != 3:
        raise InputError(f"sweep_path must be 'entity/project/sweep_id', got {path!r}")
    return parts[0], parts[1], parts[2]


def summarize_sweep(
    sweep_path: str,
    *,
    val: str,
    test: str | None = None,
    n: int | Sequence[int] | None = None,
    timeout: float = DEFAULT_TIMEOUT_S,
    raise_on_error: bool = False,
    **spec_options: Any,
) -> JobResult:
    """Summarize the runs of a W&B sweep and log the result to the sweep's aggregate run.

    The last line of a sweep script, after ``wandb.agent(...)`` returns. The aggregate run (``job_type
    "boontrack"``, id derived from the sweep and the spec) receives the ``boon/...`` summary metrics, the
    expected-validation curve as a step series over n, a table and a chart of all groups' curves with their
    bootstrap bands (a custom chart preset; W&B's line-series chart where presets cannot be created), and an
    artifact with ``summary.json``, the report and the plots. It is left alone when the runs have not changed;
    the sweep's runs are never modified.

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
    timeout
        Seconds to wait for each W&B API call, retries included.
    raise_on_error
        False (default): nothing raises into the finished sweep: a failure to reach W&B or to write back, and
        runs that cannot be summarized (no runs, a missing metric, too few runs for the ``n`` given), warn
        :class:`~boontrack.exceptions.WriteBackWarning` and the result says so (status ``"failed"`` or
        ``"write-failed"``). True: they raise :class:`~boontrack.exceptions.InputError` or
        :class:`~boontrack.exceptions.BackendError`. A malformed ``sweep_path`` or invalid spec options always
        raise :class:`~boontrack.exceptions.InputError`.
    **spec_options
        Any other field of :class:`boontrack.spec.Spec` (``estimator``, ``maximize``, ``group_by``,
        ``seed_column``, ``seed``, ``pick="best_val_step"``, ...).

    Returns
    -------
    JobResult
        Status, the summary, the fingerprint, the aggregate run's URL, and the error if any.
    """
    from boontrack.pipeline import budgets, summarize_after_sweep
    from boontrack.spec import Spec

    entity, project, sweep = parse_sweep_path(sweep_path)
    spec = Spec(val=val, test=test, n=budgets(n), **spec_options)
    source = WandbSource(entity, project, sweep=sweep, timeout_s=timeout)
    return summarize_after_sweep(source, spec, raise_on_error=raise_on_error)
