"""Failures: a dead server, a server answering 500, a deleted parent, credentials in URIs, concurrent jobs."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import warnings
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from click.testing import CliRunner

from boontrack.backends import MetricRequest
from boontrack.cli import main
from boontrack.exceptions import BackendError, WriteBackWarning
from boontrack.integrations.mlflow import MlflowSource, summarize_sweep
from boontrack.integrations.mlflow._client import HTTP_DEFAULTS, bounded_http, redact

from integrations.mlflow.mlflow_helpers import free_port, mixed_sweep, summary_runs

pytestmark = pytest.mark.mlflow

FAST = {"n_resamples": 200, "n": (1, 3)}


@pytest.fixture
def dead_uri() -> str:
    """A tracking URI with credentials, where nothing listens."""
    return f"http://alice:s3cret-pw@127.0.0.1:{free_port()}"


@pytest.fixture
def default_http_settings(monkeypatch):
    """No user-set MLflow HTTP variables, so boontrack's bounded defaults apply."""
    for name in HTTP_DEFAULTS:
        if name.startswith("MLFLOW_HTTP_"):
            monkeypatch.delenv(name, raising=False)


def test_dead_server_fails_fast_without_credentials(dead_uri, default_http_settings):
    started = time.monotonic()
    with pytest.raises(BackendError) as info:
        MlflowSource("sweeps", tracking_uri=dead_uri).read(MetricRequest("val_acc"))
    assert time.monotonic() - started < 20  # MLflow's defaults take about four minutes
    message = str(info.value)
    assert "s3cret-pw" not in message and "alice" not in message
    assert "127.0.0.1" in message and "resolving the experiment" in message


def test_dead_server_cli_exit_code_1(dead_uri, default_http_settings):
    result = CliRunner().invoke(
        main, ["summarize", "mlflow:sweeps", "--tracking-uri", dead_uri, "--val", "val_acc"]
    )
    assert result.exit_code == 1
    assert "s3cret-pw" not in result.output and "Error:" in result.output


def test_user_http_settings_win_and_defaults_are_scoped(monkeypatch):
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_TIMEOUT", "77")
    monkeypatch.delenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", raising=False)
    with bounded_http():
        assert os.environ["MLFLOW_HTTP_REQUEST_TIMEOUT"] == "77"
        assert os.environ["MLFLOW_HTTP_REQUEST_MAX_RETRIES"] == HTTP_DEFAULTS["MLFLOW_HTTP_REQUEST_MAX_RETRIES"]
    assert "MLFLOW_HTTP_REQUEST_MAX_RETRIES" not in os.environ  # the user's process is left as it was


def test_redact_removes_userinfo_and_secret_variables(monkeypatch):
    monkeypatch.setenv("MLFLOW_TRACKING_TOKEN", "tok-abc-123")
    text = "GET https://bob:pa55@mlflow.example.com/api failed; header Bearer tok-abc-123"
    cleaned = redact(text)
    assert "pa55" not in cleaned and "bob" not in cleaned and "tok-abc-123" not in cleaned
    assert "https://***@mlflow.example.com/api" in cleaned


class _FailingProxy(BaseHTTPRequestHandler):
    """Forwards to the real server, except that one route answers 500 (as a broken server or proxy would)."""

    upstream = ""
    failing_route = "/api/2.0/mlflow/runs/log-batch"

    def _handle(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path.startswith(self.failing_route):
            payload = b'{"error_code": "INTERNAL_ERROR", "message": "injected failure"}'
            self.send_response(500)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
            return
        headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length")}
        request = urllib.request.Request(self.upstream + self.path, data=body or None, headers=headers,
                                         method=self.command)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                status, data, kind = response.status, response.read(), response.headers.get("Content-Type", "")
        except urllib.error.HTTPError as error:
            status, data, kind = error.code, error.read(), error.headers.get("Content-Type", "")
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _handle

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def failing_proxy(mlflow_server, request):
    route = getattr(request, "param", _FailingProxy.failing_route)
    handler = type("Handler", (_FailingProxy,), {"upstream": mlflow_server, "failing_route": route})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_write_failure_warns_returns_and_leaves_no_partial_summary(mlflow_server, failing_proxy, monkeypatch):
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "0")  # the user's setting wins; keeps the test fast
    sweep = mixed_sweep(mlflow_server, finished=5)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = summarize_sweep(sweep.parent_id, val="val_acc", test="test_acc", tracking_uri=failing_proxy, **FAST)
    assert result.status == "write-failed" and not result.ok
    assert "writing the summary" in result.error and result.summary is not None
    assert any(issubclass(w.category, WriteBackWarning) for w in caught)
    assert summary_runs(sweep.client, sweep.experiment_id) == []  # the partial run was discarded

    with pytest.raises(BackendError, match="injected failure|500"):
        summarize_sweep(
            sweep.parent_id, val="val_acc", test="test_acc", tracking_uri=failing_proxy, raise_on_error=True, **FAST
        )
    # the real server still works, and the next run writes the summary
    assert summarize_sweep(sweep.parent_id, val="val_acc", test="test_acc", tracking_uri=mlflow_server,
                           **FAST).status == "updated"


@pytest.mark.parametrize("failing_proxy", ["/api/2.0/mlflow/runs/search"], indirect=True)
def test_read_failure_warns_and_fails_the_result_or_raises_when_asked(mlflow_server, failing_proxy, monkeypatch):
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "0")
    sweep = mixed_sweep(mlflow_server, finished=3)
    # the sweep is over: an unreadable server must not crash the script that called the callback
    with pytest.warns(WriteBackWarning, match="reading runs of experiment"):
        result = summarize_sweep(sweep.parent_id, val="val_acc", tracking_uri=failing_proxy, **FAST)
    assert (result.status, result.summary, result.ok) == ("failed", None, False)
    assert "500" in result.error or "INTERNAL_ERROR" in result.error
    with pytest.raises(BackendError, match="reading runs of experiment"):
        summarize_sweep(sweep.parent_id, val="val_acc", tracking_uri=failing_proxy, raise_on_error=True, **FAST)
    assert summary_runs(sweep.client, sweep.experiment_id) == []


def test_deleted_parent_is_an_input_error_exit_2(sqlite_uri):
    sweep = mixed_sweep(sqlite_uri, finished=3)
    sweep.client.delete_run(sweep.parent_id)
    result = CliRunner().invoke(main, [
        "summarize", f"mlflow:{sweep.experiment_name}", "--parent", sweep.parent_id,
        "--tracking-uri", sqlite_uri, "--val", "val_acc", "--write-back",
    ])  # fmt: skip
    assert result.exit_code == 2
    assert "is deleted" in result.output


@pytest.mark.slow
def test_concurrent_reaggregate_processes(sqlite_uri, tmp_path):
    sweep = mixed_sweep(sqlite_uri, finished=6)
    config = tmp_path / "boontrack.toml"
    config.write_text(
        f'[[jobs]]\nname = "sweep"\nsource = "mlflow:{sweep.experiment_name}"\nparent = "{sweep.parent_id}"\n'
        f'tracking_uri = "{sqlite_uri}"\nval = "val_acc"\ntest = "test_acc"\nn = [1, 3]\nresamples = 200\nwrite_back = true\n'
    )
    command = [sys.executable, "-c", "from boontrack.cli import main; main()", "reaggregate", "--config", str(config)]
    env = {**os.environ, "MLFLOW_SUPPRESS_PRINTING_URL_TO_STDOUT": "true"}
    processes = [subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for _ in range(2)]
    outputs = [p.communicate(timeout=120) for p in processes]
    assert [p.returncode for p in processes] == [0, 0], outputs
    lines = sorted(out.strip().splitlines()[-1] for out, _ in outputs)
    assert lines[0].startswith("sweep: unchanged") and lines[1].startswith("sweep: updated"), lines
    assert len(summary_runs(sweep.client, sweep.experiment_id)) == 1
