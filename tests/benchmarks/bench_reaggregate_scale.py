"""Benchmark: ``boontrack reaggregate`` over many MLflow sweeps discovered on a real ``mlflow server``.

For each way of running (serially, ``--workers 2``, ``--engine ray --workers 2``) its own set of experiments
(``scale-<mode>-<k>``) holds ``--sweeps`` sweeps of ``--runs`` child runs each (parents and children inserted
in bulk into MLflow's tables, as ``bench_mlflow.py`` does: there is no bulk create-runs API), and one job
discovers them all (``discover = { experiments = "scale-<mode>-*" }``, write-back, no plots). Three passes:

- **first**: every sweep read, summarized and written back;
- **unchanged**: nothing changed; each sweep's change token matches the one stored with its summary;
- **10 changed**: one new finished child in each of 10 sweeps, then the pass;

and, first, an **empty** pass (no sweep found): the start-up cost (imports, worker processes, a local Ray)
that every pass pays once, whatever the number of sweeps.

Each pass is one ``boontrack`` process (and its workers); requests are counted by a proxy in front of the
server (every request of the pass goes through it), peak memory is the largest resident set of any process
of the pass (``RUSAGE_CHILDREN``; Ray's own daemons included when the pass starts a local Ray).

Run:  python tests/benchmarks/bench_reaggregate_scale.py [--sweeps 1000] [--runs 50] [--modes serial workers ray]
Prints a Markdown table, and the per-sweep costs that the docs' estimate for 10^6 runs (docs/performance.md) builds on.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

os.environ.setdefault("MLFLOW_SUPPRESS_PRINTING_URL_TO_STDOUT", "true")

import numpy as np  # noqa: E402
from bench_mlflow import start_server  # noqa: E402
from mlflow import MlflowClient  # noqa: E402
from mlflow.entities import Metric  # noqa: E402
from mlflow_tools import CountingProxy, insert_children  # noqa: E402

MODES = {
    "serial": [],
    "workers": ["--workers", "2"],
    "ray": ["--engine", "ray", "--workers", "2"],
}
CONFIG = """
[[jobs]]
name = "{mode}"
source = "mlflow:"
tracking_uri = "{uri}"
discover = {{ experiments = "scale-{mode}-*" }}
val = "val_acc"
test = "test_acc"
group_by = ["model"]
plots = false
write_back = true
"""
#: Sweeps per experiment: an organisation's experiments hold a few sweeps to many.
SWEEPS_PER_EXPERIMENT = 50
#: Runs a pass in a fresh process and prints the peak resident set (kB) of the processes it waited for.
_MEASURED = """
import resource, subprocess, sys
code = subprocess.run(sys.argv[1:]).returncode
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, code, file=sys.stderr)
"""


def populate(server_uri: str, db: Path, mode: str, sweeps: int, runs: int, rng: np.random.Generator) -> list[tuple]:
    """``sweeps`` parent runs with ``runs`` children each, in experiments scale-<mode>-<k>; the (experiment,
    parent) pairs."""
    from mlflow.store.tracking.dbmodels.models import SqlRun, SqlTag

    client = MlflowClient(server_uri)  # experiments through the server: their artifacts go through it too
    sqlite_uri = f"sqlite:///{db}"
    store = MlflowClient(sqlite_uri)._tracking_client.store
    pairs = []
    for k in range(-(-sweeps // SWEEPS_PER_EXPERIMENT)):
        experiment_id = client.create_experiment(f"scale-{mode}-{k:04d}")
        count = min(SWEEPS_PER_EXPERIMENT, sweeps - k * SWEEPS_PER_EXPERIMENT)
        parents = [os.urandom(16).hex() for _ in range(count)]
        start = int(time.time() * 1000)
        with store.ManagedSessionMaker() as session:
            session.execute(
                SqlRun.__table__.insert(),
                [
                    {
                        "run_uuid": p,
                        "name": f"sweep-{i}",
                        "source_type": "LOCAL",
                        "source_name": "",
                        "entry_point_name": "",
                        "user_id": "bench",
                        "status": "FINISHED",
                        "start_time": start + i,
                        "end_time": start + i + 10,
                        "source_version": "",
                        "lifecycle_stage": "active",
                        "artifact_uri": "",
                        "experiment_id": int(experiment_id),
                    }
                    for i, p in enumerate(parents)
                ],
            )
            session.execute(
                SqlTag.__table__.insert(),
                [{"key": "mlflow.runName", "value": f"sweep-{i}", "run_uuid": p} for i, p in enumerate(parents)],
            )
        for parent in parents:
            insert_children(sqlite_uri, experiment_id, parent, runs, rng)
            pairs.append((experiment_id, parent))
    return pairs


def change(server_uri: str, pairs: list[tuple], rng: np.random.Generator) -> None:
    """One new finished child in each sweep of ``pairs``, logged through the client."""
    client = MlflowClient(server_uri)
    for experiment_id, parent in pairs:
        run = client.create_run(experiment_id, tags={"mlflow.parentRunId": parent})
        stamp = int(time.time() * 1000)
        client.log_batch(
            run.info.run_id,
            metrics=[
                Metric("val_acc", float(rng.uniform(0.6, 0.9)), stamp, 0),
                Metric("test_acc", float(rng.uniform(0.6, 0.9)), stamp, 0),
            ],
            params=[],
        )
        client.log_param(run.info.run_id, "model", "cnn")
        client.set_terminated(run.info.run_id, "FINISHED")


def reaggregate(config: Path, extra: list[str]) -> tuple[float, int, int, str]:
    """One pass: wall seconds, peak RSS (MB), exit code, output."""
    command = [
        sys.executable,
        "-c",
        _MEASURED,
        sys.executable,
        "-c",
        "from boontrack.cli import main; main()",
        "reaggregate",
        "--config",
        str(config),
        *extra,
    ]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    wall = time.perf_counter() - started
    peak_kb, code = (int(x) for x in done.stderr.strip().splitlines()[-1].split())
    return wall, peak_kb // 1024, code, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sweeps", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--modes", nargs="+", choices=list(MODES), default=list(MODES))
    parser.add_argument("--changed", type=int, default=10)
    options = parser.parse_args()
    rng = np.random.default_rng(0)

    with tempfile.TemporaryDirectory(prefix="boontrack-scale-") as tmp:
        root = Path(tmp)
        db = root / "mlflow.db"
        process, server_uri = start_server(db, root)
        proxy = CountingProxy(server_uri)
        rows, per_sweep = [], {}
        try:
            for mode in options.modes:
                config = root / f"{mode}.toml"
                config.write_text(CONFIG.format(mode=mode, uri=proxy.url))
                proxy.take()
                wall, peak, code, output = reaggregate(config, MODES[mode])
                rows.append((mode, "empty (start-up)", wall, sum(proxy.take().values()), peak, {}, Counter()))
                started = time.perf_counter()
                pairs = populate(server_uri, db, mode, options.sweeps, options.runs, rng)
                print(
                    f"{mode}: {len(pairs)} sweeps x {options.runs} runs inserted in "
                    f"{time.perf_counter() - started:.0f} s",
                    file=sys.stderr,
                )
                for label in ("first", "unchanged", f"{options.changed} changed"):
                    if label != "first" and label != "unchanged":
                        change(
                            server_uri, [pairs[i] for i in rng.choice(len(pairs), options.changed, replace=False)], rng
                        )
                    proxy.take()
                    wall, peak, code, output = reaggregate(config, MODES[mode])
                    counts = proxy.take()
                    outcomes = Counter(line.split(": ", 1)[1].split(" ")[0] for line in output.splitlines()[1:])
                    if code != 0:
                        raise SystemExit(f"{mode} {label}: exit {code}\n{output[-3000:]}")
                    rows.append((mode, label, wall, sum(counts.values()), peak, dict(outcomes), counts))
                    print(
                        f"{mode} {label}: {wall:.1f} s, {sum(counts.values())} requests, {peak} MB, {dict(outcomes)}",
                        file=sys.stderr,
                    )
                    per_sweep[(mode, label)] = (wall / len(pairs), sum(counts.values()) / len(pairs))
        finally:
            proxy.server.shutdown()
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(30)

    print(
        f"\n{options.sweeps:,} sweeps x {options.runs} runs ({options.sweeps * options.runs:,} runs), "
        f"{SWEEPS_PER_EXPERIMENT} sweeps per experiment, discovered by one job; write-back, no plots\n"
    )
    print("| engine | pass | wall (s) | requests | peak RSS (MB) | outcomes |")
    print("|---|---|---|---|---|---|")
    for mode, label, wall, requests, peak, outcomes, _ in rows:
        listed = ", ".join(f"{n} {k}" for k, n in sorted(outcomes.items()))
        print(f"| {mode} | {label} | {wall:.1f} | {requests:,} | {peak} | {listed} |")
    print("\nRequests by route (first and unchanged pass of the first engine):")
    for mode, label, *_, counts in rows[1:3]:
        print(f"- {mode} {label}: " + json.dumps(dict(counts.most_common(12))))
    print("\nPer sweep (wall s, requests):")
    for (mode, label), (seconds, requests) in per_sweep.items():
        print(f"- {mode} {label}: {seconds * 1000:.1f} ms, {requests:.1f} requests")


if __name__ == "__main__":
    sys.exit(main())
