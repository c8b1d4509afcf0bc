"""The Ledger backend passes boontrack's conformance suite: the sweep logged with Ledger's own SDK, read back
through the backend's entry point as ``boontrack summarize ledger:DIR`` reads it."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import boontrack
from boontrack.testing import FULL, check_source


def test_the_ledger_backend_conforms(ledger_dir: Path) -> None:
    # Ledger holds every part of the sweep, and records the objective: the source knows val_acc is maximized
    profile = dataclasses.replace(FULL, maximize=True)
    passed = check_source(lambda: boontrack.open_source(f"ledger:{ledger_dir}"), profile)
    assert passed == [
        "run_table-last",
        "run_table-best_val_step",
        "summary-last",
        "summary-best_val_step",
        "direction",
        "sink",
    ]
