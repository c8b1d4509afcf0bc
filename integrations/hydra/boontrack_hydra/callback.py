"""The Hydra callback: each job records its result, the end of the multirun summarizes them.

Importing this module imports Hydra (``pip install "boontrack[hydra]"``): :class:`BoonCallback` subclasses
Hydra's ``Callback``. ``boontrack.hydra`` and ``boontrack_hydra`` import it when the name is first asked for.
"""

from __future__ import annotations

import atexit
import json
import time
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from boontrack._optional import import_optional
from boontrack._redact import describe_error
from boontrack.exceptions import InputError, WriteBackWarning
from boontrack.pipeline import JobResult, budgets, source_options
from boontrack.spec import make_spec
from boontrack_hydra._records import (
    COMPLETED,
    FAILED,
    HydraSweepSource,
    clear_records,
    jobs_dir,
    override_params,
    returned_metrics,
    write_record,
)

#: Failed jobs listed by name after the table; the others are counted.
_LISTED_FAILURES = 10

_callback = import_optional("hydra.experimental.callback", extra="hydra", needed_for="boontrack.hydra.BoonCallback")


class BoonCallback(_callback.Callback):
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
    writes the summary to ``<sweep dir>/<out>`` (a :class:`~boontrack.files.DirectorySink`: ``summary.json``,
    ``report.md``, ``runs.csv``, ``curves.csv``, plots) and prints its table. Failed jobs are recorded with
    their error and dropped. Hydra calls no end-of-multirun callback when a job failed (its basic sweeper
    raises the job's error first): the summary of the jobs that ran is then made when the process exits.

    Nothing raises into Hydra's run once it has started: a failure to record a job or to summarize is a
    :class:`~boontrack.exceptions.WriteBackWarning`. Invalid options raise
    :class:`~boontrack.exceptions.InputError` when Hydra creates the callback, before any job runs.

    Parameters
    ----------
    val, test
        Names of the validation and (optional) test metrics in the mapping a job returns.
    n
        Budgets of Boo_n (a number or a list). None: 1, 5 and 10, each where a group has that many jobs.
    seed_key
        The overridden key that holds the training seed: never a group key, and the key that pairs jobs of two
        groups in comparisons. A nested key matches by its last part (``train.seed``).
    group_by
        Overridden keys to group by. None: every overridden key that takes more than one value, except the seed.
    out
        Where the summary goes: a directory relative to the sweep directory (or absolute).
    estimator, minimize, baseline, compare, correction, confidence, resamples, ci_method
        As the options of ``boontrack summarize`` of the same names.
    bootstrap_seed
        Seed of the bootstrap (``boontrack summarize --seed``).
    plots
        Render the PNG plots (needs matplotlib; most of the time of a small summary).
    print_table
        Print the summary table at the end of the multirun.
    mlflow_tracking_uri, mlflow_experiment
        Also write the summary to MLflow (``pip install "boontrack[mlflow]"``): a summary run, as
        ``boontrack summarize --write-back`` writes, in the experiment ``mlflow_experiment`` (default: Hydra's
        job name, the app's name; created when missing). A failure to write there is warned and leaves the
        directory's summary in place.
    """

    def __init__(
        self,
        *,
        val: str,
        test: str | None = None,
        n: int | Sequence[int] | None = None,
        seed_key: str = "seed",
        group_by: str | Sequence[str] | None = None,
        out: str = "boontrack",
        estimator: str = "V",
        minimize: bool = False,
        baseline: str | None = None,
        compare: str = "baseline",
        correction: str = "holm",
        confidence: float = 0.95,
        resamples: int = 9999,
        ci_method: str = "studentized",
        bootstrap_seed: int = 0,
        plots: bool = True,
        print_table: bool = True,
        mlflow_tracking_uri: str | None = None,
        mlflow_experiment: str | None = None,
    ) -> None:
        self.spec = make_spec(
            val=val,
            test=test,
            n=budgets(n),
            estimator=estimator,
            minimize=minimize,
            group_by=_names(group_by),
            baseline=baseline,
            compare=compare,
            correction=correction,
            confidence=confidence,
            resamples=resamples,
            ci_method=ci_method,
            seed=bootstrap_seed,
        )
        names = {"seed_key": seed_key, "out": out, "mlflow_experiment": mlflow_experiment}
        for name, value in names.items():
            if not (isinstance(value, str) and value) and not (name == "mlflow_experiment" and value is None):
                raise InputError(f"{name} must be a non-empty name, got {value!r}")
        if mlflow_tracking_uri is not None:
            source_options(tracking_uri=str(mlflow_tracking_uri))  # InputError for what is not a URI
        for name, value in (("plots", plots), ("print_table", print_table)):
            if not isinstance(value, bool):
                raise InputError(f"{name} must be true or false, got {value!r}")
        self.seed_key = seed_key
        self.out = out
        self.plots = plots
        self.print_table = print_table
        self.mlflow_tracking_uri = None if mlflow_tracking_uri is None else str(mlflow_tracking_uri)
        self.mlflow_experiment = mlflow_experiment
        self.result: JobResult | None = None  #: the last summary made in this process
        self._job_name = "hydra"  # Hydra's job name, the default MLflow experiment
        self._started: dict[int, tuple[datetime, float]] = {}
        self._unfinished: Path | None = None  # a multirun begun here whose end Hydra has not announced yet

    # -- Hydra's hooks ---------------------------------------------------------------------------------------
    def on_multirun_start(self, config: Any, **kwargs: Any) -> None:
        self._job_name = str(_select(config, "hydra.job.name") or self._job_name)
        try:
            sweep_dir = _sweep_dir(config)
            clear_records(jobs_dir(sweep_dir))  # a previous multirun into the same directory
        except Exception as exc:
            _warn(f"boontrack could not prepare the sweep directory: {describe_error(exc)}")
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
        try:
            write_record(jobs_dir(_sweep_dir(config)), self._job_record(config, job_return))
        except Exception as exc:
            _warn(f"boontrack could not record job {_select(config, 'hydra.job.num')}: {describe_error(exc)}")

    def on_multirun_end(self, config: Any, **kwargs: Any) -> None:
        if self._unfinished is not None:
            atexit.unregister(self._summarize_at_exit)
            self._unfinished = None
        try:
            sweep_dir = _sweep_dir(config)
        except Exception as exc:
            _warn(f"boontrack could not find the sweep directory: {describe_error(exc)}")
            return
        self.summarize(sweep_dir)

    # -- the work --------------------------------------------------------------------------------------------
    def summarize(self, sweep_dir: str | Path, *, note: str = "") -> JobResult | None:
        """Summarize the job records in ``sweep_dir`` and write the summary to its ``out`` directory.

        Returns the :class:`~boontrack.pipeline.JobResult` of the directory (also kept in :attr:`result`), or
        None when there was nothing to summarize or it failed; a failure is warned, never raised. With an MLflow
        tracking URI the summary is then written there too (see the class docstring).
        """
        from boontrack.files import DirectorySink
        from boontrack.pipeline import run_job, summary_key

        sweep_dir = Path(sweep_dir).absolute()
        try:
            experiment = self.mlflow_experiment or self._job_name
            source = HydraSweepSource(sweep_dir, tracking_uri=self.mlflow_tracking_uri, experiment=experiment)
            records = source.records
            spec = replace(self.spec, **self._grouping(records))
            sink = DirectorySink(sweep_dir / self.out)
            result = run_job(source, spec, sink=sink, summarize_unchanged=True, plots=self.plots)
        except Exception as exc:  # the sweep is over: say what went wrong, do not fail the user's run
            _warn(f"boontrack could not summarize the Hydra sweep in {sweep_dir}: {describe_error(exc)}")
            return None
        self.result = result
        if self.print_table:
            print(_report(result, records, note), flush=True)
        if self.mlflow_tracking_uri is not None:
            try:  # apart from the directory: a tracker that fails leaves the directory's summary in place
                tracked = run_job(
                    source, spec, sink=source.sink(summary_key(source.identity(), spec)), plots=self.plots
                )
            except Exception as exc:
                _warn(f"boontrack could not write the summary to MLflow: {describe_error(exc)}")
            else:
                if self.print_table and tracked.ok:
                    print(f"boontrack: summary in {tracked.location} ({tracked.status})", flush=True)
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
        seeds = [key for key in keys if key == self.seed_key or key.endswith("." + self.seed_key)]
        group_by = self.spec.group_by
        if group_by is None:
            varying = tuple(key for key in keys if key not in seeds and len(_values(records, key)) > 1)
            group_by = varying or None
        return {"group_by": group_by, "seed_column": seeds[0] if len(seeds) == 1 else None}


def _report(result: JobResult, records: Sequence[Mapping[str, Any]], note: str) -> str:
    from boontrack.reports import format_table

    lines = [f"boontrack: {len(records)} jobs summarized in {result.location} ({result.status})"]
    if note:
        lines[0] += f"; {note}"
    summary = result.summary if result.summary is not None else result.stored_summary
    if summary is not None:
        lines.append(format_table(summary))
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


def _names(value: Any) -> tuple[str, ...] | None:
    """A key or a list of keys (a YAML list arrives as an omegaconf ListConfig) as a tuple; others as given."""
    if value is None or isinstance(value, str):
        return None if value is None else (value,)
    try:
        return tuple(value)
    except TypeError:
        return value


def _warn(message: str) -> None:
    warnings.warn(message, WriteBackWarning, stacklevel=3)
