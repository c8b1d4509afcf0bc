"""Monte Carlo: bias, spread and error of the Boo_n estimators V, U, W and the Gaussian one, by score shape.

Run by hand: ``python tests/benchmarks/bench_estimator_properties.py`` (a few minutes; ``--quick`` for a smoke
run); it prints the Markdown tables of the docs' page on the estimators (docs/statistics/estimators.md).

Populations (test = validation, as for an expected-validation curve), all with mean about 0.80:

* ``normal``: N(0.80, 0.02);
* ``right-skewed``: a shifted log-normal with s.d. 0.02, shape s = 0.5 or 1 (skewness 1.75 or 6.2): a few
  runs far above the rest;
* ``left-skewed``: the same mirrored, 0.80 + c - lognormal (skewness -1.75 or -6.2): a few runs far below the
  rest, as validation scores with occasional failed runs;
* ``ties``: accuracy on 200 validation examples, k / 200 with k ~ beta-binomial(200, 160, 40) (s.d. 0.04):
  the scores take few values, so ties are frequent.

For each population, m runs in {10, 20, 50} and budgets n in {5, 10}: the bias, standard deviation and RMSE of
V, U, W (Dodge et al. 2021) and of the Gaussian estimator (Bajgar et al. 2018, eq. 6) over ``--replications``
samples, against the true Boo_n of the population, ``expected_max_of`` (eq. 2 / eq. 4; tested against mpmath
and exact sums), itself checked here against the maximum of 10^6 simulated budgets. The variance ordering of
V, U, W is called only when each paired difference of variances is beyond 3 Monte Carlo standard errors.

The Anderson–Darling verdict of :func:`boontrack.diagnose` (``normal``, the test the Boo_n paper uses to say
whether the Gaussian estimate is safe) is taken on the first ``--ad-samples`` samples of each m: how often it
calls a skewed sample normal, and the Gaussian estimator's bias on the samples it lets through.

The estimates are computed in one vectorised pass: the rank weights P(j) - P(j-1) from the closed forms
((j/m)^n, C(j, n)/C(m, n), C(j+n-1, n)/C(m+n-1, n)), shared within blocks of tied scores (Bajgar et al. 2018,
§3.2); the first rows of every cell are checked against ``boo_n`` and ``boo_n_gaussian`` themselves.
"""

from __future__ import annotations

import argparse
import math
import platform
import time
import warnings

import numpy as np
from scipy import stats

from boontrack import boo_n, boo_n_gaussian, diagnose, expected_max_of
from boontrack.exceptions import FewRunsWarning

RUNS = (10, 20, 50)
BUDGETS = (5, 10)
ESTIMATORS = ("V", "U", "W")
MEAN, SD = 0.80, 0.02
CHECKED_ROWS = 100


class MirroredLognormal(stats.rv_continuous):
    """X = -Y for Y ~ lognorm(s): a long lower tail (left-skewed); shift and scale it with loc and scale."""

    def _pdf(self, x, s):
        return stats.lognorm.pdf(-x, s)

    def _cdf(self, x, s):
        return stats.lognorm.sf(-x, s)

    def _sf(self, x, s):
        return stats.lognorm.cdf(-x, s)

    def _ppf(self, q, s):
        return -stats.lognorm.isf(q, s)

    def _isf(self, q, s):
        return -stats.lognorm.ppf(q, s)


mirrored_lognorm = MirroredLognormal(a=-np.inf, b=0.0, name="mirrored_lognorm", shapes="s")


def skewed(s: float, *, left: bool):
    """A log-normal of shape s (mirrored when ``left``) with mean MEAN and s.d. SD."""
    base = stats.lognorm(s)
    scale = SD / base.std()
    if left:
        return mirrored_lognorm(s, loc=MEAN + scale * base.mean(), scale=scale)
    return stats.lognorm(s, loc=MEAN - scale * base.mean(), scale=scale)


#: name -> (frozen distribution, divisor: scores are draws / divisor)
POPULATIONS = {
    "normal": (stats.norm(MEAN, SD), 1.0),
    "right-skewed, s = 0.5": (skewed(0.5, left=False), 1.0),
    "right-skewed, s = 1": (skewed(1.0, left=False), 1.0),
    "left-skewed, s = 0.5": (skewed(0.5, left=True), 1.0),
    "left-skewed, s = 1": (skewed(1.0, left=True), 1.0),
    "ties (beta-binomial / 200)": (stats.betabinom(200, 160, 40), 200.0),
}


def best_of_n_cdf(m: int, n: int, estimator: str) -> np.ndarray:
    """P(k), k = 0..m: the best of n draws lies among the k worst runs (Dodge et al. 2021, eqs. 2, 3, 5)."""
    k = range(m + 1)
    if estimator == "V":
        return np.array([(j / m) ** n for j in k])
    if estimator == "U":
        return np.array([math.comb(j, n) / math.comb(m, n) for j in k])
    return np.array([math.comb(j + n - 1, n) / math.comb(m + n - 1, n) for j in k])


def rank_weighted(samples: np.ndarray, estimator: str) -> np.ndarray:
    """Estimates (replications, budgets): sum over runs of (P(upto) - P(below)) / (upto - below) * score."""
    m = samples.shape[1]
    s = np.sort(samples, axis=1)
    below = (s[:, None, :] < s[:, :, None]).sum(axis=2)  # runs strictly below each run
    upto = (s[:, None, :] <= s[:, :, None]).sum(axis=2)  # runs at or below: a tie block shares its weight
    columns = []
    for n in BUDGETS:
        p = best_of_n_cdf(m, n, estimator)
        columns.append((((p[upto] - p[below]) / (upto - below)) * s).sum(axis=1))
    return np.column_stack(columns)


def gaussian(samples: np.ndarray) -> np.ndarray:
    """Eq. 6 with test = val: mean + s.d. (ddof = 1) * E[max of n N(0, 1)]."""
    c = np.array([expected_max_of(stats.norm(0, 1), n) for n in BUDGETS])
    return samples.mean(axis=1)[:, None] + samples.std(axis=1, ddof=1)[:, None] * c[None, :]


def estimates(samples: np.ndarray) -> dict[str, np.ndarray]:
    found = {e: rank_weighted(samples, e) for e in ESTIMATORS}
    found["Gaussian"] = gaussian(samples)
    for row in range(min(CHECKED_ROWS, samples.shape[0])):  # the vectorised pass is what boontrack computes
        for e in ESTIMATORS:
            np.testing.assert_allclose(found[e][row], boo_n(samples[row], n=list(BUDGETS), estimator=e), atol=1e-13)
        np.testing.assert_allclose(found["Gaussian"][row], boo_n_gaussian(samples[row], n=list(BUDGETS)), atol=1e-13)
    return found


def check_truth(dist, divisor: float, truth: np.ndarray, rng: np.random.Generator) -> None:
    """The true Boo_n against the mean of 10^6 simulated maxima (within 5 standard errors)."""
    for n, value in zip(BUDGETS, truth):
        maxima = np.empty(0)
        for _ in range(10):  # 10 batches of 10^5 budgets, to bound memory
            maxima = np.append(maxima, dist.rvs(size=(100_000, n), random_state=rng).max(axis=1) / divisor)
        se = maxima.std() / math.sqrt(maxima.size)
        assert abs(maxima.mean() - value) < 5 * se, (dist, n, maxima.mean(), value, se)


def variance_gap(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """Var(b) - Var(a) from paired replications, and its Monte Carlo standard error."""
    gap = (b - b.mean()) ** 2 - (a - a.mean()) ** 2
    return float(gap.mean()), float(gap.std(ddof=1) / math.sqrt(gap.size))


def sd_order(found: dict[str, np.ndarray], column: int) -> str:
    """The V, U, W order by s.d., smallest first, with '<' only where the gap exceeds 3 standard errors."""
    ranked = sorted(ESTIMATORS, key=lambda e: found[e][:, column].std())
    text = ranked[0]
    for lower, higher in zip(ranked, ranked[1:]):
        gap, se = variance_gap(found[lower][:, column], found[higher][:, column])
        text += (" < " if gap > 3 * se else " ≈ ") + higher
    return text


def milli(x: float) -> str:
    """A signed value in units of 10^-3; a dash when there is none (no sample called normal)."""
    return "–" if math.isnan(x) else f"{1e3 * x:+.2f}"


def tables_section(replications: int, rng: np.random.Generator) -> None:
    """Bias and spread of V, U, W on every published table as a finite population (its runs drawn with
    replacement; the exact Boo_n is the V estimate of the whole table): where the rules measured on the
    synthetic populations above hold, and where they do not."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the published tables' loaders
    from published_runs import SHARED_DATA, load_all

    from boontrack.simulate import finite_population
    from boontrack.simulate.study import _boo_n_rows

    if not SHARED_DATA.is_dir():
        print(f"(published tables not found at {SHARED_DATA})")
        return
    print(
        "## The published tables as populations\n\n"
        f"{replications:,} sweeps per cell. Bias and s.d. in units of the test scores' s.d. in the table; the orders "
        "put the most negative bias and the smallest s.d. first ('<' beyond 3 Monte Carlo standard errors).\n"
    )
    print("| table | m | n | bias V / U / W | s.d. V / U / W | bias order | s.d. order | largest s.d. ÷ smallest |")
    print("|---|---|---|---|---|---|---|---|")
    for label, runs in load_all().items():
        pop = finite_population(runs.val, runs.test)
        truth = np.asarray(pop.boo_n(list(BUDGETS)))
        unit = runs.test.std()
        for m in RUNS:
            val, test = pop.sample(m, replications=replications, rng=rng)
            found = {e: _boo_n_rows(val, test, np.array(BUDGETS), e) for e in ESTIMATORS}
            for column, n in enumerate(BUDGETS):
                error = {e: found[e][:, column] - truth[column] for e in ESTIMATORS}
                bias = {e: error[e].mean() for e in ESTIMATORS}
                sd = {e: error[e].std(ddof=1) for e in ESTIMATORS}
                by_bias = sorted(ESTIMATORS, key=bias.get)
                bias_text = by_bias[0]
                for lower, higher in zip(by_bias, by_bias[1:]):
                    gap = error[higher] - error[lower]
                    bias_text += (" < " if gap.mean() > 3 * gap.std(ddof=1) / math.sqrt(gap.size) else " ≈ ") + higher
                print(
                    f"| {label} | {m} | {n} | "
                    + " / ".join(f"{bias[e] / unit:+.3f}" for e in ESTIMATORS)
                    + " | "
                    + " / ".join(f"{sd[e] / unit:.3f}" for e in ESTIMATORS)
                    + f" | {bias_text} | {sd_order(found, column)} | {max(sd.values()) / min(sd.values()):.2f} |"
                )
    print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replications", type=int, default=20_000)
    parser.add_argument("--ad-samples", type=int, default=4_000)
    parser.add_argument("--quick", action="store_true", help="1,000 replications, 500 AD samples, no truth check")
    parser.add_argument("--seed", type=int, default=20210601)
    parser.add_argument("--tables-only", action="store_true", help="only the published tables as populations")
    args = parser.parse_args()
    if args.quick:
        args.replications, args.ad_samples = 1_000, 500
    warnings.simplefilter("ignore", FewRunsWarning)
    rng = np.random.default_rng(args.seed)
    started = time.perf_counter()
    if args.tables_only:
        tables_section(args.replications, rng)
        print(f"({time.perf_counter() - started:.0f} s)")
        return
    print(
        f"# Boo_n estimators by Monte Carlo\n\nPython {platform.python_version()}, numpy {np.__version__}; "
        f"{args.replications:,} samples per cell, seed {args.seed}. Bias, s.d. and RMSE in units of 10⁻³ "
        "(scores have mean 0.80 and s.d. 0.02; 0.04 for the ties population).\n"
    )
    orders: dict[str, list[str]] = {}
    verdicts: dict[str, list[str]] = {}
    for name, (dist, divisor) in POPULATIONS.items():
        truth = np.array([expected_max_of(dist, n) for n in BUDGETS]) / divisor
        if not args.quick:
            check_truth(dist, divisor, truth, rng)
        print(f"## {name} (skewness {float(dist.stats(moments='s')):+.2f})\n")
        print(
            "| m | n | Boo_n | V bias | V s.d. | U bias | U s.d. | W bias | W s.d. | Gaussian bias | Gaussian s.d. "
            "| RMSE V / U / W / Gaussian | s.d. order |"
        )
        print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        orders[name], verdicts[name] = [], []
        for m in RUNS:
            samples = dist.rvs(size=(args.replications, m), random_state=rng) / divisor
            found = estimates(samples)
            rmse_ratio = []
            for column, n in enumerate(BUDGETS):
                error = {e: found[e][:, column] - truth[column] for e in found}
                rmse_of = {e: math.sqrt(np.mean(error[e] ** 2)) for e in found}
                rmse_ratio.append(rmse_of["Gaussian"] / min(rmse_of[e] for e in ESTIMATORS))
                cells = " | ".join(f"{milli(error[e].mean())} | {1e3 * error[e].std(ddof=1):.2f}" for e in found)
                rmse = " / ".join(f"{1e3 * rmse_of[e]:.2f}" for e in found)
                order = sd_order(found, column)
                orders[name].append(order)
                print(f"| {m} | {n} | {truth[column]:.4f} | {cells} | {rmse} | {order} |")
            normal = np.array([diagnose(sample).normal for sample in samples[: args.ad_samples]])
            g = found["Gaussian"][: args.ad_samples] - truth[None, :]
            passed = g[normal].mean(axis=0) if normal.any() else np.full(len(BUDGETS), np.nan)
            verdicts[name].append(
                f"| {name} | {m} | {100 * normal.mean():.1f} % | "
                + " / ".join(milli(x) for x in found["Gaussian"].mean(axis=0) - truth)
                + " | "
                + " / ".join(milli(x) for x in passed)
                + " | "
                + " / ".join(f"{r:.1f}" for r in rmse_ratio)
                + " |"
            )
        print()
    print("## Variance order of V, U, W (smallest s.d. first; ≈ where the gap is within 3 standard errors)\n")
    print("| population | " + " | ".join(f"m = {m}, n = {n}" for m in RUNS for n in BUDGETS) + " |")
    print("|---|" + "---|" * (len(RUNS) * len(BUDGETS)))
    for name, row in orders.items():
        print(f"| {name} | " + " | ".join(row) + " |")
    print(
        "\n## The Gaussian estimator and the Anderson–Darling verdict of `diagnose`\n\n"
        f"Share of the first {args.ad_samples:,} samples that `diagnose(...).normal` calls normal; the Gaussian "
        "estimator's bias (10⁻³) on all samples and on those called normal; its RMSE divided by the smallest RMSE "
        "of V, U and W.\n"
    )
    print(
        "| population | m | called normal | Gaussian bias, n = 5 / 10 | bias when called normal, n = 5 / 10 "
        "| RMSE ÷ best of V, U, W, n = 5 / 10 |"
    )
    print("|---|---|---|---|---|---|")
    for rows in verdicts.values():
        print("\n".join(rows))
    print()
    tables_section(args.replications, rng)
    print(f"({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
