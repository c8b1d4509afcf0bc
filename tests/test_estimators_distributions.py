"""Boo_n of a distribution (Bajgar et al. 2018, eqs. 2 and 4) at the edges: large n, infinite densities, discrete.

Expected values are closed forms derived in the comments, the paper's constants, integrals evaluated by mpmath at
40 significant digits in a form other than the one the code uses (the CDF, ``E = b - integral F^n`` or
``integral x n f F^(n-1)``, where the code integrates the quantile function), exact sums over every outcome in
rational arithmetic, and eq. 4 summed by mpmath over exact probability mass functions.
"""

from __future__ import annotations

import itertools
import json
import math
import subprocess
import sys
import textwrap
import warnings
from fractions import Fraction

import mpmath as mp
import numpy as np
import pytest
from scipy import stats

from boontrack import estimators
from boontrack.estimators import expected_max_of
from boontrack.exceptions import AccuracyWarning

mp.mp.dps = 40

LARGE_N = (1, 2, 5, 10, 1000, 3000, 10**6)


def breakpoints_below_one(n: int) -> list:
    """Points where an integrand concentrated within ~1/n of 1 changes scale, for mpmath.quad."""
    return sorted({mp.mpf(0), *(1 - mp.mpf(k) / n for k in (10**4, 1000, 100, 30, 10, 3, 1) if k < n), mp.mpf(1)})


def arcsine_expected_max(n: int) -> mp.mpf:
    """beta(1/2, 1/2): F(x) = (2/pi) asin(sqrt x), and E = 1 - integral_0^1 F^n dx.

    With x = sin^2(pi phi / 2): F = phi, dx = (pi/2) sin(pi phi) dphi, so E = 1 - (pi/2) int phi^n sin(pi phi) dphi.
    """
    return 1 - mp.pi / 2 * mp.quad(lambda phi: phi**n * mp.sin(mp.pi * phi), breakpoints_below_one(n))


def beta_expected_max_by_cdf(a: float, b: float, n: int) -> mp.mpf:
    """E = 1 - integral_0^1 I_x(a, b)^n dx with mpmath's regularized incomplete beta function."""
    a, b = mp.mpf(a), mp.mpf(b)
    return 1 - mp.quad(lambda x: mp.betainc(a, b, 0, x, regularized=True) ** n, breakpoints_below_one(n))


def normal_expected_max(n: int) -> mp.mpf:
    """integral x n phi(x) Phi(x)^(n-1) dx (eq. 2) with mpmath's normal density and CDF."""
    points = [-mp.inf, -6, -3, 0, 1, 2, 3, 3.5, 4, 4.5, 5, 5.5, 6, 7, 9, mp.inf]
    return mp.quad(lambda x: x * n * mp.npdf(x) * mp.ncdf(x) ** (n - 1), points)


def student3_expected_max(n: int) -> mp.mpf:
    """Student t with 3 degrees of freedom: F(x) = 1/2 + (x / (sqrt3 (1 + x^2/3)) + atan(x / sqrt3)) / pi.

    E = integral_0^inf (1 - F^n) dx - integral_-inf^0 F^n dx. Its tails are heavy (P(X > x) ~ x^-3).
    """
    root3 = mp.sqrt(3)

    def cdf(x):
        return mp.mpf(1) / 2 + (x / (root3 * (1 + x**2 / 3)) + mp.atan(x / root3)) / mp.pi

    upper = [0, 1, 3, 10, 30, 100, 300, 10**3, 10**4, 10**5, 10**6, 10**7, mp.inf]
    return mp.quad(lambda x: 1 - cdf(x) ** n, upper) - mp.quad(lambda x: cdf(x) ** n, [-mp.inf, -10, -1, 0])


def no_warnings(func, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return func(*args)


# --- continuous: closed forms at small and large n --------------------------------------------------------------


@pytest.mark.parametrize("n", LARGE_N)
def test_closed_forms(n):
    # Max of n U(0, 1) is beta(n, 1): n / (n + 1). For beta(a, 1), F = x^a and the max is beta(a n, 1):
    # a n / (a n + 1); a = 1/2 has an infinite density at 0. Max of n Exp(1) has mean H_n (Renyi).
    assert no_warnings(expected_max_of, stats.uniform(0, 1), n) == pytest.approx(n / (n + 1), abs=2e-15)
    for a in (0.5, 2.0):
        expected = a * n / (a * n + 1)
        assert no_warnings(expected_max_of, stats.beta(a, 1), n) == pytest.approx(expected, abs=2e-15)
    assert no_warnings(expected_max_of, stats.expon(0, 1), n) == pytest.approx(float(mp.harmonic(n)), rel=1e-14)


@pytest.mark.parametrize("n", LARGE_N)
def test_infinite_density_at_the_top_closed_form(n):
    # beta(1, 1/2): F(x) = 1 - sqrt(1 - x), density infinite at 1. E = 1 - integral_0^1 (1 - sqrt(1 - x))^n dx,
    # and with 1 - x = z^2 the integral is 2 integral_0^1 (1 - z)^n z dz = 2 B(2, n + 1) = 2 / ((n + 1)(n + 2)).
    expected = 1 - 2 / ((n + 1) * (n + 2))
    got = no_warnings(expected_max_of, stats.beta(1, 0.5), n)
    assert got == pytest.approx(expected, abs=2e-15)
    assert got <= 1.0


@pytest.mark.parametrize("n", LARGE_N)
def test_arcsine_distribution_against_mpmath(n):
    got = no_warnings(expected_max_of, stats.beta(0.5, 0.5), n)
    assert got == pytest.approx(float(arcsine_expected_max(n)), abs=2e-15)
    assert 0.0 <= got <= 1.0


def test_values_once_wrong_by_half_the_support():
    # Densities infinite at the top once made the quadrature return ~0.5 (or more than 1) with only an
    # IntegrationWarning. Exact values: 0.99999945 (issue), 0.99999911, and the beta(1/2, 1/2) value at n = 1000.
    cases = [((0.5, 0.5), 3000), ((2.0, 0.5), 1000), ((0.5, 0.5), 1000)]
    for (a, b), n in cases:
        expected = float(beta_expected_max_by_cdf(a, b, n))
        got = no_warnings(expected_max_of, stats.beta(a, b), n)
        assert got == pytest.approx(expected, abs=1e-14), (a, b, n)
        assert got <= 1.0
    assert float(beta_expected_max_by_cdf(0.5, 0.5, 3000)) == pytest.approx(0.99999945, abs=5e-9)
    assert float(beta_expected_max_by_cdf(2.0, 0.5, 1000)) == pytest.approx(0.99999911, abs=5e-9)


@pytest.mark.parametrize(("n", "paper_value"), [(5, 1.162964), (10, 1.538753)])
def test_normal_paper_constants(n, paper_value):
    assert float(normal_expected_max(n)) == pytest.approx(paper_value, abs=5e-7)
    assert no_warnings(expected_max_of, stats.norm(0, 1), n) == pytest.approx(float(normal_expected_max(n)), abs=1e-14)


@pytest.mark.parametrize("n", [1, 2, 1000, 10**6])
def test_normal_against_mpmath(n):
    expected = float(normal_expected_max(n))
    assert no_warnings(expected_max_of, stats.norm(0, 1), n) == pytest.approx(expected, abs=1e-14)
    assert no_warnings(expected_max_of, stats.norm(0.8, 0.01), n) == pytest.approx(0.8 + 0.01 * expected, abs=1e-15)


@pytest.mark.parametrize("n", [2, 10, 1000, 10**6])
def test_heavy_tails_where_scipy_quantiles_overflow(n):
    # scipy's t(3).ppf returns +inf for p ~ 1e-300; those nodes carry a weight below 1e-100.
    assert no_warnings(expected_max_of, stats.t(3), n) == pytest.approx(float(student3_expected_max(n)), rel=1e-13)


def test_gaussian_boo_n_uses_the_same_constants():
    # boo_n_gaussian with test = val on a sample of mean 0 and s.d. 1 is E[max of n N(0, 1)] itself.
    z = np.array([-1.5, -0.5, 0.5, 1.5])
    z = (z - z.mean()) / z.std(ddof=1)
    budgets = [1, 5, 10, 1000, 10**6]
    expected = [float(normal_expected_max(k)) for k in budgets]
    np.testing.assert_allclose(estimators.boo_n_gaussian(z, n=budgets), expected, rtol=0, atol=1e-14)


@pytest.mark.parametrize(
    "dist",
    [stats.norm(0, 1), stats.lognorm(0.5), stats.gamma(0.3), stats.gumbel_l(), stats.truncnorm(-2, 1), stats.t(3)],
)
def test_increasing_in_n_up_to_the_largest_budget(dist):
    budgets = [1, 2, 3, 10, 100, 10**4, 10**6, 10**9, 2**62]
    got = no_warnings(expected_max_of, dist, budgets)
    assert np.all(np.isfinite(got)) and np.all(np.diff(got) > 0)
    assert got[0] == pytest.approx(dist.mean(), rel=1e-12, abs=1e-14)
    low, high = dist.support()
    assert np.all((low <= got) & (got <= high))


def test_budgets_in_any_order_with_repeats():
    got = expected_max_of(stats.beta(1, 0.5), [1000, 1, 1000, 5])
    np.testing.assert_allclose(got, [1 - 2 / (1001 * 1002), 2 / 3, 1 - 2 / (1001 * 1002), 1 - 2 / 42], atol=2e-15)


def test_no_finite_mean_is_refused_for_every_budget():
    # The maximum of Cauchy draws has no mean, at any n: a quadrature would still return a number.
    for n in (1, 5, [1, 2]):
        with pytest.raises(ValueError, match=r"`dist` = cauchy\(\) has no finite mean"):
            expected_max_of(stats.cauchy(), n)


def test_a_density_that_jumps_warns_and_is_close():
    # A histogram with density 1/2 on [0, 1] and 1/4 on [1, 3]: F = x/2, then 1/2 + (x - 1)/4, so
    # E = 3 - integral_0^3 F^n dx = 3 - (4 - 2^-n) / (n + 1). Its quantile function kinks at F = 1/2, which
    # slows the quadrature below its target accuracy: it says so, and is still close.
    histogram = stats.rv_histogram((np.array([1, 1]), np.array([0.0, 1.0, 3.0])), density=False)
    for n in (1, 2):
        with pytest.warns(AccuracyWarning, match=rf"n = {n} .*density that jumps inside the support"):
            got = expected_max_of(histogram(), n)
        assert got == pytest.approx(3 - (4 - 0.5**n) / (n + 1), abs=1e-6)


# --- discrete: eq. 4 ----------------------------------------------------------------------------------------------


def enumerated_expected_max(values: list[str], probabilities: list[str], n: int) -> Fraction:
    """E[max of n draws] by summing over every n-tuple of outcomes, in rational arithmetic."""
    x = [Fraction(v) for v in values]
    p = [Fraction(q) for q in probabilities]
    total = Fraction(0)
    for draw in itertools.product(range(len(x)), repeat=n):
        total += math.prod(p[i] for i in draw) * max(x[i] for i in draw)
    return total


SAMPLE_VALUES = ["0.75", "0.70", "0.72", "0.81"]  # unsorted on purpose: scipy sorts them
SAMPLE_PROBABILITIES = ["0.3", "0.2", "0.4", "0.1"]


def test_rv_discrete_by_hand():
    dist = stats.rv_discrete(values=([0.70, 0.72, 0.75], [0.2, 0.5, 0.3]))
    # n = 2: P(max = 0.70) = 0.2^2, P(max <= 0.72) = 0.7^2, P(max = 0.75) = 1 - 0.7^2.
    by_hand = (
        Fraction("0.70") * Fraction("0.04") + Fraction("0.72") * Fraction("0.45") + Fraction("0.75") * Fraction("0.51")
    )
    assert by_hand == Fraction("0.7345")
    assert expected_max_of(dist, 2) == pytest.approx(float(by_hand), abs=1e-15)
    assert expected_max_of(dist, 1) == pytest.approx(0.725, abs=1e-15)  # the mean
    # n = 10^6: the maximum is 0.75 but for probability 0.7^(10^6), which underflows.
    assert expected_max_of(dist, 10**6) == 0.75


@pytest.mark.parametrize("n", [1, 2, 3, 5])
def test_rv_discrete_matches_enumeration_of_every_draw(n):
    expected = enumerated_expected_max(SAMPLE_VALUES, SAMPLE_PROBABILITIES, n)
    dist = stats.rv_discrete(values=([float(v) for v in SAMPLE_VALUES], [float(p) for p in SAMPLE_PROBABILITIES]))
    for form in (dist, dist(), dist(loc=0)):
        assert expected_max_of(form, n) == pytest.approx(float(expected), abs=1e-15)
    # A frozen copy with a shift: every outcome moves by loc.
    assert expected_max_of(dist(loc=2.5), n) == pytest.approx(float(expected) + 2.5, abs=1e-14)
    assert expected_max_of(dist(2.5), n) == pytest.approx(float(expected) + 2.5, abs=1e-14)


def test_rv_discrete_integer_support_and_a_budget_sequence():
    dist = stats.rv_discrete(values=([1, 2, 3, 4, 5, 6], [1 / 6] * 6))  # a die
    budgets = [1, 2, 3]
    expected = [float(enumerated_expected_max([str(k) for k in range(1, 7)], ["1/6"] * 6, k)) for k in budgets]
    np.testing.assert_allclose(expected_max_of(dist, budgets), expected, rtol=0, atol=1e-14)
    # Two dice: 161/36, the textbook value.
    assert expected[1] == pytest.approx(161 / 36, abs=1e-15)


def eq4_exact(pmf: list, support: range, n: int) -> mp.mpf:
    """Eq. 4 in 40-digit arithmetic: sum_i x_i ((sum_{x_j <= x_i} p_j)^n - (sum_{x_j < x_i} p_j)^n)."""
    below, total = mp.mpf(0), mp.mpf(0)
    for x, p in zip(support, pmf, strict=True):
        total += x * ((below + p) ** n - below**n)
        below += p
    return total


def binom_pmf(size: int, p: str) -> list:
    q = mp.mpf(p)
    return [mp.binomial(size, k) * q**k * (1 - q) ** (size - k) for k in range(size + 1)]


def poisson_pmf(mu: str, count: int) -> list:
    rate = mp.mpf(mu)
    return [mp.exp(-rate) * rate**k / mp.factorial(k) for k in range(count)]


def betabinom_pmf(size: int, a: float, b: float) -> list:
    a, b = mp.mpf(a), mp.mpf(b)
    return [mp.binomial(size, k) * mp.beta(k + a, size - k + b) / mp.beta(a, b) for k in range(size + 1)]


def geom_pmf(p: str, count: int) -> list:
    q = mp.mpf(p)
    return [q * (1 - q) ** (k - 1) for k in range(1, count + 1)]


@pytest.mark.parametrize(
    ("dist", "pmf", "support"),
    [
        (stats.binom(20, 0.3), binom_pmf(20, "0.3"), range(21)),
        (stats.binom(100, 0.7), binom_pmf(100, "0.7"), range(101)),
        (stats.poisson(3.5), poisson_pmf("3.5", 200), range(200)),  # P(X >= 200) < 1e-200
        (stats.geom(0.3), geom_pmf("0.3", 400), range(1, 401)),  # P(X > 400) = 0.7^400 < 1e-61
        (stats.betabinom(30, 2, 0.7), betabinom_pmf(30, 2, 0.7), range(31)),  # scipy sums its pmf for the cdf
    ],
    ids=["binom20", "binom100", "poisson", "geom", "betabinom"],
)
def test_scipy_discrete_against_exact_eq4(dist, pmf, support):
    budgets = [1, 2, 10, 1000, 10**6]
    expected = np.array([float(eq4_exact(pmf, support, k)) for k in budgets])
    got = no_warnings(expected_max_of, dist, budgets)
    np.testing.assert_allclose(got, expected, rtol=5e-15)


def test_poisson_far_from_zero_starts_its_sum_near_the_mass():
    # The mean, to the precision of scipy's cdf; the sum skips the million points below the bulk.
    assert no_warnings(expected_max_of, stats.poisson(1e6), 1) == pytest.approx(1e6, abs=1e-7)
    assert no_warnings(expected_max_of, stats.binom(10**6, 0.5), [1, 10**6])[0] == pytest.approx(5e5, abs=1e-7)


def test_discrete_results_stay_in_the_support():
    got = expected_max_of(stats.binom(10, 0.999), [1, 10, 10**6, 2**62])
    assert np.all(got <= 10.0) and got[-1] == 10.0


def test_a_discrete_support_too_long_to_sum_warns(monkeypatch):
    monkeypatch.setattr(estimators, "_DISCRETE_MAX_POINTS", 4096)
    with pytest.warns(AccuracyWarning, match=r"stopped after 4,096 points"):
        expected_max_of(stats.poisson(1e9), 5)  # about 1e6 points carry mass
    with pytest.warns(AccuracyWarning, match=r"stopped after 4,096 points"):
        expected_max_of(stats.zipf(2.5), 5)  # heavy tail (a finite mean), and scipy's cdf is its pmf summed


# --- input and imports --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dist", [stats.binom, stats.rv_discrete, stats.norm, stats.rv_continuous(), "poisson"])
def test_rejects_what_is_not_a_distribution(dist):
    with pytest.raises(ValueError, match=r"`dist` must be a frozen scipy.stats distribution .*rv_discrete\(values"):
        expected_max_of(dist, 5)


def test_boo_n_leaves_scipy_integrate_and_stats_unimported():
    code = textwrap.dedent(
        """
        import json, sys
        import boontrack
        boontrack.boo_n([0.70, 0.72, 0.71, 0.69], [0.68, 0.71, 0.70, 0.69], n=2)
        boontrack.boo_n([0.70, 0.72, 0.71, 0.69], n=[1, 2, 3], estimator="U")
        boontrack.expected_max([0.70, 0.72, 0.71, 0.69], estimator="W")
        print(json.dumps([m for m in ("scipy.integrate", "scipy.stats") if m in sys.modules]))
        """
    )
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert json.loads(loaded.splitlines()[-1]) == []
