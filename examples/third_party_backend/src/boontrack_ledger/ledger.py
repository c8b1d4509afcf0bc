"""Ledger, an invented experiment tracker: its whole SDK. It stands in for the tracker a backend is written for.

A ledger is a directory. Each run is a file ``runs/<id>.jsonl`` of JSON lines, appended as the run goes: a first
line with its params, tags and start time, one line per ``log`` call (a step and its metric values), and a last
line with its end state (``done`` or ``crashed``; a run without one is still ``active``). ``ledger.json`` holds
the objective a sweep tool optimized, and ``artifacts/<id>/`` a run's files.
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class LedgerRun:
    """A run as the ledger reads it back."""

    id: str
    state: str  # "active", "done" or "crashed"
    started: float
    ended: float | None
    params: dict[str, Any]
    tags: dict[str, str]
    steps: list[tuple[int, dict[str, float]]] = field(default_factory=list)  # in the order logged


class RunWriter:
    """A run being logged: ``log`` its metrics at each step, then ``finish`` it."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def _append(self, record: dict[str, Any]) -> None:
        with self.path.open("a", encoding="utf-8") as file:
            file.write(json.dumps(record) + "\n")  # NaN is written as NaN, which json reads back

    def log(self, metrics: dict[str, float], *, step: int) -> None:
        self._append({"step": step, "metrics": metrics})

    def finish(self, state: str = "done") -> None:
        self._append({"state": state, "ended": time.time()})


class Ledger:
    """The ledger in ``directory`` (created on the first run logged)."""

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)

    def start_run(
        self, *, params: dict[str, Any], tags: dict[str, str] | None = None, run_id: str | None = None
    ) -> RunWriter:
        """A new run (one of the same id is replaced)."""
        run_id = run_id or uuid.uuid4().hex[:12]
        path = self.directory / "runs" / f"{run_id}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        first = {"id": run_id, "started": time.time(), "params": params, "tags": tags or {}}
        path.write_text(json.dumps(first) + "\n", encoding="utf-8")
        return RunWriter(path)

    def runs(self) -> list[LedgerRun]:
        """Every run, in the order of their ids."""
        return [self._read(path) for path in sorted((self.directory / "runs").glob("*.jsonl"))]

    def _read(self, path: Path) -> LedgerRun:
        first, *rest = (json.loads(line) for line in path.read_text(encoding="utf-8").splitlines())
        run = LedgerRun(first["id"], "active", first["started"], None, first["params"], first["tags"])
        for record in rest:
            if "step" in record:
                run.steps.append((record["step"], record["metrics"]))
            else:
                run.state, run.ended = record["state"], record["ended"]
        return run

    def set_objective(self, metric: str, goal: str) -> None:
        """Record that a sweep tool optimized ``metric`` (``goal``: ``"maximize"`` or ``"minimize"``)."""
        self.directory.mkdir(parents=True, exist_ok=True)
        (self.directory / "ledger.json").write_text(json.dumps({"metric": metric, "goal": goal}), encoding="utf-8")

    def objective(self) -> dict[str, str]:
        """``{"metric": ..., "goal": ...}``, or empty when none was recorded."""
        path = self.directory / "ledger.json"
        return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}

    def artifacts(self, run_id: str) -> Path:
        """The directory of a run's files."""
        return self.directory / "artifacts" / run_id
