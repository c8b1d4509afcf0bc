"""Populations of families that neither the suite nor the held-out set of ``bench_coverage.py`` uses.

``bench_coverage.py --fresh`` measures them, at numbers of runs and budgets the suite does not use either: the
check of whether the suite's figures carry over to shapes of scores nobody chose the methods on. Each population
is a table of ``DRAWS`` draws used as a finite population (:func:`boontrack.simulate.finite_population`), so its
Boo_n is exact (the V estimate of the whole table) for any family, with no quadrature to write.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from boontrack.simulate import Population, finite_population

#: Draws per population: a table this large stands for its family (its Boo_n at n <= 15 differs from the family's
#: by far less than the intervals' widths at m <= 100).
DRAWS = 200_000


def fresh(seed: int = 20261127) -> list[tuple[str, Population]]:
    """The populations, labelled; the same tables for the same ``seed``."""
    rng = np.random.default_rng(seed)

    def correlated(rho: float) -> tuple[np.ndarray, np.ndarray]:
        z_val = rng.standard_normal(DRAWS)
        return z_val, rho * z_val + np.sqrt(1.0 - rho * rho) * rng.standard_normal(DRAWS)

    def student(df: float, rho: float) -> tuple[np.ndarray, np.ndarray]:
        z_val = stats.t.rvs(df, size=DRAWS, random_state=rng)
        noise = stats.t.rvs(df, size=DRAWS, random_state=rng)
        return z_val, rho * z_val + np.sqrt(1.0 - rho * rho) * noise

    def mapped(quantile, rho: float) -> tuple[np.ndarray, np.ndarray]:  # a Gaussian copula with these margins
        z_val, z_test = correlated(rho)
        return quantile(stats.norm.cdf(z_val)), quantile(stats.norm.cdf(z_test))

    def configurations(means: list[float], rho: float) -> tuple[np.ndarray, np.ndarray]:
        z_val, z_test = correlated(rho)
        mode = rng.choice(np.asarray(means), size=DRAWS)
        return mode + z_val, mode + z_test

    def failures(share: float, gap: float, rho: float) -> tuple[np.ndarray, np.ndarray]:
        z_val, z_test = correlated(rho)
        fall = np.where(rng.random(DRAWS) < share, gap, 0.0)
        return z_val - fall, z_test - fall

    def binomial(a: float, b: float, trials: int) -> tuple[np.ndarray, np.ndarray]:
        chance = rng.beta(a, b, DRAWS)
        return rng.binomial(trials, chance) / trials, rng.binomial(trials, chance) / trials

    def rounded(rho: float) -> tuple[np.ndarray, np.ndarray]:
        z_val, z_test = correlated(rho)
        return np.round(0.85 + 0.01 * z_val, 2), np.round(0.85 + 0.01 * z_test, 2)

    tables = [
        ("Student t, 3 degrees of freedom, correlation 0.5", student(3, 0.5)),
        ("uniform scores, correlation 0.7", mapped(lambda p: p, 0.7)),
        ("exponential scores, correlation 0.6", mapped(stats.expon.ppf, 0.6)),
        ("four configurations (0, −0.5, −1, −2 sd), correlation 0.5", configurations([0, -0.5, -1, -2], 0.5)),
        ("validation overfits: correlation −0.3", correlated(-0.3)),
        ("two modes, half the runs 1 sd lower, correlation 0.6", configurations([0, -1], 0.6)),
        ("accuracy on 30 examples (beta-binomial 6, 4)", binomial(6, 4, 30)),
        ("3 % failures, 8 sd below, correlation 0.5", failures(0.03, 8, 0.5)),
        ("scores rounded to 0.01 (sd 0.01), correlation 0.4", rounded(0.4)),
    ]
    return [(label, finite_population(val, test)) for label, (val, test) in tables]
