"""``wandb-offline:DIR``: runs that ``wandb`` wrote in offline mode, read from their files without network."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from boontrack.backends import MetricRequest, Source
from boontrack.exceptions import InputError
from boontrack_wandb._frame import build_frame, is_aggregate_run, metric_points, run_record, wandb_tags
from boontrack_wandb._records import OfflineRun, read_offline_run

if TYPE_CHECKING:
    import pandas as pd


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
        return (
            not is_aggregate_run(run.job_type, run.config)
            and (self.sweep is None or run.sweep_id == self.sweep)
            and (self.group is None or run.group == self.group)
        )

    def read(self, request: MetricRequest) -> pd.DataFrame:
        files = find_run_files(self.directory)
        if not files:
            raise InputError(f"{self.describe()}: no offline runs (offline-run-*/run-*.wandb) found")
        with_history = request.pick == "best_val_step"
        keys = [key for key in (request.val, request.test) if key]
        records, histories = [], {key: [] for key in keys}
        for path in files:
            run = read_offline_run(path, with_history=with_history)
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
        return build_frame(records, request, histories if with_history else None)
