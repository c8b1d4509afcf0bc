"""Properties of the estimators (hypothesis) and their numerics at sizes where public implementations fail.

References here are computed in the test: plain float powers, log-space binomials from ``scipy.special.gammaln``,
and what fixed-width integer powers do (boon 0.1.0) -- never values copied from the code under test.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scipy.special import gammaln

from boontrack.estimators import boo_n, expected_max
from boontrack.exceptions import ExtrapolationWarning

ESTIMATORS = ("V", "U", "W")

finite = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False)
# A coarse grid as well, so that ties in validation are frequent.
score = st.one_of(finite, st.sampled_from([0.0, 0.5, 1.0]))


@st.composite
def runs(draw, min_size=1, max_size=40):
    m = draw(st.integers(min_size, max_size))
    val = np.array(draw(st.lists(score, min_size=m, max_size=m)))
    test = np.array(draw(st.lists(finite, min_size=m, max_size=m)))
    return val, test


def quiet(func, *args, **kwargs):
    """Call with ExtrapolationWarning silenced (tests that check the warning itself do so explicitly)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ExtrapolationWarning)
        return func(*args, **kwargs)


def tolerance(x: np.ndarray) -> float:
    """Absolute tolerance for float comparisons: the error bound is eps times the score range."""
    return 1e-12 * max(1.0, float(np.max(np.abs(x))))


@settings(max_examples=60, deadline=None)
@given(runs(), st.sampled_from(ESTIMATORS), st.booleans())
def test_curve_is_monotone_in_n_when_test_is_val(data, estimator, maximize):
    scores, _ = data
    top = scores.size if estimator == "U" else 2 * scores.size
    curve = quiet(expected_max, scores, np.arange(1, top + 1), estimator=estimator, maximize=maximize)
    steps = np.diff(curve) if maximize else -np.diff(curve)
    assert np.all(steps >= -tolerance(scores))


@settings(max_examples=60, deadline=None)
@given(runs(), st.sampled_from(ESTIMATORS), st.booleans())
def test_budget_one_gives_mean_test(data, estimator, maximize):
    val, test = data
    assert boo_n(val, test, n=1, estimator=estimator, maximize=maximize) == pytest.approx(
        float(np.mean(test)), abs=tolerance(test)
    )


@settings(max_examples=60, deadline=None)
@given(runs(), st.booleans())
def test_u_at_all_runs_is_best_run_test_averaged_over_ties(data, maximize):
    val, test = data
    best = val.max() if maximize else val.min()
    expected = float(np.mean(test[val == best]))
    got = boo_n(val, test, n=val.size, estimator="U", maximize=maximize)
    assert got == pytest.approx(expected, abs=tolerance(test))


@settings(max_examples=60, deadline=None)
@given(runs(), st.sampled_from(ESTIMATORS), st.integers(1, 60), st.randoms(use_true_random=False))
def test_invariant_to_run_order(data, estimator, n, random):
    val, test = data
    assume(estimator != "U" or n <= val.size)
    perm = np.array(random.sample(range(val.size), val.size))
    a = quiet(boo_n, val, test, n=n, estimator=estimator)
    b = quiet(boo_n, val[perm], test[perm], n=n, estimator=estimator)
    assert a == pytest.approx(b, abs=tolerance(test))


@settings(max_examples=60, deadline=None)
@given(runs(), st.sampled_from(ESTIMATORS), st.integers(1, 60))
def test_minimizing_equals_maximizing_negated_validation(data, estimator, n):
    val, test = data
    assume(estimator != "U" or n <= val.size)
    a = quiet(boo_n, val, test, n=n, estimator=estimator, maximize=False)
    b = quiet(boo_n, -val, test, n=n, estimator=estimator, maximize=True)
    assert a == pytest.approx(b, abs=tolerance(test))


@settings(max_examples=60, deadline=None)
@given(runs(max_size=20), st.sampled_from(["V", "W"]), st.integers(1, 10**6), st.booleans())
def test_extrapolation_warns_and_stays_within_test_range(data, estimator, extra, maximize):
    val, test = data
    n = val.size + extra
    with pytest.warns(ExtrapolationWarning, match=rf"n = {n} > m = {val.size} runs: estimator {estimator}"):
        got = boo_n(val, test, n=n, estimator=estimator, maximize=maximize)
    assert test.min() - tolerance(test) <= got <= test.max() + tolerance(test)


def test_no_warning_within_the_data():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        boo_n([0.1, 0.2, 0.3], n=[1, 2, 3], estimator="W")


@pytest.mark.parametrize("estimator", ESTIMATORS)
def test_huge_m_and_n_are_finite_and_in_range(estimator):
    m = 10**6
    scores = np.random.default_rng(3).normal(0.8, 0.01, m)
    budgets = [1, 10**3, 10**6]
    got = expected_max(scores, budgets, estimator=estimator)
    assert np.all(np.isfinite(got))
    assert np.all((scores.min() <= got) & (got <= scores.max()))
    assert got[0] == pytest.approx(scores.mean(), abs=1e-12)
    assert np.all(np.diff(got) > 0)
    if estimator == "U":
        assert got[-1] == scores.max()


@pytest.mark.parametrize("estimator", ["V", "W"])
@pytest.mark.parametrize("n", [2**62, 2**63 - 1])
def test_budgets_near_the_int64_limit(estimator, n):
    # Doubling such a budget overflows int64 (once an endless loop over budget chunks).
    with pytest.warns(ExtrapolationWarning):
        got = boo_n([0.1, 0.3, 0.2], n=[5, n], estimator=estimator)
    assert got[1] == 0.3
    assert 0.2 < got[0] < 0.3


# --- numerics where public implementations fail ------------------------------------------------------------------


def v_weights_by_float_powers(m: int, n) -> np.ndarray:
    """Eq. 7 weights (j/m)^n - ((j-1)/m)^n in plain float arithmetic (fine while m^n does not overflow a double)."""
    j = np.arange(1, m + 1, dtype=np.float64)
    return (j / m) ** np.asarray(n) - ((j - 1) / m) ** np.asarray(n)


def v_weights_as_boon_computes_them(m: int, n: int) -> np.ndarray:
    """boon 0.1.0: (j^n - (j-1)^n) / m^n with np.power on int64 ranks (wrapping silently), m^n a Python int."""
    j = np.arange(0, m + 1, dtype=np.int64)
    with np.errstate(over="ignore"):
        powers = np.power(j, n)
    return np.diff(powers).astype(np.float64) / m**n


def test_v_at_m_100_n_10_where_int64_powers_overflow():
    rng = np.random.default_rng(100)
    val, test = rng.normal(0.8, 0.02, 100), rng.normal(0.8, 0.02, 100)
    order = np.argsort(val)
    reference = float(v_weights_by_float_powers(100, 10) @ test[order])
    assert boo_n(val, test, n=10) == pytest.approx(reference, abs=1e-14)
    # What int64 powers give instead: 100^10 = 1e20 > 2^63, the weights are garbage.
    broken = float(v_weights_as_boon_computes_them(100, 10) @ test[order])
    assert abs(broken - reference) > 1e-3


def test_v_curve_matches_float_powers_at_m_1000():
    rng = np.random.default_rng(1000)
    val, test = rng.random(1000), rng.random(1000)
    order = np.argsort(val)
    budgets = [1, 2, 7, 50, 999, 1000, 5000]
    reference = [v_weights_by_float_powers(1000, k) @ test[order] for k in budgets]
    got = quiet(boo_n, val, test, n=budgets)
    np.testing.assert_allclose(got, reference, rtol=0, atol=1e-13)


def test_many_budgets_split_into_memory_bounded_chunks():
    # 61 budgets x 200,001 ranks exceed one working array, so the budgets are evaluated in several chunks.
    m = 200_000
    rng = np.random.default_rng(61)
    val, test = rng.random(m), rng.random(m)
    budgets = np.arange(80, 19, -1)  # descending: results must come back aligned with the request
    reference = v_weights_by_float_powers(m, budgets[:, None]) @ test[np.argsort(val)]
    np.testing.assert_allclose(boo_n(val, test, n=budgets), reference, rtol=0, atol=1e-12)


def log_comb(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """log C(a, b) by gammaln, -inf where b > a."""
    with np.errstate(invalid="ignore"):
        out = gammaln(a + 1) - gammaln(b + 1) - gammaln(a - b + 1)
    return np.where(b <= a, out, -np.inf)


def normalized(weights: np.ndarray) -> np.ndarray:
    """Weights divided by their sum (exactly 1 in exact arithmetic).

    gammaln(x) is accurate to a few ulp of its value, ~1e-9 at x = 1e6: that error sits mostly in the common
    denominator, which this removes, leaving the reference accurate to ~1e-12.
    """
    return weights / weights.sum()


def u_weights_log_space(m: int, n: int) -> np.ndarray:
    """C(j-1, n-1) / C(m, n), j = 1..m (Dodge et al. 2021, eq. 3), exponentiated from log space."""
    j = np.arange(1, m + 1, dtype=np.float64)
    return normalized(np.exp(log_comb(j - 1, np.float64(n - 1)) - log_comb(np.float64(m), np.float64(n))))


def w_weights_log_space(m: int, n: int) -> np.ndarray:
    """[C(j+n-1, n) - C(j+n-2, n)] / C(m+n-1, n) = C(j+n-2, n-1) / C(m+n-1, n) (Pascal's rule), eq. 5."""
    j = np.arange(1, m + 1, dtype=np.float64)
    return normalized(np.exp(log_comb(j + n - 2, np.float64(n - 1)) - log_comb(np.float64(m + n - 1), np.float64(n))))


def test_u_curve_at_m_1100_where_comb_overflows():
    m = 1100
    scores = np.sort(np.random.default_rng(1100).normal(0.6, 0.07, m))
    budgets = np.arange(1, m + 1)
    reference = np.array([u_weights_log_space(m, k) @ scores for k in budgets])
    got = expected_max(scores, estimator="U")
    assert np.all(np.isfinite(got))
    np.testing.assert_allclose(got, reference, rtol=0, atol=5e-12)
    assert got[-1] == scores.max()


@pytest.mark.parametrize("m", [5_000, 200_000])
def test_w_at_large_m_matches_log_space_reference(m):
    scores = np.sort(np.random.default_rng(m).normal(0.6, 0.07, m))
    budgets = [1, 2, 10, 1000, m, 3 * m]
    reference = [w_weights_log_space(m, k) @ scores for k in budgets]
    got = quiet(expected_max, scores, budgets, estimator="W")
    np.testing.assert_allclose(got, reference, rtol=0, atol=5e-12)
