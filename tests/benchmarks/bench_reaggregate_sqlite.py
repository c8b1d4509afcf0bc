"""Benchmark: ``boontrack reaggregate`` over many sweeps of an MLflow sqlite store, first pass against unchanged.

One experiment holds ``--sweeps`` sweeps (a parent run and ``--runs`` children each, inserted in bulk as
``bench_mlflow.py`` does); one job discovers them all and writes each summary back (no plots). Each pass is a
fresh ``boontrack`` process:

- **first**: every sweep read (by SQL), summarized and written back through MLflow's client;
- **unchanged**: discovery, each sweep's change token and the stored one, all by SQL: no sweep read, nothing
  written, and MLflow not imported (the pass reports whether it was).

Run:  python tests/benchmarks/bench_reaggregate_sqlite.py [--sweeps 100] [--runs 50]
Prints a Markdown table: CPU (user + system of the pass's process), wall time, and whether MLflow was loaded.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from mlflow import MlflowClient
from mlflow_tools import insert_children

CONFIG = """
[[jobs]]
name = "bench"
source = "mlflow:sweeps"
tracking_uri = "{uri}"
discover = true
val = "val_acc"
test = "test_acc"
group_by = ["model"]
plots = false
write_back = true
"""
#: One pass in this process's child: its exit status, and whether MLflow was imported.
_PASS = """
import sys
from boontrack.cli import main
try:
    main(["reaggregate", "--config", sys.argv[1]])
except SystemExit as exit:
    print("exit", exit.code, "mlflow" in sys.modules, file=sys.stderr)
"""


def populate(uri: str, artifacts: Path, sweeps: int, runs: int) -> None:
    client = MlflowClient(uri)
    experiment_id = client.create_experiment("sweeps", artifact_location=artifacts.as_uri())
    rng = np.random.default_rng(0)
    for k in range(sweeps):
        parent = client.create_run(experiment_id, run_name=f"sweep-{k}")
        client.set_terminated(parent.info.run_id, "FINISHED")
        insert_children(uri, experiment_id, parent.info.run_id, runs, rng)


def one_pass(config: Path) -> tuple[float, float, str]:
    """CPU seconds and wall seconds of one pass in a fresh process, and whether it loaded MLflow."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", _PASS, str(config)], capture_output=True, text=True, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    _, code, loaded = done.stderr.strip().splitlines()[-1].split()
    if code != "0":
        raise SystemExit(f"the pass failed:\n{done.stdout}\n{done.stderr}")
    return cpu, wall, "yes" if loaded == "True" else "no"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sweeps", type=int, default=100)
    parser.add_argument("--runs", type=int, default=50)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        uri = f"sqlite:///{tmp}/mlflow.db"
        populate(uri, Path(tmp) / "artifacts", options.sweeps, options.runs)
        config = Path(tmp) / "boontrack.toml"
        config.write_text(CONFIG.format(uri=uri))
        first = one_pass(config)
        unchanged = one_pass(config)
    print(f"{options.sweeps} sweeps of {options.runs} runs in one sqlite store, `plots = false`, write-back\n")
    print("| pass | CPU | wall | MLflow imported |\n|---|---|---|---|")
    for name, (cpu, wall, loaded) in (("first", first), ("unchanged", unchanged)):
        print(f"| {name} | {cpu:.2f} s | {wall:.2f} s | {loaded} |")
    print(f"\nfirst / unchanged CPU: {first[0] / unchanged[0]:.1f}x")


if __name__ == "__main__":
    main()
