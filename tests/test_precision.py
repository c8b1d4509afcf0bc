"""n_resamples="auto": resamples drawn in rounds until the ends' Monte Carlo error is small enough."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from boontrack._bootstrap import precision
from boontrack._bootstrap.intervals import curve_distribution, interval_ends
from boontrack.resampling import boo_n_ci, boo_n_curve_ci


def runs(m: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    val = rng.normal(size=m)
    return val, 0.5 * val + rng.normal(size=m)


def test_rounds_draw_the_resamples_one_call_would():
    """Rounds of 999 then 1,000 resamples are the first 1,999 of one resampling with the same generator."""
    val, test = runs(40)
    budgets = np.array([1, 5, 10])
    whole = curve_distribution(
        val, test, True, budgets, "V", True, 1999, "studentized-u-farther", np.random.default_rng(3)
    )
    rng = np.random.default_rng(3)
    first = curve_distribution(val, test, True, budgets, "V", True, 999, "studentized-u-farther", rng)
    both = first.extended(curve_distribution(val, test, True, budgets, "V", True, 1000, "studentized-u-farther", rng))
    assert both.resamples == whole.resamples == 1999
    np.testing.assert_array_equal(both.dist, whole.dist)
    np.testing.assert_array_equal(both.pivot.resample_centre, whole.pivot.resample_centre)
    np.testing.assert_array_equal(
        interval_ends(both, 0.95, "studentized-u-farther"), interval_ends(whole, 0.95, "studentized-u-farther")
    )


def test_auto_stops_at_the_first_round_whose_ends_are_precise():
    val, test = runs(60, seed=1)
    result = boo_n_ci(val, test, n=5, rng=4)  # n_resamples="auto"
    count = result.n_resamples
    assert count in range(precision.FIRST_RESAMPLES, precision.MOST_RESAMPLES + 1, precision.RESAMPLES_STEP)
    # the same count given is the same interval; the round before it was not precise enough
    assert boo_n_ci(val, test, n=5, n_resamples=count, rng=4).confidence_interval == result.confidence_interval
    budgets = np.array([5])
    error = [
        precision.monte_carlo_error(
            curve_distribution(
                val, test, True, budgets, "V", True, b, "studentized-u-farther", np.random.default_rng(4)
            ),
            0.95,
            "studentized-u-farther",
            None,
        )
        for b in (count - precision.RESAMPLES_STEP, count)
        if b >= precision.FIRST_RESAMPLES
    ]
    assert error[-1] <= precision.PRECISION and (len(error) == 1 or error[0] > precision.PRECISION)


def test_auto_stops_at_the_most_resamples_whatever_the_error():
    val, test = runs(8, seed=2)  # n = m/2 of 8 runs: heavy pivots
    band = boo_n_curve_ci(val, test, n=[1, 2, 3, 4], rng=0)
    assert band.n_resamples <= precision.MOST_RESAMPLES


@pytest.mark.parametrize("probability", [0.5, 0.95, 0.975])
def test_a_quantiles_monte_carlo_error_is_its_sampling_standard_deviation(probability):
    """Against the asymptotic standard deviation of a normal sample's quantile, sqrt(p (1 - p) / B) / phi(q),
    and against the spread of the quantile over repeated samples."""
    rng = np.random.default_rng(5)
    samples = rng.standard_normal((400, 4000))
    estimates = precision.quantile_error(samples.T, probability)  # one per sample (column)
    quantile = stats.norm.ppf(probability)
    theory = math.sqrt(probability * (1 - probability) / 4000) / stats.norm.pdf(quantile)
    observed = np.quantile(samples, probability, axis=1).std()
    assert np.median(estimates) == pytest.approx(theory, rel=0.1)
    assert observed == pytest.approx(theory, rel=0.15)
