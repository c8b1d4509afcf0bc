"""Benchmark: what no interval method can do where a sweep may lack a rare kind of run, in numbers.

Run by hand (not collected by pytest; about 5 min on two cores)::

    python tests/benchmarks/bench_coverage_limits.py [--replications 1000] [--resamples 999] [--seed 0] [--only TEXT]

The default's misses on the coverage suite (``bench_coverage.py``) sit in sweeps that lack a kind of run: a
failure mode, a long tail's best runs, a table's decisive run. This measures the price any method would pay to
cover there. Write a population P as the mixture ``(1 - s) P0 + s Q``, where Q is a kind of run of share s and P0
the rest. A sweep of m runs from P holds no Q run with probability ``a = (1 - s)^m``, and such a sweep is a sweep
of P0: nothing tells them apart. So for any interval method, with theta and theta0 the Boo_n of P and of P0:

1. its coverage of theta on P is at most ``1 - a + a * P0(theta in I)``: at most ``1 - a`` when Q lies so far
   away that a finite interval drawn from P0's runs cannot reach theta (a failure mode at an unknown distance:
   ``1 - 0.9^10 = 65.1 %`` for 10 % failures in 10 runs);
2. to cover 93 % on both P and P0, it must hold theta and theta0 together, so be at least ``|theta - theta0|``
   wide, in at least ``0.93 - 0.07 / a`` of the sweeps of P0 (nothing when that is negative).

Each row takes a population of the suite (a synthetic one as a table of 100,000 draws, a published table as
itself), a kind of run Q, and a number of runs m. It prints the share of sweeps without Q, the ceiling of 1., the
shift theta - theta0 and the share 2. demands, then what the default does on sweeps of P0: how often it is that
wide, its median width, and its coverage of theta0. The price of honesty on P is the shift ÷ that median width,
paid in most sweeps of P0, a population that looks the same.

A second table splits the same sweeps of P0 where Q is a published table's best run by validation: the default's
coverage among the sweeps that hold all of P0's next ``NEXT_RUNS`` best runs by validation and among the others,
whether P0's misses too turn on runs the sweep lacks.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the published tables' loaders

from published_runs import SHARED_DATA, load_all  # noqa: E402

from boontrack import boo_n  # noqa: E402
from boontrack.simulate import finite_population, population, sweep_intervals  # noqa: E402
from boontrack.spec import DEFAULT_CI_METHOD  # noqa: E402

#: The coverage asked of both populations: the floor the coverage suite holds every cell to.
TARGET = 0.93
#: Draws standing for a synthetic population (its Boo_n then lies within about 1e-3 sd of the exact one).
DRAWS = 100_000
#: How many of P0's best runs by validation the second table asks a sweep to hold.
NEXT_RUNS = 3


def rows_to_measure() -> list[tuple[str, str, np.ndarray, np.ndarray, np.ndarray, list[int], list[int]]]:
    """(population, kind of run Q, val, test, whether each run is a Q run, m's, budgets)."""
    rng = np.random.default_rng(12345)

    def drawn(pop):
        val, test = pop.sample(DRAWS, rng=rng)
        return val[0], test[0]

    def worst(test, share):
        return test <= np.quantile(test, share, method="inverted_cdf")

    def best(val, share):
        return val >= np.quantile(val, 1 - share, method="inverted_cdf")

    rows = []
    for share in (0.10, 0.20):
        val, test = drawn(population("diverged", share=share, gap=20.0))
        rows.append((f"{share:.0%} diverged runs", "the diverged runs", val, test, val < -10.0, [10, 20], [1]))
    val, test = drawn(population("lognormal"))
    for share in (0.02, 0.05, 0.10):
        kind = f"the best {share:.0%} by validation"
        rows.append(("long right tail (log-normal)", kind, val, test, best(val, share), [20, 50, 100], [5, 10]))
    val, test = drawn(population("left_skewed"))
    for share in (0.02, 0.05, 0.10):
        kind = f"the worst {share:.0%} by test"
        rows.append(("long left tail (skewness -6.2)", kind, val, test, worst(test, share), [10, 20, 100], [1]))
    if not SHARED_DATA.is_dir():
        print(f"published tables not found at {SHARED_DATA}: left out", file=sys.stderr)
        return rows
    tables = load_all()
    for label, budgets in (("CIFAR-100 ResNet", [5, 10]), ("VAMPIRE NPMI", [10])):
        runs = tables[label]
        rows.append(
            (label, "its best run by validation", runs.val, runs.test, runs.val == runs.val.max(), [50, 100], budgets)
        )
    for label in ("SST-2 elmo frozen", "SciTail simple_overlap"):
        runs = tables[label]
        rows.append((label, "its worst 5 % by test", runs.val, runs.test, worst(runs.test, 0.05), [10, 20], [1]))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replications", type=int, default=1000)
    parser.add_argument("--resamples", type=int, default=999)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", default="", help="keep the populations whose label contains this")
    options = parser.parse_args()
    start = time.perf_counter()
    print(
        "| population | kind of run Q (share s) | m | n | sweeps without Q | ceiling, Q far away | Boo_n shift without Q "
        f"| a method covering {TARGET:.0%} of both is that wide in | the default is, in | its median width "
        "| shift ÷ that width | its coverage without Q |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    splits = []
    for index, (label, kind, val, test, q_run, runs, budgets) in enumerate(rows_to_measure()):
        if options.only not in label:
            continue
        share = q_run.mean()
        rest = finite_population(val[~q_run], test[~q_run])
        shift = boo_n(val, test, n=budgets) - rest.boo_n(budgets)
        for m in runs:
            absent = (1.0 - share) ** m
            sweeps = sweep_intervals(
                rest,
                m=m,
                n=budgets,
                methods=(DEFAULT_CI_METHOD,),
                replications=options.replications,
                n_resamples=options.resamples,
                rng=np.random.default_rng([options.seed, index, m]),
            )
            width = sweeps.high[DEFAULT_CI_METHOD] - sweeps.low[DEFAULT_CI_METHOD]
            covered = sweeps.covered(DEFAULT_CI_METHOD).mean(axis=0)
            needed = TARGET - (1.0 - TARGET) / absent
            for k, n in enumerate(budgets):
                print(
                    f"| {label} | {kind} ({100 * share:.1f} %) | {m} | {n} | {100 * absent:.1f} % "
                    f"| {100 * (1 - absent):.1f} % | {shift[k]:+.4g} "
                    f"| {f'{100 * needed:.0f} %' if needed > 0 else 'no sweep'} "
                    f"| {100 * np.mean(width[:, k] >= abs(shift[k])):.0f} % | {np.median(width[:, k]):.4g} "
                    f"| {abs(shift[k]) / np.median(width[:, k]):.1f} | {100 * covered[k]:.1f} % |",
                    flush=True,
                )
            if kind == "its best run by validation":
                splits.append(next_runs_row(label, m, budgets, sweeps, val[~q_run]))
    if splits:
        print(
            f"\n| population | m | sweeps of P0 holding its best {NEXT_RUNS} runs by validation "
            "| the default's coverage there, per n | in the other sweeps |"
        )
        print("|---|---|---|---|---|")
        print("\n".join(splits))
    print(
        f"\n{options.replications} sweeps of P0 per row, {options.resamples} resamples per interval, nominal 95 %, "
        f"estimator V ({(time.perf_counter() - start) / 60:.0f} min)."
    )


def next_runs_row(label: str, m: int, budgets: list[int], sweeps, rest_val: np.ndarray) -> str:
    """The default's coverage among the sweeps of P0 that hold each of its NEXT_RUNS best runs by validation
    (runs told apart by their validation scores, each held by one run of these tables) and among the others."""
    best = np.sort(rest_val)[::-1][:NEXT_RUNS]
    held = np.all([(sweeps.val == score).any(axis=1) for score in best], axis=0)
    covered = sweeps.covered(DEFAULT_CI_METHOD)
    parts = [
        " / ".join(f"{100 * covered[chosen, k].mean():.1f}" if chosen.any() else "—" for k in range(len(budgets)))
        for chosen in (held, ~held)
    ]
    return f"| {label} | {m} | {100 * held.mean():.1f} % | {parts[0]} | {parts[1]} |"


if __name__ == "__main__":
    main()
