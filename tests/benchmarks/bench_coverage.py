"""Benchmark: actual coverage of 95 % bootstrap intervals of Boo_n, default (studentized) vs percentile.

Run by hand (not collected by pytest)::

    python tests/benchmarks/bench_coverage.py [--replications 1000] [--resamples 999] [--seed 0]

Prints the Markdown table of the README's "Bootstrap" section. For each population of
:mod:`boontrack.simulate` (exact Boo_n known), each number of runs m and each budget n <= m/2 in 1, 5, 10:
the share of simulated sweeps whose interval contains the true Boo_n (estimator V), for the studentized
method and the percentile method on the same resamples, and the ratio of their median widths. The long-right-
tail rows show where no method is honest.

A second table gives the joint coverage of a curve's bands over n = 1..m/2 (the trustworthy budgets): how
often the pointwise band and the simultaneous (sup-t) band hold the whole true curve at once, for the
expected-validation curve (test = validation) and for the test curve of correlated scores.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from boontrack.simulate import band_coverage, coverage, population

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
    print("\n| curve | m | method | pointwise band | simultaneous band | width simultaneous / pointwise |")
    print("|---|---|---|---|---|---|")
    for rho, label in ((1.0, "validation (normal)"), (0.5, "test, val/test correlation 0.5 (normal)")):
        for m in (20, 50):
            for method in ("studentized", "percentile"):
                band = band_coverage(
                    population("normal", rho=rho),
                    m=m,
                    method=method,
                    replications=max(1, options.replications // 3),
                    n_resamples=options.resamples,
                    rng=np.random.default_rng([options.seed, m, int(10 * rho)]),
                )
                print(
                    f"| {label} | {m} | {method} | {band.pointwise:.1%} | {band.simultaneous:.1%} "
                    f"| {band.width_ratio:.2f} |"
                )
    print(
        f"\n{options.replications} sweeps per row ({max(1, options.replications // 3)} for the bands, jointly over "
        f"n = 1..m/2), {options.resamples} resamples per interval, nominal 95 %; "
        f"a coverage's standard error is about {100 * (0.05 * 0.95 / options.replications) ** 0.5:.1f} points "
        f"({time.perf_counter() - start:.0f} s)."
    )


if __name__ == "__main__":
    main()
