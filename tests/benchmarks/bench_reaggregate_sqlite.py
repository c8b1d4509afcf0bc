"""Benchmark: ``boontrack reaggregate`` over many sweeps of an MLflow sqlite store, first pass against unchanged.

One experiment holds ``--sweeps`` sweeps (a parent run and ``--runs`` children each, inserted in bulk as
``bench_mlflow.py`` does); one job discovers them all and writes each summary back (no plots), or with ``--out``
into a directory of its own beside the others' (``out = DIR``: ``DIR/<sweep>``). Each pass is a fresh
``boontrack`` process:

- **first**: every sweep read (by SQL), summarized and written (back through MLflow's client, or into ``DIR``);
- **unchanged**: discovery, each sweep's change token and the stored one, all by SQL (and a look at each sweep's
  directory): no sweep read, nothing written, and MLflow not imported (the pass reports whether it was).

Several ``--sweeps`` (e.g. ``--sweeps 50 500``) measure each on a store of its own and print how the unchanged
pass grows with the sweeps; a pass that costs the same per sweep grows by less than their ratio (its start-up is
paid once). ``--resamples`` makes the first pass cheaper (the unchanged pass reads no runs and computes nothing).

Run:  python tests/benchmarks/bench_reaggregate_sqlite.py [--sweeps 100] [--runs 50]
      python tests/benchmarks/bench_reaggregate_sqlite.py --out --sweeps 50 500 --resamples 99 --repeat 3
Prints a Markdown table: CPU (user + system of the pass's process), wall time, and whether MLflow was loaded;
with ``--repeat`` the unchanged pass is run that many times and its median CPU taken.
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


def measure(sweeps: int, options: argparse.Namespace) -> tuple[tuple[float, float, str], tuple[float, float, str]]:
    """The first pass, and the unchanged pass (median CPU of ``options.repeat``), on a store of ``sweeps``."""
    with tempfile.TemporaryDirectory() as tmp:
        uri = f"sqlite:///{tmp}/mlflow.db"
        populate(uri, Path(tmp) / "artifacts", sweeps, options.runs)
        config = Path(tmp) / "boontrack.toml"
        destination = f'out = "{Path(tmp) / "summaries"}"\n' if options.out else "write_back = true\n"
        resamples = f"n_resamples = {options.resamples}\n" if options.resamples else ""
        config.write_text(CONFIG.format(uri=uri) + destination + resamples)
        first = one_pass(config)
        passes = sorted((one_pass(config) for _ in range(options.repeat)), key=lambda measured: measured[0])
    return first, passes[len(passes) // 2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sweeps", type=int, nargs="+", default=[100])
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--out", action="store_true", help="write into out = DIR instead of back to MLflow")
    parser.add_argument("--resamples", type=int, help="n_resamples of the job (default: the Spec's)")
    parser.add_argument("--repeat", type=int, default=1, help="unchanged passes per store (median CPU)")
    options = parser.parse_args()
    measured = {sweeps: measure(sweeps, options) for sweeps in options.sweeps}
    destination = "`out = DIR`" if options.out else "write-back"
    print(f"sweeps of {options.runs} runs in one sqlite store, `plots = false`, {destination}\n")
    print("| sweeps | pass | CPU | wall | MLflow imported |\n|---|---|---|---|---|")
    for sweeps, passes in measured.items():
        for name, (cpu, wall, loaded) in zip(("first", "unchanged"), passes):
            print(f"| {sweeps} | {name} | {cpu:.2f} s | {wall:.2f} s | {loaded} |")
    print()
    for sweeps, (first, unchanged) in measured.items():
        print(f"{sweeps} sweeps: first / unchanged CPU {first[0] / unchanged[0]:.1f}x")
    fewest = min(measured)
    for sweeps in sorted(measured)[1:]:
        growth = measured[sweeps][1][0] / measured[fewest][1][0]
        print(
            f"unchanged pass, {sweeps} sweeps / {fewest}: {growth:.1f}x the CPU for {sweeps / fewest:.0f}x the sweeps"
        )


if __name__ == "__main__":
    main()
