"""Benchmark: type-I error and power of the comparisons of two approaches, by design (paired or not).

Run by hand (not collected by pytest)::

    python tests/benchmarks/bench_compare.py [--replications 1000] [--resamples 999] [--seed 0] [--method METHOD]

Prints the Markdown tables of the "Comparing approaches" page of the docs (docs/statistics/comparing.md), measured with
:func:`boontrack.simulate.comparison_rates`. First the type-I error: A and B of m runs each drawn from the same
population (paired by seed, a pair's correlation 0.5, or independent), how often the 95 % interval of
Boo_5(A) - Boo_5(B) and of mean(A) - mean(B) excludes 0 (studentized, by ``--method``, the difference's method
of the default interval unless told, and percentile on the same resamples) and how often the design's headline tests reject at 5 % (paired t and Wilcoxon signed-rank, or
Welch and Mann-Whitney). Then the power when A's scores are shifted by half a standard deviation (normal).

``--groups`` measures instead the differences an analysis makes for groups that share no seeds: each group's own
curve band (:func:`boontrack.boo_n_curve_ci`, n = 1 and 5, independent generators) differenced with
:func:`boontrack.compare.independent_difference`, for the default interval method and for
``studentized-u-k-of-m``, on the same sweeps: how often the 95 % interval of ΔBoo_5 and of Δmean excludes 0
(type-I error, then power).
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from boontrack.choices import DEFAULT_CI_METHOD
from boontrack.compare import DIFFERENCE_OF, independent_difference
from boontrack.resampling import boo_n_curve_ci
from boontrack.simulate import comparison_rates, population, sample_comparison

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
                    method=args.method,
                )
                by_name = {r.statistic: r for r in rates}
                tests = list(by_name)[4:]
                cells_out = [_percent(r.rejection) for r in rates[:4]]
                cells_out += [f"{_percent(by_name[t].rejection)} ({t})" for t in tests]
                yield f"| {label} | {m} | {'paired' if paired else 'unpaired'} | " + " | ".join(cells_out) + " |"


def _group_rows(cells, runs, shift, args):
    """One row per population and m: the share of sweeps whose ΔBoo_5 and Δmean intervals exclude 0, for each
    method, from the groups' own bands (see the module's docstring)."""
    methods = (DEFAULT_CI_METHOD, "studentized-u-k-of-m")
    for name, label in cells:
        for m in runs:
            rng = np.random.default_rng([args.seed, m, 2])
            a_val, a_test, b_val, b_test = sample_comparison(
                population(name), m, paired=False, shift=shift, replications=args.replications, rng=rng
            )
            excluded = np.zeros((len(methods), 2))
            for r in range(args.replications):
                for k, method in enumerate(methods):
                    a, b = (
                        boo_n_curve_ci(
                            v[r],
                            t[r],
                            n=[1, 5],
                            method=method,
                            n_resamples=args.resamples,
                            rng=np.random.default_rng(seed),
                        )
                        for v, t, seed in ((a_val, a_test, [args.seed, m, r, 0]), (b_val, b_test, [args.seed, m, r, 1]))
                    )
                    for j, budget in enumerate((5, 1)):
                        interval = independent_difference(a.at(budget), b.at(budget)).confidence_interval
                        excluded[k, j] += interval.low > 0 or interval.high < 0
            rates = " | ".join(_percent(x / args.replications) for x in excluded.ravel())
            yield f"| {label} | {m} | {rates} |"


def groups(args: argparse.Namespace) -> None:
    header = (
        f"| population | m | ΔBoo_5 {DEFAULT_CI_METHOD} | Δmean {DEFAULT_CI_METHOD} | ΔBoo_5 studentized-u-k-of-m "
        "| Δmean studentized-u-k-of-m |\n|---|---|---|---|---|---|"
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # few runs, ties: the figures are the point here
        title = f"Groups without shared seeds, type-I error at a nominal 5 % ({args.replications} replications)"
        _print_tables(title, header, _group_rows, NULL_CELLS[:2], args)


def _print_tables(title: str, header: str, rows, null_cells, args: argparse.Namespace) -> None:
    """The type-I error table over ``null_cells``, then the power table, from ``rows`` (as :func:`_rows`)."""
    start = time.perf_counter()
    print(f"{title}\n")
    print(header)
    for name, label, runs in null_cells:
        for row in rows([(name, label)], runs, 0.0, args):
            print(row, flush=True)
    print(f"\nPower, A shifted by {SHIFT} sd (normal population)\n")
    print(header)
    for row in rows([("normal", "normal")], POWER_RUNS, SHIFT, args):
        print(row, flush=True)
    print(f"\n({time.perf_counter() - start:.0f} s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replications", type=int, default=1000)
    parser.add_argument("--resamples", type=int, default=999)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--groups", action="store_true", help="the differences of groups without shared seeds")
    parser.add_argument(
        "--method",
        default=DIFFERENCE_OF.get(DEFAULT_CI_METHOD, DEFAULT_CI_METHOD),
        help="the studentized method of the differences (without --groups); default: the default interval's",
    )
    args = parser.parse_args()
    if args.groups:
        groups(args)
        return
    header = (
        "| population | m | design | ΔBoo_5 studentized | ΔBoo_5 percentile | Δmean studentized | Δmean percentile "
        "| t-test | rank test |\n|---|---|---|---|---|---|---|---|---|"
    )
    title = f"Type-I error at a nominal 5 % ({args.replications} replications per row, {args.resamples} resamples)"
    _print_tables(title, header, _rows, NULL_CELLS, args)


if __name__ == "__main__":
    main()
