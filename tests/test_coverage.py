"""The default interval's actual coverage, measured on populations with a known Boo_n, and the coverage
self-check on a user's own runs (boontrack.simulate)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from boontrack.exceptions import CoverageWarning
from boontrack.simulate import coverage, coverage_check, population

#: Sweeps per number of runs: 2 populations x 1,600 = 3,200 sweeps, each with both methods' intervals.
REPLICATIONS = {10: 600, 20: 500, 50: 300, 100: 200}


@pytest.mark.slow
@pytest.mark.parametrize("name", ["normal", "beta_binomial"])
def test_default_interval_covers_near_nominal_at_small_m(name):
    """Goal for nominal 95 %, m = 10-100, n <= m/2: no cell significantly below 93 % (one-sided, two standard
    errors), none below 90 % at all, and a median width at most 2.5x the percentile interval's."""
    pop = population(name)
    for m, replications in REPLICATIONS.items():
        budgets = [n for n in (1, 5, 10) if n <= m / 2]
        cells = coverage(
            pop, m=m, n=budgets, replications=replications, n_resamples=499, rng=np.random.default_rng([2024, m])
        )
        by_key = {(c.method, c.n): c for c in cells}
        for n in budgets:
            default, plain = by_key["studentized", n], by_key["percentile", n]
            where = f"{name}, m = {m}, n = {n}: {default.coverage:.3f} (percentile {plain.coverage:.3f})"
            assert default.coverage >= 0.93 - 2 * math.sqrt(0.93 * 0.07 / replications), where
            assert default.coverage >= 0.90, where
            assert default.median_width <= 2.5 * plain.median_width, where


def test_self_check_warns_on_a_long_right_tail():
    val, test = population("lognormal").sample(20, rng=3)
    with pytest.warns(CoverageWarning, match=r"estimated to cover less than 90 % \(Boo_1 \d+ %, Boo_5 \d+ %"):
        check = coverage_check(val[0], test[0], n=[1, 5, 10], rng=0)
    assert check.doubtful[1] and check.at(5) < 0.9 and check.skipped is None


def test_self_check_is_quiet_on_normal_scores():
    val, test = population("normal").sample(20, rng=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CoverageWarning)
        check = coverage_check(val[0], test[0], n=[1, 5, 10], rng=0)
    assert (check.coverage >= 0.9).all() and not check.doubtful.any()
    assert (check.replications, check.n_resamples, check.method) == (200, 199, "studentized")


def test_self_check_skips_large_sweeps_and_constant_scores():
    rng = np.random.default_rng(0)
    large = coverage_check(rng.normal(size=501), n=5)
    assert large.skipped == "more than 500 runs" and np.isnan(large.coverage).all() and not large.doubtful.any()
    flat = coverage_check(rng.normal(size=20), np.full(20, 0.5), n=5)
    assert flat.skipped == "constant test scores"
