"""Benchmark: ``boontrack reaggregate`` of many small jobs into directories, with and without plots.

Run by hand (not collected by pytest)::

    python tests/benchmarks/bench_reaggregate_plots.py [--jobs 200] [--runs 20] [--variants plots,no-plots]

Each job reads its own CSV (``--runs`` runs in two groups, with run durations, so that every plot is drawn:
curves against n and against time, and the distributions) and writes its summary into its own directory, with
the default spec (n = 1, 5, 10; 9,999 bootstrap resamples). For each variant (``plots``: the default;
``no-plots``: ``plots = false`` in every job) the command runs twice: a first pass that computes and writes
every job, then an unchanged pass that only reads and compares fingerprints. Prints Markdown rows with the CPU
time (user + system) and the wall time of the command's process.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
from bench_summarize import boontrack


def write_jobs(directory: Path, *, jobs: int, runs: int, plots: bool) -> Path:
    """``jobs`` CSVs of ``runs`` runs each and a config with one ``[[jobs]]`` table per CSV."""
    rng = np.random.default_rng(0)
    tables = []
    for index in range(jobs):
        path = directory / f"runs-{index:03d}.csv"
        pd.DataFrame(
            {
                "run_id": [f"job{index}-run{i}" for i in range(runs)],
                "model": ["cnn", "mlp"] * (runs // 2),
                "val_acc": np.round(rng.uniform(0.6, 0.9, runs), 4),
                "test_acc": np.round(rng.uniform(0.6, 0.9, runs), 4),
                "seconds": rng.uniform(30, 300, runs),
            }
        ).to_csv(path, index=False)
        tables.append(
            f'[[jobs]]\nname = "job{index:03d}"\nsource = "{path.name}"\nval = "val_acc"\ntest = "test_acc"\n'
            f'group_by = ["model"]\nduration = "seconds"\nout = "out/job{index:03d}"\n'
            + ("" if plots else "plots = false\n")
        )
    config = directory / "boontrack.toml"
    config.write_text("\n".join(tables))
    return config


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=200)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--variants", default="plots,no-plots")
    options = parser.parse_args()

    print(f"| {options.jobs} jobs of {options.runs} runs | pass | CPU (s) | wall (s) | PNG files written |")
    print("|---|---|---|---|---|")
    for variant in options.variants.split(","):
        with tempfile.TemporaryDirectory() as tmp:
            directory = Path(tmp)
            config = write_jobs(directory, jobs=options.jobs, runs=options.runs, plots=variant == "plots")
            for label in ("first", "unchanged"):
                wall, _, process, cpu = boontrack("reaggregate", "--config", str(config))
                stdout = process.stdout
                expected = "updated" if label == "first" else "unchanged"
                assert stdout.count(f": {expected}") == options.jobs, stdout
                pngs = len(list((directory / "out").rglob("*.png")))
                print(f"| {variant} | {label} | {cpu:.1f} | {wall:.1f} | {pngs} |")


if __name__ == "__main__":
    sys.exit(main())
