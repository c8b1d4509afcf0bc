"""What ``boontrack simulate`` prints: truths without floating-point dust, and a progress bar whose estimate of the
time left follows the work of each step."""

from __future__ import annotations

import io
import sys

import pytest

from boontrack._progress import progress_bar
from boontrack.simulate import format_study, population, study
from boontrack.simulate.study import EstimatorError, Study


def _errors(truth: float, rmse: float) -> EstimatorError:
    return EstimatorError("normal", 10, 1, "V", truth, 0.0, rmse**2, rmse**2, 100)


def _truth_shown(result: Study) -> str:
    row = next(line for line in format_study(result).splitlines() if line.startswith("1  V"))
    return row.split()[2]


@pytest.mark.parametrize(
    ("truth", "rmse", "shown"),
    [
        (8.284e-19, 0.3, "0"),  # an integral's rounding error where Boo_1 of N(0, 1) is 0
        (-3e-17, 0.3, "0"),
        (1e-4, 0.3, "0.0001"),  # small but real: kept
        (2e-12, 1e-11, "2e-12"),  # dust only relative to the table's scale: a tiny-scale population keeps it
    ],
)
def test_a_truth_below_a_billionth_of_the_tables_scale_is_shown_as_0(truth, rmse, shown):
    result = Study("normal", 10, (_errors(truth, rmse),), (), None, None)
    assert _truth_shown(result) == shown


def test_the_normal_populations_boo_1_prints_as_0():
    result = study(population("normal"), m=8, n=1, methods=("percentile",), replications=4, n_resamples=9, rng=0)
    assert _truth_shown(result) == "0"


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_weighted_bar_advances_by_each_steps_weight(monkeypatch):
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    seen = []
    with progress_bar(["cheap", "dear"], enabled=True, label="work", weights=[1, 3]) as steps:
        for step in steps:
            seen.append((step, terminal.getvalue()))
    assert [step for step, _ in seen] == ["cheap", "dear"]
    assert "25%" in seen[1][1]  # after the cheap step, a quarter of the work is done
    assert "100%" in terminal.getvalue()


def test_the_simulation_shows_its_progress_on_a_terminal_only(monkeypatch):
    kwargs = dict(m=8, n=(1, 3), methods=("percentile",), width=5.0, plan_runs=(5, 10), replications=4)
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    shown = study(population("normal"), n_resamples=9, rng=0, progress=True, **kwargs)
    assert "boontrack: simulating" in terminal.getvalue() and "100%" in terminal.getvalue()
    captured = io.StringIO()
    monkeypatch.setattr(sys, "stderr", captured)
    silent = study(population("normal"), n_resamples=9, rng=0, progress=True, **kwargs)
    assert captured.getvalue() == ""
    assert format_study(silent) == format_study(shown)
