"""Benchmark: ``boontrack summarize`` of one sweep in an MLflow sqlite store, end to end in a fresh process,
against its floor: one SQL query for the sweep's values plus ``python -c "import boontrack.cli, pandas"``.

The store holds one experiment with a parent run and ``--runs`` children (params seed/lr/model, metrics
val_acc/test_acc, 5 % FAILED), inserted in bulk as ``bench_mlflow_sql.py`` does. Each of these is a fresh
process, measured ``--repeat`` times in turn (CPU: user + system of the process):

- ``summarize``: ``boontrack summarize mlflow:bench --tracking-uri sqlite:///... --parent P --val val_acc
  --test test_acc``, the default analysis (9,999 resamples, one group, a table on stdout);
- ``summarize --resamples 99``: the same read, estimates and table with a hundredth of the bootstrap, which
  shows what the read and the rest cost besides the resampling;
- ``import boontrack.cli, pandas``: the interpreter and the imports every summary needs.

The SQL query is ``bench_mlflow_sql.py``'s hand-written one (runs, params, latest metrics and tags of the sweep
through the bare ``sqlite3`` driver, pivoted into a wide frame), timed in this process with
``time.process_time``: its CPU without an interpreter's start-up, which the import process counts.
Each summary process also reports whether it imported MLflow (a read by SQL should not).

Run:  python tests/benchmarks/bench_summarize_sqlite.py [--runs 10000] [--repeat 5]
Prints a Markdown table of median CPU (min-max) and the ratios to the floor.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("MLFLOW_SUPPRESS_PRINTING_URL_TO_STDOUT", "true")

import numpy as np  # noqa: E402
from bench_mlflow_sql import hand_read  # noqa: E402
from mlflow import MlflowClient  # noqa: E402
from mlflow_tools import insert_children  # noqa: E402

#: One summary in this process's child; prints on stderr whether MLflow was imported.
_SUMMARY = """
import sys
from boontrack.cli import main
try:
    main(sys.argv[1:])
except SystemExit as exit:
    print("exit", exit.code, "mlflow" in sys.modules, file=sys.stderr)
"""


def make_store(root: Path, runs: int) -> tuple[str, str, str]:
    """(uri, experiment id, parent run id) of a fresh sqlite store holding one sweep of ``runs`` children."""
    uri = f"sqlite:///{root}/mlflow.db"
    client = MlflowClient(uri)
    experiment_id = client.create_experiment("bench", artifact_location=(root / "artifacts").as_uri())
    parent = client.create_run(experiment_id, run_name="sweep").info.run_id
    client.set_terminated(parent)
    insert_children(uri, experiment_id, parent, runs, np.random.default_rng(0))
    return uri, experiment_id, parent


def process_cpu(command: list[str]) -> tuple[float, str]:
    """CPU seconds of ``command`` run to its end in a fresh process, and its last line on stderr."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(command, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stdout}\n{done.stderr}")
    lines = done.stderr.strip().splitlines()
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), lines[-1] if lines else ""


def query_cpu(path: str, experiment_id: str, parent: str, expected: int) -> float:
    """CPU seconds of the hand-written query in this process (its connection, statement and pivot)."""
    started = time.process_time()
    got = hand_read(lambda: sqlite3.connect(f"file:{path}?mode=ro", uri=True), "?", experiment_id, parent, best=False)
    spent = time.process_time() - started
    if got != expected:
        raise AssertionError(f"the hand query read {got} runs, expected {expected}")
    return spent


def summary(values: list[float]) -> str:
    return f"{statistics.median(values):.2f} s ({min(values):.2f}-{max(values):.2f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        uri, experiment_id, parent = make_store(Path(tmp), options.runs)
        summarize = [sys.executable, "-c", _SUMMARY, "summarize", "mlflow:bench", "--tracking-uri", uri]
        summarize += ["--parent", parent, "--val", "val_acc", "--test", "test_acc"]
        commands = {
            "summarize": summarize,
            "summarize --resamples 99": [*summarize, "--resamples", "99"],
            "import boontrack.cli, pandas": [sys.executable, "-c", "import boontrack.cli, pandas"],
        }
        cpu: dict[str, list[float]] = {name: [] for name in [*commands, "one SQL query"]}
        loaded: set[str] = set()
        for _ in range(options.repeat):
            for name, command in commands.items():
                seconds, last = process_cpu(command)
                cpu[name].append(seconds)
                if last.startswith("exit"):
                    loaded.add(last.split()[-1])
            with contextlib.closing(sqlite3.connect(f"{tmp}/mlflow.db")) as connection:
                ((children,),) = connection.execute("SELECT count(*) FROM runs WHERE run_uuid != ?", (parent,))
            cpu["one SQL query"].append(query_cpu(f"{tmp}/mlflow.db", experiment_id, parent, children))
    floor = statistics.median(cpu["import boontrack.cli, pandas"]) + statistics.median(cpu["one SQL query"])
    print(f"{options.runs:,} runs of one sweep in an MLflow sqlite store; median CPU of {options.repeat} (min-max)\n")
    print("| process | CPU | ÷ floor |\n|---|---|---|")
    for name, values in cpu.items():
        print(f"| {name} | {summary(values)} | {statistics.median(values) / floor:.2f}x |")
    imported = {"True": "yes", "False": "no"}
    print(f"\nfloor (one SQL query + the imports): {floor:.2f} s; summaries that imported MLflow: ", end="")
    print(" / ".join(imported.get(value, value) for value in sorted(loaded)))


if __name__ == "__main__":
    main()
