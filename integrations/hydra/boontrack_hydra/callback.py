"""The Hydra callback: each job records its result, the end of the multirun summarizes them.

Importing this module imports Hydra (``pip install ".[hydra]"``): :class:`BoonCallback` subclasses
Hydra's ``Callback``. ``boontrack.hydra`` and ``boontrack_hydra`` import it when the name is first asked for.
"""

from __future__ import annotations

import atexit
import json
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from boontrack.integration import (
    HYDRA,
    InputError,
    JobResult,
    after_sweep,
    callback_options,
    describe_error,
    import_optional,
    mlflow_destination,
    option_name,
    option_setting,
    speaking,
    summarize_source,
)
from boontrack_hydra._records import (
    COMPLETED,
    FAILED,
    HydraSweepSource,
    clear_records,
    jobs_dir,
    no_history,
    override_params,
    returned_metrics,
    sweeper_direction,
    write_record,
    write_sweep_record,
)

#: Failed jobs listed by name after the table; the others are counted.
_LISTED_FAILURES = 10
#: Where the summary goes without ``out``: this directory of the sweep directory.
DEFAULT_OUT = "boontrack"

#: Hydra's callback class, the base of ours (imported here: the error names the extra to install).
_HydraCallback: Any = import_optional(
    "hydra.experimental.callback", extra="hydra", needed_for="boontrack.hydra.BoonCallback"
).Callback


class BoonCallback(_HydraCallback):
    """Summarize a Hydra multirun with boontrack: Boo_n, expected-validation curves, intervals, comparisons.

    Configure it under ``hydra.callbacks``::

        hydra:
          callbacks:
            boontrack:
              _target_: boontrack.hydra.BoonCallback
              val: val_acc
              test: test_acc

    Each job's return value is its result: a number (the validation score, named ``val``; there is then no
    test score) or a mapping of metrics (``{"val_acc": 0.91, "test_acc": 0.90}``), whose numeric entries are
    kept. ``on_job_end`` writes one record per job into the sweep directory (it may run in a worker process);
    ``on_multirun_end`` reads them, groups the jobs by the overridden keys that vary, except the seed, and
    writes the summary to ``<sweep dir>/boontrack`` (a :class:`~boontrack.directory.DirectorySink`:
    ``summary.json``, ``report.md``, ``runs.csv``, ``curves.csv``, plots) and prints its table. Failed jobs
    are recorded with their error and dropped. Hydra calls no end-of-multirun callback when a job failed (its
    basic sweeper raises the job's error first): the summary of the jobs that ran is then made when the
    process exits.

    Nothing raises into Hydra's run once it has started (unless ``raise_on_error``): a failure to record a job
    or to summarize is a :class:`~boontrack.exceptions.WriteBackWarning`. Invalid options raise
    :class:`~boontrack.exceptions.InputError` when Hydra creates the callback, before any job runs. A metric
    named like a loss without a direction, or a direction that contradicts the Optuna sweeper's, is warned about
    when the multirun starts, and the summary refused at its end.

    The keys are those of every callback (see :mod:`boontrack.integration`), as in Python. The command line's
    names of 0.2.0 (``minimize``, ``resamples``, ``confidence``, ``bootstrap_seed``, ``seed_key``,
    ``mlflow_tracking_uri``) are accepted for one release, with a DeprecationWarning.

    Parameters
    ----------
    val, test
        Names of the validation and (optional) test metrics in the mapping a job returns.
    n
        Budgets of Boo_n (a number or a list). None: 1, 5 and 10, each where a group has that many jobs.
    group_by
        Overridden keys to group by. None: every overridden key that takes more than one value, except the seed.
    seed_column
        The overridden key that holds the training seed (default ``seed``): never a group key, and the key that
        pairs jobs of two groups in comparisons. A nested key matches by its last part (``train.seed``).
    task_column
        The overridden key that names each job's task (a dataset of a benchmark): each task is summarized on its
        own, and the groups compared across the tasks; never a group key. None: one task.
    pick
        ``"last"`` only: a job returns one value per metric, so there is no per-step history to pick from.
    maximize
        The direction of ``val``. None (default): the ``direction`` of Hydra's Optuna sweeper when the sweep
        uses it (``val`` is then the number each job returns; a direction given that contradicts it is
        refused); else higher, except for a metric named like a loss or an error.
    n_resamples, confidence_level, seed, **spec_options
        As the fields of :class:`boontrack.spec.Spec` (``estimator``, ``baseline``, ``compare``,
        ``correction``, ``ci_method``, ...), as ``boontrack summarize`` takes them; ``curves`` is refused when
        the callback is made, as ``pick`` other than ``"last"``: a job returns one value per metric.
    tracking_uri, mlflow_experiment
        Also write the summary to MLflow (``pip install ".[mlflow]"``): a summary run, as
        ``boontrack summarize --write-back`` writes, in the experiment ``mlflow_experiment`` (default: Hydra's
        job name, the app's name; created when missing). The runs are read and analyzed once for both
        destinations, and a failure to write one leaves the other written.
    out
        Where the summary goes: a directory relative to the sweep directory (or absolute). Default:
        ``boontrack``.
    plots
        Render the PNG plots (needs matplotlib; most of the time of a small summary).
    raise_on_error
        Raise what goes wrong after the jobs ran instead of warning.
    print_table
        Print the summary table at the end of the multirun.
    """

    def __init__(
        self,
        *,
        val: str,
        test: str | None = None,
        n: int | Sequence[int] | None = None,
        group_by: str | Sequence[str] | None = None,
        seed_column: str | None = "seed",
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
        print_table: bool = True,
        **spec_options: Any,
    ) -> None:
        arguments = {**locals(), "group_by": _names(group_by)}  # a YAML list arrives as a ListConfig
        self.options = callback_options(type(self).__init__, arguments, spoken=HYDRA)
        with speaking(HYDRA):
            if self.options.spec.pick != "last":
                raise InputError(
                    f"a Hydra job returns one value per metric: there is no per-step history to pick from "
                    f"({option_setting('pick', 'last')})"
                )
            if self.options.spec.curves:
                raise InputError(no_history())
            for name, value in (
                ("mlflow_experiment", mlflow_experiment),
                ("seed_column", self.options.spec.seed_column),
            ):
                if value is not None and not (isinstance(value, str) and value):
                    raise InputError(f"{option_name(name)} must be a non-empty name, got {value!r}")
            if not isinstance(print_table, bool):
                raise InputError(f"{option_name('print_table')} must be true or false, got {print_table!r}")
        self.out = str(self.options.out) if self.options.out is not None else DEFAULT_OUT
        self.print_table = print_table
        self.mlflow_experiment = mlflow_experiment
        self.result: JobResult | None = None  #: the last summary made in this process
        self._job_name = "hydra"  # Hydra's job name, the default MLflow experiment
        self._started: dict[int, tuple[datetime, float]] = {}
        self._unfinished: Path | None = None  # a multirun begun here whose end Hydra has not announced yet

    @property
    def spec(self) -> Any:
        """The spec of the summary (its grouping and seed column set from the jobs when they have run)."""
        return self.options.spec

    # -- Hydra's hooks ---------------------------------------------------------------------------------------
    def on_multirun_start(self, config: Any, **kwargs: Any) -> None:
        self._job_name = str(_select(config, "hydra.job.name") or self._job_name)
        goal = _optuna_sweeper_goal(config, self.spec.val)

        def prepare() -> Path:
            sweep_dir = _sweep_dir(config)
            clear_records(jobs_dir(sweep_dir))  # a previous multirun into the same directory
            write_sweep_record(sweep_dir, goal)
            return sweep_dir

        def decide_direction() -> None:
            with speaking(HYDRA):
                self.spec.resolve_direction(sweeper_direction(goal, self.spec.val))

        sweep_dir = self._guarded("preparing the sweep directory", prepare)
        # Decided now as it will be at the end, so that a summary that will be refused (a metric named like a loss
        # without a direction, a direction the Optuna sweeper's contradicts) is said before the jobs run.
        self._guarded("deciding the direction of the metric", decide_direction)
        if sweep_dir is None:
            return
        self._unfinished = sweep_dir
        # Imported now: at exit, after threading has shut down, its first import fails (pandas imports it).
        import concurrent.futures.thread  # noqa: F401

        atexit.register(self._summarize_at_exit)

    def on_job_start(self, config: Any, **kwargs: Any) -> None:
        if _in_multirun(config):
            self._started[int(config.hydra.job.num)] = (datetime.now(timezone.utc), time.monotonic())

    def on_job_end(self, config: Any, job_return: Any, **kwargs: Any) -> None:
        if not _in_multirun(config):
            return
        record = lambda: write_record(jobs_dir(_sweep_dir(config)), self._job_record(config, job_return))  # noqa: E731
        self._guarded(f"recording job {_select(config, 'hydra.job.num')}", record)

    def on_multirun_end(self, config: Any, **kwargs: Any) -> None:
        if self._unfinished is not None:
            atexit.unregister(self._summarize_at_exit)
            self._unfinished = None
        sweep_dir = self._guarded("finding the sweep directory", lambda: _sweep_dir(config))
        if sweep_dir is not None:
            self.summarize(sweep_dir)

    def _guarded(self, what: str, action: Callable[[], Any]) -> Any:
        """``action()`` under the one failure rule (None when it failed): the jobs run on regardless."""
        return after_sweep(f"boontrack: {what}", action, raise_on_error=self.options.raise_on_error, failed=_none)

    # -- the work --------------------------------------------------------------------------------------------
    def summarize(self, sweep_dir: str | Path, *, note: str = "") -> JobResult | None:
        """Summarize the job records in ``sweep_dir`` and write the summary to its ``out`` directory and, with a
        tracking URI, to MLflow: the records are read once and analyzed once for both.

        Returns the :class:`~boontrack.pipeline.JobResult` (also kept in :attr:`result`), or None when there was
        nothing to summarize or it failed; a failure is warned, never raised (unless ``raise_on_error``).
        """
        sweep_dir = Path(sweep_dir).absolute()
        experiment = self.mlflow_experiment or self._job_name
        source = HydraSweepSource(sweep_dir)

        def job() -> JobResult:
            spec = replace(self.spec, **self._grouping(source.records))
            with speaking(HYDRA):  # a summary refused names the keys to set as the Hydra config writes them
                return summarize_source(
                    source,
                    spec,
                    out=sweep_dir / self.out,
                    write_back=False,
                    also=mlflow_destination(
                        experiment if self.options.tracking_uri else None, self.options.tracking_uri
                    ),
                    plots=self.options.plots,
                    summarize_unchanged=True,
                    raise_on_write_error=self.options.raise_on_error,
                )

        result = after_sweep(
            f"summarizing the Hydra sweep in {sweep_dir}", job, raise_on_error=self.options.raise_on_error
        )
        if result.status == "failed":
            return None
        self.result = result
        if self.print_table:
            print(_report(result, source.records, note), flush=True)
        return result

    def _summarize_at_exit(self) -> None:
        """The multirun stopped before Hydra's end-of-multirun callback (a failed job): summarize what ran."""
        sweep_dir, self._unfinished = self._unfinished, None
        if sweep_dir is not None and any(jobs_dir(sweep_dir).glob("*.json")):  # no job ran: nothing to say
            self.summarize(sweep_dir, note="the multirun stopped early; summary of the jobs that ran")

    def _job_record(self, config: Any, job_return: Any) -> dict[str, Any]:
        from hydra.core.utils import JobStatus

        job = int(config.hydra.job.num)
        started = self._started.pop(job, None)
        overrides = [str(o) for o in job_return.overrides or []]
        # The private field: the public ``return_value`` raises a failed job's error and prints to stderr.
        returned = job_return._return_value
        completed = job_return.status == JobStatus.COMPLETED
        if completed:
            error = ""
        elif isinstance(returned, BaseException):
            error = describe_error(returned)
        else:
            error = f"job status {job_return.status.name}"
        return {
            "job": job,
            "status": COMPLETED if completed else FAILED,
            "overrides": overrides,
            "params": override_params(overrides),
            "metrics": returned_metrics(returned, val=self.spec.val) if completed else {},
            "error": error,
            "started_at": started[0].isoformat() if started else None,
            "duration_s": time.monotonic() - started[1] if started else None,
            "output_dir": str(_select(config, "hydra.runtime.output_dir") or ""),
        }

    def _grouping(self, records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        """``group_by`` and ``seed_column`` of the spec for these jobs (see the class docstring)."""
        keys = list(dict.fromkeys(key for record in records for key in record.get("params", {})))
        seed_key = self.spec.seed_column or ""
        seeds = [key for key in keys if key == seed_key or key.endswith("." + seed_key)]
        group_by = self.spec.group_by
        if group_by is None:
            task = self.spec.task_column
            varying = tuple(key for key in keys if key not in seeds and key != task and len(_values(records, key)) > 1)
            group_by = varying or None
        return {"group_by": group_by, "seed_column": seeds[0] if len(seeds) == 1 else None}


def _report(result: JobResult, records: Sequence[Mapping[str, Any]], note: str) -> str:
    from boontrack.integration import format_table

    directory, *others = result.destinations
    lines = [f"boontrack: {len(records)} jobs summarized in {directory.location} ({directory.status})"]
    if note:
        lines[0] += f"; {note}"
    lines += [f"boontrack: summary in {other.location} ({other.status})" for other in others if other.error is None]
    summary = result.summary if result.summary is not None else result.stored_summary
    if summary is not None:
        lines.append(format_table(summary, report_written=directory.error is None))
    failed = [r for r in records if r.get("status") == FAILED]
    lines += [
        f"job {r['job']} ({' '.join(r.get('overrides', []))}) failed: {r.get('error', '')}"
        for r in failed[:_LISTED_FAILURES]
    ]
    if len(failed) > _LISTED_FAILURES:
        lines.append(f"... and {len(failed) - _LISTED_FAILURES} more failed jobs (their errors are in runs.csv)")
    return "\n".join(lines)


def _sweep_dir(config: Any) -> Path:
    """The absolute sweep directory. A job may run in its own directory (``hydra.job.chdir``): a relative sweep
    directory is relative to where Hydra was started (``hydra.runtime.cwd``)."""
    return Path(str(config.hydra.runtime.cwd)) / str(config.hydra.sweep.dir)


def _in_multirun(config: Any) -> bool:
    from hydra.types import RunMode

    return _select(config, "hydra.mode") == RunMode.MULTIRUN


def _select(config: Any, key: str) -> Any:
    from omegaconf import OmegaConf

    return OmegaConf.select(config, key, default=None)


def _values(records: Iterable[Mapping[str, Any]], key: str) -> set[str]:
    return {json.dumps(record.get("params", {}).get(key), sort_keys=True) for record in records}


def _optuna_sweeper_goal(config: Any, val: str) -> dict[str, Any]:
    """What the sweep record says of the sweeper: Hydra's Optuna sweeper optimizes the number each job returns
    (named ``val``) in its ``direction``; with one objective that is ``val``'s direction."""
    target = str(_select(config, "hydra.sweeper._target_") or "")
    direction = _select(config, "hydra.sweeper.direction")
    if "optuna" not in target.lower() or direction is None:
        return {"sweeper": target}
    directions = [direction] if isinstance(direction, str) else [str(d) for d in direction]
    if len(directions) != 1:
        return {"sweeper": target}
    name = directions[0].lower().rpartition(".")[2]  # "minimize", or an enum's "StudyDirection.minimize"
    return {"sweeper": target, "objective": val, "direction": name} if name in ("maximize", "minimize") else {}


def _names(value: Any) -> tuple[str, ...] | None:
    """A key or a list of keys (a YAML list arrives as an omegaconf ListConfig) as a tuple; others as given."""
    if value is None or isinstance(value, str):
        return None if value is None else (value,)
    try:
        return tuple(value)
    except TypeError:
        return value


def _none(message: str) -> None:
    return None
