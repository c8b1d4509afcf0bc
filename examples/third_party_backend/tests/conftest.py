"""The sweep of boontrack's conformance suite (``boontrack.testing.SWEEP``), logged with Ledger's own SDK."""

from __future__ import annotations

from pathlib import Path

import pytest
from boontrack_ledger.ledger import Ledger

from boontrack.integration import SUMMARY_ROLE, SUMMARY_ROLE_TAG
from boontrack.testing import SWEEP, TEST, VAL


def log_sweep(ledger: Ledger) -> None:
    """Each run of the sweep as a Ledger run, and a summary run as a write-back leaves one (never an input)."""
    ledger.set_objective(VAL, "maximize")
    for run in SWEEP:
        writer = ledger.start_run(params={"model": run.model, "seed": run.seed})
        for step, row in enumerate(run.rows):
            writer.log(row, step=step)
        if run.status != "running":  # a run still running has no end line yet
            writer.finish("done" if run.status == "finished" else "crashed")
    summary = ledger.start_run(params={}, tags={SUMMARY_ROLE_TAG: SUMMARY_ROLE})
    summary.log({VAL: 0.99, TEST: 0.99}, step=0)
    summary.finish()


@pytest.fixture
def ledger_dir(tmp_path: Path) -> Path:
    """A ledger that holds the conformance sweep."""
    log_sweep(Ledger(tmp_path))
    return tmp_path
