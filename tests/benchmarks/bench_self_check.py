"""Benchmark: does a coverage estimate simulated from a smoothed fit of the runs predict the interval's misses?

Run by hand (not collected by pytest; about 20 minutes)::

    python tests/benchmarks/bench_self_check.py [--sweeps 300] [--seed 0]

0.2.0 printed, next to every interval, the coverage estimated by simulating 200 sweeps (199 resamples each)
from a Gaussian-kernel fit of the runs (:func:`boontrack.simulate.kernel_fit`), and warned below 90 %. This
measures that estimate against the truth: on sweeps drawn from populations whose Boo_n is known, the default
interval of each sweep either holds the truth or not, and the estimate made from the same sweep is bucketed.
Prints the calibration table (estimate bucket -> actual coverage of the sweeps in it) and the miss rates of
warned and unwarned sweeps. A figure printed next to an interval must mean what it says: the goal is every
bucket within 3 points of its estimates, and warned sweeps missing at least twice as often as the others.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the published tables' loaders

from published_runs import load_all  # noqa: E402

from boontrack._validation import as_bounds  # noqa: E402
from boontrack.resampling import boo_n_curve_ci  # noqa: E402
from boontrack.simulate import coverage, finite_population, kernel_fit, population  # noqa: E402

BUDGETS = (1, 5)
BUCKETS = (0.0, 0.85, 0.90, 0.93, 0.96, 1.001)
#: The self-check of 0.2.0: sweeps simulated from the fit, and resamples per interval.
CHECK_SWEEPS, CHECK_RESAMPLES = 200, 199


def cases() -> list[tuple[str, object, int]]:
    tables = load_all()
    return [
        ("normal, correlation 0.95", population("normal", rho=0.95), 20),
        ("validation curve (normal)", population("normal", rho=1.0), 10),
        ("15 % diverged runs", population("diverged", share=0.15), 10),
        ("long right tail (log-normal)", population("lognormal"), 20),
        ("CIFAR-100 ResNet", finite_population(tables["CIFAR-100 ResNet"].val, tables["CIFAR-100 ResNet"].test), 50),
        ("VAMPIRE NPMI", finite_population(tables["VAMPIRE NPMI"].val), 50),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sweeps", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    options = parser.parse_args()
    start = time.perf_counter()
    estimates, covered = [], []
    for index, (label, pop, m) in enumerate(cases()):
        rng = np.random.default_rng([options.seed, index])
        truth = np.asarray(pop.boo_n(list(BUDGETS)))
        val, test = pop.sample(m, replications=options.sweeps, rng=rng)
        for v, t in zip(val, test):
            band = boo_n_curve_ci(v, t, n=BUDGETS, n_resamples=999, rng=rng)
            covered.append((band.low <= truth) & (truth <= band.high))
            fit = kernel_fit(v, t)
            cells = coverage(
                fit,
                m=m,
                n=BUDGETS,
                methods=(band.method,),
                replications=CHECK_SWEEPS,
                n_resamples=CHECK_RESAMPLES,
                rng=rng,
                bounds=as_bounds(None, t),
            )
            estimates.append([c.coverage for c in cells])
        print(f"{label}: done ({time.perf_counter() - start:.0f} s)", file=sys.stderr, flush=True)
    estimates, covered = np.ravel(estimates), np.ravel(covered)
    print("| estimated coverage | sweeps | their actual coverage |")
    print("|---|---|---|")
    for low, high in zip(BUCKETS[:-1], BUCKETS[1:]):
        inside = (estimates >= low) & (estimates < high)
        actual = f"{100 * covered[inside].mean():.1f} %" if inside.any() else "—"
        print(f"| {100 * low:.0f}-{min(100, 100 * high):.0f} % | {inside.sum()} | {actual} |")
    warned = estimates < 0.90
    print(
        f"\nWarned (estimate below 90 %): {warned.sum()} intervals, missed {100 * (1 - covered[warned].mean()):.1f} %; "
        f"not warned: {(~warned).sum()}, missed {100 * (1 - covered[~warned].mean()):.1f} %. "
        f"{options.sweeps} sweeps per population, budgets {BUDGETS}, {time.perf_counter() - start:.0f} s."
    )


if __name__ == "__main__":
    main()
