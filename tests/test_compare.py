"""Comparisons of two approaches (boontrack.compare): tests against scipy, intervals against materialised
resamples, and the multiple-comparison adjustments against hand-worked and published examples."""

from __future__ import annotations

import dataclasses
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from boontrack.compare import (
    EXACT_FLIP_PAIRS,
    adjust_pvalues,
    boo_n_difference_ci,
    compare_approaches,
    independent_difference,
    mann_whitney,
    mean_difference_ci,
    paired_t_test,
    welch_test,
    wilcoxon_signed_rank,
)
from boontrack.estimators import boo_n
from boontrack.exceptions import ConstantScoresWarning, FewRunsWarning
from boontrack.resampling import boo_n_ci, mean_ci

from oracles import ranked, ranked_pairs

#: The default interval of 0.2.0, on the plain scale: what the hand-written bootstrap-t oracles compute.
OLD_DEFAULT = dict(method="studentized", bounds=(None, None))


def approaches(m_a: int = 30, m_b: int = 25, seed: int = 0):
    rng = np.random.default_rng(seed)
    a_val = np.round(rng.normal(0.72, 0.02, m_a), 2)
    b_val = np.round(rng.normal(0.70, 0.02, m_b), 2)
    return a_val, b_val, a_val + rng.normal(0, 0.01, m_a), b_val + rng.normal(0, 0.01, m_b)


def paired_with_shift(m: int = 40, seed: int = 1):
    """Seed effects much larger than the approach effect: A = B + 0.005 + small noise."""
    rng = np.random.default_rng(seed)
    seed_effect = rng.normal(0.8, 0.03, m)
    b = seed_effect + rng.normal(0, 0.002, m)
    a = seed_effect + 0.005 + rng.normal(0, 0.002, m)
    return a, b


# ----------------------------------------------------------------------------------------------------------
# Classical tests


def test_welch_is_scipy():
    _, _, a, b = approaches()
    ref = stats.ttest_ind(a, b, equal_var=False)
    res = welch_test(a, b)
    np.testing.assert_allclose([res.statistic, res.pvalue, res.df], [ref.statistic, ref.pvalue, ref.df], rtol=1e-12)
    assert res.df < a.size + b.size - 2  # Welch-Satterthwaite, not the pooled df


scores = st.lists(st.integers(0, 30), min_size=1, max_size=40).map(lambda x: np.asarray(x, dtype=np.float64))


@settings(max_examples=300, deadline=None)
@given(scores, scores, st.booleans())
def test_the_tests_computed_without_scipy_stats_are_scipys(a, b, distinct):
    """Welch and Mann–Whitney are computed without importing scipy.stats: scipy's results on tied and untied
    scores (``distinct``: every score its own, so the exact Mann–Whitney p-value where a sample has at most 8),
    constant samples included."""
    if distinct:
        a, b = a + 0.25 + np.arange(a.size) / 100, b + 0.5 + np.arange(b.size) / 100  # no score in both or twice
    res = mann_whitney(a, b)
    ref = stats.mannwhitneyu(a, b, alternative="two-sided")
    assert res.statistic == ref.statistic
    np.testing.assert_allclose(res.pvalue, ref.pvalue, rtol=1e-12)
    if a.size >= 2 and b.size >= 2:
        res = welch_test(a, b)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # scipy's note on (nearly) constant samples
            ref = stats.ttest_ind(a, b, equal_var=False)
        got, expected = [res.statistic, res.pvalue, res.df], [ref.statistic, ref.pvalue, ref.df]
        np.testing.assert_allclose(got, expected, rtol=1e-12)


@settings(max_examples=200, deadline=None)
@given(scores, scores, st.sampled_from([0.8, 0.9, 0.95, 0.99]))
def test_the_t_intervals_are_scipys(a, b, level):
    """The t-intervals of Welch's and the paired t-test are scipy's ``confidence_interval(level)`` of the same
    test, and exclude 0 exactly when its p-value is below 1 - level; constant samples give the difference."""
    if a.size < 2 or b.size < 2:
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # scipy's note on (nearly) constant samples
        pairs = [(welch_test(a, b, confidence_level=level), stats.ttest_ind(a, b, equal_var=False))]
        if a.size == b.size:
            pairs.append((paired_t_test(a, b, confidence_level=level), stats.ttest_rel(a, b)))
        for res, ref in pairs:
            expected = ref.confidence_interval(level)
            if not np.isfinite(expected.low):  # scipy: NaN where there is no spread; here the difference itself
                gap = a.mean() - b.mean()
                assert res.confidence_interval.low == pytest.approx(gap, abs=1e-12)
                assert res.confidence_interval.high == pytest.approx(gap, abs=1e-12)
                continue
            got = [res.confidence_interval.low, res.confidence_interval.high]
            np.testing.assert_allclose(got, [expected.low, expected.high], rtol=1e-9, atol=1e-12)
            if abs(ref.pvalue - (1 - level)) > 1e-9:
                assert (got[0] > 0 or got[1] < 0) == (res.pvalue < 1 - level)
            if not (res.statistic > -np.inf and res.statistic < np.inf):
                continue
            assert res.pvalue == pytest.approx(ref.pvalue, rel=1e-12, abs=1e-300)


def test_the_exact_mann_whitney_p_value_holds_for_a_large_second_sample():
    rng = np.random.default_rng(3)
    a, b = rng.normal(size=8), rng.normal(0.3, size=400)  # exact: 8 runs, no ties; 3,200 + 1 values of U
    np.testing.assert_allclose(mann_whitney(a, b).pvalue, stats.mannwhitneyu(a, b).pvalue, rtol=1e-12)
    # its far tail: every run of A above every run of B is one ordering of C(3008, 8), on either side
    b = rng.normal(size=3000)
    a = b.max() + 1.0 + np.arange(8)
    assert mann_whitney(a, b).pvalue == pytest.approx(2 / math.comb(3008, 8), rel=1e-12)  # 1.2e-23


def test_a_summary_with_comparisons_loads_no_scipy():
    """scipy.stats costs about a second of CPU to import, scipy.special a third of one: more than the rest of a
    small summary. This one uses every function of boontrack._special: accuracies in [0, 1] (the logit scale),
    the Gaussian Boo_n, the normality check, Welch and Mann-Whitney."""
    import subprocess
    import sys

    code = (
        "import sys, numpy as np, pandas as pd\n"
        "from boontrack.analysis import analyze\n"
        "from boontrack.runtable import RunTable\n"
        "from boontrack.spec import Spec\n"
        "scores = 1 / (1 + np.exp(-np.random.default_rng(0).normal(size=(40, 2))))\n"
        "frame = pd.DataFrame(dict(g=['a'] * 20 + ['b'] * 20, v=scores[:, 0], t=scores.mean(axis=1)))\n"
        "spec = Spec(val='v', test='t', group_by='g', maximize=True, n_resamples=99)\n"
        "summary = analyze(RunTable.from_frame(frame, spec), spec)\n"
        "assert summary.comparisons and summary.groups[0].bounds == (0.0, 1.0), 'no comparison, or unbounded'\n"
        "print(sorted(name for name in sys.modules if name.split('.')[0] == 'scipy'))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_mann_whitney_is_scipy_and_counts_pairs():
    a_val, b_val, _, _ = approaches()  # rounded: many ties between A and B
    ref = stats.mannwhitneyu(a_val, b_val, alternative="two-sided")
    res = mann_whitney(a_val, b_val)
    assert res.statistic == ref.statistic
    np.testing.assert_allclose(res.pvalue, ref.pvalue, rtol=1e-12)
    wins = sum(x > y for x in a_val for y in b_val)
    ties = sum(x == y for x in a_val for y in b_val)
    assert ties > 0
    assert res.prob_superiority == pytest.approx((wins + 0.5 * ties) / (a_val.size * b_val.size), abs=1e-15)


def test_wilcoxon_is_scipy_and_needs_pairs():
    a, b = paired_with_shift()
    ref = stats.wilcoxon(a, b)
    res = wilcoxon_signed_rank(a, b)
    assert (res.statistic, res.pvalue) == (ref.statistic, ref.pvalue)
    with pytest.raises(ValueError, match="paired runs need the same number of runs in `a` and `b`.*got 40 and 39"):
        wilcoxon_signed_rank(a, b[:-1])


def test_wilcoxon_of_equal_runs_is_nan_without_a_warning():
    # more pairs than scipy's exact test takes: its normal approximation divides 0 by 0
    runs = np.linspace(0.5, 0.9, EXACT_FLIP_PAIRS + 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = wilcoxon_signed_rank(runs, runs)
    assert res.statistic == 0 and np.isnan(res.pvalue)


# scipy's own exact test costs about a millisecond per sign flip: up to 10 pairs keep the reference to ~10 s
@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4)), min_size=2, max_size=10).filter(
        lambda pairs: any(x != y for x, y in pairs)
    )
)
def test_wilcoxon_with_ties_or_zeros_is_scipys_exact_sign_flip_test(pairs):
    """Up to 13 pairs whose differences tie or are zero, scipy enumerates every sign flip in Python (seconds per
    call at 13); boontrack counts them in one matrix product: the same statistic and the same p-value, bit for
    bit (beyond 13 pairs scipy's own result is returned: test_simulate_study's Wilcoxon tests)."""
    a, b = (np.array(side, dtype=float) / 4 for side in zip(*pairs))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # scipy's normal approximation of a constant |d|
        ref = stats.wilcoxon(a, b)
    res = wilcoxon_signed_rank(a, b)
    assert (res.statistic, res.pvalue) == (float(ref.statistic), float(ref.pvalue))


def test_paired_t_is_scipy_and_needs_pairs():
    a, b = paired_with_shift()
    ref = stats.ttest_rel(a, b)
    res = paired_t_test(a, b)
    np.testing.assert_allclose([res.statistic, res.pvalue, res.df], [ref.statistic, ref.pvalue, ref.df], rtol=1e-12)
    d = a - b  # the one-sample t statistic of the differences, by hand
    assert res.statistic == pytest.approx(d.mean() / (d.std(ddof=1) / np.sqrt(d.size)), rel=1e-12)
    with pytest.raises(ValueError, match="paired runs need the same number of runs in `a` and `b`.*got 40 and 39"):
        paired_t_test(a, b[:-1])
    with pytest.raises(ValueError, match="at least 2 pairs of runs, got 1"):
        paired_t_test([1.0], [2.0])


@pytest.mark.parametrize("test", [welch_test, paired_t_test])
@pytest.mark.parametrize("level", [0, 1, 95, "ninety"])
def test_the_t_intervals_refuse_a_level_outside_zero_one(test, level):
    with pytest.raises(ValueError, match=r"`confidence_level` must be (a number )?in \(0, 1\)"):
        test(np.arange(5.0), np.arange(5.0) + 1, confidence_level=level)


def test_paired_tests_find_a_shift_that_unpaired_tests_miss():
    """Seed effects 15x the approach effect: the paired tests see the shift, Welch and Mann-Whitney do not."""
    a, b = paired_with_shift()
    assert paired_t_test(a, b).pvalue < 1e-6 and wilcoxon_signed_rank(a, b).pvalue < 1e-6
    assert welch_test(a, b).pvalue > 0.2 and mann_whitney(a, b).pvalue > 0.2


# ----------------------------------------------------------------------------------------------------------
# Bootstrap intervals of differences


def _studentized_oracle(estimate, resampled, errors, error, level=0.95):
    """Symmetric bootstrap-t interval, written out: est +- q se, q the level quantile of |est* - est| / se*."""
    q = np.quantile(np.abs(resampled - estimate) / errors, level)
    return estimate - q * error, estimate + q * error


def test_studentized_mean_difference_is_bootstrap_t_written_out():
    """The mean's standard error is closed-form: sqrt(s_A^2 / m_A + s_B^2 / m_B) unpaired (ddof=0), s_D / sqrt(m)
    paired; resample r uses the documented indices."""
    _, _, a, b = approaches(m_a=30, m_b=25)
    a, b = np.sort(a), np.sort(b)  # ranked: the order an unpaired draw indexes
    res = mean_difference_ci(a, b, n_resamples=300, rng=6, **OLD_DEFAULT)
    gen = np.random.default_rng(6)
    ia, ib = gen.integers(0, a.size, (300, a.size)), gen.integers(0, b.size, (300, b.size))
    ra, rb = a[ia], b[ib]
    errors = np.sqrt(ra.var(axis=1) / a.size + rb.var(axis=1) / b.size)
    expected = _studentized_oracle(
        a.mean() - b.mean(), ra.mean(1) - rb.mean(1), errors, np.sqrt(a.var() / a.size + b.var() / b.size)
    )
    assert res.method == "studentized"
    assert (res.confidence_interval.low, res.confidence_interval.high) == pytest.approx(expected, abs=1e-12)

    a, _, b, _ = ranked_pairs(*paired_with_shift())  # the order paired draws index
    res = mean_difference_ci(a, b, paired=True, n_resamples=300, rng=8, **OLD_DEFAULT)
    idx = np.random.default_rng(8).integers(0, a.size, (300, a.size))
    d = a - b
    expected = _studentized_oracle(d.mean(), d[idx].mean(1), d[idx].std(1) / np.sqrt(d.size), d.std() / np.sqrt(d.size))
    assert (res.confidence_interval.low, res.confidence_interval.high) == pytest.approx(expected, abs=1e-12)


def test_paired_boo_n_difference_against_a_constant_is_the_single_group_interval():
    """B's test scores constant: B has no influence, so the paired studentized interval of Boo_n(A) - c is
    A's own studentized interval (boo_n_ci, same seed, same resamples) minus c, ties in A included."""
    a_val, a_test = ranked(*approaches(m_a=20, m_b=20)[::2])  # pair i is A's position i in its ranking
    b_val = np.random.default_rng(3).normal(size=20)
    for estimator in ("V", "W"):
        for method in ("studentized-u", "studentized"):
            res = boo_n_difference_ci(
                *(a_val, b_val, a_test, np.full(20, 0.5)),
                **dict(n=4, estimator=estimator, paired=True, method=method, n_resamples=500, rng=11),
                bounds=(None, None),  # the scales of A and of A - 0.5 would differ
            )
            options = dict(estimator=estimator, method=method, n_resamples=500, rng=11, bounds=(None, None))
            single = boo_n_ci(a_val, a_test, n=4, **options)
            assert single.method == res.method == method
            np.testing.assert_allclose(res.bootstrap_distribution, single.bootstrap_distribution - 0.5, atol=1e-12)
            ours = (res.confidence_interval.low, res.confidence_interval.high)
            theirs = (single.confidence_interval.low - 0.5, single.confidence_interval.high - 0.5)
            assert ours == pytest.approx(theirs, abs=1e-12)


def test_unpaired_studentized_error_is_the_root_sum_of_squares():
    """Unpaired, against a constant B the interval is A's studentized interval shifted (se_B = 0); with B a
    copy of A's runs resampled independently, wider than either alone."""
    a_val, _, a_test, _ = approaches(m_a=20, m_b=20)
    res = boo_n_difference_ci(a_val, a_val, a_test, np.full(20, 0.5), n=3, n_resamples=400, rng=12, **OLD_DEFAULT)
    single = boo_n_ci(a_val, a_test, n=3, n_resamples=400, rng=12, **OLD_DEFAULT)
    # A's indices come first in each batch, then B's: with one batch, A's resamples are boo_n_ci's
    np.testing.assert_allclose(res.bootstrap_distribution, single.bootstrap_distribution - 0.5, atol=1e-12)
    ours = (res.confidence_interval.low, res.confidence_interval.high)
    assert ours == pytest.approx((single.confidence_interval.low - 0.5, single.confidence_interval.high - 0.5))


def test_unpaired_boo_n_difference_matches_materialised_resamples():
    a_val, b_val, a_test, b_test = approaches()
    (a_val, a_test), (b_val, b_test) = ranked(a_val, a_test), ranked(b_val, b_test)
    res = boo_n_difference_ci(
        a_val, b_val, a_test, b_test, n=4, estimator="W", method="percentile", n_resamples=200, rng=7
    )
    # documented protocol: per batch, the positions of A in its ranking, then those of B
    rng = np.random.default_rng(7)
    idx_a = rng.integers(0, a_val.size, size=(200, a_val.size), dtype=np.int32)
    idx_b = rng.integers(0, b_val.size, size=(200, b_val.size), dtype=np.int32)
    expected = [
        boo_n(a_val[i], a_test[i], n=4, estimator="W") - boo_n(b_val[j], b_test[j], n=4, estimator="W")
        for i, j in zip(idx_a, idx_b)
    ]
    np.testing.assert_allclose(res.bootstrap_distribution, expected, rtol=0, atol=1e-12)
    assert res.estimate == pytest.approx(
        boo_n(a_val, a_test, n=4, estimator="W") - boo_n(b_val, b_test, n=4, estimator="W"), abs=1e-14
    )
    np.testing.assert_allclose(
        [res.confidence_interval.low, res.confidence_interval.high],
        np.quantile(res.bootstrap_distribution, [0.025, 0.975]),
        rtol=0,
        atol=1e-15,
    )


def test_paired_difference_resamples_pairs_together():
    a, _, b, _ = ranked_pairs(*paired_with_shift())  # the order paired draws index
    res = mean_difference_ci(a, b, paired=True, n_resamples=200, rng=3)
    idx = np.random.default_rng(3).integers(0, a.size, size=(200, a.size), dtype=np.int32)
    np.testing.assert_allclose(res.bootstrap_distribution, a[idx].mean(axis=1) - b[idx].mean(axis=1), atol=1e-14)
    assert res.estimate == pytest.approx(a.mean() - b.mean(), abs=1e-15)


def test_differences_match_scipy_bootstrap_with_the_same_seed():
    """scipy.stats.bootstrap draws the same indices from the same seed: paired, one draw for all four arrays;
    unpaired, A's then B's."""
    a_val, b_val, a_test, b_test = approaches(m_a=30, m_b=30)
    a_val, a_test, b_val, b_test = ranked_pairs(a_val, a_test, b_val, b_test)  # the order paired draws index
    ref = stats.bootstrap(
        (a_val, a_test, b_val, b_test),
        lambda av, at, bv, bt: boo_n(av, at, n=3) - boo_n(bv, bt, n=3),
        paired=True,
        vectorized=False,
        method="percentile",
        n_resamples=300,
        rng=4,
    )
    ours = boo_n_difference_ci(a_val, b_val, a_test, b_test, n=3, paired=True, n_resamples=300, rng=4)
    np.testing.assert_allclose(ours.bootstrap_distribution, ref.bootstrap_distribution, rtol=0, atol=1e-12)
    a_val, b_val, a_test, b_test = approaches()
    a_test, b_test = np.sort(a_test), np.sort(b_test)  # ranked: the order unpaired draws index
    ref = stats.bootstrap(
        (a_test, b_test),
        lambda a, b, axis: a.mean(axis=axis) - b.mean(axis=axis),
        method="percentile",
        n_resamples=300,
        rng=5,
    )
    ours = mean_difference_ci(a_test, b_test, method="percentile", n_resamples=300, rng=5)
    np.testing.assert_allclose(ours.bootstrap_distribution, ref.bootstrap_distribution, rtol=0, atol=1e-14)
    assert ours.confidence_interval.low == pytest.approx(ref.confidence_interval.low, abs=1e-14)
    assert ours.confidence_interval.high == pytest.approx(ref.confidence_interval.high, abs=1e-14)


def test_paired_interval_is_narrower_on_paired_data():
    a, b = paired_with_shift()
    for fn in (mean_difference_ci, boo_n_difference_ci):
        paired = fn(a, b, paired=True, n_resamples=2000, rng=1).confidence_interval
        unpaired = fn(a, b, paired=False, n_resamples=2000, rng=1).confidence_interval
        assert (paired.high - paired.low) < 0.3 * (unpaired.high - unpaired.low)
        assert paired.low > 0  # the consistent shift is detected only when the pairing is used
        assert unpaired.low < 0


def test_difference_warnings():
    with pytest.warns(FewRunsWarning, match=r"^5 runs of A and 12 of B: only 5 runs: 95 % intervals covered"):
        mean_difference_ci(np.arange(5.0), np.arange(12.0), n_resamples=10, rng=0)
    with pytest.warns(FewRunsWarning, match=r"^9 runs of A and 12 of B: n = 5 is above m / 2 = 4.5"):
        boo_n_difference_ci(np.arange(9.0), np.arange(12.0), n=5, n_resamples=10, rng=0)
    with pytest.warns(ConstantScoresWarning, match="interval of the difference is a point"):
        res = mean_difference_ci(np.full(12, 0.5), np.full(10, 0.25), n_resamples=50, rng=0)
    assert res.confidence_interval.low == res.confidence_interval.high == 0.25


# ----------------------------------------------------------------------------------------------------------
# compare_approaches


def test_compare_approaches_unpaired_uses_test_scores():
    a_val, b_val, a_test, b_test = approaches()
    res = compare_approaches(a_val, b_val, a_test, b_test, n=3, n_resamples=300, rng=5)
    assert res.wilcoxon is None and res.paired_t is None
    assert res.headline == {"welch": res.welch, "mann_whitney": res.mann_whitney}
    assert res.welch.pvalue == pytest.approx(stats.ttest_ind(a_test, b_test, equal_var=False).pvalue, rel=1e-12)
    assert res.mann_whitney.statistic == stats.mannwhitneyu(a_test, b_test).statistic
    assert res.mean_difference.estimate == pytest.approx(a_test.mean() - b_test.mean(), abs=1e-15)
    assert res.boo_n_difference.estimate == pytest.approx(
        boo_n(a_val, a_test, n=3) - boo_n(b_val, b_test, n=3), abs=1e-14
    )
    # one Generator feeds the Boo_n difference first, then the mean difference
    rng = np.random.default_rng(5)
    boo = boo_n_difference_ci(a_val, b_val, a_test, b_test, n=3, n_resamples=300, rng=rng)
    mean = mean_difference_ci(a_test, b_test, n_resamples=300, rng=rng)
    np.testing.assert_array_equal(res.boo_n_difference.bootstrap_distribution, boo.bootstrap_distribution)
    np.testing.assert_array_equal(res.mean_difference.bootstrap_distribution, mean.bootstrap_distribution)


def test_compare_approaches_paired_and_without_test():
    a, b = paired_with_shift()
    res = compare_approaches(a, b, paired=True, n_resamples=300, rng=2)
    assert res.wilcoxon == wilcoxon_signed_rank(a, b)
    assert res.paired_t == paired_t_test(a, b)
    assert res.headline == {"paired_t": res.paired_t, "wilcoxon": res.wilcoxon}
    assert res.welch == welch_test(a, b)
    assert res.mean_difference.estimate == pytest.approx(a.mean() - b.mean(), abs=1e-15)


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        ((np.arange(12.0), np.arange(11.0)), {"paired": True}, r"paired runs need the same number.*got 12 and 11"),
        ((np.arange(12.0), np.arange(12.0), np.arange(12.0)), {}, "give test scores for both approaches or neither"),
        ((np.arange(12.0), np.arange(12.0), None, np.arange(12.0)), {}, "`a_test` is missing but `b_test` is given"),
        ((np.arange(12.0), [1.0, np.inf] * 6), {}, "approach B: `val` must be finite; position 1"),
        ((np.arange(12.0), np.arange(12.0), np.arange(11.0), np.arange(12.0)), {}, "approach A: `val` and `test`"),
        ((np.arange(12.0), np.arange(12.0)), {"paired": "yes"}, "`paired` must be True or False, got 'yes'"),
        ((np.arange(12.0), np.arange(12.0)), {"n_resamples": 0}, "`n_resamples` must be an integer >= 1, got 0"),
        ((np.arange(12.0), np.arange(12.0)), {"confidence_level": 95}, r"`confidence_level` must be in \(0, 1\)"),
        ((np.arange(12.0), np.arange(10.0)), {"n": 11, "estimator": "U"}, "`n` = 11 exceeds the number of runs m = 10"),
        ((np.arange(12.0), np.arange(12.0)), {"estimator": "Z"}, "`estimator` must be one of"),
        ((np.arange(12.0), np.arange(12.0)), {"maximize": 1}, "`maximize` must be True or False, got 1"),
        ((np.arange(12.0), [0.5]), {}, "Welch's t-test needs at least 2 runs in each of `a` and `b`, got 12 and 1"),
    ],
)
def test_compare_approaches_rejects(args, kwargs, message):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match=message):
            compare_approaches(*args, **{"n_resamples": 20, **kwargs})


# ----------------------------------------------------------------------------------------------------------
# Multiple comparisons


def test_holm_and_bh_by_hand():
    p = [0.01, 0.04, 0.03, 0.005]
    # Holm: sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1 = 0.02, 0.03, 0.06, 0.04 -> running max
    np.testing.assert_allclose(adjust_pvalues(p, method="holm"), [0.03, 0.06, 0.06, 0.02], rtol=1e-14)
    # BH: times 4/1, 4/2, 4/3, 4/4 = 0.02, 0.02, 0.04, 0.04 -> running min from the top
    np.testing.assert_allclose(adjust_pvalues(p, method="bh"), [0.02, 0.04, 0.04, 0.02], rtol=1e-14)
    np.testing.assert_array_equal(adjust_pvalues([0.5, 0.9], method="holm"), [1.0, 1.0])  # capped at 1


def test_benjamini_hochberg_1995_example():
    """The 15 p-values of Benjamini & Hochberg (1995), §4: at q = 0.05 BH rejects 4, Holm 3."""
    p = [
        0.0001,
        0.0004,
        0.0019,
        0.0095,
        0.0201,
        0.0278,
        0.0298,
        0.0344,
        0.0459,
        0.3240,
        0.4262,
        0.5719,
        0.6528,
        0.7590,
        1.000,
    ]
    assert (adjust_pvalues(p, method="bh") <= 0.05).sum() == 4
    assert (adjust_pvalues(p, method="holm") <= 0.05).sum() == 3


def test_bh_is_scipy_false_discovery_control_and_both_are_monotone():
    rng = np.random.default_rng(9)
    p = np.concatenate([rng.uniform(0, 0.01, 20), rng.uniform(size=80), [0.5, 0.5]])
    rng.shuffle(p)
    np.testing.assert_allclose(adjust_pvalues(p, method="bh"), stats.false_discovery_control(p), rtol=1e-12)
    order = np.argsort(p)
    for method in ("holm", "bh"):
        adjusted = adjust_pvalues(p, method=method)
        assert (np.diff(adjusted[order]) >= 0).all() and (adjusted >= p).all() and (adjusted <= 1).all()


@pytest.mark.parametrize(
    ("pvalues", "kwargs", "message"),
    [
        ([0.1, np.nan, 0.2], {}, r"`pvalues` must lie in \[0, 1\]; position 1 is nan"),
        ([0.1, 1.2], {}, r"position 1 is 1.2"),
        ([-0.1], {}, r"position 0 is -0.1"),
        ([], {}, "`pvalues` must be a non-empty 1-D sequence"),
        ([[0.1, 0.2]], {}, "`pvalues` must be a non-empty 1-D sequence, got shape"),
        (["a"], {}, "`pvalues` must be a 1-D sequence of numbers"),
        ([0.1], {"method": "bonferroni"}, "`method` must be one of 'holm', 'bh'; got 'bonferroni'"),
    ],
)
def test_adjust_pvalues_rejects(pvalues, kwargs, message):
    with pytest.raises(ValueError, match=message):
        adjust_pvalues(pvalues, **kwargs)


def test_independent_difference_of_studentized_results_studentizes_the_difference():
    """By hand, for the mean (Boo_1), whose delta-method standard error is the plug-in sd / sqrt(m): the
    resamples are the documented draws, d* = a* - b*, q the 95 % quantile of |d* - d| / sqrt(se_a*^2 + se_b*^2)
    and the interval d +- q sqrt(se_a^2 + se_b^2)."""
    gen = np.random.default_rng(4)
    a_scores, b_scores = np.sort(gen.normal(1.0, 1.0, 30)), np.sort(gen.normal(0.0, 2.0, 25))  # ranked
    a, b = (
        mean_ci(scores, n_resamples=400, rng=seed, **OLD_DEFAULT) for seed, scores in ((1, a_scores), (2, b_scores))
    )
    resamples_a = a_scores[np.random.default_rng(1).integers(0, 30, size=(400, 30), dtype=np.int32)]
    resamples_b = b_scores[np.random.default_rng(2).integers(0, 25, size=(400, 25), dtype=np.int32)]
    se_a, se_b = a_scores.std() / np.sqrt(30), b_scores.std() / np.sqrt(25)
    se_a_star, se_b_star = resamples_a.std(axis=1) / np.sqrt(30), resamples_b.std(axis=1) / np.sqrt(25)
    assert a.studentized_errors.standard_error == pytest.approx(se_a, rel=1e-12)
    np.testing.assert_allclose(a.studentized_errors.resample_standard_errors, se_a_star, rtol=1e-10)

    diff = independent_difference(a, b)
    estimate = a_scores.mean() - b_scores.mean()
    moved = resamples_a.mean(axis=1) - resamples_b.mean(axis=1) - estimate
    half = np.quantile(np.abs(moved) / np.hypot(se_a_star, se_b_star), 0.95) * np.hypot(se_a, se_b)
    assert diff.method == "studentized"
    assert diff.estimate == pytest.approx(estimate, abs=1e-12)
    assert diff.confidence_interval.low == pytest.approx(estimate - half, rel=1e-9)
    assert diff.confidence_interval.high == pytest.approx(estimate + half, rel=1e-9)


def test_independent_difference_refuses_a_studentized_result_without_its_standard_errors():
    a = boo_n_ci(np.arange(10.0), n=2, n_resamples=50, rng=1)
    bare = dataclasses.replace(a, studentized_errors=None)
    with pytest.raises(ValueError, match="`b` is studentized but carries no standard errors"):
        independent_difference(a, bare)


def test_independent_difference_subtracts_resample_by_resample():
    gen = np.random.default_rng(2)
    a_val, b_val = gen.normal(1.0, 1.0, 40), gen.normal(0.0, 1.0, 50)
    a, b = (boo_n_ci(x, n=5, method="percentile", n_resamples=400, rng=s) for x, s in ((a_val, 1), (b_val, 2)))
    diff = independent_difference(a, b)
    assert diff.method == "percentile"
    np.testing.assert_array_equal(diff.bootstrap_distribution, a.bootstrap_distribution - b.bootstrap_distribution)
    assert diff.estimate == pytest.approx(boo_n(a_val, n=5) - boo_n(b_val, n=5), abs=1e-12)
    low, high = np.quantile(a.bootstrap_distribution - b.bootstrap_distribution, [0.025, 0.975])
    assert (diff.confidence_interval.low, diff.confidence_interval.high) == pytest.approx((low, high), abs=1e-12)
    # the same as drawing A and B independently with those generators
    direct = boo_n_difference_ci(a_val, b_val, n=5, n_resamples=400, rng=1)
    assert direct.bootstrap_distribution.shape == diff.bootstrap_distribution.shape


@pytest.mark.parametrize(
    ("b_kwargs", "message"),
    [
        ({"n_resamples": 300}, "as many resamples: 400 and 300"),
        ({"confidence_level": 0.9}, "differ in confidence_level"),
    ],
)
def test_independent_difference_refuses_mismatched_results(b_kwargs, message):
    a = boo_n_ci(np.arange(12.0), n=2, n_resamples=400, rng=1)
    b = boo_n_ci(np.arange(12.0), n=2, **{"n_resamples": 400, "rng": 2, **b_kwargs})
    with pytest.raises(ValueError, match=message):
        independent_difference(a, b)
    with pytest.raises(ValueError, match="`a` must be a BootstrapResult"):
        independent_difference(1.0, b)


def test_paired_standard_errors_in_chunks_are_the_same(monkeypatch):
    """The paired standard errors are computed a few resamples at a time when the pairs are many: no change."""
    from boontrack._bootstrap import differences

    a_val, b_val, a_test, b_test = approaches(m_a=30, m_b=30)
    whole = boo_n_difference_ci(a_val, b_val, a_test, b_test, n=3, paired=True, n_resamples=300, rng=9)
    monkeypatch.setattr(differences, "CACHE_ELEMENTS", 2 * 30)  # two resamples at a time
    chunked = boo_n_difference_ci(a_val, b_val, a_test, b_test, n=3, paired=True, n_resamples=300, rng=9)
    assert chunked.confidence_interval == whole.confidence_interval
    np.testing.assert_array_equal(chunked.bootstrap_distribution, whole.bootstrap_distribution)


@pytest.mark.parametrize("method", ["studentized-u", "studentized", "percentile"])
@pytest.mark.parametrize("paired", [True, False])
@pytest.mark.parametrize("estimator", ["V", "U"])
def test_differences_at_several_budgets_are_each_budgets_own_on_the_same_draws(monkeypatch, method, paired, estimator):
    """One draw serves every budget: each budget's difference is the one boo_n_difference_ci gives that budget
    alone from a generator in the same state (the same index draws), also when the paired standard errors and the
    budgets come in chunks; the comparison is compare_approaches' at the largest budget."""
    from boontrack._bootstrap import differences
    from boontrack.compare import compare_at_budgets

    monkeypatch.setattr(differences, "CACHE_ELEMENTS", 7 * 24)  # the paired standard errors 7 resamples at a time
    a_val, b_val, a_test, b_test = approaches(m_a=24, m_b=24 if paired else 19, seed=4)
    budgets = (7, 1, 3)
    options = dict(paired=paired, method=method, estimator=estimator, n_resamples=240, bounds=(0.0, 1.0))
    together_rng = np.random.default_rng(5)
    comparison, together = compare_at_budgets(a_val, b_val, a_test, b_test, n=budgets, rng=together_rng, **options)
    assert list(together) == list(budgets)
    for k in budgets:
        alone_rng = np.random.default_rng(5)
        alone = boo_n_difference_ci(a_val, b_val, a_test, b_test, n=k, rng=alone_rng, **options)
        assert together[k].method == alone.method == method
        assert together[k].estimate == pytest.approx(alone.estimate, abs=1e-12)
        np.testing.assert_allclose(together[k].bootstrap_distribution, alone.bootstrap_distribution, rtol=0, atol=1e-12)
        np.testing.assert_allclose(
            dataclasses.astuple(together[k].confidence_interval),
            dataclasses.astuple(alone.confidence_interval),
            atol=1e-12,
        )
        assert together[k].standard_error == pytest.approx(alone.standard_error, abs=1e-12)
    single_rng = np.random.default_rng(5)
    single = compare_approaches(a_val, b_val, a_test, b_test, n=max(budgets), rng=single_rng, **options)
    assert together_rng.bit_generator.state == single_rng.bit_generator.state  # both drew exactly as many
    for field in ("boo_n_difference", "mean_difference"):
        ends = (dataclasses.astuple(getattr(c, field).confidence_interval) for c in (comparison, single))
        np.testing.assert_allclose(*ends, rtol=0, atol=1e-12)
    assert comparison.headline == single.headline
