"""Fixtures for the MLflow backend tests: a real ``mlflow server`` for the session, a shared sqlite store, and
sweeps with known values logged through the real MlflowClient.

Most tests run on the embedded sqlite store (no server, twice as fast); the server covers the HTTP paths
(artifact proxying, get-history-bulk over REST, transport errors).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
import urllib.request

import pytest

pytest.importorskip("mlflow")

from integrations.mlflow.mlflow_helpers import free_port  # noqa: E402

SERVER_START_TIMEOUT_S = 120


def _healthy(uri: str) -> bool:
    try:
        with urllib.request.urlopen(f"{uri}/health", timeout=2) as response:
            return response.status == 200 and response.read().strip() == b"OK"
    except OSError:
        return False


@pytest.fixture(autouse=True)
def _working_directory_in_tmp(tmp_path, monkeypatch):
    """Run each test in its own temporary directory: MLflow keeps the artifacts of experiments created without
    an artifact location in ``./mlruns``, which must not land in the checkout."""
    monkeypatch.chdir(tmp_path)


@pytest.fixture(scope="session", autouse=True)
def _quiet_mlflow():
    """No "View run" links on stdout (and no extra request per call) for the runs the tests create."""
    previous = os.environ.get("MLFLOW_SUPPRESS_PRINTING_URL_TO_STDOUT")
    os.environ["MLFLOW_SUPPRESS_PRINTING_URL_TO_STDOUT"] = "true"
    yield
    if previous is None:
        os.environ.pop("MLFLOW_SUPPRESS_PRINTING_URL_TO_STDOUT", None)
    else:
        os.environ["MLFLOW_SUPPRESS_PRINTING_URL_TO_STDOUT"] = previous


@pytest.fixture(scope="session")
def mlflow_server(tmp_path_factory) -> str:
    """URI of a real ``mlflow server`` (sqlite backend, proxied artifacts), stopped at the end of the session."""
    root = tmp_path_factory.mktemp("mlflow_server")
    port = free_port()
    uri = f"http://127.0.0.1:{port}"
    env = {**os.environ, "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"}
    command = [
        sys.executable, "-m", "mlflow", "server",
        "--backend-store-uri", f"sqlite:///{root / 'mlflow.db'}",
        "--artifacts-destination", str(root / "artifacts"),
        "--host", "127.0.0.1", "--port", str(port), "--workers", "1",
    ]  # fmt: skip
    log = open(root / "server.log", "wb")  # noqa: SIM115 - closed after the server stops
    # Own session: stopping the process group also stops the uvicorn worker.
    process = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + SERVER_START_TIMEOUT_S
        while not _healthy(uri):
            if process.poll() is not None:
                pytest.fail(f"mlflow server exited with {process.returncode}:\n{(root / 'server.log').read_text()}")
            if time.monotonic() > deadline:
                pytest.fail(f"mlflow server not ready after {SERVER_START_TIMEOUT_S} s")
            time.sleep(0.2)
        yield uri
    finally:
        try:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(20)
        except ProcessLookupError:
            pass
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(10)
        log.close()


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


