"""Comparing an MLflow sweep (sqlite store) with a CSV file of the same runs shifted by a known amount, through
the command line with per-source options."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from boontrack import cli
from boontrack.sources import compare_sources

from .mlflow_helpers import boo_n_v, mixed_sweep

SHIFT = 0.5


@pytest.fixture
def sweep_and_copy(sqlite_uri, tmp_path):
    """A sweep of 8 finished runs (and three that are dropped) and a CSV file of its finished runs' last values,
    every score SHIFT higher, under the same run ids."""
    sweep = mixed_sweep(sqlite_uri, finished=8)
    finished = sweep.finished()
    copy = pd.DataFrame(
        {
            "run_id": list(finished),
            "seed": [run["params"]["seed"] for run in finished.values()],
            "val_acc": [run["val"][-1] + SHIFT for run in finished.values()],
            "test_acc": [run["test"][-1] + SHIFT for run in finished.values()],
        }
    )
    path = tmp_path / "shifted.csv"
    copy.to_csv(path, index=False)
    return sweep, path


def test_an_mlflow_sweep_against_a_shifted_csv_copy(sqlite_uri, sweep_and_copy):
    sweep, path = sweep_and_copy
    result = compare_sources(
        ["mlflow:", path],
        labels=["tracked", "file"],
        options=[{"parent": sweep.parent_id, "tracking_uri": sqlite_uri}, {}],
        val="val_acc",
        test="test_acc",
        seed_column="seed",
        n=(1, 5),
        n_resamples=99,
        require="better",
    )
    finished = sweep.finished().values()
    val = np.array([run["val"][-1] for run in finished])
    test = np.array([run["test"][-1] for run in finished])
    tracked = result.summary.group("tracked")
    assert tracked.runs == 8
    assert tracked.boo_n[5].estimate == pytest.approx(boo_n_v(val, test, 5), abs=1e-12)
    comparison = result.comparisons[0]
    assert comparison.paired  # the same seeds on both sides
    assert comparison.boo_n_difference[5].estimate == pytest.approx(SHIFT, abs=1e-12)
    assert result.gate.passed


def test_per_source_options_on_the_command_line(sqlite_uri, sweep_and_copy):
    sweep, path = sweep_and_copy
    result = CliRunner().invoke(
        cli.main,
        [
            "compare",
            str(path),
            "mlflow:",
            "--source-option",
            f"2:parent={sweep.parent_id}",
            "--source-option",
            f"2:tracking-uri={sqlite_uri}",
            "--label",
            "file",
            "--label",
            "tracked",
            "--val",
            "val_acc",
            "--test",
            "test_acc",
            "--n",
            "1,5",
            "--resamples",
            "99",
            "--require",
            "better",
        ],
    )
    assert result.exit_code == 3, result.output  # the tracked runs are SHIFT worse than the file's
    assert "not supported: tracked better than file" in result.output
