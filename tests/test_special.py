"""boontrack._special against scipy.special, closed forms and exact limits: the distribution functions a
summary computes without importing scipy."""

from __future__ import annotations

import math
import warnings
from statistics import NormalDist

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special

from boontrack._special import expit, log_ndtr, ndtr, ndtri, student_t_sf

#: Arguments from the centre to where Phi underflows, both signs, and magnitudes from 1e-300 to 1e300.
GRID = np.concatenate(
    [np.linspace(-40, 40, 80_001), -np.logspace(-300, 300, 6001), np.logspace(-300, 300, 6001), [0.0, -0.0]]
)


def close_where_normal(got: np.ndarray, want: np.ndarray, rtol: float) -> None:
    """Equal to rtol where the reference is a normal double; both tiny (below 1e-290) elsewhere."""
    normal = np.abs(want) > 1e-290
    np.testing.assert_allclose(got[normal], want[normal], rtol=rtol, atol=0)
    assert np.all(np.abs(got[~normal]) <= 1e-290)


@pytest.mark.parametrize(("ours", "scipys"), [(ndtr, special.ndtr), (log_ndtr, special.log_ndtr)])
def test_the_normal_distribution_function_is_scipys(ours, scipys):
    # scipy's ndtr goes through erfc(-x / sqrt 2), whose rounded argument costs it about 2e-13 at x = -35;
    # Cody's split of x^2 does not, so the two agree to that, and to a few ulps where x^2 / 2 is small
    close_where_normal(ours(GRID), scipys(GRID), rtol=3e-13)
    central = np.linspace(-5, 5, 10_001)
    np.testing.assert_allclose(ours(central), scipys(central), rtol=5e-15, atol=0)


def test_phi_has_its_exact_values_and_limits():
    x = np.array([0.0, -np.inf, np.inf, np.nan])
    np.testing.assert_array_equal(ndtr(x), [0.5, 0.0, 1.0, np.nan])
    np.testing.assert_array_equal(log_ndtr(x), [math.log(0.5), -np.inf, 0.0, np.nan])
    # Phi(x) + Phi(-x) = 1 and the tail of a standard normal at 1.959963984540054 is 2.5 %
    np.testing.assert_allclose(ndtr(GRID[:80_001]) + ndtr(-GRID[:80_001]), 1.0, rtol=0, atol=2e-16)
    assert float(ndtr(-1.959963984540054)) == pytest.approx(0.025, rel=1e-15)


def test_log_phi_stays_exact_far_below_where_phi_underflows():
    # log Phi(x) = -x^2/2 - log(-x) - log(2 pi)/2 + log(1 - 1/x^2 + 3/x^4 - 15/x^6 + 105/x^8 - ...) as x -> -inf
    for x in (-40.0, -1e3, -1e5, -1e10, -1e100):
        u = 1 / (x * x)
        series = u * (-1 + u * (3 + u * (-15 + u * 105)))  # the next term, 945 u^5, is below 1e-13 at x = -40
        asymptotic = -x * x / 2 - math.log(-x) - 0.5 * math.log(2 * math.pi) + math.log1p(series)
        assert float(log_ndtr(x)) == pytest.approx(asymptotic, rel=1e-15)
    assert 0.0 < float(ndtr(-38.0)) < 1e-300  # subnormal, where log_ndtr still has every digit


def test_the_normal_quantile_is_as241_and_scipys():
    p = np.concatenate([np.logspace(-310, -1e-17, 20_001), 1 - np.logspace(-16, -0.3, 2001), np.linspace(0, 1, 10_001)])
    inside = (p > 0) & (p < 1)
    np.testing.assert_array_equal(ndtri(p[inside][::37]), [NormalDist().inv_cdf(float(q)) for q in p[inside][::37]])
    close_where_normal(ndtri(p[inside]), special.ndtri(p[inside]), rtol=2e-15)
    np.testing.assert_array_equal(ndtri(np.array([0.0, 1.0, -0.1, 1.1, np.nan])), [-np.inf, np.inf] + [np.nan] * 3)
    assert float(ndtri(0.5)) == 0.0 and ndtri(np.array([[0.025, 0.975]])).shape == (1, 2)


def test_expit_is_scipys_over_the_whole_line():
    x = np.concatenate([np.linspace(-800, 800, 160_001), [-np.inf, np.inf, 0.0]])
    close_where_normal(expit(x), special.expit(x), rtol=1e-15)
    assert float(expit(0.0)) == 0.5 and np.isnan(expit(np.nan))


@pytest.mark.parametrize("t", [0.0, 1e-12, 0.3, 1.0, 2.5, 40.0, 1e8])
@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_student_t_has_its_closed_forms_at_one_and_two_degrees(t, sign):
    t *= sign
    cauchy = 0.5 - math.atan(t) / math.pi  # df = 1
    two = 0.5 - t / (2 * math.sqrt(2 + t * t))  # df = 2
    assert student_t_sf(t, 1.0) == pytest.approx(cauchy, rel=1e-14)
    assert student_t_sf(t, 2.0) == pytest.approx(two, rel=1e-13)


#: |t| from 1e-3 to 1e3. Nearer 0 scipy is the less exact: at exactly 1 degree of freedom its stdtr is off by more
#: than 1e-12 for |t| in about [2e-12, 1e-5] (stdtr(1, -1e-10) is 0.5, the Cauchy tail 0.5 - 3.2e-11); the
#: closed forms above and the limits below test that region.
MODERATE_T = st.one_of(st.floats(1e-3, 1e3), st.floats(-1e3, -1e-3))


@settings(max_examples=400, deadline=None)
@given(t=MODERATE_T, log_df=st.floats(-1.0, 3.0))
def test_student_t_is_scipys_up_to_a_thousand_degrees(t, log_df):
    df = 10.0**log_df
    assert student_t_sf(t, df) == pytest.approx(special.stdtr(df, -t), rel=1e-12, abs=1e-300)


@settings(max_examples=200, deadline=None)
@given(t=st.floats(-12, 12), log_df=st.floats(3.0, 6.0))
def test_student_t_is_close_to_scipys_up_to_a_million_degrees(t, log_df):
    # lgamma's difference is taken by Stirling's series and x^a by log1p; what remains is the continued
    # fraction's cancellation near x = 1, about 1e-11 at a million degrees (a Welch p-value shows 3 digits)
    df = 10.0**log_df
    assert student_t_sf(t, df) == pytest.approx(special.stdtr(df, -t), rel=1e-9, abs=1e-300)


@pytest.mark.parametrize("function", [ndtr, log_ndtr, ndtri, expit])
def test_a_scalar_gives_a_scalar_and_an_array_its_shape(function):
    assert type(function(0.25)) is np.float64 and function(np.full((2, 3), 0.25)).shape == (2, 3)


def test_student_t_limits():
    assert student_t_sf(math.inf, 3.0) == 0.0 and student_t_sf(-math.inf, 3.0) == 1.0
    assert math.isnan(student_t_sf(math.nan, 3.0)) and math.isnan(student_t_sf(1.0, math.nan))
    assert student_t_sf(1.5, math.inf) == pytest.approx(float(special.ndtr(-1.5)), rel=1e-15)
    assert student_t_sf(0.0, 7.5) == 0.5 and student_t_sf(-0.0, 7.5) == 0.5
    assert student_t_sf(1e200, 2.5) == 0.0 and student_t_sf(-1e200, 2.5) == 1.0  # t^2 overflows


@pytest.mark.parametrize("t", [1e-162, -1e-162, 1e-300, 1e155, -1e155])
def test_student_t_neither_overflows_nor_warns_where_t_squared_is_subnormal_or_huge(t):
    # t^2 / df is subnormal at 1e-162 (1 / it overflows) and near the largest double at 1e155
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = student_t_sf(np.float64(t), np.float64(1.5))
    assert got == pytest.approx(float(special.stdtr(1.5, -t)), rel=1e-15, abs=1e-300)


@pytest.mark.parametrize("df", [1.0, 2.5, 9.0, 35.2, 1e6])
@pytest.mark.parametrize("p", [1e-6, 0.005, 0.025, 0.3, 0.5, 0.975])
def test_the_t_quantile_is_scipys(p, df):
    from boontrack._special import student_t_isf

    assert student_t_isf(p, df) == pytest.approx(special.stdtrit(df, 1.0 - p), rel=1e-9, abs=1e-12)
