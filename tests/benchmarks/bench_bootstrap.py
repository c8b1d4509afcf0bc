"""Benchmark of the bootstrap: boontrack.resampling against scipy.stats.bootstrap around a Boo_n statistic.

Run by hand (not collected by pytest): ``python tests/benchmarks/bench_bootstrap.py [--quick]``. Prints a
Markdown table. Data: the 370 fixed-hyperparameter AS Reader runs on CBT of Bajgar et al. (2018), from
``<repo>/../shared/data/boon-paper`` (316 repeated validation values), and 1,000 synthetic runs without ties.

scipy is used the straightforward way: ``scipy.stats.bootstrap((val, test), statistic, paired=True,
vectorized=False)`` with ``statistic = boontrack.boo_n`` (tie handling is what makes a vectorised statistic
non-trivial). It calls the statistic once per resample, so it is measured at a smaller B and extrapolated
linearly to 100,000 when a full run would exceed the time budget.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from boontrack.estimators import boo_n
from boontrack.resampling import boo_n_ci, boo_n_curve_ci

DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "boon-paper" / "cbt_fixed_hyppar.csv"
SCIPY_BUDGET_S = 30.0


def load_cbt() -> tuple[np.ndarray, np.ndarray]:
    frame = pd.read_csv(DATA)
    frame = frame[frame["log_path"].str.contains("/cbt-dist/", regex=False) & (frame["epoch"] > 0)]
    return frame["valid.accuracy"].to_numpy(float), frame["accuracy"].to_numpy(float)


def best_time(fn, repeats: int) -> tuple[float, object]:
    best, result = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result


def row(call: str, data: str, b: int, seconds: float, low: float, high: float, note: str = "") -> str:
    return f"| {call} | {data} | {b:,} | {seconds:.3f} | {low:.5f} | {high:.5f} | {note} |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one repeat, smaller scipy runs")
    args = parser.parse_args()
    repeats = 1 if args.quick else 3
    cbt = load_cbt()
    rng = np.random.default_rng(0)
    synthetic_val = rng.normal(0.8, 0.01, 1000)
    synthetic = (synthetic_val, synthetic_val + rng.normal(0, 0.005, 1000))
    b = 100_000

    lines = [
        "| call | data | B | seconds (best of %d) | CI low | CI high | note |" % repeats,
        "|---|---|---|---|---|---|---|",
    ]
    for data_name, (val, test) in (("CBT m=370", cbt), ("synthetic m=1000", synthetic)):
        for method in ("percentile", "bca", "smoothed"):
            for estimator in ("V", "U", "W"):
                if method == "smoothed" and estimator != "V":
                    continue
                seconds, res = best_time(
                    lambda: boo_n_ci(val, test, n=5, estimator=estimator, method=method, n_resamples=b, rng=1),
                    repeats,
                )
                ci = res.confidence_interval
                lines.append(row(f"boontrack boo_n_ci {method}, {estimator}", data_name, b, seconds, ci.low, ci.high))

    val, test = cbt
    for method in ("percentile", "BCa"):
        b_measured = 2_000 if args.quick else 9_999
        start = time.perf_counter()
        res = stats.bootstrap(
            (val, test),
            lambda v, t: boo_n(v, t, n=5),
            paired=True,
            vectorized=False,
            method=method,
            n_resamples=b_measured,
            rng=1,
        )
        seconds = time.perf_counter() - start
        note = f"measured at B={b_measured:,}"
        ci = res.confidence_interval
        if seconds * b / b_measured <= SCIPY_BUDGET_S and not args.quick:
            start = time.perf_counter()
            res = stats.bootstrap(
                (val, test),
                lambda v, t: boo_n(v, t, n=5),
                paired=True,
                vectorized=False,
                method=method,
                n_resamples=b,
                rng=1,
            )
            seconds, ci, note = time.perf_counter() - start, res.confidence_interval, "measured"
        else:
            seconds, note = seconds * b / b_measured, note + f", x{b / b_measured:.1f} extrapolated"
        lines.append(
            row(f"scipy.stats.bootstrap {method} around boo_n, V", "CBT m=370", b, seconds, ci.low, ci.high, note)
        )

    for estimator in ("V", "U", "W"):
        seconds, band = best_time(
            lambda: boo_n_curve_ci(val, test, estimator=estimator, n_resamples=9_999, method="percentile", rng=2),
            repeats,
        )
        lines.append(
            row(
                f"boontrack boo_n_curve_ci percentile, {estimator}, {band.n.size} budgets",
                "CBT m=370",
                9_999,
                seconds,
                band.low[band.n == 5][0],
                band.high[band.n == 5][0],
                "interval shown at n=5",
            )
        )
    val, test = synthetic
    for method in ("percentile", "studentized"):  # studentized: a standard error per resample and budget
        seconds, band = best_time(lambda: boo_n_curve_ci(val, test, n_resamples=9_999, method=method, rng=2), repeats)
        lines.append(
            row(
                f"boontrack boo_n_curve_ci {method}, V, {band.n.size} budgets",
                "synthetic m=1000",
                9_999,
                seconds,
                band.low[band.n == 5][0],
                band.high[band.n == 5][0],
                "interval shown at n=5",
            )
        )
    print("\n".join(lines))


if __name__ == "__main__":
    main()
