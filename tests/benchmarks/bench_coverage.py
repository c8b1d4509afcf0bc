"""Benchmark: actual coverage of 95 % bootstrap intervals of Boo_n, default (studentized) vs percentile.

Run by hand (not collected by pytest)::

    python tests/benchmarks/bench_coverage.py [--replications 1000] [--resamples 999] [--seed 0]

Prints the Markdown table of the README's "Bootstrap" section. For each population of
:mod:`boontrack.simulate` (exact Boo_n known), each number of runs m and each budget n <= m/2 in 1, 5, 10:
the share of simulated sweeps whose interval contains the true Boo_n (estimator V), for the studentized
method and the percentile method on the same resamples, and the ratio of their median widths. The long-right-
tail rows show where no method is honest.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from boontrack.simulate import coverage, population

#: (population, parameters, label, numbers of runs)
CELLS = [
    ("normal", {}, "normal, val/test correlation 0.5", (10, 20, 50, 100)),
    ("beta_binomial", {}, "beta-binomial accuracies (ties)", (10, 20, 50, 100)),
    ("left_skewed", {}, "left-skewed", (20, 50)),
    ("lognormal", {}, "log-normal (long right tail)", (20, 50)),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replications", type=int, default=1000)
    parser.add_argument("--resamples", type=int, default=999)
    parser.add_argument("--seed", type=int, default=0)
    options = parser.parse_args()

    print("| population | m | n | studentized (default) | percentile | width studentized / percentile |")
    print("|---|---|---|---|---|---|")
    start = time.perf_counter()
    for index, (name, parameters, label, sizes) in enumerate(CELLS):
        pop = population(name, **parameters)
        for m in sizes:
            budgets = [n for n in (1, 5, 10) if n <= m / 2]
            cells = coverage(
                pop,
                m=m,
                n=budgets,
                replications=options.replications,
                n_resamples=options.resamples,
                rng=np.random.default_rng([options.seed, index, m]),
            )
            by_key = {(c.method, c.n): c for c in cells}
            for n in budgets:
                student, plain = by_key["studentized", n], by_key["percentile", n]
                print(
                    f"| {label} | {m} | {n} | {student.coverage:.1%} | {plain.coverage:.1%} "
                    f"| {student.median_width / plain.median_width:.2f} |"
                )
    print(
        f"\n{options.replications} sweeps per row, {options.resamples} resamples per interval, nominal 95 %; "
        f"a coverage's standard error is about {100 * (0.05 * 0.95 / options.replications) ** 0.5:.1f} points "
        f"({time.perf_counter() - start:.0f} s)."
    )


if __name__ == "__main__":
    main()
