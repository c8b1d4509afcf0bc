"""Benchmark of the estimator core: whole expected-max curves, huge m, and boon 0.1.0 / a plain numpy loop.

Run by hand: ``python tests/benchmarks/bench_estimators.py`` (a few minutes; prints Markdown tables). Everything is
measured side by side in one run on the same machine. The boon column needs ``pip install boon==0.1.0`` (not a
dependency of boontrack); it is skipped with a note when boon is missing.

The baseline is the straightforward vectorised-per-n V curve, one numpy pass over all m ranks per budget (O(m N)
for N budgets); it is stopped after a time budget and its full time extrapolated linearly in the budgets done.
"""

from __future__ import annotations

import argparse
import platform
import time
import warnings

import numpy as np
from scipy.special import gammaln

from boontrack.estimators import boo_n, expected_max
from boontrack.exceptions import ExtrapolationWarning

BASELINE_SECONDS = 15.0


def timed(func, *args, repeat: int = 1, **kwargs):
    """(best wall time in seconds over ``repeat`` calls, last result)."""
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        result = func(*args, **kwargs)
        best = min(best, time.perf_counter() - start)
    return best, result


def seconds(t: float) -> str:
    return f"{t * 1e3:.1f} ms" if t < 1 else f"{t:.2f} s"


def plain_v_curve(sorted_scores: np.ndarray, budget_seconds: float) -> tuple[np.ndarray, float, bool]:
    """V for n = 1, 2, ... by eq. 7 in float, one vectorised pass per n, until the time budget runs out.

    Returns the values computed, the (possibly extrapolated) time for the whole curve and whether it finished.
    """
    m = sorted_scores.size
    upper = np.arange(1, m + 1) / m
    lower = np.arange(0, m) / m
    values = []
    start = time.perf_counter()
    for n in range(1, m + 1):
        values.append(float((upper**n - lower**n) @ sorted_scores))
        elapsed = time.perf_counter() - start
        if elapsed > budget_seconds:
            return np.array(values), elapsed * m / n, False
    return np.array(values), time.perf_counter() - start, True


def full_curves(sizes: list[int], baseline_seconds: float) -> None:
    print("## Whole curve n = 1..B\n")
    print("| B | V | U | W | plain numpy V loop | max abs diff V vs loop | finite | U(n=B) = max |")
    print("|---|---|---|---|---|---|---|---|")
    for size in sizes:
        scores = np.random.default_rng(size).normal(0.6, 0.07, size)
        times, curves = {}, {}
        for estimator in ("V", "U", "W"):
            times[estimator], curves[estimator] = timed(expected_max, scores, estimator=estimator)
        loop_values, loop_time, finished = plain_v_curve(np.sort(scores), baseline_seconds)
        loop_cell = seconds(loop_time)
        if not finished:
            loop_cell = f"~{loop_cell} (extrapolated from n <= {loop_values.size:,})"
        diff = np.max(np.abs(curves["V"][: loop_values.size] - loop_values))
        finite = all(np.all(np.isfinite(c)) for c in curves.values())
        print(
            f"| {size:,} | {seconds(times['V'])} | {seconds(times['U'])} | {seconds(times['W'])} | {loop_cell} "
            f"| {diff:.1e} | {finite} | {curves['U'][-1] == scores.max()} |"
        )
    print()


def log_space_reference(sorted_scores: np.ndarray, n: int, estimator: str) -> float:
    """Eq. 7 / Dodge et al. 2021 eqs. 3, 5 weights from float powers (V) or gammaln (U, W), normalised."""
    m = sorted_scores.size
    j = np.arange(1, m + 1, dtype=np.float64)
    if estimator == "V":
        weights = (j / m) ** n - ((j - 1) / m) ** n
    else:
        top = j - 1 if estimator == "U" else j + n - 2  # C(j-1, n-1) or C(j+n-2, n-1)
        with np.errstate(invalid="ignore"):
            log_w = gammaln(top + 1) - gammaln(n) - gammaln(top - n + 2)
        log_w = np.where(top >= n - 1, log_w, -np.inf)
        weights = np.exp(log_w - log_w.max())
    return float(weights @ sorted_scores / weights.sum())


def huge_m(m: int, budgets: list[int]) -> None:
    print(f"## B = {m:,}, single budgets (each a separate call)\n")
    print("| estimator | n | time | value | reference | abs diff | finite, within [min, max] |")
    print("|---|---|---|---|---|---|---|")
    scores = np.random.default_rng(m).normal(0.6, 0.07, m)
    sorted_scores = np.sort(scores)
    for estimator in ("V", "U", "W"):
        for n in budgets:
            elapsed, value = timed(boo_n, scores, n=n, estimator=estimator)
            reference = log_space_reference(sorted_scores, n, estimator)
            ok = bool(np.isfinite(value) and scores.min() <= value <= scores.max())
            print(
                f"| {estimator} | {n:,} | {seconds(elapsed)} | {value:.12f} | {reference:.12f} "
                f"| {abs(value - reference):.1e} | {ok} |"
            )
    print()


def against_boon(sizes: list[int], n: int) -> None:
    try:
        import boon
    except ImportError:
        print("## boon 0.1.0\n\nboon is not installed (`pip install boon==0.1.0`): column skipped.\n")
        return
    print(f"## Single n = {n} against boon 0.1.0 (`boon.boo`), V with validation/test pairs\n")
    print("| m | boontrack time | boon time | abs diff of values |")
    print("|---|---|---|---|")
    for m in sizes:
        rng = np.random.default_rng(m)
        val, test = np.round(rng.normal(0.8, 0.02, m), 3), rng.normal(0.8, 0.02, m)  # rounded: ties
        ours_time, ours = timed(boo_n, val, test, n=n, repeat=5)
        boon_time, theirs = timed(boon.boo, val, test, n=n, repeat=5)
        print(f"| {m:,} | {seconds(ours_time)} | {seconds(boon_time)} | {abs(ours - theirs):.1e} |")
    print()
    print("Where boon's int64 powers wrap around (m^n > 2^63):\n")
    print("| m | n | boontrack | boon | float eq. 7 reference |")
    print("|---|---|---|---|---|")
    for m, k in [(100, 9), (100, 10), (1000, 7), (1000, 8)]:
        rng = np.random.default_rng(100)
        val, test = rng.normal(0.8, 0.02, m), rng.normal(0.8, 0.02, m)
        reference = log_space_reference(test[np.argsort(val)], k, "V")
        print(f"| {m:,} | {k} | {boo_n(val, test, n=k):.6f} | {boon.boo(val, test, n=k):.6f} | {reference:.6f} |")
    print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes only (a smoke run)")
    args = parser.parse_args()
    warnings.simplefilter("ignore", ExtrapolationWarning)
    print(
        f"# boontrack estimator benchmark\n\nPython {platform.python_version()}, numpy {np.__version__}, "
        f"{platform.machine()}; wall times, best of 5 for the boon table, single runs otherwise.\n"
    )
    if args.quick:
        full_curves([1_000], baseline_seconds=2.0)
        huge_m(10_000, [1, 10, 10_000])
        against_boon([1_000], n=5)
        return
    full_curves([10_000, 100_000], baseline_seconds=BASELINE_SECONDS)
    huge_m(1_000_000, [1, 10, 1_000, 1_000_000])
    against_boon([1_000, 100_000, 1_000_000], n=5)


if __name__ == "__main__":
    main()
