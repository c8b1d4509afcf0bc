"""The studentized-u interval whose pivot comes from resamples of k < m runs (``"studentized-u-k-of-m"``).

The exact checks materialise the documented draws: the bootstrap distribution's resamples (rows of
``rng.integers(0, m, size=(B, m), dtype=int32)``, as for ``"studentized-u"``), then the pivot's resamples, of
which each budget reads the first k draws. At n = 1 U and V are the mean and se the plug-in standard deviation
over sqrt(k); at n > 1 U of k ranked runs is Tang et al.'s average over the n-subsets, written out with binomials.
"""

from __future__ import annotations

import math
import typing

import numpy as np
import pandas as pd
import pytest

from boontrack import RunTable, Spec, analyze
from boontrack._bootstrap import intervals
from boontrack._bootstrap.kernels import RankedRuns
from boontrack._bootstrap.threads import using_threads
from boontrack.choices import CI_METHODS
from boontrack.compare import independent_difference
from boontrack.estimators import boo_n
from boontrack.exceptions import ConstantScoresWarning
from boontrack.resampling import Method, boo_n_ci, boo_n_curve_ci, mean_ci
from boontrack.simulate.coverage import _shared_resampling

K_OF_M = "studentized-u-k-of-m"


def runs(m: int = 12, seed: int = 5) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    val = rng.lognormal(0.0, 0.8, m)
    return val, val + rng.normal(0.0, 0.3, m)


def unbiased_boo_n(val: np.ndarray, test: np.ndarray, n: int) -> float:
    """U: the mean over every n-subset of the k runs of the test score of its best run by validation score,
    sum_i t_(i) C(i - 1, n - 1) / C(k, n) with the runs ranked worst to best (no tied validation scores)."""
    ranked = test[np.argsort(val, kind="stable")]
    k = ranked.size
    return sum(ranked[i - 1] * math.comb(i - 1, n - 1) for i in range(1, k + 1)) / math.comb(k, n)


def test_sizes_are_half_the_runs_and_one_and_a_half_budgets():
    sizes = intervals.k_out_of_m_sizes
    # ten runs: at least 5 (half, and the fewest), 1.5 n rounded up from n = 4, m from n = 7 on and above m
    assert sizes(10, np.arange(1, 13)).tolist() == [5, 5, 5, 6, 8, 9, 10, 10, 10, 10, 10, 10]
    assert sizes(4, np.array([1, 2, 6])).tolist() == [4, 4, 4]  # the fewest is capped at m
    assert sizes(100, np.array([1, 10, 32, 33, 40, 66, 67, 150])).tolist() == [50, 50, 50, 52, 60, 100, 100, 100]
    # 1.5 n rounded up to a multiple of ceil(100 / 32) = 4 (n = 33: 50 -> 52); 10,000 runs take few sizes
    assert np.unique(sizes(10_000, np.arange(1, 10_001))).size <= intervals.K_OF_M_SIZES // 2 + 2


def test_mean_is_the_k_out_of_m_bootstrap_t_of_the_mean():
    """mean - a sd / sqrt(m), mean + b sd / sqrt(m): with t the studentized mean of the first k = ceil(m / 2)
    draws of resamples drawn after the bootstrap distribution's, (mean*_k - mean) / (sd*_k / sqrt(k)), and q the
    95 % quantile of |t|, a is the larger of q and the 97.5 % quantile of t, b the larger of q and the 97.5 %
    quantile of -t."""
    scores = np.sort(np.random.default_rng(7).lognormal(0.0, 1.0, 25))  # ranked: the order draws index
    m, b, k = scores.size, 80, 13
    res = mean_ci(scores, n_resamples=b, method=K_OF_M, rng=3, bounds=(None, None))
    draws = np.random.default_rng(3)
    np.testing.assert_allclose(
        res.bootstrap_distribution, scores[draws.integers(0, m, size=(b, m), dtype=np.int32)].mean(axis=1), rtol=1e-13
    )
    first = scores[draws.integers(0, m, size=(b, m), dtype=np.int32)[:, :k]]
    t = (first.mean(axis=1) - scores.mean()) / (first.std(axis=1) / np.sqrt(k))
    q = np.quantile(np.abs(t), 0.95)
    below, above = max(q, np.quantile(t, 0.975)), max(q, np.quantile(-t, 0.975))
    assert above > q  # a long right tail: resamples that miss the top runs reach far below, the interval above
    se = scores.std() / np.sqrt(m)
    assert res.confidence_interval.low == pytest.approx(scores.mean() - below * se, abs=1e-12)
    assert res.confidence_interval.high == pytest.approx(scores.mean() + above * se, abs=1e-12)


def test_band_reaches_as_far_as_the_intervals_on_each_side():
    """The simultaneous band's ends, below and above: the larger of the 95 % quantile of the largest |t| over the
    budgets and the 97.5 % quantile of the largest t (below) or -t (above), t the resamples' studentized U of
    their first k draws; so that it holds every interval of the curve."""
    val, test = runs(m=20)
    band = boo_n_curve_ci(val, test, n=[1, 4, 8, 10], n_resamples=300, method=K_OF_M, rng=0, bounds=(None, None))
    errors = band.studentized_errors
    t = (errors.resample_centres - errors.reference) / errors.resample_standard_errors
    reach = np.quantile(np.abs(t).max(axis=1), 0.95)
    below, above = max(reach, np.quantile(t.max(axis=1), 0.975)), max(reach, np.quantile((-t).max(axis=1), 0.975))
    assert above > reach
    least, most = errors.plausible_range
    centre, se = errors.centre, errors.standard_error
    np.testing.assert_allclose(band.simultaneous_low, np.maximum(centre - below * se, least), rtol=1e-9)
    np.testing.assert_allclose(band.simultaneous_high, np.minimum(centre + above * se, most), rtol=1e-9)
    assert np.all(band.simultaneous_low <= band.low) and np.all(band.high <= band.simultaneous_high)


@pytest.mark.filterwarnings("ignore::boontrack.exceptions.FewRunsWarning")  # the k draws taken as the data
def test_each_budget_reads_u_of_the_first_k_draws_of_the_same_resamples():
    val, test = runs()
    budgets = np.array([2, 5, 9])  # k = 6, 8 and 12 of 12 runs
    b = 40
    centre, error = intervals.k_out_of_m_pivots(RankedRuns(val, test, True), budgets, np.random.default_rng(2), b)
    order = np.argsort(val, kind="stable")
    draws = order[np.random.default_rng(2).integers(0, 12, size=(b, 12), dtype=np.int32)]  # runs, not positions
    for column, (n, k) in enumerate(zip(budgets, intervals.k_out_of_m_sizes(12, budgets))):
        for r in range(b):
            chosen = draws[r, :k]
            assert centre[r, column] == pytest.approx(unbiased_boo_n(val[chosen], test[chosen], int(n)), rel=1e-12)
        for r in range(3):  # se*_k is the delta-method standard error of the k draws taken as the data
            chosen = draws[r, :k]
            own = boo_n_ci(val[chosen], test[chosen], n=int(n), n_resamples=10, rng=0, bounds=(None, None))
            assert error[r, column] == pytest.approx(own.studentized_errors.standard_error, rel=1e-9)


def test_centre_and_distribution_are_studentized_u_s_and_the_band_holds_every_interval():
    val, test = runs(m=20)
    budgets = [1, 4, 8, 10]
    plain = boo_n_curve_ci(val, test, n=budgets, n_resamples=300, method="studentized-u", rng=4)
    ours = boo_n_curve_ci(val, test, n=budgets, n_resamples=300, method=K_OF_M, rng=4)
    np.testing.assert_array_equal(ours.bootstrap_distribution, plain.bootstrap_distribution)
    np.testing.assert_array_equal(ours.studentized_errors.centre, plain.studentized_errors.centre)
    np.testing.assert_array_equal(ours.studentized_errors.standard_error, plain.studentized_errors.standard_error)
    assert not np.array_equal(ours.studentized_errors.resample_centres, plain.studentized_errors.resample_centres)
    assert np.all(ours.simultaneous_low <= ours.low) and np.all(ours.high <= ours.simultaneous_high)
    assert np.all((ours.low <= ours.estimate) & (ours.estimate <= ours.high))


def test_same_seed_same_interval_whatever_the_batches_and_threads(monkeypatch):
    val, test = runs(m=30)
    first = boo_n_curve_ci(val, test, n=[2, 7, 12], n_resamples=200, method=K_OF_M, rng=11)
    monkeypatch.setattr(intervals, "bootstrap_indices", _in_batches_of(7))
    with using_threads(2):
        split = boo_n_curve_ci(val, test, n=[2, 7, 12], n_resamples=200, method=K_OF_M, rng=11)
    np.testing.assert_allclose(split.low, first.low, rtol=1e-12)
    np.testing.assert_allclose(split.high, first.high, rtol=1e-12)
    other = boo_n_curve_ci(val, test, n=[2, 7, 12], n_resamples=200, method=K_OF_M, rng=12)
    assert not np.array_equal(other.high, first.high)


def _in_batches_of(size: int):
    """bootstrap_indices with batches of ``size`` resamples: the same draws, other batches."""

    def batches(rng, m, n_resamples, work=None):
        for start in range(0, n_resamples, size):
            yield rng.integers(0, m, size=(min(size, n_resamples - start), m), dtype=np.int32)

    return batches


@pytest.mark.parametrize("bounds", [None, (None, None)], ids=["unit-interval", "unbounded"])
def test_interval_stays_in_the_bounds_and_constant_scores_collapse(bounds):
    rng = np.random.default_rng(3)
    val = np.clip(0.93 + rng.normal(0, 0.02, 12), 0, 1)
    test = np.clip(val + rng.normal(0, 0.005, 12), 0, 1)
    band = boo_n_curve_ci(val, test, n=[1, 5, 12], method=K_OF_M, n_resamples=400, rng=1, bounds=bounds)
    assert np.all((band.low <= band.estimate) & (band.estimate <= band.high))
    if bounds is None:
        assert band.bounds == (0.0, 1.0) and np.all(band.low >= 0.0) and np.all(band.high <= 1.0)
    with pytest.warns(ConstantScoresWarning):
        result = boo_n_ci([0.5] * 8, n=2, method=K_OF_M, n_resamples=50, rng=0)
    assert (result.confidence_interval.low, result.confidence_interval.high) == (0.5, 0.5)


def test_one_resampling_serves_the_percentile_interval_too():
    assert _shared_resampling((K_OF_M, "percentile", "studentized-u")) == {
        K_OF_M: [K_OF_M, "percentile"],
        "studentized-u": ["studentized-u"],
    }


def test_every_method_is_in_the_typed_choices():
    """The Literal types that type checkers and the docs read name the methods the validation accepts."""
    assert typing.get_args(Method) == CI_METHODS
    assert typing.get_args(typing.get_type_hints(Spec)["ci_method"]) == CI_METHODS


def test_groups_without_shared_seeds_are_compared_with_studentized_u_s_difference():
    """The default's bands do not make the difference of groups without shared seeds: their k-out-of-m pivots
    would give a wider, over-cautious interval (``bench_compare.py --groups``). The comparison resamples the two
    groups for ``studentized-u``'s difference instead, which reuses the bands when they are ``studentized-u``'s."""
    rng = np.random.default_rng(8)
    val = np.concatenate([rng.normal(0.8, 0.02, 20), rng.normal(0.81, 0.02, 20)])
    frame = pd.DataFrame(
        {"val": val, "test": val + rng.normal(0, 0.01, 40), "model": ["a"] * 20 + ["b"] * 20, "seed": range(40)}
    )
    widths = {}
    for method in (K_OF_M, "studentized-u"):
        spec = Spec(
            val="val",
            test="test",
            group_by=("model",),
            seed_column="seed",
            n=(1, 5),
            ci_method=method,
            n_resamples=9999,
        )
        table = RunTable.from_frame(frame, spec)
        (comparison,) = analyze(table, spec).comparisons
        assert not comparison.paired
        widths[method] = comparison.boo_n_difference[5].ci_high - comparison.boo_n_difference[5].ci_low
        bands = {  # independent generators, as independent_difference asks
            group: boo_n_curve_ci(*table.arrays(group), n=[1, 5], method=method, n_resamples=9999, rng=seed)
            for group, seed in (("a", 7), ("b", 8))
        }
        from_bands = independent_difference(bands["b"].at(5), bands["a"].at(5)).confidence_interval
        widths[method, "bands"] = from_bands.high - from_bands.low
    # Monte Carlo noise in a width of 9,999 resamples is a few per cent; the k-out-of-m bands' is far wider here
    assert widths[K_OF_M] == pytest.approx(widths["studentized-u"], rel=0.05)
    assert widths[K_OF_M, "bands"] > 1.2 * widths[K_OF_M]
    assert widths["studentized-u", "bands"] == pytest.approx(widths["studentized-u"], rel=0.05)


@pytest.mark.filterwarnings("ignore::boontrack.exceptions.FewRunsWarning")  # the k draws taken as the data
def test_tied_scores_count_each_size_from_the_smaller_one():
    """Validation scores tied in blocks (accuracies on 40 examples): each size's U and se* are those of its first
    k draws taken as the data, though each size's counts add the draws between it and the smaller size."""
    rng = np.random.default_rng(4)
    val = rng.binomial(40, 0.7, 16) / 40
    test = rng.binomial(40, 0.7, 16) / 40
    budgets = np.array([1, 4, 6, 8, 11])  # k = 8, 8, 9, 12 and 16 of 16 runs
    runs = RankedRuns(val, test, True)
    assert runs.blocks < val.size
    centre, error = intervals.k_out_of_m_pivots(runs, budgets, np.random.default_rng(5), 6)
    draws = np.random.default_rng(5).integers(0, 16, size=(6, 16), dtype=np.int32)
    order = np.lexsort((test, val))  # worst to best by validation, then by test: the ranking draws index
    for column, (n, k) in enumerate(zip(budgets, intervals.k_out_of_m_sizes(16, budgets))):
        for r in range(6):
            chosen = order[draws[r, :k]]
            own = boo_n_ci(val[chosen], test[chosen], n=int(n), n_resamples=10, rng=0, bounds=(None, None))
            assert centre[r, column] == pytest.approx(boo_n(val[chosen], test[chosen], n=int(n), estimator="U"))
            assert error[r, column] == pytest.approx(own.studentized_errors.standard_error, rel=1e-9, abs=1e-15)


def test_replicated_comparisons_take_only_the_differences_methods():
    """The replicated comparisons compute studentized-u's or studentized's difference: another studentized name
    is refused, not computed as studentized-u's."""
    from boontrack.simulate import comparison_rates, population

    with pytest.raises(ValueError, match="`method` must be one of 'studentized-u', 'studentized'; got"):
        comparison_rates(population("normal"), m=10, method=K_OF_M, replications=2, n_resamples=9)
