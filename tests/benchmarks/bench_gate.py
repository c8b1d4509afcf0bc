"""Benchmark: how often the gate passes a null comparison (``compare_sources(..., require="better")``).

Both sides are drawn from one population (``--runs`` runs each, validation and test scores), written to two CSV
files and compared as ``boontrack compare main.csv branch.csv --require better`` compares them: the claim is
decided by the interval of ΔBoo_n at the largest budget (``--n``). A null comparison should pass at most
(1 - confidence) / 2 of the time: the interval is two-sided, the claim one-sided.

Run:  python tests/benchmarks/bench_gate.py [--replications 200] [--runs 20] [--n 5] [--resamples 499] [--seed 1]
Prints a Markdown table: population, passes, rate and its Monte Carlo standard error.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from boontrack import compare_sources
from boontrack.simulate import population

POPULATIONS = {
    "normal, val/test correlation 0.5": population("normal", rho=0.5),
    "left-skewed below a ceiling": population("left_skewed", sigma=0.5, ceiling=1, scale=0.03),
    "accuracy on 200 examples (ties)": population("beta_binomial", trials=200),
}


def passes(pop, options: argparse.Namespace, rng: np.random.Generator, tmp: Path) -> int:
    val, test = pop.sample(options.runs, replications=2 * options.replications, rng=rng)
    passed = 0
    for r in range(options.replications):
        files = []
        for side, row in (("main", 2 * r), ("branch", 2 * r + 1)):
            path = tmp / f"{side}.csv"
            pd.DataFrame({"val": val[row], "test": test[row]}).to_csv(path, index=False)
            files.append(path)
        result = compare_sources(
            files,
            val="val",
            test="test",
            maximize=True,
            n=[options.n],
            n_resamples=options.resamples,
            seed=int(rng.integers(2**31)),
            require="better",
        )
        passed += result.gate.passed
    return passed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replications", type=int, default=200)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--n", type=int, default=5)
    parser.add_argument("--resamples", type=int, default=499)
    parser.add_argument("--seed", type=int, default=1)
    options = parser.parse_args()
    rng = np.random.default_rng(options.seed)
    print(
        f"{options.replications} null comparisons of {options.runs} runs a side, ΔBoo_{options.n}, "
        f"{options.resamples} resamples, `require='better'`\n"
    )
    print("| population | passed | rate | s.e. |\n|---|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for label, pop in POPULATIONS.items():
            k = passes(pop, options, rng, Path(tmp))
            rate = k / options.replications
            se = np.sqrt(rate * (1 - rate) / options.replications)
            print(f"| {label} | {k} | {100 * rate:.1f} % | {100 * se:.1f} % |", flush=True)


if __name__ == "__main__":
    main()
