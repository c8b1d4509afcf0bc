"""MLflow helpers shared by the benchmarks and the tests: runs inserted into MLflow's tables in bulk (there is
no bulk create-runs API, and one run costs 20-60 ms through the client), and a proxy that counts the requests a
client sends to a server."""

from __future__ import annotations

import http.client
import threading
import time
import uuid
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
from mlflow import MlflowClient

#: Epochs of the runs that log a per-epoch history.
EPOCHS = 12


def insert_children(
    uri: str,
    experiment_id: str,
    parent_id: str | None,
    count: int,
    rng: np.random.Generator,
    *,
    histories: float = 0.0,
) -> None:
    """``count`` finished (5 % failed) child runs of ``parent_id`` (None: plain runs, without a parent), inserted
    into MLflow's tables in bulk; a fraction ``histories`` of them log val_acc and test_acc per epoch
    (:data:`EPOCHS` steps)."""
    from mlflow.store.tracking.dbmodels.models import SqlLatestMetric, SqlMetric, SqlParam, SqlRun, SqlTag

    client = MlflowClient(uri)
    store = client._tracking_client.store
    artifact_root = client.get_experiment(experiment_id).artifact_location
    start = int(time.time() * 1000)
    ids = [uuid.uuid4().hex for _ in range(count)]
    status = np.where(rng.random(count) < 0.05, "FAILED", "FINISHED")
    val, test = rng.uniform(0.6, 0.9, count), rng.uniform(0.6, 0.9, count)
    runs = [
        {
            "run_uuid": r,
            "name": f"trial-{i}",
            "source_type": "LOCAL",
            "source_name": "",
            "entry_point_name": "",
            "user_id": "bench",
            "status": str(status[i]),
            "start_time": start + i,
            "end_time": start + i + 1000,
            "source_version": "",
            "lifecycle_stage": "active",
            "artifact_uri": f"{artifact_root}/{r}/artifacts",
            "experiment_id": int(experiment_id),
        }
        for i, r in enumerate(ids)
    ]
    tags = [{"key": "mlflow.parentRunId", "value": parent_id, "run_uuid": r} for r in ids if parent_id is not None]
    tags += [{"key": "mlflow.runName", "value": run["name"], "run_uuid": run["run_uuid"]} for run in runs]
    params = [
        {"key": k, "value": v, "run_uuid": r}
        for i, r in enumerate(ids)
        for k, v in (("seed", str(i)), ("lr", "0.01"), ("model", ("cnn", "lstm", "mlp")[i % 3]))
    ]
    epochs = np.where(rng.random(count) < histories, EPOCHS, 1)
    metrics = [
        {
            "key": k,
            "value": float(v[i]) - 0.01 * (epochs[i] - 1 - step),
            "timestamp": start + i,
            "step": step,
            "is_nan": False,
            "run_uuid": r,
        }
        for i, r in enumerate(ids)
        for k, v in (("val_acc", val), ("test_acc", test))
        for step in range(epochs[i])
    ]
    last_step = dict(zip(ids, (epochs - 1).tolist()))
    latest = [m for m in metrics if m["step"] == last_step[m["run_uuid"]]]
    with store.ManagedSessionMaker() as session:
        for model, rows in (
            (SqlRun, runs),
            (SqlTag, tags),
            (SqlParam, params),
            (SqlMetric, metrics),
            (SqlLatestMetric, latest),
        ):
            session.execute(model.__table__.insert(), rows)


class CountingProxy:
    """Forwards HTTP to ``target`` (one keep-alive connection per client connection), counting requests by
    method and route."""

    def __init__(self, target: str) -> None:
        host, port = target.removeprefix("http://").split(":")
        self.counts: Counter[str] = Counter()
        lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def log_message(self, *args):
                pass

            def _forward(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with lock:
                    proxy.counts[f"{self.command} {self.path.split('?')[0]}"] += 1
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
                for attempt in (1, 2):  # the server closes idle keep-alive connections: open a new one then
                    if attempt == 2 or not hasattr(self, "upstream"):
                        self.upstream = http.client.HTTPConnection(host, int(port), timeout=300)
                    try:
                        self.upstream.request(self.command, self.path, body=body or None, headers=headers)
                        answer = self.upstream.getresponse()
                        break
                    except (ConnectionError, http.client.HTTPException):
                        if attempt == 2:
                            raise
                data = answer.read()
                self.send_response(answer.status)
                for key, value in answer.getheaders():
                    if key.lower() not in ("transfer-encoding", "connection", "content-length"):
                        self.send_header(key, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _forward

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def take(self) -> Counter[str]:
        counts, self.counts = self.counts, Counter()
        return counts
