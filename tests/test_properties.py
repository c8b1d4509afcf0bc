"""Invariants of the bootstrap, the comparisons and the diagnostics, for any data (hypothesis)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from boontrack.choices import CI_METHODS
from boontrack.compare import adjust_pvalues, independent_difference
from boontrack.diagnostics import diagnose
from boontrack.estimators import boo_n
from boontrack.resampling import boo_n_ci, boo_n_curve_ci

# Scores on a coarse grid, so that ties (in validation and test) are common.
scores = st.integers(10, 40).flatmap(
    lambda m: st.tuples(
        arrays(np.float64, m, elements=st.integers(0, 12).map(lambda k: k / 12)),
        arrays(np.float64, m, elements=st.integers(0, 20).map(lambda k: k / 20)),
    )
)
methods = st.sampled_from(["percentile", "bca", "smoothed"])
estimators = st.sampled_from(["V", "U", "W"])
quiet = pytest.mark.filterwarnings("ignore::boontrack.BoontrackWarning")


@quiet
@settings(max_examples=40, deadline=None)
@given(scores, estimators, st.integers(1, 8), st.integers(0, 2**32 - 1))
def test_every_resample_is_an_average_of_test_scores(data, estimator, n, seed):
    val, test = data
    result = boo_n_ci(val, test, n=n, estimator=estimator, n_resamples=200, rng=seed)
    assert result.estimate == pytest.approx(boo_n(val, test, n=n, estimator=estimator), abs=1e-12)
    dist = result.bootstrap_distribution
    assert np.all(dist >= test.min() - 1e-12) and np.all(dist <= test.max() + 1e-12)
    # the default (studentized) interval holds the estimate, within the worst score and the best plus the range
    low, high = result.confidence_interval.low, result.confidence_interval.high
    assert test.min() <= low <= result.estimate <= high <= 2 * test.max() - test.min() + 1e-12
    plain = boo_n_ci(val, test, n=n, estimator=estimator, n_resamples=200, method="percentile", rng=seed)
    low, high = plain.confidence_interval.low, plain.confidence_interval.high
    assert dist.min() - 1e-12 <= low <= high <= dist.max() + 1e-12


@quiet
@settings(max_examples=30, deadline=None)
@given(scores, st.sampled_from(["percentile", "bca"]), st.integers(0, 2**32 - 1))
def test_band_of_the_expected_best_validation_score_rises_with_n(data, method, seed):
    val, _ = data
    band = boo_n_curve_ci(val, n=np.arange(1, val.size), n_resamples=200, method=method, rng=seed)
    # each resampled curve is non-decreasing in n, so its distribution's quantiles are too
    assert np.all(np.diff(band.bootstrap_distribution, axis=1) >= -1e-12)
    if method == "percentile":
        assert np.all(np.diff(band.low) >= -1e-12) and np.all(np.diff(band.high) >= -1e-12)


@quiet
@settings(max_examples=30, deadline=None)
@given(scores, scores, st.integers(0, 2**32 - 1))
def test_independent_difference_is_the_difference_of_estimates(a, b, seed):
    ra = boo_n_ci(*a, n=3, n_resamples=150, rng=seed)
    rb = boo_n_ci(*b, n=3, n_resamples=150, rng=seed + 1)
    d = independent_difference(ra, rb)
    assert d.estimate == pytest.approx(ra.estimate - rb.estimate, abs=1e-12)
    assert d.confidence_interval.low <= d.confidence_interval.high


@quiet
@settings(max_examples=30, deadline=None)
@given(
    scores,
    st.sampled_from(CI_METHODS),
    st.randoms(use_true_random=False),
)
def test_intervals_do_not_depend_on_the_order_of_the_runs(data, method, random):
    """Draws index the runs ranked (validation, then test score): any order of the same runs gives the same
    resamples, so the very same numbers."""
    val, test = data
    order = list(range(val.size))
    random.shuffle(order)
    given = boo_n_curve_ci(val, test, n=[1, 3, 7], n_resamples=120, method=method, rng=3)
    shuffled = boo_n_curve_ci(val[order], test[order], n=[1, 3, 7], n_resamples=120, method=method, rng=3)
    np.testing.assert_array_equal(shuffled.bootstrap_distribution, given.bootstrap_distribution)
    np.testing.assert_array_equal([shuffled.low, shuffled.high], [given.low, given.high])


all_methods = st.sampled_from(CI_METHODS)


@quiet
@settings(max_examples=40, deadline=None)
@given(scores, all_methods, st.floats(-5, 5), st.floats(0.5, 50), st.integers(0, 2**32 - 1))
def test_no_end_leaves_the_bounds(data, method, shift, stretch, seed):
    """Scores in [0, 1] get those bounds, declared ones are kept: every end of every interval and band lies
    inside them, at budgets below and above m / 2, whatever the scale and place of the bounds."""
    val, test = data
    band = boo_n_curve_ci(val, test, n=[1, 3, val.size], n_resamples=150, method=method, rng=seed)
    ends = np.concatenate([band.low, band.high, band.simultaneous_low, band.simultaneous_high])
    assert band.bounds == (0.0, 1.0) and np.all(ends >= 0.0) and np.all(ends <= 1.0)
    bounds = (shift, shift + stretch)  # the same runs on another scale, declared bounded there
    moved = boo_n_curve_ci(
        shift + stretch * val, shift + stretch * test, n=[1, 3], n_resamples=150, method=method, rng=seed, bounds=bounds
    )
    ends = np.concatenate([moved.low, moved.high, moved.simultaneous_low, moved.simultaneous_high])
    assert np.all(ends >= bounds[0] - 1e-9 * stretch) and np.all(ends <= bounds[1] + 1e-9 * stretch)


@quiet
@settings(max_examples=30, deadline=None)
@given(
    scores,
    st.sampled_from(["studentized-u", "studentized-u-calibrated", "studentized-u-k-of-m", "studentized", "percentile"]),
    st.integers(0, 2**32 - 1),
)
def test_intervals_nest_as_the_confidence_level_grows(data, method, seed):
    """The same resamples at 80 %, 90 % and 99 %: each interval holds the one of the lower level."""
    val, test = data
    ends = [
        boo_n_ci(val, test, n=3, n_resamples=150, method=method, rng=seed, confidence_level=level).confidence_interval
        for level in (0.8, 0.9, 0.99)
    ]
    for inner, outer in zip(ends, ends[1:]):
        assert outer.low <= inner.low + 1e-12 and inner.high <= outer.high + 1e-12


@quiet
@settings(max_examples=25, deadline=None)
@given(scores, st.booleans(), st.randoms(use_true_random=False))
def test_differences_do_not_depend_on_the_order_of_the_runs(data, paired, random):
    """Unpaired, each group's runs in any order; paired, the pairs in any order: the same numbers."""
    from boontrack.compare import boo_n_difference_ci, mean_difference_ci

    val, test = data
    half = val.size // 2
    a_val, a_test, b_val, b_test = val[:half], test[:half], val[half : 2 * half], test[half : 2 * half]
    order_a, order_b = list(range(half)), list(range(half))
    random.shuffle(order_a)
    if paired:
        order_b = order_a
    else:
        random.shuffle(order_b)
    for method in ("studentized-u", "studentized", "percentile"):
        given = boo_n_difference_ci(
            a_val, b_val, a_test, b_test, n=2, paired=paired, method=method, n_resamples=100, rng=5
        )
        moved = boo_n_difference_ci(
            a_val[order_a],
            b_val[order_b],
            a_test[order_a],
            b_test[order_b],
            n=2,
            paired=paired,
            method=method,
            n_resamples=100,
            rng=5,
        )
        np.testing.assert_array_equal(moved.bootstrap_distribution, given.bootstrap_distribution)
        assert moved.confidence_interval == given.confidence_interval
    given = mean_difference_ci(a_test, b_test, paired=paired, n_resamples=100, rng=6)
    moved = mean_difference_ci(a_test[order_a], b_test[order_b], paired=paired, n_resamples=100, rng=6)
    np.testing.assert_array_equal(moved.bootstrap_distribution, given.bootstrap_distribution)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=30))
def test_bh_is_never_more_conservative_than_holm_and_both_keep_order(pvalues):
    p = np.array(pvalues)
    holm, bh = adjust_pvalues(p, method="holm"), adjust_pvalues(p, method="bh")
    assert np.all(p <= holm + 1e-15) and np.all(holm <= 1.0)
    assert np.all(bh <= holm + 1e-15) and np.all(p <= bh + 1e-15)
    order = np.argsort(p, kind="stable")
    for adjusted in (holm, bh):
        assert np.all(np.diff(adjusted[order]) >= -1e-15)


@quiet
@settings(max_examples=40, deadline=None)
@given(scores, st.randoms(use_true_random=False))
def test_diagnostics_do_not_depend_on_run_order(data, random):
    val, test = data
    order = list(range(val.size))
    random.shuffle(order)
    a, b = diagnose(val, test), diagnose(val[order], test[order])
    assert (a.runs, a.ties, a.normal) == (b.runs, b.ties, b.normal)
    for field in ("mean", "sd", "median", "iqr", "min", "max", "normality_statistic"):
        assert getattr(a, field) == pytest.approx(getattr(b, field), abs=1e-12, nan_ok=True)
    assert (a.spearman_val_test is None) == (b.spearman_val_test is None)
    if a.spearman_val_test is not None:
        assert a.spearman_val_test == pytest.approx(b.spearman_val_test, abs=1e-12)


@st.composite
def sweeps(draw):
    """A run frame of two groups paired by seed (a, b) and one not (c), with tied scores and arbitrary run ids."""
    import pandas as pd

    m_paired, m_other = draw(st.integers(3, 12)), draw(st.integers(2, 12))
    total = 2 * m_paired + m_other
    run_ids = draw(
        st.lists(st.text("0123456789abcdef", min_size=1, max_size=6), min_size=total, max_size=total, unique=True)
    )
    grid = st.integers(0, 10).map(lambda k: k / 10)
    val = draw(st.lists(grid, min_size=total, max_size=total))
    test = draw(st.lists(grid, min_size=total, max_size=total))
    return pd.DataFrame(
        {
            "run_id": run_ids,
            "params.model": ["a"] * m_paired + ["b"] * m_paired + ["c"] * m_other,
            "params.seed": [*range(m_paired), *range(m_paired), *range(100, 100 + m_other)],
            "metrics.val": val,
            "metrics.test": test,
        }
    )


@quiet
@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")  # scipy's Wilcoxon on all-zero differences
@settings(max_examples=15, deadline=None)
@given(sweeps(), methods, st.sampled_from(["baseline", "all-pairs"]), st.randoms(use_true_random=False))
def test_a_summary_does_not_depend_on_the_order_of_the_rows(frame, method, compare, random):
    import json

    from boontrack.analysis import analyze
    from boontrack.runtable import RunTable
    from boontrack.spec import Spec

    spec = Spec(val="val", test="test", seed_column="seed", ci_method=method, compare=compare, n_resamples=40)
    order = list(range(len(frame)))
    random.shuffle(order)
    shuffled = frame.iloc[order]
    summaries = [analyze(RunTable.from_frame(f, spec), spec).to_dict() for f in (frame, shuffled)]
    assert any(c["paired"] for c in summaries[0]["comparisons"])
    assert json.dumps(summaries[0]) == json.dumps(summaries[1])  # every number, bit for bit
