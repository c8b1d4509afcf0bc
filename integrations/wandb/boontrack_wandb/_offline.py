"""``wandb-offline:DIR``: runs that ``wandb`` wrote in offline mode, read from their files without network.

wandb's service writes a run's file while the run lives and for a moment after ``run.finish()`` returns. A
file that lacks its exit record and changed within the last :data:`WAIT_VARIABLE` seconds (default
:data:`DEFAULT_WAIT_S`) is read again until it is complete or that many seconds have passed since the read
began (one deadline for all files). A file that is still incomplete then, or corrupt, is not an error: its run
comes with the status ``incomplete``, ``corrupt`` or ``unsupported`` (and the id in its file name when the file
never said it), and the run table drops it with its reason. Only a directory where no run file can be read is
an error.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from boontrack.integration import (
    POINT_COLUMNS,
    InputError,
    MetricRequest,
    RunRecord,
    Source,
    seconds_from_environment,
)
from boontrack_wandb._frame import build_frame, is_aggregate_run, metric_points, run_record, wandb_tags
from boontrack_wandb._records import OfflineRun, read_offline_run

if TYPE_CHECKING:
    import pandas as pd

#: Environment variable: the most seconds a read waits for run files still being written.
WAIT_VARIABLE = "BOONTRACK_WANDB_OFFLINE_WAIT"
DEFAULT_WAIT_S = 10.0
#: Seconds between two looks at the files still being written.
_POLL_S = 0.2


def find_run_files(directory: Path) -> list[Path]:
    """The ``offline-run-*/run-*.wandb`` files in ``directory`` or in its ``wandb/`` subdirectory, sorted."""
    if not directory.is_dir():
        raise InputError(f"wandb-offline: {directory} is not a directory")
    pattern = "offline-run-*/run-*.wandb"
    files = sorted(directory.glob(pattern)) + sorted(directory.glob(f"wandb/{pattern}"))
    if not files and directory.name.startswith("offline-run-"):
        files = sorted(directory.glob("run-*.wandb"))
    return files


class WandbOfflineSource(Source):
    """Offline W&B runs under a directory, optionally limited to one sweep or group."""

    def __init__(self, directory: Path, *, sweep: str | None = None, group: str | None = None) -> None:
        self.directory = directory.expanduser().resolve()
        self.sweep = sweep
        self.group = group

    def describe(self) -> str:
        selection = "".join(f" {k}={v}" for k, v in (("sweep", self.sweep), ("group", self.group)) if v)
        return f"wandb-offline:{self.directory}{selection}"

    def identity(self) -> str:
        return self.describe()

    def _selected(self, run: OfflineRun) -> bool:
        # A damaged file that never said its sweep or group may belong to the one asked for: it is listed too.
        unknown = run.problem is not None
        return (
            not is_aggregate_run(run.job_type, run.config)
            and (self.sweep is None or run.sweep_id == self.sweep or (unknown and not run.sweep_id))
            and (self.group is None or run.group == self.group or (unknown and not run.group))
        )

    def read(self, request: MetricRequest) -> pd.DataFrame:
        files = find_run_files(self.directory)
        if not files:
            raise InputError(f"{self.describe()}: no offline runs (offline-run-*/run-*.wandb) found")
        with_history = request.needs_history  # a history costs most of a file's parse: read it only when picked
        runs = read_run_files(
            files, with_history=with_history, wait_s=seconds_from_environment(WAIT_VARIABLE, DEFAULT_WAIT_S)
        )
        if all(run.problem is not None for run in runs):
            listed = "; ".join(f"{run.path.name}: {run.state} run file ({run.detail})" for run in runs[:3])
            raise InputError(f"{self.describe()}: no run file could be read: {listed}")
        keys = list(request.metrics)
        records: list[RunRecord] = []
        histories: dict[str, list[tuple[str, int, float]]] = {key: [] for key in keys}
        for run in runs:
            if not self._selected(run):
                continue
            records.append(
                run_record(
                    run_id=run.run_id,
                    status=run.state,
                    created_at=None if run.start_time is None else datetime.fromtimestamp(run.start_time, timezone.utc),
                    duration_s=run.runtime_s,
                    config=run.config,
                    summary=run.summary,
                    tags=wandb_tags(group=run.group, job_type=run.job_type, sweep=run.sweep_id, tags=run.tags),
                )
            )
            for key in keys if with_history else ():
                histories[key].extend(metric_points(run.run_id, run.history, key))
        return build_frame(records, request, lambda: histories)

    def read_histories(self, metrics: Sequence[str], run_ids: Sequence[str]) -> dict[str, pd.DataFrame]:
        """Each metric's points (step = the row's ``_step``) in the run files of ``run_ids``: every file is read
        again, with its history (training curves)."""
        import pandas as pd

        files = find_run_files(self.directory)
        wanted = set(run_ids)
        runs = [
            run
            for run in read_run_files(
                files, with_history=True, wait_s=seconds_from_environment(WAIT_VARIABLE, DEFAULT_WAIT_S)
            )
            if run.run_id in wanted
        ]
        return {
            metric: pd.DataFrame.from_records(
                [point for run in runs for point in metric_points(run.run_id, run.history, metric)],
                columns=list(POINT_COLUMNS),
            )
            for metric in metrics
        }


def read_run_files(files: list[Path], *, with_history: bool, wait_s: float) -> list[OfflineRun]:
    """Every file read, in order; files still being written are read again until complete or ``wait_s`` has
    passed (the module's docstring says which)."""
    deadline = time.monotonic() + wait_s
    runs = [read_offline_run(path, with_history=with_history) for path in files]
    stamps = [_stamp(path) for path in files]
    waiting = [i for i, run in enumerate(runs) if not run.complete and _changed_within(stamps[i], wait_s)]
    while waiting and time.monotonic() < deadline:
        time.sleep(min(_POLL_S, max(0.0, deadline - time.monotonic())))
        for i in waiting:
            stamp = _stamp(files[i])
            if stamp != stamps[i]:
                runs[i], stamps[i] = read_offline_run(files[i], with_history=with_history), stamp
        waiting = [i for i in waiting if not runs[i].complete]
    return runs


def _stamp(path: Path) -> tuple[int, int]:
    """(size, modification time in ns): what changes when a writer appends."""
    info = path.stat()
    return info.st_size, info.st_mtime_ns


def _changed_within(stamp: tuple[int, int], seconds: float) -> bool:
    return time.time_ns() - stamp[1] < seconds * 1e9
