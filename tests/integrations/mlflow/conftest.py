"""Fixtures for the MLflow backend tests: a real ``mlflow server`` for the session, a shared sqlite store, and
sweeps with known values logged through the real MlflowClient (the server itself is the session fixture
``mlflow_server`` of ``tests/conftest.py``).

Most tests run on the embedded sqlite store (no server, twice as fast); the server covers the HTTP paths
(artifact proxying, get-history-bulk over REST, transport errors).
"""

from __future__ import annotations

import contextlib

import pytest

pytest.importorskip("mlflow")


@pytest.fixture(autouse=True)
def _working_directory_in_tmp(tmp_path, monkeypatch):
    """Run each test in its own temporary directory: MLflow keeps the artifacts of experiments created without
    an artifact location in ``./mlruns``, which must not land in the checkout."""
    monkeypatch.chdir(tmp_path)


@pytest.fixture(scope="session")
def sqlite_uri(tmp_path_factory) -> str:
    """One embedded sqlite store for the session (creating the schema costs ~1 s); tests use own experiments."""
    from mlflow import MlflowClient

    root = tmp_path_factory.mktemp("mlflow_sqlite")
    uri = f"sqlite:///{root / 'mlflow.db'}"
    with contextlib.chdir(root):  # the store's default experiment keeps artifacts in ./mlruns
        MlflowClient(uri).search_experiments()  # creates the store: boontrack reads only existing ones
    return uri


@pytest.fixture(params=["sqlite", "server"])
def any_uri(request) -> str:
    """Each test using this runs against both the embedded store and the server."""
    return request.getfixturevalue("sqlite_uri" if request.param == "sqlite" else "mlflow_server")
