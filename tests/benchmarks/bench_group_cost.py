"""Benchmark: the cost of summarizing one group of m runs, m = 10, 100, 1,000 and 10,000.

Run by hand (not collected by pytest)::

    python tests/benchmarks/bench_group_cost.py [--repeats 5] [--threads 1]

Prints a Markdown row per m: the median CPU time (user + system of this process) and wall time of
``boontrack.analyze`` on one group of m runs with the default spec (budgets 1, 5, 10, 9,999 resamples, the
default interval), then of rendering its outputs without plots. The runs are synthetic: validation and test
scores from a bivariate normal (correlation 0.5), accuracies rounded to 4 decimals (ties as in real sweeps).
``--threads 1`` keeps the bootstrap on one thread, so CPU time and wall time say the same.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np
import pandas as pd

import boontrack
from boontrack.analysis import analyze
from boontrack.reports import render_outputs
from boontrack.runtable import RunTable
from boontrack.spec import Spec


def frame(m: int, seed: int = 0) -> pd.DataFrame:
    scores = np.random.default_rng(seed).multivariate_normal([0.0, 0.0], [[1.0, 0.5], [0.5, 1.0]], size=m)
    return pd.DataFrame(
        {"val_acc": np.round(0.7 + 0.01 * scores[:, 0], 4), "test_acc": np.round(0.7 + 0.01 * scores[:, 1], 4)}
    )


def timed(call) -> tuple[float, float]:
    cpu, wall = time.process_time(), time.perf_counter()
    call()
    return time.process_time() - cpu, time.perf_counter() - wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=None)
    options = parser.parse_args()
    print(f"boontrack {boontrack.__version__} from {os.path.dirname(boontrack.__file__)}; load {os.getloadavg()}")
    print("| runs | analyze CPU (s) | analyze wall (s) | render CPU (s) |")
    print("|---|---|---|---|")
    for m in (10, 100, 1_000, 10_000):
        spec = Spec(val="val_acc", test="test_acc")
        table = RunTable.from_frame(frame(m), spec)
        runs = [timed(lambda: analyze(table, spec, threads=options.threads)) for _ in range(options.repeats)]
        summary = analyze(table, spec, threads=options.threads)
        render = [timed(lambda: render_outputs(summary, plots=False))[0] for _ in range(options.repeats)]
        cpu, wall = statistics.median(c for c, _ in runs), statistics.median(w for _, w in runs)
        print(f"| {m:,} | {cpu:.2f} | {wall:.2f} | {statistics.median(render):.3f} |", flush=True)


if __name__ == "__main__":
    main()
