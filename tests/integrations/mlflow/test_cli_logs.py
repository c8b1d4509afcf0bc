"""The command line keeps MLflow's own log lines (and other libraries') off stderr unless ``--verbose``."""

from __future__ import annotations

import logging
import os
import subprocess
import sys

import pytest
from click.testing import CliRunner

from boontrack import cli

pytestmark = pytest.mark.mlflow


@pytest.fixture
def third_party_levels(monkeypatch):
    """The loggers' levels and MLFLOW_LOGGING_LEVEL as they were, restored after the test."""
    monkeypatch.delenv("MLFLOW_LOGGING_LEVEL", raising=False)
    loggers = [logging.getLogger(name) for name in cli.THIRD_PARTY_LOGGERS]
    saved = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.NOTSET)
    yield loggers
    for logger, level in zip(loggers, saved):
        logger.setLevel(level)


def _summarize(tmp_path, *flags: str):
    path = tmp_path / "runs.csv"
    path.write_text("run_id,val\n" + "".join(f"r{i},{i / 10}\n" for i in range(8)))
    return CliRunner().invoke(cli.main, [*flags, "summarize", str(path), "--val", "val", "--n", "1"])


def test_a_command_sets_third_party_loggers_to_warning(third_party_levels, tmp_path):
    assert _summarize(tmp_path).exit_code == 0
    assert [logger.level for logger in third_party_levels] == [logging.WARNING] * len(third_party_levels)
    assert os.environ["MLFLOW_LOGGING_LEVEL"] == "WARNING"  # read by mlflow when imported


def test_verbose_leaves_them_alone_and_a_level_the_user_set_is_kept(third_party_levels, tmp_path):
    assert _summarize(tmp_path, "--verbose").exit_code == 0
    assert {logger.level for logger in third_party_levels} == {logging.NOTSET}
    assert "MLFLOW_LOGGING_LEVEL" not in os.environ
    third_party_levels[0].setLevel(logging.DEBUG)
    assert _summarize(tmp_path).exit_code == 0
    assert third_party_levels[0].level == logging.DEBUG


def test_summarize_on_a_fresh_store_prints_no_line_of_mlflow(tmp_path):
    """A new sqlite store (MLflow creates its tables at INFO), read and written back by the command."""
    env = {k: v for k, v in os.environ.items() if k != "MLFLOW_LOGGING_LEVEL"}
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    make = (
        f"import mlflow; mlflow.set_tracking_uri({uri!r}); mlflow.set_experiment('fresh')\n"
        "for i in range(8):\n"
        "    with mlflow.start_run(): mlflow.log_metrics({'val': i / 10, 'test': i / 20})\n"
    )
    made = subprocess.run([sys.executable, "-c", make], capture_output=True, text=True, env=env, check=True)
    assert "INFO mlflow" in made.stderr  # MLflow's own lines, as a library caller sees them
    command = "from boontrack.cli import main; main()"
    args = ["summarize", "mlflow:fresh", "--tracking-uri", uri, "--val", "val", "--test", "test", "--n", "1"]
    done = subprocess.run(
        [sys.executable, "-c", command, *args, "--write-back", "--no-plots"], capture_output=True, text=True, env=env
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.startswith("Summary written: MLflow run ")
    assert "INFO" not in done.stderr
