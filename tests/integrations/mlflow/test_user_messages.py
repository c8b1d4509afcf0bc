"""What a new user meets with an MLflow store: ``--parent`` given a trial's run id says there are no runs among
that run's children, naming it; a config file's SQLite URI is relative to the file, so a scheduled job runs from any directory."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from boontrack.reaggregate import load_config, run_jobs

from mlflow_helpers import new_sweep

pytestmark = pytest.mark.mlflow


def _sweep(uri: str):
    sweep = new_sweep(uri)
    for seed in range(6):
        sweep.add_child(val=[0.5 + 0.05 * seed], test=[0.4 + 0.05 * seed], params={"seed": seed})
    return sweep


def test_a_parent_that_is_a_trials_run_is_named_as_one_without_children(sqlite_uri, tmp_path):
    sweep = _sweep(sqlite_uri)
    child = next(iter(sweep.children))
    command = [sys.executable, "-c", "from boontrack.cli import main; main()", "summarize", "mlflow:"]
    options = ["--val", "val_acc", "--maximize", "--tracking-uri", sqlite_uri, "--out", str(tmp_path / "out")]
    done = subprocess.run(
        [*command, *options, "--parent", child], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 2 and done.stdout == "" and done.stderr.count("\n") == 1
    assert done.stderr.startswith(f"Error: no runs in MLflow run {child}'s children in its experiment at sqlite:")
    assert not (tmp_path / "out").exists()


def test_a_config_files_sqlite_uri_is_relative_to_the_file_from_any_directory(tmp_path, monkeypatch):
    store = tmp_path / "project" / "stores" / "mlflow.db"
    store.parent.mkdir(parents=True)
    sweep = _sweep(f"sqlite:///{store}")
    config = tmp_path / "project" / "boontrack.toml"
    config.write_text(
        f'[[jobs]]\nname = "sweep"\nsource = "mlflow:"\nparent = "{sweep.parent_id}"\n'
        'tracking_uri = "sqlite:///stores/mlflow.db"\nval = "val_acc"\nmaximize = true\nn_resamples = 99\n'
        'out = "summaries/sweep"\n'
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    lines: list[str] = []
    assert run_jobs(load_config(Path(config)), log=lines.append) == 0, lines
    out = tmp_path / "project" / "summaries" / "sweep"
    assert lines == [f"sweep: updated ({out})"] and (out / "summary.json").is_file()
    assert list(elsewhere.iterdir()) == []  # nothing created where the job was started
