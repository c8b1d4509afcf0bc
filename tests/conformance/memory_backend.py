"""A third-party backend, written against :mod:`boontrack.integration` alone: a tracker that keeps runs in memory.

It is what a team adding its own tracker (Comet, Neptune, an in-house store) writes: a :class:`Backend` that
translates its runs into :class:`~boontrack.integration.RunRecord` values and per-step points, and a sink. It
imports nothing else from boontrack, and is registered through the entry-point group ``boontrack.backends`` as an
installed distribution registers it (see ``tests/plugins.py``). The conformance suite holds it to the same
standard as the built-in backends.

``memory:NAME`` opens the tracker :data:`TRACKERS` ``[NAME]``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
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
)


@dataclass
class Run:
    """A run as the tracker holds it: one dict of metric values per step (a NaN is a value logged)."""

    run_id: str
    status: str
    params: dict[str, Any]
    steps: list[dict[str, float]]
    tags: dict[str, str] = field(default_factory=dict)

    def last(self) -> dict[str, float]:
        """Each metric's last logged value."""
        values: dict[str, float] = {}
        for row in self.steps:
            values.update(row)
        return values


@dataclass
class Tracker:
    """A project of runs; ``goal`` is the direction its sweep tool optimized ``metric`` in, if it says."""

    name: str
    runs: list[Run] = field(default_factory=list)
    metric: str | None = None
    goal: str | None = None
    #: What sinks wrote: summary key -> {"fingerprint", "metrics", "artifacts", ...}.
    summaries: dict[str, dict[str, Any]] = field(default_factory=dict)


TRACKERS: dict[str, Tracker] = {}


class MemoryBackend(Backend):
    name: ClassVar[str] = "memory"
    knows_directions: ClassVar[bool] = True
    options: ClassVar[dict[str, str]] = {}

    def open_source(self, location: str, **options: Any) -> MemorySource:
        check_options(self.name, options, self.options)
        if location not in TRACKERS:
            raise InputError(f"memory: no tracker named {location!r} (trackers: {', '.join(sorted(TRACKERS))})")
        return MemorySource(TRACKERS[location])


class MemorySource(Source):
    def __init__(self, tracker: Tracker) -> None:
        self.tracker = tracker

    def describe(self) -> str:
        return f"in-memory tracker {self.tracker.name!r}"

    def identity(self) -> str:
        return f"memory:{self.tracker.name}"

    def direction(self, metric: str) -> Direction | None:
        if metric != self.tracker.metric or self.tracker.goal not in ("maximize", "minimize"):
            return None
        return Direction(self.tracker.goal == "maximize", f"the goal of in-memory tracker {self.tracker.name!r}")

    def read(self, request: MetricRequest) -> Any:
        records = [
            RunRecord(run.run_id, run.status, params=run.params, metrics=run.last(), tags=run.tags)
            for run in self.tracker.runs
        ]
        return pick_values(build_run_frame(records), request, lambda: self._points(request))

    def _points(self, request: MetricRequest) -> dict[str, Any]:
        import pandas as pd

        points: dict[str, Any] = {}
        for metric in request.metrics:
            rows = [
                (run.run_id, step, row[metric])
                for run in self.tracker.runs
                for step, row in enumerate(run.steps)
                if metric in row and not math.isnan(row[metric])
            ]
            points[metric] = pd.DataFrame(rows, columns=list(POINT_COLUMNS))
        return points

    def sink(self, key: str) -> Sink:
        return MemorySink(self.tracker, key)


class MemorySink(Sink):
    """The summary kept in the tracker, as a summary run (tagged ``boontrack.role=summary``)."""

    def __init__(self, tracker: Tracker, key: str) -> None:
        self.tracker, self.key = tracker, key

    def location(self) -> str:
        return f"memory:{self.tracker.name} summary {self.key[:8]}"

    def read_fingerprint(self) -> str | None:
        return self.tracker.summaries.get(self.key, {}).get("fingerprint")

    def write(self, outputs: SummaryOutputs) -> None:
        artifacts = {str(artifact_path(name)): bytes(data) for name, data in outputs.artifacts.items()}
        self.tracker.summaries[self.key] = {
            "metrics": dict(outputs.metrics),
            "artifacts": artifacts,
            "description": outputs.description,
            "tags": {SUMMARY_ROLE_TAG: SUMMARY_ROLE},
        }

    def write_fingerprint(self, fingerprint: str) -> None:
        self.tracker.summaries[self.key]["fingerprint"] = fingerprint
