"""Comparing an MLflow sweep (sqlite store) with a CSV file of the same runs shifted by a known amount, through
the command line with per-source options."""

from __future__ import annotations

import uuid
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from mlflow import MlflowClient

from boontrack import cli
from boontrack.sources import compare_sources, load_comparison, to_markdown, write_comparison

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


def _compared(sqlite_uri, sweep, path):
    """The sweep (labelled tracked) against the file, with per-source options."""
    return compare_sources(
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


def test_an_mlflow_sweep_against_a_shifted_csv_copy(sqlite_uri, sweep_and_copy):
    sweep, path = sweep_and_copy
    result = _compared(sqlite_uri, sweep, path)
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
            "--write-to",
            "mlflow:compared-on-the-command-line",
            "--write-option",
            f"tracking-uri={sqlite_uri}",
        ],
    )
    assert result.exit_code == 3, result.output  # the tracked runs are SHIFT worse than the file's
    assert "not supported: tracked better than file" in result.output
    assert "Comparison written: mlflow:compared-on-the-command-line" in result.stderr
    (written,) = MlflowClient(sqlite_uri).search_runs(
        [MlflowClient(sqlite_uri).get_experiment_by_name("compared-on-the-command-line").experiment_id]
    )
    assert written.data.metrics["boon/gate/passed"] == 0.0


def test_a_comparison_written_to_mlflow_is_its_own_run_rewritten_only_when_the_runs_change(
    sqlite_uri, sweep_and_copy, tmp_path
):
    sweep, path = sweep_and_copy
    destination = f"mlflow:comparisons-{uuid.uuid4().hex[:8]}"
    result = _compared(sqlite_uri, sweep, path)
    assert write_comparison(result, destination, tracking_uri=sqlite_uri) == "updated"
    assert write_comparison(result, destination, tracking_uri=sqlite_uri) == "unchanged"
    client = MlflowClient(sqlite_uri)
    experiment = client.get_experiment_by_name(destination.removeprefix("mlflow:"))
    (run,) = client.search_runs([experiment.experiment_id])
    metrics = run.data.metrics
    assert metrics["boon/test_acc/file/vs_tracked/boo_5"] == pytest.approx(SHIFT, abs=1e-12)
    assert metrics["boon/gate/passed"] == 1.0
    assert metrics["boon/gate/bound"] == result.gate.bound and metrics["boon/gate/threshold"] == 0.0
    report = Path(client.download_artifacts(run.info.run_id, "report.md", str(tmp_path)))
    assert report.read_text(encoding="utf-8") == to_markdown(result, svg=True)
    plot = Path(client.download_artifacts(run.info.run_id, "curves_test_acc.svg", str(tmp_path)))
    assert "](curves_test_acc.svg)" in report.read_text(encoding="utf-8") and plot.read_bytes().startswith(b"<?xml")
    # the copy shifted by twice as much: the same comparison, whose run is replaced (one run for it still)
    copy = pd.read_csv(path)
    copy.assign(val_acc=copy["val_acc"] + SHIFT, test_acc=copy["test_acc"] + SHIFT).to_csv(path, index=False)
    assert write_comparison(_compared(sqlite_uri, sweep, path), destination, tracking_uri=sqlite_uri) == "updated"
    (again,) = client.search_runs([experiment.experiment_id])
    assert again.data.metrics["boon/test_acc/file/vs_tracked/boo_5"] == pytest.approx(2 * SHIFT, abs=1e-12)


def test_write_to_in_a_config_file_writes_the_run_that_write_to_on_the_command_line_writes(
    sqlite_uri, sweep_and_copy, tmp_path
):
    sweep, path = sweep_and_copy
    experiment = f"from-a-file-{uuid.uuid4().hex[:8]}"
    config = tmp_path / "compare.toml"
    config.write_text(
        f'sources = ["mlflow:", "{path.name}"]\n'
        'labels = ["tracked", "file"]\n'
        f'options = [{{parent = "{sweep.parent_id}", tracking_uri = "{sqlite_uri}"}}, {{}}]\n'
        'val = "val_acc"\ntest = "test_acc"\nseed_column = "seed"\nn = [1, 5]\nn_resamples = 99\n'
        f'write_to = "mlflow:{experiment}"\nwrite_options = {{tracking_uri = "{sqlite_uri}"}}\n',
        encoding="utf-8",
    )
    from_file = CliRunner().invoke(cli.main, ["compare", "--config", str(config)])
    assert from_file.exit_code == 0, from_file.output
    assert f"Comparison written: mlflow:{experiment}" in from_file.stderr
    typed = CliRunner().invoke(
        cli.main,
        [
            *("compare", "mlflow:", str(path), "--label", "tracked", "--label", "file"),
            *("--source-option", f"1:parent={sweep.parent_id}", "--source-option", f"1:tracking-uri={sqlite_uri}"),
            *("--val", "val_acc", "--test", "test_acc", "--seed-column", "seed", "--n", "1,5", "--resamples", "99"),
            *("--write-to", f"mlflow:{experiment}", "--write-option", f"tracking-uri={sqlite_uri}"),
        ],
    )
    assert typed.exit_code == 0, typed.output
    assert typed.stdout == from_file.stdout
    # the same comparison's run: the command line finds it written, with the same fingerprint
    assert f"Comparison up to date, nothing written: mlflow:{experiment}" in typed.stderr
    client = MlflowClient(sqlite_uri)
    (run,) = client.search_runs([client.get_experiment_by_name(experiment).experiment_id])
    assert run.data.metrics["boon/test_acc/file/vs_tracked/boo_5"] == pytest.approx(SHIFT, abs=1e-12)
    # and in Python, the file's keywords
    assert compare_sources(**load_comparison(config)).written == "unchanged"


def test_an_unknown_option_of_the_destination_is_one_line_and_exit_2_before_any_run_is_read(tmp_path):
    config = tmp_path / "compare.toml"
    config.write_text(  # the sources do not exist: any read would fail with another message
        'sources = ["main.csv", "branch.csv"]\nval = "val_acc"\n'
        'write_to = "mlflow:comparisons"\nwrite_options = {tracking_url = "sqlite:///m.db"}\n',
        encoding="utf-8",
    )
    result = CliRunner().invoke(cli.main, ["compare", "--config", str(config)])
    assert result.exit_code == 2, result.output
    assert result.stdout == "" and result.stderr.count("\n") == 1
    assert "`write_options`: mlflow destinations take no option 'tracking_url' (known: tracking_uri)" in result.stderr
