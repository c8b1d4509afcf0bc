"""The estimator core against exact oracles, the papers' constants and every bad input.

Expected values come from ``tests/oracles.py`` (exact enumeration of every draw, in rational arithmetic), from the
papers (Bajgar et al. 2018; Dodge et al. 2021) and from quadratures and sums written here -- never from the code
under test.
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, stats

from boontrack.estimators import best_of_n_cdf, boo_n, boo_n_gaussian, expected_max, expected_max_of, rank_blocks
from boontrack.exceptions import ConstantScoresWarning, ExtrapolationWarning

from oracles import closed_form_rank_weights, enumerated_run_weights, exact_boo_n, tie_shared_run_weights

ESTIMATORS = ("V", "U", "W")
SMALL_GRID = [(m, n) for m in range(1, 8) for n in range(1, 6)]


def coarse_scores(rng: np.random.Generator, m: int) -> tuple[list[float], list[float]]:
    """Validation scores on a grid of 4 values (so ties are common) and continuous test scores."""
    val = (rng.integers(0, 4, size=m) / 4).tolist()
    test = rng.normal(0.7, 0.05, size=m).tolist()
    return val, test


def call_allowing_extrapolation(func, *args, n, m, **kwargs):
    """Call ``func``; it must warn ExtrapolationWarning exactly when some budget exceeds m."""
    if np.max(n) > m:
        with pytest.warns(ExtrapolationWarning, match=rf"> m = {m} runs"):
            return func(*args, n=n, **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ExtrapolationWarning)
        return func(*args, n=n, **kwargs)


# --- exact oracles ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("m", "n"), SMALL_GRID)
def test_every_estimator_matches_enumeration_of_every_draw(m, n):
    rng = np.random.default_rng(1000 * m + n)
    val, test = coarse_scores(rng, m)
    for estimator in ESTIMATORS:
        if estimator == "U" and n > m:
            continue
        for maximize in (True, False):
            expected = float(exact_boo_n(val, test, n, estimator, maximize=maximize))
            got = call_allowing_extrapolation(boo_n, val, test, n=n, m=m, estimator=estimator, maximize=maximize)
            assert got == pytest.approx(expected, abs=1e-12), (estimator, maximize)


@pytest.mark.parametrize(("m", "n"), SMALL_GRID)
def test_expected_max_curve_matches_enumeration(m, n):
    rng = np.random.default_rng(7 + 1000 * m + n)
    scores, _ = coarse_scores(rng, m)
    budgets = list(range(1, n + 1))
    for estimator in ESTIMATORS:
        if estimator == "U" and n > m:
            continue
        for maximize in (True, False):
            expected = [float(exact_boo_n(scores, None, k, estimator, maximize=maximize)) for k in budgets]
            got = call_allowing_extrapolation(
                expected_max, scores, n=budgets, m=m, estimator=estimator, maximize=maximize
            )
            np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize(("m", "n"), [(m, n) for m, n in SMALL_GRID if m >= 2])
def test_closed_form_oracle_agrees_with_enumeration(m, n):
    """The two oracles are independent constructions; their agreement is what makes either trustworthy."""
    rng = np.random.default_rng(31 + 1000 * m + n)
    val, _ = coarse_scores(rng, m)
    for estimator in ESTIMATORS:
        if estimator == "U" and n > m:
            continue
        for maximize in (True, False):
            ranks = closed_form_rank_weights(m, n, estimator)
            assert sum(ranks) == 1
            enumerated = enumerated_run_weights(val, n, estimator, maximize=maximize)
            assert tie_shared_run_weights(val, ranks, maximize=maximize) == enumerated


grid_values = st.sampled_from([-1.0, 0.0, 0.5, 0.75, 2.0])
test_values = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False)


@st.composite
def small_problems(draw):
    m = draw(st.integers(1, 6))
    estimator = draw(st.sampled_from(ESTIMATORS))
    n = draw(st.integers(1, m if estimator == "U" else 5))
    val = draw(st.lists(grid_values, min_size=m, max_size=m))
    test = draw(st.lists(test_values, min_size=m, max_size=m))
    return val, test, n, estimator, draw(st.booleans())


@settings(max_examples=150, deadline=None)
@given(small_problems())
def test_matches_enumeration_hypothesis(problem):
    val, test, n, estimator, maximize = problem
    expected = exact_boo_n(val, test, n, estimator, maximize=maximize)
    got = call_allowing_extrapolation(boo_n, val, test, n=n, m=len(val), estimator=estimator, maximize=maximize)
    # The error bound is eps times the score range (module docstring), so scale the tolerance with it.
    scale = max(1.0, max(abs(t) for t in test))
    assert got == pytest.approx(float(expected), abs=1e-12 * scale)


@pytest.mark.parametrize("value", [1.7714154809730962e-209, 0.1, 0.3, 0.6931, 0.7, 1e99])
@pytest.mark.parametrize("m", [3, 6, 7, 11])
def test_equal_scores_give_exactly_their_value(value, m):
    """A mean of equal scores can round an ulp away from them (3 x / 3 != x for x = 0.1); every estimate of
    equal test scores is that score, at every budget, and so lies in the scores' range (found by the fuzz test)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # budgets above m extrapolate, with a warning
        for estimator in ("V", "U", "W"):
            budgets = (1, 2, 3) if estimator == "U" else (1, 2, 5, 20)
            assert set(boo_n([0.5] * m, [value] * m, n=budgets, estimator=estimator)) == {value}
            assert set(expected_max([value] * m, estimator=estimator)) == {value}


def test_budgets_in_any_order_with_repeats_come_back_aligned():
    rng = np.random.default_rng(5)
    val, test = coarse_scores(rng, 6)
    budgets = [5, 1, 5, 3, 2]
    for estimator in ESTIMATORS:
        expected = [float(exact_boo_n(val, test, k, estimator)) for k in budgets]
        got = boo_n(val, test, n=np.array(budgets), estimator=estimator)
        assert isinstance(got, np.ndarray) and got.shape == (5,)
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)
        assert isinstance(boo_n(val, test, n=np.int64(3), estimator=estimator), float)


@pytest.mark.parametrize("estimator", ESTIMATORS)
@pytest.mark.parametrize("lo", [0, 3])
def test_best_of_n_cdf_is_the_cumulative_closed_form_weight(estimator, lo):
    m, budgets = 7, [1, 2, 4, 7]
    got = best_of_n_cdf(m, np.array(budgets), estimator, lo=lo)
    assert got.shape == (len(budgets), m - lo + 1)
    for row, n in zip(got, budgets, strict=True):
        cumulative = np.concatenate(([0.0], np.cumsum([float(w) for w in closed_form_rank_weights(m, n, estimator)])))
        np.testing.assert_allclose(row, cumulative[lo:], rtol=0, atol=1e-15)


@pytest.mark.parametrize("maximize", [True, False])
def test_rank_blocks_groups_ties_worst_to_best(maximize):
    val = np.array([0.5, 0.2, 0.5, 0.9, 0.2, 0.5])
    test = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    blocks = rank_blocks(val, maximize=maximize)
    if maximize:  # worst to best: 0.2 (runs 1, 4), 0.5 (0, 2, 5), 0.9 (3)
        assert blocks.order.tolist() == [1, 4, 0, 2, 5, 3]
        assert blocks.ends.tolist() == [2, 5, 6]
        np.testing.assert_allclose(blocks.block_means(test), [3.5, 10 / 3, 4.0])
    else:  # worst to best when lower is better: 0.9, 0.5, 0.2
        assert blocks.order.tolist() == [3, 0, 2, 5, 1, 4]
        assert blocks.ends.tolist() == [1, 4, 6]
        np.testing.assert_allclose(blocks.block_means(test), [4.0, 10 / 3, 3.5])
    assert blocks.starts.tolist() == [0, *blocks.ends[:-1].tolist()]


def test_docstring_example_by_hand():
    # Worst to best validation: 0.69, 0.70, 0.71, 0.72 -> tests 0.69, 0.68, 0.70, 0.71; V weights for n = 2 are
    # (j^2 - (j-1)^2) / 16 = 1, 3, 5, 7 (/16).
    expected = (1 * 0.69 + 3 * 0.68 + 5 * 0.70 + 7 * 0.71) / 16
    assert boo_n([0.70, 0.72, 0.71, 0.69], [0.68, 0.71, 0.70, 0.69], n=2) == pytest.approx(expected, abs=1e-15)


# --- the papers' constants and distributions ----------------------------------------------------------------------


def expected_max_std_normal_by_quadrature(n: int) -> float:
    """E[max of n N(0, 1)] = integral of n z phi(z) Phi(z)^(n-1) dz (Bajgar et al. 2018, eq. 2)."""
    value, _ = integrate.quad(
        lambda z: n * z * stats.norm.pdf(z) * stats.norm.cdf(z) ** (n - 1), -12, 12, epsabs=1e-14, limit=200
    )
    return value


@pytest.mark.parametrize(("n", "paper_value"), [(5, 1.162964), (10, 1.538753)])
def test_expected_max_of_standard_normal_paper_constants(n, paper_value):
    quadrature = expected_max_std_normal_by_quadrature(n)
    assert quadrature == pytest.approx(paper_value, abs=5e-7)
    assert expected_max_of(stats.norm(0, 1), n) == pytest.approx(quadrature, abs=1e-9)
    # The Gaussian Boo_n with test = val on a sample of exactly mean 0 and s.d. 1 is the constant itself.
    z = stats.norm.ppf((np.arange(1, 2001) - 0.5) / 2000)
    z = (z - z.mean()) / z.std(ddof=1)
    assert boo_n_gaussian(z, n=n) == pytest.approx(quadrature, abs=1e-9)


def test_expected_max_of_standard_normal_by_monte_carlo():
    rng = np.random.default_rng(20180710)
    draws = rng.standard_normal((200_000, 10))
    for n in (5, 10):
        sample_max = draws[:, :n].max(axis=1)
        standard_error = sample_max.std() / math.sqrt(sample_max.size)
        assert expected_max_of(stats.norm(0, 1), n) == pytest.approx(sample_max.mean(), abs=5 * standard_error)


@pytest.mark.parametrize(("mu", "sigma"), [(0.0, 1.0), (0.8, 0.01), (-3.0, 25.0)])
def test_expected_max_of_normal_is_location_scale(mu, sigma):
    budgets = [1, 2, 5, 10, 50]
    c = np.array([expected_max_std_normal_by_quadrature(k) for k in budgets])
    got = expected_max_of(stats.norm(mu, sigma), budgets)
    np.testing.assert_allclose(got, mu + sigma * c, rtol=0, atol=1e-8 * max(1.0, sigma, abs(mu)))


@pytest.mark.parametrize("n", [1, 2, 5, 10, 100, 1000])
def test_expected_max_of_closed_forms(n):
    # Max of n U(0, 1) is Beta(n, 1) with mean n / (n + 1); max of n Exp(1) has mean H_n (Renyi).
    assert expected_max_of(stats.uniform(0, 1), n) == pytest.approx(n / (n + 1), abs=1e-10)
    assert expected_max_of(stats.expon(0, 1), n) == pytest.approx(sum(1 / k for k in range(1, n + 1)), abs=1e-9)


def discrete_expected_max_by_eq4(pmf: np.ndarray, support: np.ndarray, n: int) -> float:
    """Eq. 4: sum_i ((sum_{x_j <= x_i} p_j)^n - (sum_{x_j < x_i} p_j)^n) x_i, the CDF built from the pmf."""
    cdf = np.cumsum(pmf)
    below = np.concatenate(([0.0], cdf[:-1]))
    return float(np.sum((cdf**n - below**n) * support))


@pytest.mark.parametrize(
    ("dist", "support"),
    [
        (stats.binom(20, 0.3), np.arange(0, 21)),
        (stats.binom(100, 0.7), np.arange(0, 101)),
    ],
)
@pytest.mark.parametrize("n", [1, 2, 5, 10, 30])
def test_expected_max_of_discrete_matches_eq4(dist, support, n):
    expected = discrete_expected_max_by_eq4(dist.pmf(support), support.astype(float), n)
    assert expected_max_of(dist, n) == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize(
    ("dist", "support"),
    [(stats.poisson(3.5), np.arange(0, 80)), (stats.geom(0.3), np.arange(1, 200))],
)
@pytest.mark.parametrize("n", [1, 2, 10])
def test_expected_max_of_unbounded_discrete_matches_eq4(dist, support, n):
    expected = discrete_expected_max_by_eq4(dist.pmf(support), support.astype(float), n)
    assert expected_max_of(dist, n) == pytest.approx(expected, abs=1e-9)


def test_expected_max_of_returns_array_for_sequence():
    got = expected_max_of(stats.norm(0, 1), [5, 10])
    assert isinstance(got, np.ndarray) and got.shape == (2,)
    np.testing.assert_allclose(got, [1.162964, 1.538753], atol=5e-7)


def bivariate_normal_sample(rng, m, mu_test, sigma_test, rho):
    val = rng.standard_normal(m)
    test = mu_test + sigma_test * (rho * val + math.sqrt(1 - rho**2) * rng.standard_normal(m))
    return 0.6 + 0.03 * val, test


@pytest.mark.parametrize("maximize", [True, False])
def test_gaussian_estimator_on_bivariate_normal_sample(maximize):
    mu_test, sigma_test, rho = 0.7, 0.02, 0.6
    val, test = bivariate_normal_sample(np.random.default_rng(6), 400_000, mu_test, sigma_test, rho)
    sign = 1.0 if maximize else -1.0
    for n in (1, 5, 10, 40):
        expected = mu_test + sign * rho * sigma_test * expected_max_std_normal_by_quadrature(n)
        assert boo_n_gaussian(val, test, n=n, maximize=maximize) == pytest.approx(expected, abs=2e-4)
        if n > 1:  # the non-parametric estimator agrees on Gaussian data (it is consistent)
            assert boo_n(val, test, n=n, maximize=maximize) == pytest.approx(expected, abs=5e-4)


def test_gaussian_estimator_uses_sample_moments_exactly():
    val = [0.61, 0.64, 0.62, 0.66, 0.60]
    test = [0.58, 0.61, 0.63, 0.62, 0.57]
    v, t = np.array(val), np.array(test)
    r = np.sum((v - v.mean()) * (t - t.mean())) / math.sqrt(np.sum((v - v.mean()) ** 2) * np.sum((t - t.mean()) ** 2))
    sd = math.sqrt(np.sum((t - t.mean()) ** 2) / 4)
    c = np.array([expected_max_std_normal_by_quadrature(k) for k in (1, 5, 10)])
    np.testing.assert_allclose(boo_n_gaussian(val, test, n=[1, 5, 10]), t.mean() + r * sd * c, atol=1e-9)
    np.testing.assert_allclose(
        boo_n_gaussian(val, test, n=[1, 5, 10], maximize=False), t.mean() - r * sd * c, atol=1e-9
    )
    # test = val: rho = 1.
    sd_v = math.sqrt(np.sum((v - v.mean()) ** 2) / 4)
    assert boo_n_gaussian(val, n=5) == pytest.approx(v.mean() + sd_v * c[1], abs=1e-9)


def test_gaussian_estimator_constant_validation_warns_and_gives_mean_test():
    with pytest.warns(ConstantScoresWarning, match="all validation scores are equal"):
        got = boo_n_gaussian([0.5, 0.5, 0.5], [0.1, 0.2, 0.6], n=5)
    assert got == pytest.approx(0.3, abs=1e-15)


# --- bad input ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"val": [0.1, float("nan"), 0.3]}, r"`val` must be finite; position 1 is \S*nan"),
        ({"val": [0.1, 0.2, float("inf")]}, r"`val` must be finite; position 2 is \S*inf"),
        ({"val": [0.1, 0.2], "test": [0.1, -np.inf]}, r"`test` must be finite; position 1 is \S*-inf"),
        ({"val": [np.nan, 0.2, np.nan]}, r"position 0 is \S*nan\S* \(2 non-finite values in all\)"),
        ({"val": []}, r"`val` is empty"),
        ({"val": [0.1, 0.2], "test": [0.1, 0.2, 0.3]}, r"same length, got 2 and 3"),
        ({"val": [[0.1, 0.2]]}, r"`val` must be 1-D"),
        ({"val": ["a", "b"]}, r"`val` must be a 1-D sequence of numbers"),
        ({"n": 0}, r"`n` must be an integer >= 1, got 0"),
        ({"n": -3}, r"`n` must be an integer >= 1, got -3"),
        ({"n": 2.5}, r"`n` must be an integer >= 1, got 2.5"),
        ({"n": True}, r"`n` must be an integer >= 1, got True"),
        ({"n": "5"}, r"`n` must be an integer >= 1, got '5'"),
        ({"n": [1, 2, 0]}, r"`n\[2\]` must be an integer >= 1, got 0"),
        ({"n": []}, r"`n` is empty"),
        ({"estimator": "X"}, r"`estimator` must be one of 'V', 'U', 'W'; got 'X'"),
        ({"maximize": "yes"}, r"`maximize` must be True or False, got 'yes'"),
        ({"estimator": "U", "n": 4}, r"`n` = 4 exceeds the number of runs m = 3: the U estimator"),
        ({"estimator": "U", "n": [2, 9]}, r"`n` = 9 exceeds the number of runs m = 3"),
    ],
)
def test_boo_n_rejects_bad_input(kwargs, message):
    call = {"val": [0.1, 0.2, 0.3], "test": None, "n": 2, **kwargs}
    with pytest.raises(ValueError, match=message):
        boo_n(call.pop("val"), call.pop("test"), **call)


def test_integral_float_budget_is_accepted():
    assert boo_n([0.1, 0.2, 0.3], n=2.0) == boo_n([0.1, 0.2, 0.3], n=2)


def test_expected_max_rejects_bad_input():
    with pytest.raises(ValueError, match=r"`scores` must be finite; position 1 is \S*nan"):
        expected_max([0.1, np.nan])
    with pytest.raises(ValueError, match=r"`scores` is empty"):
        expected_max([])
    with pytest.raises(ValueError, match=r"`estimator` must be one of"):
        expected_max([0.1, 0.2], estimator="v")


@pytest.mark.parametrize("dist", [np.random.default_rng(0), stats.norm, "norm", [0.1, 0.2], None])
def test_expected_max_of_rejects_non_distribution(dist):
    with pytest.raises(ValueError, match=r"`dist` must be a frozen scipy.stats distribution"):
        expected_max_of(dist, 5)


def test_expected_max_of_rejects_bad_budget():
    with pytest.raises(ValueError, match=r"`n` must be an integer >= 1, got 0"):
        expected_max_of(stats.norm(0, 1), 0)


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        (([0.5],), {}, r"`val` needs at least 2 runs .* got 1"),
        (([0.5, 0.6], [0.1]), {}, r"same length, got 2 and 1"),
        (([0.5, np.nan],), {}, r"`val` must be finite; position 1 is \S*nan"),
        (([0.5, 0.6],), {"n": 1.5}, r"`n` must be an integer >= 1, got 1.5"),
        (([0.5, 0.6],), {"maximize": 1}, r"`maximize` must be True or False, got 1"),
    ],
)
def test_boo_n_gaussian_rejects_bad_input(args, kwargs, message):
    with pytest.raises(ValueError, match=message):
        boo_n_gaussian(*args, **kwargs)


@pytest.mark.filterwarnings("ignore::boontrack.FewRunsWarning")
def test_extrapolation_warning_points_at_the_callers_line():
    from boontrack.resampling import boo_n_ci

    with pytest.warns(ExtrapolationWarning) as record:
        boo_n([0.1, 0.2, 0.3], n=4)
        boo_n_ci([0.1, 0.2, 0.3], n=4, n_resamples=10, rng=0)
    assert [Path(w.filename).resolve() for w in record.list if w.category is ExtrapolationWarning] == [
        Path(__file__).resolve()
    ] * 2
