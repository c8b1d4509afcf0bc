"""Benchmark: CPU time per run of summarizing one group, m = 100 to 100,000 runs: does the cost follow the work?

Run by hand (not collected by pytest)::

    nice -n 10 python tests/benchmarks/bench_cost_per_run.py [--sizes 100,1000,10000] [--repeats 1]

Prints a Markdown row per m: the median CPU time (user + system of this process) of ``boontrack.analyze`` on
one group of m runs with the default spec (budgets 1, 5, 10, the curve's default budgets, 9,999 resamples,
the default interval) on one thread, that time per run in microseconds, the number of curve budgets, and how
many resamples were studentized. The goal: microseconds per run non-increasing in m, and 10 groups of 1,000
runs at most a quarter of the CPU of 10 groups of 10,000. CPU time, not wall time, is the figure to compare on
a shared machine. The runs are those of ``bench_group_cost.py`` (a bivariate normal, rounded to 4 decimals).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from bench_group_cost import frame  # this folder is on sys.path when run as a script

import boontrack
from boontrack._bootstrap.intervals import studentized_resamples
from boontrack.analysis import analyze
from boontrack.resampling import default_budgets
from boontrack.runtable import RunTable
from boontrack.spec import Spec


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100,300,1000,3000,10000,100000")
    parser.add_argument("--repeats", type=int, default=1)
    options = parser.parse_args()
    print(f"boontrack {boontrack.__version__} from {os.path.dirname(boontrack.__file__)}; load {os.getloadavg()}")
    print("| runs in the group | analyze CPU (s) | CPU per run (µs) | curve budgets | studentized resamples |")
    print("|---|---|---|---|---|")
    spec = Spec(val="val_acc", test="test_acc")
    for m in (int(size) for size in options.sizes.split(",")):
        table = RunTable.from_frame(frame(m), spec)
        cpu = []
        for _ in range(options.repeats):
            start = time.process_time()
            analyze(table, spec, threads=1)
            cpu.append(time.process_time() - start)
        budgets = default_budgets(m, estimator=spec.estimator, method=spec.ci_method).size
        studentized = studentized_resamples(m, budgets, spec.n_resamples)
        seconds = statistics.median(cpu)
        print(f"| {m:,} | {seconds:.2f} | {1e6 * seconds / m:,.0f} | {budgets} | {studentized:,} |", flush=True)


if __name__ == "__main__":
    main()
