"""Benchmark: the default interval's CPU against the percentile interval's on the same resamples, and the cost of
comparing every pair of groups against comparing each with a baseline.

Run by hand (not collected by pytest)::

    python tests/benchmarks/bench_default_cost.py [--sizes 30,100,1000] [--repeats 3]

For each m, on one group and on 10 groups of m runs (``bench_group_cost.py``'s runs, a generator of their own for
each group; the spec's budgets), in this process on one thread, the median CPU time (user + system) of
``boontrack.analyze``: with the default settings (``n_resamples="auto"``; the resamples the groups drew), then the
default method and the percentile method with as many resamples as the most any group drew, and their ratio.
Then 10 groups with ``compare="all-pairs"`` against ``compare="baseline"``, both with the defaults. The goals:
the default at most 1.5x the percentile interval's CPU on the same resamples, and all pairs at most 1.5x the
baseline comparisons.
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings

import pandas as pd
from bench_group_cost import frame  # this folder is on sys.path when run as a script

from boontrack.analysis import analyze
from boontrack.choices import DEFAULT_CI_METHOD
from boontrack.runtable import RunTable
from boontrack.spec import Spec
from boontrack.summary import Summary


def cost(m: int, groups: int, repeats: int, **options) -> tuple[float, Summary]:
    """Median CPU seconds of ``analyze`` on ``groups`` groups of ``m`` runs (after one run to warm up)."""
    spec = Spec(val="val_acc", test="test_acc", group_by=("group",), **options)
    table = RunTable.from_frame(
        pd.concat([frame(m, seed=group).assign(group=f"g{group}") for group in range(groups)], ignore_index=True), spec
    )
    summary = analyze(table, spec, threads=1)
    seconds = []
    for _ in range(repeats):
        start = time.process_time()
        analyze(table, spec, threads=1)
        seconds.append(time.process_time() - start)
    return statistics.median(seconds), summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="30,100,1000")
    parser.add_argument("--repeats", type=int, default=3)
    options = parser.parse_args()
    warnings.simplefilter("ignore")  # few runs, budgets near m/2: the figures are the point here
    print(
        "| runs per group | groups | default (CPU s) | resamples drawn | the default at the most drawn | "
        "percentile at as many | default ÷ percentile |"
    )
    print("|---|---|---|---|---|---|---|")
    pairs = []
    for m in (int(size) for size in options.sizes.split(",")):
        for groups in (1, 10):
            auto, summary = cost(m, groups, options.repeats)
            drawn = sorted({g.n_resamples for g in summary.groups})
            most = drawn[-1]
            default, _ = cost(m, groups, options.repeats, n_resamples=most, ci_method=DEFAULT_CI_METHOD)
            plain, _ = cost(m, groups, options.repeats, n_resamples=most, ci_method="percentile")
            shown = f"{drawn[0]:,}" if len(drawn) == 1 else f"{drawn[0]:,}-{most:,}"
            print(
                f"| {m:,} | {groups} | {auto:.2f} | {shown} | {default:.2f} | {plain:.2f} | {default / plain:.2f} |",
                flush=True,
            )
            if groups == 10:
                pairs.append((m, auto, cost(m, groups, options.repeats, compare="all-pairs")[0]))
    print("\n| runs per group (10 groups) | baseline (CPU s) | all pairs (CPU s) | all pairs ÷ baseline |")
    print("|---|---|---|---|")
    for m, baseline, all_pairs in pairs:
        print(f"| {m:,} | {baseline:.2f} | {all_pairs:.2f} | {all_pairs / baseline:.2f} |")


if __name__ == "__main__":
    main()
