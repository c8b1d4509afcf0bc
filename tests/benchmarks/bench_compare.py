"""Benchmark: type-I error and power of the comparisons of two approaches, by design (paired or not).

Run by hand (not collected by pytest)::

    python tests/benchmarks/bench_compare.py [--replications 1000] [--resamples 999] [--seed 0]

Prints the Markdown tables of the "Comparing approaches" page of the docs (docs/statistics/comparing.md), measured with
:func:`boontrack.simulate.comparison_rates`. First the type-I error: A and B of m runs each drawn from the same
population (paired by seed, a pair's correlation 0.5, or independent), how often the 95 % interval of
Boo_5(A) - Boo_5(B) and of mean(A) - mean(B) excludes 0 (studentized, the default, and percentile on the same
resamples) and how often the design's headline tests reject at 5 % (paired t and Wilcoxon signed-rank, or
Welch and Mann-Whitney). Then the power when A's scores are shifted by half a standard deviation (normal).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from boontrack.simulate import comparison_rates, population

#: (population, label, numbers of runs)
NULL_CELLS = [
    ("normal", "normal", (10, 20, 50)),
    ("beta_binomial", "beta-binomial (ties)", (10, 20, 50)),
    ("left_skewed", "left-skewed", (10, 20)),
    ("lognormal", "log-normal (long right tail)", (10, 20)),
]
POWER_RUNS = (10, 20, 50)
#: Half the standard deviation of the normal population's scores.
SHIFT = 0.5


def _percent(x: float) -> str:
    return f"{100 * x:.1f} %"


def _rows(cells, runs, shift, args):
    for name, label in cells:
        for m in runs:
            for paired in (True, False):
                rates = comparison_rates(
                    population(name),
                    m=m,
                    n=5,
                    paired=paired,
                    shift=shift,
                    replications=args.replications,
                    n_resamples=args.resamples,
                    rng=np.random.default_rng([args.seed, m, int(paired)]),
                )
                by_name = {r.statistic: r for r in rates}
                tests = list(by_name)[4:]
                cells_out = [_percent(r.rejection) for r in rates[:4]]
                cells_out += [f"{_percent(by_name[t].rejection)} ({t})" for t in tests]
                yield f"| {label} | {m} | {'paired' if paired else 'unpaired'} | " + " | ".join(cells_out) + " |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replications", type=int, default=1000)
    parser.add_argument("--resamples", type=int, default=999)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    header = (
        "| population | m | design | ΔBoo_5 studentized | ΔBoo_5 percentile | Δmean studentized | Δmean percentile "
        "| t-test | rank test |\n|---|---|---|---|---|---|---|---|---|"
    )
    start = time.perf_counter()
    print(f"Type-I error at a nominal 5 % ({args.replications} replications per row, {args.resamples} resamples)\n")
    print(header)
    for name, label, runs in NULL_CELLS:
        for row in _rows([(name, label)], runs, 0.0, args):
            print(row, flush=True)
    print(f"\nPower, A shifted by {SHIFT} sd (normal population)\n")
    print(header)
    for row in _rows([("normal", "normal")], POWER_RUNS, SHIFT, args):
        print(row, flush=True)
    print(f"\n({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
