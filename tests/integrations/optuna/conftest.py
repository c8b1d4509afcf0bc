"""Fixtures for the Optuna integration tests: real studies in a temporary sqlite storage, with the values each
trial logged kept beside them, so that expectations come from what was logged, not from the code under test."""

from __future__ import annotations

import pytest

optuna = pytest.importorskip("optuna")


@pytest.fixture(autouse=True)
def _quiet_optuna_in_tmp(tmp_path, monkeypatch):
    """Optuna's per-trial log lines off; each test runs in its own directory (MLflow's ./mlruns lands there)."""
    monkeypatch.chdir(tmp_path)
    verbosity = optuna.logging.get_verbosity()
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    yield
    optuna.logging.set_verbosity(verbosity)


@pytest.fixture
def storage(tmp_path) -> str:
    """The URL of a new sqlite storage (the file appears when a study is created in it)."""
    return f"sqlite:///{tmp_path / 'optuna.db'}"
