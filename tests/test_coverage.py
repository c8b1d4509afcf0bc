"""The default interval's actual coverage, measured on populations with a known Boo_n (boontrack.simulate).

The full suite (``tests/benchmarks/bench_coverage.py``, 1,000 sweeps per cell) is in
docs/statistics/intervals.md; here a few of its hardest cells where the default is claimed to hold, with few
sweeps and a tolerance from the standard error of a coverage.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from boontrack.choices import DEFAULT_CI_METHOD
from boontrack.simulate import coverage, population

#: (population, m, budgets): cells where 0.2.0's default fell below 93 % (validation-test correlation 0.95,
#: the validation curve) or near it (ties), and a table-like bounded score near its ceiling.
CELLS = [
    (population("normal", rho=0.95), 20, (5, 10)),
    (population("normal", rho=1.0), 20, (5, 10)),
    (population("beta_binomial", trials=200), 20, (5, 10)),
    (population("left_skewed", sigma=0.5, ceiling=1.0, scale=0.03), 20, (1, 5)),
]
SWEEPS = 300


@pytest.mark.slow
@pytest.mark.parametrize("pop, m, budgets", CELLS, ids=["normal-0.95", "validation", "binomial", "ceiling"])
def test_default_interval_covers_at_least_93_percent(pop, m, budgets):
    """Goal for nominal 95 %: no cell significantly below 93 % (one-sided, 2.5 standard errors), and the
    percentile interval on the same resamples covering less (the default is not the percentile one)."""
    cells = coverage(pop, m=m, n=budgets, replications=SWEEPS, n_resamples=499, rng=np.random.default_rng([24, m]))
    by_key = {(c.method, c.n): c for c in cells}
    for n in budgets:
        default, plain = by_key[DEFAULT_CI_METHOD, n], by_key["percentile", n]
        where = (
            f"{pop.name} {pop.parameters}, m = {m}, n = {n}: {default.coverage:.3f} (percentile {plain.coverage:.3f})"
        )
        assert default.coverage >= 0.93 - 2.5 * math.sqrt(0.93 * 0.07 / SWEEPS), where
        assert default.coverage > plain.coverage or plain.coverage > 0.93, where


@pytest.mark.slow
def test_no_endpoint_leaves_the_bounds_near_a_ceiling():
    """Accuracies just below 1: every studentized end lies in [0, 1] (computed on the logit scale), and the
    coverage holds (the test above); a plain interval around the same centre would cross 1 in some sweeps."""
    from boontrack.simulate import sweep_intervals

    pop = population("left_skewed", sigma=0.5, ceiling=1.0, scale=0.03)
    methods = (DEFAULT_CI_METHOD,)
    sweeps = sweep_intervals(pop, m=10, n=(1, 5), methods=methods, replications=200, n_resamples=299, rng=5)
    assert (sweeps.low[DEFAULT_CI_METHOD] >= 0).all() and (sweeps.high[DEFAULT_CI_METHOD] <= 1).all()
    plain = sweep_intervals(
        pop, m=10, n=(1, 5), methods=methods, replications=200, n_resamples=299, rng=5, bounds=(None, None)
    )
    assert (plain.high[DEFAULT_CI_METHOD] > 1).any()
