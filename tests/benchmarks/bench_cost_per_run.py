"""Benchmark: CPU time per run of summarizing groups of m runs, m = 100 to 100,000 runs: does the cost follow the work?

Run by hand (not collected by pytest)::

    nice -n 10 python tests/benchmarks/bench_cost_per_run.py [--sizes 100,1000,10000] [--repeats 1]
    python tests/benchmarks/bench_cost_per_run.py --groups 10 --n 1,5,10,20,50,100 --resamples 10000 \
        --sizes 1000,10000 --repeats 3

Prints a Markdown row per m: the median CPU time (user + system of this process) of ``boontrack.analyze`` on
``--groups`` groups of m runs each (default one; budgets 1, 5, 10 or ``--n``, the curve's default budgets, the
spec's resamples (``"auto"``) or ``--resamples``, the default interval) on one thread, that time per run in
microseconds, the number of curve budgets (and of the budgets the pivot is resampled at), the resamples the groups
drew (their range with ``"auto"``) and how many of them were studentized, and the CPU time against the row before.
The goal: microseconds per run non-increasing in m, and 10 groups of 1,000 runs at most a quarter of the CPU of 10 groups
of 10,000 (the second command: the summarize benchmark's groups, budgets and resamples, ``bench_summarize.py``,
without its reading, plots and start-up). CPU time, not wall time, is the figure to compare on a shared machine.
The runs are those of ``bench_group_cost.py`` (a bivariate normal, rounded to 4 decimals), a generator of its own
for each group.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np
import pandas as pd
from bench_group_cost import frame  # this folder is on sys.path when run as a script

import boontrack
from boontrack._bootstrap.intervals import pivot_columns, studentized_resamples
from boontrack.analysis import analyze
from boontrack.resampling import default_budgets
from boontrack.runtable import RunTable
from boontrack.spec import Spec


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100,300,1000,3000,10000,100000")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--groups", type=int, default=1)
    parser.add_argument("--n", default=None, help="budgets, comma-separated (default: the spec's 1, 5, 10)")
    parser.add_argument("--resamples", type=int, default=None, help="default: the spec's ('auto')")
    options = parser.parse_args()
    print(f"boontrack {boontrack.__version__}; load average {os.getloadavg()[0]:.2f}\n")
    print(
        f"| runs per group ({options.groups} groups) | analyze CPU (s) | CPU per run (µs) | curve budgets (pivot's) "
        "| resamples (studentized) | CPU ÷ the row before |"
    )
    print("|---|---|---|---|---|---|")
    chosen = {
        **({"n": tuple(int(k) for k in options.n.split(","))} if options.n else {}),
        **({"n_resamples": options.resamples} if options.resamples else {}),
    }
    spec = Spec(val="val_acc", test="test_acc", group_by=("group",), **chosen)
    before = None
    for m in (int(size) for size in options.sizes.split(",")):
        groups = [frame(m, seed=group).assign(group=f"g{group}") for group in range(options.groups)]
        table = RunTable.from_frame(pd.concat(groups, ignore_index=True), spec)
        cpu = []
        for _ in range(options.repeats):
            start = time.process_time()
            summary = analyze(table, spec, threads=1)
            cpu.append(time.process_time() - start)
        curve = np.union1d(default_budgets(m, estimator=spec.estimator, method=spec.ci_method), spec.budgets)
        pivot = pivot_columns(curve, m, np.isin(curve, [1, *spec.budgets_for(m)[0]])).size
        drawn = sorted(g.n_resamples for g in summary.groups)
        resamples = f"{drawn[0]:,}" if drawn[0] == drawn[-1] else f"{drawn[0]:,}-{drawn[-1]:,}"
        studentized = studentized_resamples(m, pivot, drawn[-1])
        seconds = statistics.median(cpu)
        ratio = "" if before is None else f"{seconds / before:.2f}"
        print(
            f"| {m:,} | {seconds:.2f} | {1e6 * seconds / (m * options.groups):,.0f} | {curve.size} ({pivot}) "
            f"| {resamples} ({studentized:,}) | {ratio} |",
            flush=True,
        )
        before = seconds


if __name__ == "__main__":
    main()
