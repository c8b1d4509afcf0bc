"""The backend: ``boontrack summarize ledger:DIRECTORY`` reads the runs of a ledger and writes a summary back.

It only translates: a Ledger run into a ``RunRecord``, its logged steps into (run_id, step, value) points, a
summary into a Ledger run tagged as boontrack's own; :mod:`boontrack.integration` does the rest.
"""

from __future__ import annotations

import math
import shutil
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, ClassVar

from boontrack.integration import (
    POINT_COLUMNS,
    SUMMARY_ROLE,
    SUMMARY_ROLE_TAG,
    Backend,
    Direction,
    InputError,
    MetricRequest,
    RunRecord,
    Sink,
    Source,
    SummaryOutputs,
    artifact_path,
    build_run_frame,
    check_options,
    pick_values,
    write_artifacts,
)
from boontrack_ledger.ledger import Ledger, LedgerRun

#: Ledger's end states as the run frame's statuses: only "finished" makes a run count in a summary.
STATUSES = {"done": "finished", "crashed": "failed", "active": "running"}
#: The file, among a summary run's artifacts, that holds the fingerprint of its last complete write.
FINGERPRINT = "fingerprint"


__all__ = ["LedgerBackend", "LedgerSink", "LedgerSource"]


class LedgerBackend(Backend):
    """The scheme ``ledger:DIRECTORY``: the runs of the ledger in ``DIRECTORY``. It takes no option."""

    name: ClassVar[str] = "ledger"
    knows_directions: ClassVar[bool] = True

    def open_source(self, location: str, **options: Any) -> LedgerSource:
        check_options(self.name, options, self.options)  # it takes none: any option is refused, by name
        if not (Path(location) / "runs").is_dir():
            raise InputError(f"ledger: {location!r} holds no ledger (no runs/ directory)")
        return LedgerSource(Ledger(location))


class LedgerSource(Source):
    """Every run of a ledger; it knows the direction of the objective a sweep tool recorded."""

    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger

    def describe(self) -> str:
        return f"ledger {self.ledger.directory}"

    def identity(self) -> str:
        return f"ledger:{self.ledger.directory.resolve()}"

    def direction(self, metric: str) -> Direction | None:
        objective = self.ledger.objective()
        if objective.get("metric") != metric or objective.get("goal") not in ("maximize", "minimize"):
            return None
        return Direction(objective["goal"] == "maximize", f"the objective of {self.describe()}")

    # --8<-- [start:read]
    def read(self, request: MetricRequest) -> Any:
        runs = self.ledger.runs()
        records = [_record(run) for run in runs]  # boontrack's own summary runs are left out by build_run_frame
        return pick_values(build_run_frame(records), request, lambda: _points(runs, request.metrics))

    # --8<-- [end:read]

    def read_histories(self, metrics: Sequence[str], run_ids: Sequence[str]) -> Mapping[str, Any]:
        wanted = set(run_ids)
        return _points([run for run in self.ledger.runs() if run.id in wanted], metrics)

    def sink(self, key: str) -> Sink:
        return LedgerSink(self.ledger, key)


# --8<-- [start:record]
def _record(run: LedgerRun) -> RunRecord:
    last: dict[str, float] = {}
    for _, metrics in run.steps:
        last.update(metrics)
    return RunRecord(
        run.id,
        STATUSES.get(run.state, run.state),
        created_at=datetime.fromtimestamp(run.started, tz=timezone.utc),
        duration_s=None if run.ended is None else run.ended - run.started,
        params=run.params,
        metrics=last,
        tags=run.tags,
    )


def _points(runs: list[LedgerRun], metrics: Sequence[str]) -> dict[str, Any]:
    """Each metric's logged points, NaN points left out (the model was not measured there)."""
    import pandas as pd

    return {
        metric: pd.DataFrame(
            [
                (run.id, step, values[metric])
                for run in runs
                for step, values in run.steps
                if metric in values and not math.isnan(values[metric])
            ],
            columns=list(POINT_COLUMNS),
        )
        for metric in metrics
    }


# --8<-- [end:record]


class LedgerSink(Sink):
    """A summary as a Ledger run tagged ``boontrack.role=summary``, its files in the run's artifacts."""

    def __init__(self, ledger: Ledger, key: str) -> None:
        self.ledger, self.run_id = ledger, f"boontrack-{key[:16]}"

    def location(self) -> str:
        return f"run {self.run_id} of {self.ledger.directory}"

    def _fingerprint_file(self) -> Path:
        # beside the summary's files, so that removing them removes it too
        return self.ledger.artifacts(self.run_id) / FINGERPRINT

    def read_fingerprint(self) -> str | None:
        path = self._fingerprint_file()
        return path.read_text(encoding="utf-8") if path.is_file() else None

    def write(self, outputs: SummaryOutputs) -> None:
        for name in outputs.artifacts:  # a refused path leaves the previous summary whole
            artifact_path(name, reserved=(FINGERPRINT,))
        files = self.ledger.artifacts(self.run_id)
        shutil.rmtree(files, ignore_errors=True)  # its fingerprint goes first: a crash below is redone next time
        write_artifacts(files, outputs.artifacts)
        run = self.ledger.start_run(params={}, tags={SUMMARY_ROLE_TAG: SUMMARY_ROLE}, run_id=self.run_id)
        run.log(dict(outputs.metrics), step=0)
        for curve in outputs.curves:
            for n, value in zip(curve.n, curve.values):
                run.log({curve.key: float(value)}, step=int(n))
        run.finish()

    def write_fingerprint(self, fingerprint: str) -> None:
        self._fingerprint_file().write_text(fingerprint, encoding="utf-8")
