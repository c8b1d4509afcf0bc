"""Crashes at every write step against a real server: the next run leaves exactly one complete summary.

A proxy in front of the real ``mlflow server`` forwards every request, except that it holds the response of one
chosen request (the server has done the work; the client never hears back). The writer is a subprocess,
killed with SIGKILL while it waits. Then a normal run follows, and the store is checked through MlflowClient:
exactly one FINISHED summary run of the key with the right numbers, its group curve runs, and no RUNNING or
stale runs of boontrack's own.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import urllib.error
import urllib.request
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pytest

from boontrack.backends import SUMMARY_ROLE_TAG
from boontrack.runframe import GROUP_CURVE_ROLE
from boontrack_mlflow import summarize_sweep
from boontrack_mlflow._sink import FINGERPRINT_TAG, KEY_TAG, WRITE_TAG

import crash_writer
from mlflow_helpers import mixed_sweep

pytestmark = pytest.mark.mlflow

SPEC = crash_writer.SPEC
HELD_WAIT_S = 120


class _HoldingProxy(BaseHTTPRequestHandler):
    """Forwards requests to ``upstream``, except the ``occurrence``-th one whose path starts with ``route``:
    mode "hold" forwards it and withholds the response until ``release`` (the server acted, the client never
    hears back); "hold-unsent" holds it without forwarding (the client dies before the server acts); "drop"
    forwards it and closes the connection at once (a response lost in transit)."""

    upstream = ""
    route = ""
    occurrence = 1
    mode = "hold"
    seen = 0
    lock = threading.Lock()
    held = threading.Event()
    release = threading.Event()

    def _handle(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        chosen = False
        if self.path.startswith(self.route):
            with self.lock:
                type(self).seen += 1
                chosen = type(self).seen == self.occurrence
        if chosen and self.mode == "hold-unsent":
            self.held.set()
            self.release.wait(HELD_WAIT_S)
            self.close_connection = True
            return
        status, data, kind = self._forward(body)
        if chosen:
            self.held.set()
            if self.mode == "hold":
                self.release.wait(HELD_WAIT_S)
            self.close_connection = True
            return
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _forward(self, body: bytes) -> tuple[int, bytes, str]:
        headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length")}
        request = urllib.request.Request(
            self.upstream + self.path, data=body or None, headers=headers, method=self.command
        )
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return response.status, response.read(), response.headers.get("Content-Type", "")
        except urllib.error.HTTPError as error:
            return error.code, error.read(), error.headers.get("Content-Type", "")

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _handle

    def log_message(self, *args) -> None:
        pass


def start_proxy(upstream: str, route: str, occurrence: int = 1, mode: str = "hold"):
    handler = type(
        "Handler",
        (_HoldingProxy,),
        {
            "upstream": upstream,
            "route": route,
            "occurrence": occurrence,
            "mode": mode,
            "seen": 0,
            "lock": threading.Lock(),
            "held": threading.Event(),
            "release": threading.Event(),
        },
    )
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, handler, f"http://127.0.0.1:{server.server_address[1]}"


def stop_proxy(server, handler) -> None:
    handler.release.set()
    server.shutdown()
    server.server_close()


#: Writers are forked from one server process that imported MLflow and boontrack once (crash_writer).
WRITERS = multiprocessing.get_context("forkserver")
WRITERS.set_forkserver_preload(crash_writer.PRELOAD)


def kill_writer_at(uri: str, parent_id: str, route: str, occurrence: int, mode: str, report: Path) -> None:
    """Run a writer through a proxy and SIGKILL it while the chosen request is held."""
    server, handler, proxy_uri = start_proxy(uri, route, occurrence, mode)
    writer = WRITERS.Process(target=crash_writer.write, args=(parent_id, proxy_uri, HELD_WAIT_S, str(report)))
    writer.start()
    try:
        while not handler.held.wait(0.2):
            if not writer.is_alive():
                failure = report.read_text()[-2000:] if report.exists() else f"exit code {writer.exitcode}"
                pytest.fail(f"the writer ended before {route} #{occurrence}: {failure}")
        os.kill(writer.pid, signal.SIGKILL)
        writer.join(30)
        assert writer.exitcode == -signal.SIGKILL
    finally:
        if writer.is_alive():
            writer.kill()
            writer.join(30)
        stop_proxy(server, handler)


def own_runs(client, experiment_id: str) -> list:
    """Every active run carrying boontrack's role tag (summaries, group curve runs, leftovers)."""
    return [r for r in client.search_runs([experiment_id]) if SUMMARY_ROLE_TAG in r.data.tags]


def assert_one_complete_summary(sweep, fingerprint: str) -> None:
    """Exactly one FINISHED summary with ``fingerprint`` and the sweep's numbers, its one group run, nothing else."""
    runs = own_runs(sweep.client, sweep.experiment_id)
    summaries = [r for r in runs if r.data.tags[SUMMARY_ROLE_TAG] == "summary"]
    assert len(summaries) == 1, [(r.info.run_id, r.info.status, r.data.tags.get(FINGERPRINT_TAG)) for r in runs]
    (summary,) = summaries
    assert summary.info.status == "FINISHED" and summary.data.tags[FINGERPRINT_TAG] == fingerprint
    kept = sweep.finished()
    test = np.array([c["test"][-1] for c in kept.values()])
    assert summary.data.metrics["boon/runs"] == len(kept)
    assert summary.data.metrics["boon/test_acc/mean"] == pytest.approx(test.mean(), abs=1e-12)
    (group,) = [r for r in runs if r is not summary]  # no group_by: one group
    assert group.data.tags[SUMMARY_ROLE_TAG] == GROUP_CURVE_ROLE and group.info.status == "FINISHED"
    assert group.data.tags["mlflow.parentRunId"] == summary.info.run_id
    assert {r.data.tags[WRITE_TAG] for r in runs} == {summary.data.tags[WRITE_TAG]}


def test_a_summary_is_one_summary_run_and_one_group_run(mlflow_server):
    sweep = mixed_sweep(mlflow_server, finished=5)
    result = summarize_sweep(sweep.parent_id, tracking_uri=mlflow_server, **SPEC)
    assert result.status == "updated"
    assert_one_complete_summary(sweep, result.fingerprint)


#: (route, occurrence, mode): the server has done the work of the held request, except for the deletions,
#: which are held before they reach it (a deletion the server did leaves nothing to repair).
CRASH_POINTS = [
    pytest.param("/api/2.0/mlflow/experiments/set-experiment-tag", 1, "hold", id="recording-the-write"),
    pytest.param("/api/2.0/mlflow/runs/create", 1, "hold", id="create-summary-run"),
    pytest.param("/api/2.0/mlflow/runs/log-batch", 1, "hold", id="metric-batch"),
    pytest.param("/api/2.0/mlflow-artifacts/artifacts/", 1, "hold", id="artifact-upload"),
    pytest.param("/api/2.0/mlflow/runs/create", 2, "hold", id="create-group-run"),
    pytest.param("/api/2.0/mlflow/runs/update", 2, "hold", id="set-terminated"),
    pytest.param("/api/2.0/mlflow/runs/set-tag", 1, "hold", id="fingerprint-tag"),
    pytest.param("/api/2.0/mlflow/runs/delete", 1, "hold-unsent", id="delete-superseded-group-run"),
    pytest.param("/api/2.0/mlflow/runs/delete", 2, "hold-unsent", id="delete-superseded-summary-run"),
]


@pytest.mark.slow
@pytest.mark.parametrize(("route", "occurrence", "mode"), CRASH_POINTS)
def test_kill_at_any_write_step_then_one_run_converges(mlflow_server, route, occurrence, mode, tmp_path):
    sweep = mixed_sweep(mlflow_server, finished=5)
    old = summarize_sweep(sweep.parent_id, tracking_uri=mlflow_server, **SPEC)
    assert old.status == "updated"
    sweep.add_child(val=[0.95], test=[0.94], params={"seed": 60, "lr": 0.1})  # the next write supersedes it

    kill_writer_at(mlflow_server, sweep.parent_id, route, occurrence, mode, tmp_path / "writer-failure.txt")

    repaired = summarize_sweep(sweep.parent_id, tracking_uri=mlflow_server, **SPEC)
    assert repaired.status == "updated" and repaired.ok  # never "up to date" over a broken state
    assert_one_complete_summary(sweep, repaired.fingerprint)
    again = summarize_sweep(sweep.parent_id, tracking_uri=mlflow_server, **SPEC)
    assert again.status == "unchanged"
    assert_one_complete_summary(sweep, repaired.fingerprint)


def test_a_retried_create_run_leaves_no_duplicate(mlflow_server, monkeypatch):
    # The server creates the run but the response is lost; MLflow's client retries and creates a second one.
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "1")
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR", "0")
    sweep = mixed_sweep(mlflow_server, finished=5)
    server, handler, proxy_uri = start_proxy(mlflow_server, "/api/2.0/mlflow/runs/create", 1, mode="drop")
    try:
        result = summarize_sweep(sweep.parent_id, tracking_uri=proxy_uri, **SPEC)
    finally:
        stop_proxy(server, handler)
    assert handler.held.is_set() and result.status == "updated", result.error
    assert_one_complete_summary(sweep, result.fingerprint)


def test_a_lookalike_run_from_elsewhere_is_never_deleted_nor_taken_for_the_summary(sqlite_uri):
    sweep = mixed_sweep(sqlite_uri, finished=5)
    first = summarize_sweep(sweep.parent_id, tracking_uri=sqlite_uri, **SPEC)
    (real,) = [r for r in own_runs(sweep.client, sweep.experiment_id) if r.data.tags[SUMMARY_ROLE_TAG] == "summary"]
    # A run imported from another store: the same tags, a write id this experiment never recorded.
    tags = {**real.data.tags, WRITE_TAG: uuid.uuid4().hex}
    lookalike = sweep.client.create_run(sweep.experiment_id, tags=tags).info.run_id
    sweep.client.set_terminated(lookalike, "FINISHED")
    assert real.data.tags[KEY_TAG] == tags[KEY_TAG]

    unchanged = summarize_sweep(sweep.parent_id, tracking_uri=sqlite_uri, **SPEC)
    assert unchanged.status == "unchanged" and unchanged.fingerprint == first.fingerprint
    sweep.add_child(val=[0.95], test=[0.94], params={"seed": 60, "lr": 0.1})
    changed = summarize_sweep(sweep.parent_id, tracking_uri=sqlite_uri, **SPEC)
    assert changed.status == "updated"

    imported = sweep.client.get_run(lookalike)
    assert imported.info.lifecycle_stage == "active" and imported.data.tags == tags
    assert sweep.client.get_run(real.info.run_id).info.lifecycle_stage == "deleted"
    ours = [r for r in own_runs(sweep.client, sweep.experiment_id) if r.info.run_id != lookalike]
    assert {r.data.tags[FINGERPRINT_TAG] for r in ours if FINGERPRINT_TAG in r.data.tags} == {changed.fingerprint}
