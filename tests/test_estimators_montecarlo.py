"""Bias and variance of V, U and W by simulation, on the set-up of Dodge et al. (2021), §3.

Scores ~ Normal(0.6, 0.07) truncated to [0, 1], B = 30 runs per replication. The paper finds (and proves for the
bias) Bias(W) <= Bias(V) <= Bias(U) = 0 and Var(W) <= Var(V) <= Var(U). Every inequality is asserted with a margin
of several standard errors of the paired Monte Carlo difference, so a seed change does not flip it.

For fixed B and n each estimator is a fixed linear combination of the sorted sample, so the replications are one
matrix product. The weights are read off ``expected_max`` itself (by feeding it unit test vectors) and checked
against the exact closed forms of ``oracles.py`` first.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate, stats

from boontrack.estimators import boo_n, expected_max_of

from oracles import closed_form_rank_weights

pytestmark = pytest.mark.slow

MU, SIGMA, B = 0.6, 0.07, 30
BUDGETS = (2, 5, 10, 20, 30)
REPLICATIONS = 100_000
TRUNCATED = stats.truncnorm((0 - MU) / SIGMA, (1 - MU) / SIGMA, loc=MU, scale=SIGMA)


def truncated_normal_expected_max(n: int) -> float:
    """integral_0^1 x n f(x) F(x)^(n-1) dx with f and F of the truncated normal written out (eq. 2)."""
    mass = stats.norm.cdf((1 - MU) / SIGMA) - stats.norm.cdf(-MU / SIGMA)

    def density_of_max(x):
        f = stats.norm.pdf((x - MU) / SIGMA) / SIGMA / mass
        cdf = (stats.norm.cdf((x - MU) / SIGMA) - stats.norm.cdf(-MU / SIGMA)) / mass
        return n * f * cdf ** (n - 1)

    value, _ = integrate.quad(lambda x: x * density_of_max(x), 0.0, 1.0, points=[MU], epsabs=1e-13, limit=200)
    return value


def weights_of(estimator: str) -> np.ndarray:
    """Rank weights (rows: budgets, columns: ranks worst to best) as boo_n applies them, read off unit tests."""
    val = np.arange(B, dtype=float)
    columns = [boo_n(val, np.eye(B)[j], n=list(BUDGETS), estimator=estimator) for j in range(B)]
    return np.column_stack(columns)


def truncated_normal_samples(rng: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:
    """Rejection sampling (much faster than truncnorm.rvs): redraw the rare values outside [0, 1]."""
    x = rng.normal(MU, SIGMA, size=shape)
    outside = (x < 0) | (x > 1)
    while outside.any():
        x[outside] = rng.normal(MU, SIGMA, size=int(outside.sum()))
        outside = (x < 0) | (x > 1)
    return x


@pytest.fixture(scope="module")
def simulation():
    rng = np.random.default_rng(20210601)
    samples = np.sort(truncated_normal_samples(rng, (REPLICATIONS, B)), axis=1)
    estimates = {}
    for estimator in ("V", "U", "W"):
        weights = weights_of(estimator)
        exact = np.array([[float(w) for w in closed_form_rank_weights(B, n, estimator)] for n in BUDGETS])
        np.testing.assert_allclose(weights, exact, rtol=0, atol=1e-15)
        estimates[estimator] = samples @ weights.T  # (replications, budgets)
        # The matrix product is what boo_n computes sample by sample.
        direct = [boo_n(sample, n=list(BUDGETS), estimator=estimator) for sample in samples[:50]]
        np.testing.assert_allclose(estimates[estimator][:50], direct, rtol=0, atol=1e-14)
    return estimates


@pytest.mark.filterwarnings("error::scipy.integrate.IntegrationWarning")
def test_true_expected_max_two_ways():
    for n in (1, 2, 10, 30):
        assert expected_max_of(TRUNCATED, n) == pytest.approx(truncated_normal_expected_max(n), abs=1e-11)
    assert truncated_normal_expected_max(1) == pytest.approx(TRUNCATED.mean(), abs=1e-13)


def mean_and_standard_error(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return x.mean(axis=0), x.std(axis=0, ddof=1) / np.sqrt(x.shape[0])


def test_u_is_unbiased(simulation):
    truth = np.array([truncated_normal_expected_max(n) for n in BUDGETS])
    mean, se = mean_and_standard_error(simulation["U"])
    assert np.all(np.abs(mean - truth) < 4 * se), (mean - truth) / se


def test_bias_of_w_below_bias_of_v_below_zero(simulation):
    truth = np.array([truncated_normal_expected_max(n) for n in BUDGETS])
    v_bias, v_se = mean_and_standard_error(simulation["V"] - truth)
    assert np.all(v_bias < -8 * v_se), v_bias / v_se
    # Paired difference W - V: same samples, so its standard error is small.
    diff, diff_se = mean_and_standard_error(simulation["W"] - simulation["V"])
    assert np.all(diff < -8 * diff_se), diff / diff_se
    # The gap grows with n (Dodge et al. 2021, Figure 1).
    assert np.all(np.diff(v_bias) < 0) and np.all(np.diff(diff) < 0)


@pytest.mark.parametrize(("lower", "higher"), [("W", "V"), ("V", "U")])
def test_variance_ordering(simulation, lower, higher):
    # Var(higher) - Var(lower) is the mean of the paired differences of squared deviations.
    a, b = simulation[lower], simulation[higher]
    squared_gap = (b - b.mean(axis=0)) ** 2 - (a - a.mean(axis=0)) ** 2
    gap, gap_se = mean_and_standard_error(squared_gap)
    assert np.all(gap > 8 * gap_se), gap / gap_se
