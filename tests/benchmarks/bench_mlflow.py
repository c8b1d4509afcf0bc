"""Benchmark: reading MLflow sweeps of 1,000 and 10,000 child runs, and the requests of one write-back.

Compares, in one process on the same data:

- ``boontrack``: :meth:`boontrack_mlflow.MlflowSource.read` (MlflowClient paging, own frame build);
- ``mlflow.search_runs``: MLflow's fluent search returning a pandas DataFrame;
- ``raw REST``: POSTs to ``/api/2.0/mlflow/runs/search`` with ``requests``, JSON straight into a DataFrame
  (server only: an embedded store has no REST API).

against the embedded sqlite store and a real ``mlflow server`` (1 worker) on the same sqlite file. The child runs
(params seed/lr/model, metrics val_acc/test_acc, 5 % FAILED) are inserted in bulk with SQLAlchemy into MLflow's
own tables, since MLflow has no bulk create-runs API (one run costs ~20-60 ms through the client).

Run:  python tests/benchmarks/bench_mlflow.py [--sizes 1000 10000] [--repeat 3]
Prints a Markdown table of median seconds, then the request count of a full summary write-back.

      python tests/benchmarks/bench_mlflow.py --histories-only [--sizes 10000] [--workers 4]
Measures ``pick="best_val_step"`` over HTTP on runs of which 10 % log per-epoch histories: the get-history-bulk
requests sent and the median time of the read.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

os.environ.setdefault("MLFLOW_SUPPRESS_PRINTING_URL_TO_STDOUT", "true")

import mlflow  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import requests  # noqa: E402
from mlflow import MlflowClient  # noqa: E402
from mlflow_tools import EPOCHS, insert_children  # noqa: E402

from boontrack.backends import MetricRequest  # noqa: E402
from boontrack_mlflow import MlflowSource  # noqa: E402

REQUEST = MetricRequest("val_acc", "test_acc")


def start_server(db: Path, root: Path, *, workers: int = 1) -> tuple[subprocess.Popen, str]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    uri = f"http://127.0.0.1:{port}"
    command = [
        sys.executable,
        "-m",
        "mlflow",
        "server",
        "--backend-store-uri",
        f"sqlite:///{db}",
        "--artifacts-destination",
        str(root / "artifacts"),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--workers",
        str(workers),
    ]
    env = {**os.environ, "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"}
    process = subprocess.Popen(
        command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{uri}/health", timeout=2) as response:
                if response.read().strip() == b"OK":
                    return process, uri
        except OSError:
            time.sleep(0.3)
    os.killpg(process.pid, signal.SIGTERM)
    raise RuntimeError("mlflow server did not start")


def read_boontrack(uri: str, experiment_id: str, parent_id: str) -> int:
    return len(MlflowSource(experiment_id, parent=parent_id, tracking_uri=uri).read(REQUEST))


def read_fluent(uri: str, experiment_id: str, parent_id: str) -> int:
    mlflow.set_tracking_uri(uri)
    return len(mlflow.search_runs([experiment_id], filter_string=f"tags.mlflow.parentRunId = '{parent_id}'"))


def read_raw_rest(uri: str, experiment_id: str, parent_id: str) -> int:
    """The floor: paged JSON from the REST API straight into a DataFrame, no entity objects."""
    rows, token = [], None
    with requests.Session() as session:
        while True:
            body = {
                "experiment_ids": [experiment_id],
                "max_results": 50000,
                "filter": f"tags.mlflow.parentRunId = '{parent_id}'",
            }
            if token:
                body["page_token"] = token
            page = session.post(f"{uri}/api/2.0/mlflow/runs/search", json=body, timeout=120).json()
            for run in page.get("runs", []):
                info, data = run["info"], run.get("data", {})
                row = {
                    "run_id": info["run_id"],
                    "status": info["status"].lower(),
                    "start_time": info.get("start_time"),
                    "end_time": info.get("end_time"),
                }
                row.update({f"metrics.{m['key']}": m["value"] for m in data.get("metrics", [])})
                row.update({f"params.{p['key']}": p["value"] for p in data.get("params", [])})
                row.update({f"tags.{t['key']}": t["value"] for t in data.get("tags", [])})
                rows.append(row)
            token = page.get("next_page_token")
            if not token:
                return len(pd.DataFrame(rows))


def median_seconds(function, *args, repeat: int, expected: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        got = function(*args)
        times.append(time.perf_counter() - started)
        if got != expected:
            raise AssertionError(f"{function.__name__} read {got} runs, expected {expected}")
    return statistics.median(times)


def count_write_back_requests(uri: str, experiment_id: str, parent_id: str) -> str:
    """HTTP requests of one full summary (read excluded), and of a second, unchanged run."""
    from boontrack.pipeline import run_job, summary_key
    from boontrack.spec import Spec

    sent: list[str] = []
    original = requests.Session.send

    def counting_send(self, request, **kwargs):
        path = request.path_url.split("?")[0]
        sent.append("PUT artifact file" if "/mlflow-artifacts/" in path else f"{request.method} {path}")
        return original(self, request, **kwargs)

    spec = Spec(val="val_acc", test="test_acc", n=(1, 5, 10), n_resamples=999)
    source = MlflowSource(experiment_id, parent=parent_id, tracking_uri=uri)
    sink = source.sink(summary_key(source.identity(), spec))
    requests.Session.send = counting_send
    try:
        source.read(REQUEST)
        reading = len(sent)
        first = run_job(source, spec, sink=sink)
        first_total = len(sent) - 2 * reading  # run_job reads once more
        second_start = len(sent)
        second = run_job(source, spec, sink=sink)
        second_total = len(sent) - second_start - reading
    finally:
        requests.Session.send = original
    kinds = pd.Series(sent[2 * reading : 2 * reading + first_total]).value_counts().to_dict()
    return (
        f"write-back ({first.status}): {first_total} requests ({kinds}); "
        f"rerun ({second.status}): {second_total} requests; reading the sweep: {reading} requests"
    )


def best_val_step_over_http(root: Path, size: int, share: float, workers: int, repeat: int) -> str:
    """``--pick best-val-step`` on ``size`` runs of which ``share`` log histories, against a server with
    ``workers`` workers: get-history-bulk requests sent and the median time of the read."""
    db = root / f"histories-{size}.db"
    sqlite_uri = f"sqlite:///{db}"
    MlflowClient(sqlite_uri).search_experiments()
    client = MlflowClient(sqlite_uri)
    experiment_id = client.create_experiment("bench-histories")
    parent = client.create_run(experiment_id, run_name="sweep").info.run_id
    client.set_terminated(parent)
    insert_children(sqlite_uri, experiment_id, parent, size, np.random.default_rng(1), histories=share)
    process, uri = start_server(db, root, workers=workers)
    request = MetricRequest("val_acc", "test_acc", pick="best_val_step")
    sent: list[str] = []
    original = requests.Session.send

    def counting_send(self, prepared, **kwargs):
        if "get-history-bulk" in prepared.path_url:
            sent.append(prepared.path_url)
        return original(self, prepared, **kwargs)

    try:
        MlflowSource(experiment_id, parent=parent, tracking_uri=uri).read(request)  # warm-up
        requests.Session.send = counting_send
        try:
            MlflowSource(experiment_id, parent=parent, tracking_uri=uri).read(request)
        finally:
            requests.Session.send = original
        seconds = median_seconds(
            lambda: len(MlflowSource(experiment_id, parent=parent, tracking_uri=uri).read(request)),
            repeat=repeat,
            expected=size,
        )
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(30)
    return (
        f"best-val-step over HTTP, {size:,} runs ({share:.0%} with {EPOCHS}-epoch histories), server with "
        f"{workers} workers: {len(sent)} get-history-bulk requests, median {seconds:.2f} s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--histories-only", action="store_true", help="Only the best-val-step measurement.")
    parser.add_argument("--workers", type=int, default=4, help="Server workers for the best-val-step measurement.")
    args = parser.parse_args()
    if args.histories_only:
        with tempfile.TemporaryDirectory(prefix="bench-mlflow-") as tmp:
            print(best_val_step_over_http(Path(tmp), max(args.sizes), 0.1, args.workers, args.repeat))
        return
    rng = np.random.default_rng(0)

    with tempfile.TemporaryDirectory(prefix="bench-mlflow-") as tmp:
        root = Path(tmp)
        db = root / "mlflow.db"
        sqlite_uri = f"sqlite:///{db}"
        MlflowClient(sqlite_uri).search_experiments()  # creates the schema before the server opens the file
        process, server_uri = start_server(db, root)
        # Created through the server, so artifacts are proxied (mlflow-artifacts:/) as in a real deployment.
        client = MlflowClient(server_uri)
        experiment_id = client.create_experiment("bench")
        parents = {}
        for size in args.sizes:
            started = time.perf_counter()
            parent = client.create_run(experiment_id, run_name=f"sweep-{size}").info.run_id
            client.set_terminated(parent)
            insert_children(sqlite_uri, experiment_id, parent, size, rng)
            parents[size] = parent
            print(f"inserted {size} child runs in {time.perf_counter() - started:.1f} s", file=sys.stderr)

        try:
            methods = [("boontrack", read_boontrack), ("mlflow.search_runs", read_fluent), ("raw REST", read_raw_rest)]
            rows = []
            for size in args.sizes:
                for backend, uri in (("sqlite", sqlite_uri), ("server", server_uri)):
                    cells = []
                    for name, function in methods:
                        if name == "raw REST" and backend == "sqlite":
                            cells.append("—")
                            continue
                        function(uri, experiment_id, parents[size])  # warm-up (connections, engine)
                        seconds = median_seconds(
                            function, uri, experiment_id, parents[size], repeat=args.repeat, expected=size
                        )
                        cells.append(f"{seconds:.2f}")
                    rows.append(f"| {size:,} | {backend} | " + " | ".join(cells) + " |")
            print(f"Median of {args.repeat} reads (seconds), {os.cpu_count()} CPUs, mlflow {mlflow.__version__}\n")
            print("| child runs | store | boontrack | mlflow.search_runs | raw REST |")
            print("|---:|---|---:|---:|---:|")
            print("\n".join(rows))
            print()
            print(count_write_back_requests(server_uri, experiment_id, parents[min(args.sizes)]))
        finally:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(30)


if __name__ == "__main__":
    main()
