"""Populations with known Boo_n and the coverage engine (boontrack.simulate).

The exact truths are checked against independent values: the paper's constants for normal scores, the closed
form E[exp(t max(Z1, Z2))] = 2 exp(t^2 / 2) Phi(t / sqrt 2) for log-normal scores at n = 2, the mean for n = 1,
and Monte Carlo (best-validation run of n draws, ties broken at random) for the beta-binomial population and a
kernel fit.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from boontrack.choices import DEFAULT_CI_METHOD
from boontrack.resampling import boo_n_curve_ci
from boontrack.simulate import band_coverage, coverage, kernel_fit, population

E_MAX_5, E_MAX_10 = 1.162964, 1.538753  # E[max of n N(0, 1)], Bajgar et al. 2018, Table 4


def monte_carlo_boo_n(pop, n: int, draws: int, seed: int) -> tuple[float, float]:
    """Mean test score of the best-validation run of n draws (random tie-break), and its standard error."""
    val, test = pop.sample(n, replications=draws, rng=seed)
    jitter = np.random.default_rng(seed + 1).random(val.shape)  # breaks validation ties uniformly
    best = np.lexsort((jitter, val), axis=1)[:, -1]
    picked = np.take_along_axis(test, best[:, None], axis=1)[:, 0]
    return float(picked.mean()), float(picked.std() / math.sqrt(draws))


def test_normal_truth_is_the_papers_constant():
    assert population("normal").boo_n(5) == pytest.approx(0.5 * E_MAX_5, abs=1e-6)
    assert population("normal", rho=0.3, mean=0.8, sd=0.01).boo_n([1, 10]) == pytest.approx(
        [0.8, 0.8 + 0.3 * 0.01 * E_MAX_10], abs=1e-8
    )


@pytest.mark.parametrize("sigma, rho", [(1.0, 0.5), (0.4, 0.9)])
def test_skewed_truths_closed_forms(sigma, rho):
    tilt = sigma * rho
    spread = math.exp(sigma**2 * (1 - rho**2) / 2)
    right, left = population("lognormal", sigma=sigma, rho=rho), population("left_skewed", sigma=sigma, rho=rho)
    assert right.boo_n(1) == pytest.approx(math.exp(sigma**2 / 2), rel=1e-10)
    assert left.boo_n(1) == pytest.approx(-math.exp(sigma**2 / 2), rel=1e-10)
    best_of_two = 2 * math.exp(tilt**2 / 2)
    assert right.boo_n(2) == pytest.approx(spread * best_of_two * stats.norm.cdf(tilt / math.sqrt(2)), rel=1e-10)
    assert left.boo_n(2) == pytest.approx(-spread * best_of_two * stats.norm.cdf(-tilt / math.sqrt(2)), rel=1e-10)


@pytest.mark.parametrize("name", ["lognormal", "left_skewed", "beta_binomial"])
def test_truths_agree_with_monte_carlo(name):
    pop = population(name)
    for n, seed in ((5, 1), (10, 2)):
        estimate, se = monte_carlo_boo_n(pop, n, 200_000, seed)
        assert pop.boo_n(n) == pytest.approx(estimate, abs=4 * se)


def test_beta_binomial_has_ties_and_its_mean():
    pop = population("beta_binomial", a=8.0, b=2.0, trials=20)
    assert pop.boo_n(1) == pytest.approx(0.8, abs=1e-14)  # E[p] = a / (a + b)
    val, _ = pop.sample(30, rng=0)
    assert np.unique(val).size < 30


def test_kernel_fit_truth_agrees_with_monte_carlo():
    rng = np.random.default_rng(3)
    val = rng.normal(0.7, 0.02, 15)
    test = val + rng.normal(0, 0.01, 15)
    fit = kernel_fit(val, test)
    estimate, se = monte_carlo_boo_n(fit, 4, 200_000, 7)
    assert fit.boo_n(4) == pytest.approx(estimate, abs=4 * se)
    assert fit.boo_n(1) == pytest.approx(test.mean(), abs=1e-9)  # kernel noise has mean 0
    lower = kernel_fit(-val, test, maximize=False)  # lower is better: the same population
    assert lower.boo_n(4) == pytest.approx(fit.boo_n(4), abs=1e-12)


def test_normal_sample_has_the_correlation():
    val, test = population("normal", rho=0.8).sample(20_000, rng=0)
    assert np.corrcoef(val[0], test[0])[0, 1] == pytest.approx(0.8, abs=0.02)
    assert val.shape == test.shape == (1, 20_000)


@pytest.mark.filterwarnings("ignore::boontrack.FewRunsWarning")
def test_coverage_is_the_share_of_intervals_holding_the_truth():
    """The engine against the public API: the same sweeps and resamples, one boo_n_curve_ci per sweep."""
    pop, m, budgets, reps, resamples = population("normal"), 12, [1, 3], 40, 99
    cells = coverage(pop, m=m, n=budgets, methods="percentile", replications=reps, n_resamples=resamples, rng=4)
    rng = np.random.default_rng(4)
    val, test = pop.sample(m, replications=reps, rng=rng)
    bands = [
        boo_n_curve_ci(val[r], test[r], n=budgets, n_resamples=resamples, method="percentile", rng=rng)
        for r in range(reps)
    ]
    truth = pop.boo_n(budgets)
    for k, cell in enumerate(cells):
        hits = [band.low[k] <= truth[k] <= band.high[k] for band in bands]
        assert (cell.n, cell.method, cell.replications) == (budgets[k], "percentile", reps)
        assert cell.coverage == pytest.approx(np.mean(hits), abs=1e-12)
        assert cell.median_width == pytest.approx(np.median([b.high[k] - b.low[k] for b in bands]), abs=1e-12)
        assert cell.truth == pytest.approx(truth[k], abs=1e-12)


def test_coverage_shares_resamples_between_studentized_and_percentile():
    pop = population("beta_binomial")
    both = coverage(pop, m=10, n=[1, 5], replications=30, n_resamples=99, rng=2)
    alone = coverage(pop, m=10, n=[1, 5], methods=[DEFAULT_CI_METHOD], replications=30, n_resamples=99, rng=2)
    assert [c.method for c in both] == [DEFAULT_CI_METHOD] * 2 + ["percentile"] * 2
    assert both[:2] == alone


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: population("cauchy"), r"`name` must be one of"),
        (lambda: population("normal", nu=3), r"unknown parameter\(s\) \['nu'\]"),
        (lambda: population("normal", rho=1.5), r"`rho` must be in \[-1, 1\]"),
        (lambda: population("lognormal", sigma=0), r"`sigma` must be > 0"),
        (lambda: coverage("normal", m=10), r"`population` must be a boontrack.simulate.Population"),
        (lambda: coverage(population("normal"), m=4, n=5, estimator="U"), r"`n` = 5 exceeds `m` = 4"),
        (lambda: coverage(population("normal"), m=4, methods="basic"), r"`methods` must be one of"),
    ],
)
def test_bad_arguments(call, message):
    with pytest.raises(ValueError, match=message):
        call()


@pytest.mark.filterwarnings("ignore::boontrack.FewRunsWarning")
def test_band_coverage_is_the_share_of_bands_holding_the_whole_curve():
    """The engine against the public API: one boo_n_curve_ci per sweep over n = 1..m/2, same resamples."""
    pop, m, reps, resamples = population("normal", rho=1.0), 10, 30, 99
    result = band_coverage(pop, m=m, replications=reps, n_resamples=resamples, rng=6)
    rng = np.random.default_rng(6)
    val, test = pop.sample(m, replications=reps, rng=rng)
    truth = pop.boo_n(list(range(1, 6)))
    bands = [boo_n_curve_ci(val[r], test[r], n=range(1, 6), n_resamples=resamples, rng=rng) for r in range(reps)]
    assert result.budgets == (1, 2, 3, 4, 5) and result.method == DEFAULT_CI_METHOD
    assert result.pointwise == np.mean([np.all((b.low <= truth) & (truth <= b.high)) for b in bands])
    held = [np.all((b.simultaneous_low <= truth) & (truth <= b.simultaneous_high)) for b in bands]
    assert result.simultaneous == np.mean(held) >= result.pointwise
