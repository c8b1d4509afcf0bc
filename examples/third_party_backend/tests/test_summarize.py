"""``summarize_ledger`` keeps boontrack's callback contract: a mistake in the call raises at once, what goes wrong
after the sweep is warned and returned, and a rerun on the same runs writes nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from boontrack_ledger import summarize_ledger
from boontrack_ledger.ledger import Ledger

from boontrack.integration import InputError, WriteBackWarning
from boontrack.testing import TEST, VAL

# small and fast: two budgets, few resamples, no plots
OPTIONS: dict[str, Any] = {
    "test": TEST,
    "group_by": "model",
    "seed_column": "seed",
    "n": (1, 2),
    "n_resamples": 99,
    "plots": False,
}


def test_the_summary_is_written_back_once(ledger_dir: Path) -> None:
    first = summarize_ledger(ledger_dir, val=VAL, **OPTIONS)
    assert first.status == "updated" and first.summary is not None
    assert [group.label for group in first.summary.groups] == ["cnn", "mlp"]
    assert first.summary.spec.direction_from == f"the objective of ledger {ledger_dir}"  # the ledger said "maximize"
    assert summarize_ledger(ledger_dir, val=VAL, **OPTIONS).status == "unchanged"
    summary_runs = [run for run in Ledger(ledger_dir).runs() if run.id.startswith("boontrack-")]
    assert len(summary_runs) == 1 and summary_runs[0].state == "done"


def test_a_mistake_in_the_call_raises(ledger_dir: Path) -> None:
    with pytest.raises(InputError, match="n_resampels"):
        summarize_ledger(ledger_dir, val=VAL, n_resampels=99)


def test_a_metric_the_runs_lack_is_warned_after_the_sweep_or_raised(ledger_dir: Path) -> None:
    with pytest.warns(WriteBackWarning, match="summarizing the ledger .* failed: .*not_logged"):
        result = summarize_ledger(ledger_dir, val="not_logged", **OPTIONS)
    assert result.status == "failed"
    with pytest.raises(InputError, match="not_logged"):
        summarize_ledger(ledger_dir, val="not_logged", raise_on_error=True, **OPTIONS)
