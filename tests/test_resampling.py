"""Bootstrap intervals of Boo_n, curves and the mean (boontrack.resampling).

The bootstrap distribution is checked against resamples materialised here, one by one, and fed to
:func:`boontrack.boo_n`: resample r is row r of ``rng.integers(0, m, size=(B, m), dtype=int32)`` (the documented
protocol), so the same seed gives the same resamples. BCa is checked against its textbook formulas with an
explicit leave-one-out loop, and against ``scipy.stats.bootstrap``: around ``boo_n`` with the same seed (scipy
draws the same run indices, so distribution and intervals agree to rounding) and for the mean at large B.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
import threadpoolctl
from scipy import special, stats

from boontrack import _bootstrap, resampling
from boontrack._bootstrap import intervals, kernels
from boontrack.estimators import boo_n
from boontrack.exceptions import ConstantScoresWarning, ExtrapolationWarning, FewRunsWarning
from boontrack.resampling import boo_n_ci, boo_n_curve_ci, default_budgets, mean_ci

from oracles import ranked

E_MAX_5_STD_NORMAL = 1.162964  # E[max of 5 N(0, 1)], Bajgar et al. 2018, Table 4


def tied_runs(m: int = 40, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Validation scores rounded to 2 decimals (many ties), correlated test scores."""
    rng = np.random.default_rng(seed)
    val = np.round(rng.normal(0.7, 0.02, m), 2)
    test = val + rng.normal(0.0, 0.01, m)
    return val, test


def materialised(seed: int, m: int, n_resamples: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, m, size=(n_resamples, m), dtype=np.int32)


@pytest.fixture(scope="module")
def cbt(shared_data):
    frame = pd.read_csv(shared_data / "boon-paper" / "cbt_fixed_hyppar.csv")
    frame = frame[frame["log_path"].str.contains("/cbt-dist/", regex=False) & (frame["epoch"] > 0)]
    return frame["valid.accuracy"].to_numpy(float), frame["accuracy"].to_numpy(float)


# ----------------------------------------------------------------------------------------------------------
# Estimate and distribution


@pytest.mark.parametrize("estimator", ["V", "U", "W"])
@pytest.mark.parametrize("maximize", [True, False])
def test_estimate_is_boo_n(estimator, maximize):
    val, test = tied_runs()
    res = boo_n_ci(val, test, n=7, estimator=estimator, maximize=maximize, n_resamples=50, rng=1)
    assert res.estimate == pytest.approx(boo_n(val, test, n=7, estimator=estimator, maximize=maximize), abs=1e-14)


@pytest.mark.parametrize("estimator", ["V", "U", "W"])
@pytest.mark.parametrize("maximize", [True, False])
def test_distribution_matches_materialised_resamples(estimator, maximize):
    val, test = ranked(*tied_runs(), maximize)
    n_resamples = 300
    res = boo_n_ci(val, test, n=5, estimator=estimator, maximize=maximize, n_resamples=n_resamples, rng=11)
    expected = [
        boo_n(val[i], test[i], n=5, estimator=estimator, maximize=maximize)
        for i in materialised(11, val.size, n_resamples)
    ]
    assert res.bootstrap_distribution.shape == (n_resamples,)
    np.testing.assert_allclose(res.bootstrap_distribution, expected, rtol=0, atol=1e-12)


def test_distribution_on_paper_data_matches_materialised_resamples(cbt):
    val, test = ranked(*cbt)
    res = boo_n_ci(val, test, n=5, n_resamples=200, rng=3)
    expected = [boo_n(val[i], test[i], n=5) for i in materialised(3, val.size, 200)]
    np.testing.assert_allclose(res.bootstrap_distribution, expected, rtol=0, atol=1e-12)


def test_batches_follow_each_other_in_the_stream(monkeypatch):
    val, test = tied_runs()
    whole = boo_n_ci(val, test, n=3, n_resamples=250, rng=5).bootstrap_distribution
    monkeypatch.setattr(kernels, "BATCH_ELEMENTS", 7 * val.size)
    monkeypatch.setattr(kernels, "MIN_BATCH", 1)  # batches of 7 resamples
    batched = boo_n_ci(val, test, n=3, n_resamples=250, rng=5).bootstrap_distribution
    np.testing.assert_array_equal(whole, batched)
    monkeypatch.setattr(kernels, "CACHE_ELEMENTS", 2 * val.size)  # counted 2 resamples at a time
    np.testing.assert_array_equal(whole, boo_n_ci(val, test, n=3, n_resamples=250, rng=5).bootstrap_distribution)


def test_batches_are_bounded_in_memory_at_any_number_of_runs(monkeypatch):
    """A batch holds about BATCH_ELEMENTS draws, down to one resample of m runs: memory does not grow with m."""
    drawn = []
    draw = kernels.draw_indices

    def recording(rng, m, size):
        drawn.append(size * m)
        return draw(rng, m, size)

    monkeypatch.setattr(kernels, "draw_indices", recording)
    monkeypatch.setattr(kernels, "BATCH_ELEMENTS", 1000)
    boo_n_ci(np.arange(300.0), n=2, n_resamples=10, method="percentile", rng=0)  # 3 resamples per batch
    boo_n_ci(np.arange(2000.0), n=2, n_resamples=4, method="percentile", rng=0)  # one
    assert drawn == [900, 900, 900, 300, 2000, 2000, 2000, 2000]


def test_kernels_run_with_one_blas_thread(monkeypatch):
    """BLAS threads multiplied the CPU time of the kernels' small matrix products: they run with one, and the
    caller's setting is restored afterwards."""
    if not any(pool["user_api"] == "blas" for pool in threadpoolctl.threadpool_info()):
        pytest.skip("no BLAS library loaded")
    seen = []
    falls = kernels._falls

    def probed(*args, **kwargs):  # called inside every evaluation kernel of numpy's
        seen.extend(pool["num_threads"] for pool in threadpoolctl.threadpool_info() if pool["user_api"] == "blas")
        return falls(*args, **kwargs)

    monkeypatch.setattr(kernels, "_falls", probed)
    monkeypatch.setattr(kernels, "BATCH_ELEMENTS", 200 * 5)  # 10 batches: kernels overlap on threads
    val, test = np.arange(200.0), np.arange(200.0)[::-1].copy()  # no ties: the matrix-product kernel
    with threadpoolctl.threadpool_limits(2, user_api="blas"):
        for threads in (1, 3):
            with _bootstrap.using_threads(threads):
                for method in ("studentized", "percentile"):
                    boo_n_curve_ci(val, test, n=[1, 2, 5], n_resamples=50, method=method, rng=0)
        after = [pool["num_threads"] for pool in threadpoolctl.threadpool_info() if pool["user_api"] == "blas"]
    assert seen and set(seen) == {1}
    assert set(after) == {2}


@pytest.mark.parametrize("method", ["studentized", "percentile", "bca"])
def test_threads_give_the_same_numbers(monkeypatch, method):
    """The batches are drawn in order in the calling thread: any number of threads gives the same resamples."""
    monkeypatch.setattr(kernels, "BATCH_ELEMENTS", 40 * 9)  # 9 resamples per batch: 23 batches
    val, test = tied_runs()
    results = []
    for threads in (1, 2, 5):
        with _bootstrap.using_threads(threads):
            results.append(boo_n_curve_ci(val, test, n=[1, 3, 10], n_resamples=200, method=method, rng=4))
    for other in results[1:]:
        np.testing.assert_array_equal(other.bootstrap_distribution, results[0].bootstrap_distribution)
        np.testing.assert_array_equal(other.low, results[0].low)
        np.testing.assert_array_equal(other.simultaneous_high, results[0].simultaneous_high)


def test_threads_draw_a_bounded_number_of_batches_ahead():
    """Memory stays bounded: with k threads at most 2k + 1 batches are drawn and not yet evaluated."""
    drawn, evaluated, ahead = [], [], []

    def batches():
        for index in range(40):
            drawn.append(index)
            ahead.append(len(drawn) - len(evaluated))
            yield index

    def kernel(index):
        evaluated.append(index)
        return index * index

    with _bootstrap.using_threads(2):
        assert _bootstrap.evaluate_batches(kernel, batches()) == [k * k for k in range(40)]
    assert max(ahead) <= 2 * 2 + 1
    with _bootstrap.using_threads(None):
        assert _bootstrap.thread_count() == _bootstrap.available_cpus() >= 1


def test_percentile_interval_is_numpy_quantiles():
    val, test = tied_runs()
    res = boo_n_ci(val, test, n=5, confidence_level=0.9, n_resamples=999, method="percentile", rng=2)
    low, high = np.quantile(res.bootstrap_distribution, [0.05, 0.95])
    assert (res.confidence_interval.low, res.confidence_interval.high) == (low, high)
    assert res.standard_error == pytest.approx(np.std(res.bootstrap_distribution, ddof=1))
    assert (res.method, res.confidence_level, res.n_resamples) == ("percentile", 0.9, 999)


def test_test_none_means_test_equals_val():
    val, _ = tied_runs()
    assert (
        boo_n_ci(val, n=4, n_resamples=100, rng=0).bootstrap_distribution
        == boo_n_ci(val, val, n=4, n_resamples=100, rng=0).bootstrap_distribution
    ).all()


# ----------------------------------------------------------------------------------------------------------
# BCa


def efron_bca(dist: np.ndarray, estimate: float, jackknife: np.ndarray, level: float) -> tuple[float, float]:
    """BCa written from Efron & Tibshirani (1993), eqs. 14.9-14.15, independently of the module."""
    z0 = special.ndtri((np.mean(dist < estimate) + np.mean(dist <= estimate)) / 2)
    d = jackknife.mean() - jackknife
    a = (d**3).sum() / (6 * ((d**2).sum()) ** 1.5)
    z = stats.norm.ppf([(1 - level) / 2, (1 + level) / 2])
    probs = stats.norm.cdf(z0 + (z0 + z) / (1 - a * (z0 + z)))
    return tuple(np.quantile(dist, probs))


@pytest.mark.parametrize("estimator", ["V", "U", "W"])
def test_bca_from_explicit_leave_one_out_loop(estimator):
    val, test = ranked(*tied_runs(m=30, seed=4))
    res = boo_n_ci(val, test, n=4, estimator=estimator, method="bca", n_resamples=2000, rng=8)
    leave_one_out = np.array(
        [boo_n(np.delete(val, i), np.delete(test, i), n=4, estimator=estimator) for i in range(val.size)]
    )
    jackknife = intervals.curve_distribution(
        val, test, True, np.array([4]), estimator, True, 1, "bca", np.random.default_rng(0)
    ).jackknife
    np.testing.assert_allclose(jackknife[:, 0], leave_one_out, rtol=0, atol=1e-12)
    low, high = efron_bca(res.bootstrap_distribution, res.estimate, leave_one_out, 0.95)
    assert res.confidence_interval.low == pytest.approx(low, abs=1e-12)
    assert res.confidence_interval.high == pytest.approx(high, abs=1e-12)
    # same resamples as the percentile method: only the interval differs
    plain = boo_n_ci(val, test, n=4, estimator=estimator, n_resamples=2000, method="percentile", rng=8)
    np.testing.assert_array_equal(plain.bootstrap_distribution, res.bootstrap_distribution)


@pytest.mark.parametrize("estimator", ["V", "U", "W"])
@pytest.mark.parametrize("maximize", [True, False])
@pytest.mark.parametrize("method", ["percentile", "BCa"])
def test_same_resamples_and_interval_as_scipy_bootstrap_around_boo_n(estimator, maximize, method):
    """scipy.stats.bootstrap(paired=True) draws the same run indices from the same seed, so the bootstrap
    distribution, BCa's jackknife and the intervals must agree to rounding (given the runs ranked, the order
    both index)."""
    val, test = ranked(*tied_runs(m=30, seed=2), maximize)
    ref = stats.bootstrap(
        (val, test),
        lambda v, t: boo_n(v, t, n=4, estimator=estimator, maximize=maximize),
        paired=True,
        vectorized=False,
        method=method,
        n_resamples=300,
        rng=17,
    )
    ours = boo_n_ci(
        val, test, n=4, estimator=estimator, maximize=maximize, method=method.lower(), n_resamples=300, rng=17
    )
    np.testing.assert_allclose(ours.bootstrap_distribution, ref.bootstrap_distribution, rtol=0, atol=1e-12)
    assert ours.confidence_interval.low == pytest.approx(ref.confidence_interval.low, abs=1e-12)
    assert ours.confidence_interval.high == pytest.approx(ref.confidence_interval.high, abs=1e-12)
    assert ours.standard_error == pytest.approx(ref.standard_error, abs=1e-12)


def test_bca_mean_agrees_with_scipy():
    # skewed scores, so that BCa moves away from the percentile interval by more than the tolerance
    scores = 0.6 + np.random.default_rng(12).exponential(0.05, 25)
    ours = mean_ci(scores, method="bca", n_resamples=200_000, rng=1).confidence_interval
    ref = stats.bootstrap((scores,), np.mean, method="BCa", n_resamples=200_000, rng=2).confidence_interval
    percentile = mean_ci(scores, n_resamples=200_000, rng=1).confidence_interval
    assert abs(ours.low - ref.low) < 1e-3 and abs(ours.high - ref.high) < 1e-3
    assert abs(ours.low - percentile.low) + abs(ours.high - percentile.high) > 2e-3


# ----------------------------------------------------------------------------------------------------------
# Smoothed bootstrap


def smoothed_reference(val, test, n, seed, n_resamples, maximize=True):
    """Footnote 11: resample pairs, add N(0, h^2) per column (Scott: h = sd m^-1/5); one resample at a time."""
    rng = np.random.default_rng(seed)
    m = val.size
    h_val, h_test = val.std(ddof=1) * m**-0.2, test.std(ddof=1) * m**-0.2
    idx = rng.integers(0, m, size=(n_resamples, m), dtype=np.int32)
    noise_val = rng.standard_normal((n_resamples, m))
    noise_test = rng.standard_normal((n_resamples, m))
    return np.array(
        [
            boo_n(val[i] + h_val * zv, test[i] + h_test * zt, n=n, maximize=maximize)
            for i, zv, zt in zip(idx, noise_val, noise_test)
        ]
    )


@pytest.mark.parametrize("maximize", [True, False])
def test_smoothed_matches_one_resample_at_a_time(maximize):
    val, test = ranked(*tied_runs(), maximize)
    res = boo_n_ci(val, test, n=5, maximize=maximize, method="smoothed", n_resamples=200, rng=6)
    np.testing.assert_allclose(
        res.bootstrap_distribution, smoothed_reference(val, test, 5, 6, 200, maximize), rtol=0, atol=1e-12
    )


def test_smoothed_is_reproducible_and_sane(cbt):
    val, test = cbt
    first = boo_n_ci(val, test, n=5, method="smoothed", n_resamples=2000, rng=9)
    again = boo_n_ci(val, test, n=5, method="smoothed", n_resamples=2000, rng=9)
    plain = boo_n_ci(val, test, n=5, n_resamples=2000, rng=9)
    np.testing.assert_array_equal(first.bootstrap_distribution, again.bootstrap_distribution)
    assert first.estimate == plain.estimate
    assert first.confidence_interval.low < first.estimate < first.confidence_interval.high
    width = first.confidence_interval.high - first.confidence_interval.low
    plain_width = plain.confidence_interval.high - plain.confidence_interval.low
    assert 0.5 * plain_width < width < 3 * plain_width


def test_smoothed_with_constant_validation_scores_shares_ties():
    # h = 0 for a constant column: every resample is one tie block, so Boo_n is the resample's mean test score
    val = np.full(12, 0.5)
    test = np.linspace(0.6, 0.7, 12)
    res = boo_n_ci(val, test, n=5, method="smoothed", n_resamples=100, rng=3)
    rng = np.random.default_rng(3)
    idx = rng.integers(0, 12, size=(100, 12), dtype=np.int32)
    rng.standard_normal((100, 12))
    noisy_test = test[idx] + test.std(ddof=1) * 12**-0.2 * rng.standard_normal((100, 12))
    np.testing.assert_allclose(res.bootstrap_distribution, noisy_test.mean(axis=1), rtol=0, atol=1e-12)


# ----------------------------------------------------------------------------------------------------------
# Curves and the mean


@pytest.mark.parametrize("gather_work", [10**9, 0], ids=["gathered-weights", "matrix-product"])
def test_curve_matches_materialised_resamples_at_every_budget(monkeypatch, gather_work):
    monkeypatch.setattr(kernels, "GATHER_WORK", gather_work)  # both ways of weighting the blocks
    val, test = ranked(*tied_runs(m=60))
    budgets = [1, 2, 5, 13, 40, 60]
    band = boo_n_curve_ci(val, test, n=budgets, n_resamples=150, method="percentile", rng=21)
    idx = materialised(21, val.size, 150)
    expected = np.array([boo_n(val[i], test[i], n=budgets) for i in idx])
    assert band.n.tolist() == budgets
    np.testing.assert_allclose(band.estimate, boo_n(val, test, n=budgets), rtol=0, atol=1e-14)
    np.testing.assert_allclose(band.low, np.quantile(expected, 0.025, axis=0), rtol=0, atol=1e-12)
    np.testing.assert_allclose(band.high, np.quantile(expected, 0.975, axis=0), rtol=0, atol=1e-12)
    np.testing.assert_allclose(band.standard_error, expected.std(axis=0, ddof=1), rtol=0, atol=1e-12)


def test_curve_at_large_budgets_on_paper_data(cbt):
    # large n only weighs the top ranks: the skipped ranks must not change the values
    val, test = ranked(*cbt)
    budgets = [1, 50, 200, 370]
    band = boo_n_curve_ci(val, test, n=budgets, estimator="U", n_resamples=40, method="percentile", rng=2)
    expected = np.array([boo_n(val[i], test[i], n=budgets, estimator="U") for i in materialised(2, 370, 40)])
    np.testing.assert_allclose(band.low, np.quantile(expected, 0.025, axis=0), rtol=0, atol=1e-12)
    np.testing.assert_allclose(band.high, np.quantile(expected, 0.975, axis=0), rtol=0, atol=1e-12)


def test_curve_point_equals_scalar_interval():
    val, test = tied_runs()
    band = boo_n_curve_ci(val, test, n=[5], method="bca", n_resamples=500, rng=4)
    single = boo_n_ci(val, test, n=5, method="bca", n_resamples=500, rng=4)
    assert (band.low[0], band.high[0]) == (single.confidence_interval.low, single.confidence_interval.high)


@pytest.mark.parametrize(("estimator", "method"), [("V", "studentized-u"), ("V", "studentized"), ("V", "percentile")])
def test_a_summary_band_evaluates_the_distribution_at_the_reported_budgets_only(monkeypatch, estimator, method):
    monkeypatch.setattr(intervals, "STUDENTIZED_WORK", 1)  # 1,999 of the 2,999 resamples studentized
    rng = np.random.default_rng(3)
    val = rng.normal(0.8, 0.01, 60)
    test = val + rng.normal(0.0, 0.01, 60)
    n, reported = np.arange(1, 31), [1, 5, 10]
    options = dict(estimator=estimator, confidence_level=0.95, n_resamples=2999, method=method, rng=5)
    band = resampling.summary_band(val, test, reported, n=n, maximize=True, bounds=None, **options)
    full = boo_n_curve_ci(val, test, n=n, **options)
    for name in ("n", "estimate", "trustworthy"):
        np.testing.assert_array_equal(getattr(band, name), getattr(full, name))
    at = np.isin(n, reported)
    # a studentized summary band studentizes its reported budgets on every resample and the rest of its grid on
    # the first 999 (the public band every budget of its grid on every resample): their reported ends are equal
    exact = at if full.studentized_errors is not None else np.ones(n.size, bool)
    for name in ("low", "high"):
        np.testing.assert_array_equal(getattr(band, name)[exact], getattr(full, name)[exact])
    if band.studentized_errors is not None:
        errors = band.studentized_errors
        unread = ~at[errors.columns]
        assert unread.any() and np.isfinite(errors.resample_centres[:999]).all()
        assert np.isnan(errors.resample_centres[999:, unread]).all()
        assert np.isfinite(errors.resample_centres[999:, ~unread]).all()
    np.testing.assert_allclose(band.bootstrap_distribution[:, at], full.bootstrap_distribution[:, at], rtol=1e-13)
    np.testing.assert_allclose(band.standard_error[at], full.standard_error[at], rtol=1e-12)
    for budget in reported:
        ours, theirs = band.at(budget), full.at(budget)
        assert ours.confidence_interval == theirs.confidence_interval and np.isfinite(ours.bootstrap_distribution).all()
    others = band.bootstrap_distribution[:, ~at]
    if method == "percentile":  # its intervals are the distribution's quantiles: every budget is evaluated
        np.testing.assert_allclose(others, full.bootstrap_distribution[:, ~at], rtol=1e-13)
    else:  # the intervals come from the pivot: the statistic is not evaluated at the other budgets
        assert np.isnan(others).all() and np.isnan(band.standard_error[~at]).all()


def test_default_budgets():
    assert default_budgets(7).tolist() == list(range(1, 8))
    assert default_budgets(200).tolist() == list(range(1, 201))
    for m in (201, 370, 5000, 10**6):
        budgets = default_budgets(m, method="percentile")
        assert budgets.size == 200 and budgets[0] == 1 and budgets[-1] == m
        assert (np.diff(budgets) > 0).all()
        ratios = budgets[1:] / budgets[:-1]
        assert ratios.max() < 2 * (m ** (1 / 199))  # log-spaced: no step much coarser than the grid
    val, test = tied_runs(m=30)
    assert boo_n_curve_ci(val, test, n_resamples=20, rng=0).n.tolist() == list(range(1, 31))
    bca_u = boo_n_curve_ci(val, test, estimator="U", method="bca", n_resamples=20, rng=0)
    assert bca_u.n.tolist() == list(range(1, 30))  # the jackknife's m - 1 runs bound U
    with pytest.raises(ValueError, match="`m` must be an integer >= 1, got 0"):
        default_budgets(0)
    with pytest.raises(ValueError, match="`estimator` must be one of 'V', 'U', 'W'; got 'X'"):
        default_budgets(10, estimator="X")
    with pytest.raises(
        ValueError,
        match="`method` must be one of 'studentized-u-farther', 'studentized-u', 'studentized-u-k-of-m', "
        "'studentized-u-calibrated', 'studentized', 'percentile', 'bca', 'smoothed'; got 'basic'",
    ):
        default_budgets(10, method="basic")


def test_mean_ci_is_bootstrap_of_the_mean():
    scores = np.sort(np.random.default_rng(5).normal(0.8, 0.01, 35))  # ranked: the order draws index
    res = mean_ci(scores, n_resamples=300, rng=13)
    assert res.estimate == pytest.approx(scores.mean(), abs=1e-15)
    np.testing.assert_allclose(
        res.bootstrap_distribution, scores[materialised(13, 35, 300)].mean(axis=1), rtol=0, atol=1e-14
    )


@pytest.mark.slow
def test_coverage_of_95_percent_intervals_on_normal_data():
    """Coverage of the percentile interval of the mean and of Boo_5 (m = 50 normal runs, test = val)."""
    m, experiments, mu, sigma = 50, 1000, 0.8, 0.01
    true_boo_5 = mu + sigma * E_MAX_5_STD_NORMAL
    rng = np.random.default_rng(2024)
    hits = {"mean": 0, "boo_5": 0}
    for _ in range(experiments):
        scores = rng.normal(mu, sigma, m)
        mean_iv = mean_ci(scores, n_resamples=999, method="percentile", rng=rng).confidence_interval
        boo_iv = boo_n_ci(scores, n=5, n_resamples=999, method="percentile", rng=rng).confidence_interval
        hits["mean"] += mean_iv.low <= mu <= mean_iv.high
        hits["boo_5"] += boo_iv.low <= true_boo_5 <= boo_iv.high
    coverage = {k: v / experiments for k, v in hits.items()}
    print(f"\ncoverage of nominal 95% percentile intervals, m={m}, {experiments} experiments: {coverage}")
    assert 0.85 <= coverage["mean"] <= 0.99
    assert 0.85 <= coverage["boo_5"] <= 0.99


# ----------------------------------------------------------------------------------------------------------
# Randomness, degenerate data, warnings


def test_same_seed_same_answer_and_global_rng_untouched():
    val, test = tied_runs()
    state = np.random.get_state()
    for method in ("studentized", "percentile", "bca", "smoothed"):
        a = boo_n_ci(val, test, n=3, method=method, n_resamples=200, rng=42)
        b = boo_n_ci(val, test, n=3, method=method, n_resamples=200, rng=np.random.default_rng(42))
        np.testing.assert_array_equal(a.bootstrap_distribution, b.bootstrap_distribution)
        assert a.confidence_interval == b.confidence_interval
    boo_n_curve_ci(val, test, n_resamples=50, rng=1)
    mean_ci(val, n_resamples=50)
    after = np.random.get_state()
    assert state[0] == after[0] and (state[1] == after[1]).all() and state[2:] == after[2:]


def test_generator_is_advanced_not_reset():
    val, test = tied_runs()
    rng = np.random.default_rng(0)
    first = boo_n_ci(val, test, n_resamples=100, rng=rng).bootstrap_distribution
    second = boo_n_ci(val, test, n_resamples=100, rng=rng).bootstrap_distribution
    assert not np.array_equal(first, second)


@pytest.mark.parametrize("method", ["percentile", "bca", "smoothed"])
def test_constant_scores_collapse_without_nan(method):
    scores = np.full(15, 0.7)  # 0.7 has no exact binary form: sums of it would round
    with pytest.warns(ConstantScoresWarning, match="all test scores are equal"):
        res = boo_n_ci(scores, n=5, method=method, n_resamples=200, rng=0)
    assert res.confidence_interval == resampling.ConfidenceInterval(0.7, 0.7)
    assert res.estimate == 0.7 and res.standard_error == 0.0
    with pytest.warns(ConstantScoresWarning):
        band = boo_n_curve_ci(scores, method=method, n_resamples=50, rng=0)
    assert np.isfinite(np.r_[band.low, band.high, band.standard_error]).all()
    assert (band.low == 0.7).all() and (band.high == 0.7).all() and (band.standard_error == 0).all()
    with pytest.warns(ConstantScoresWarning):
        tied_val = boo_n_ci(np.linspace(0.5, 0.6, 15), scores, n=3, method=method, n_resamples=50, rng=0)
    assert tied_val.confidence_interval == resampling.ConfidenceInterval(0.7, 0.7)


def test_few_runs_warn():
    with pytest.warns(FewRunsWarning, match=r"^only 5 runs: 95 % intervals covered 92-98 % at 4-8 runs"):
        boo_n_ci([0.1, 0.2, 0.3, 0.4, 0.5], n=2, n_resamples=10, rng=0)
    with pytest.warns(FewRunsWarning):
        mean_ci([0.1, 0.2, 0.3], n_resamples=10, rng=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        boo_n_ci(np.arange(10.0), n=5, n_resamples=10, rng=0)  # 10 runs, n = m / 2, symmetric scores
        boo_n_ci(np.arange(8.0), n=2, n_resamples=10, rng=0)


def test_few_runs_warning_is_keyed_to_n_over_m_not_to_the_tail():
    with pytest.warns(FewRunsWarning, match=r"^n = 6 is above m / 2 = 5: intervals there are wide"):
        boo_n_ci(np.arange(10.0), n=6, n_resamples=10, rng=0)
    with warnings.catch_warnings():  # a band flags those budgets instead (CurveBand.trustworthy)
        warnings.simplefilter("error")
        assert boo_n_curve_ci(np.arange(20.0), n=[1, 12], n_resamples=10, rng=0).trustworthy.tolist() == [1, 0]
    # 19 equal scores and one far above: skewness 4.1 towards better scores. Sweeps so skewed covered as often as
    # the others (bench_coverage.py --flags-only), so nothing is said of them
    tail = np.r_[np.zeros(19), 1.0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        boo_n_ci(np.arange(20.0), tail, n=3, n_resamples=10, rng=0)


def test_extrapolation_warns_for_v_and_w():
    val, test = tied_runs(m=12)
    with pytest.warns(ExtrapolationWarning, match="n = 20 > m = 12"):
        boo_n_ci(val, test, n=20, n_resamples=10, rng=0)
    with pytest.warns(ExtrapolationWarning):
        boo_n_curve_ci(val, test, n=[1, 30], estimator="W", n_resamples=10, rng=0)


# ----------------------------------------------------------------------------------------------------------
# Bad input


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"confidence_level": 0.0}, r"`confidence_level` must be in \(0, 1\), got 0.0"),
        ({"confidence_level": 1.0}, r"`confidence_level` must be in \(0, 1\)"),
        ({"confidence_level": "high"}, r"`confidence_level` must be a number in \(0, 1\), got 'high'"),
        ({"n_resamples": 0}, r"`n_resamples` must be an integer >= 1 or 'auto', got 0"),
        ({"n_resamples": 99.5}, r"`n_resamples` must be an integer >= 1 or 'auto', got 99.5"),
        ({"n_resamples": True}, r"`n_resamples` must be an integer >= 1 or 'auto', got True"),
        (
            {"method": "basic"},
            r"`method` must be one of 'studentized-u-farther', 'studentized-u', 'studentized-u-k-of-m', "
            r"'studentized-u-calibrated', "
            r"'studentized', 'percentile', 'bca', 'smoothed'; got 'basic'",
        ),
        ({"estimator": "X"}, r"`estimator` must be one of 'V', 'U', 'W'; got 'X'"),
        ({"n": 0}, r"`n` must be an integer >= 1, got 0"),
        ({"n": [2, 3]}, r"`n` must be a single budget"),
        ({"n": 13, "estimator": "U"}, r"`n` = 13 exceeds the number of runs m = 12"),
        ({"n": 12, "estimator": "U", "method": "bca"}, r"needs n <= m - 1 = 11"),
        ({"maximize": "yes"}, r"`maximize` must be True or False, got 'yes'"),
        ({"rng": "seed"}, r"`rng` must be None, an int seed or a numpy.random.Generator, got str"),
    ],
)
def test_boo_n_ci_rejects(kwargs, message):
    val, test = tied_runs(m=12)
    with pytest.raises(ValueError, match=message):
        boo_n_ci(val, test, **{"n_resamples": 10, **kwargs})


def test_bad_scores_are_rejected():
    with pytest.raises(ValueError, match="`val` must be finite; position 1 is"):
        boo_n_ci([0.1, np.nan, 0.3], n=1)
    with pytest.raises(ValueError, match="`val` and `test` must have the same length, got 3 and 2"):
        boo_n_ci([0.1, 0.2, 0.3], [0.1, 0.2], n=1)
    with pytest.raises(ValueError, match="`method`='bca' needs at least 2 runs for its jackknife, got 1"):
        mean_ci([0.5], method="bca")
    with pytest.raises(ValueError, match="`scores` is empty"):
        mean_ci([])
    with pytest.raises(ValueError, match=r"`n\[1\]` must be an integer >= 1, got -3"):
        boo_n_curve_ci(np.arange(12.0), n=[2, -3])
    with pytest.raises(ValueError, match="`n` = 13 exceeds the number of runs m = 12"):
        boo_n_curve_ci(np.arange(12.0), n=[1, 13], estimator="U")
    with pytest.raises(ValueError, match=r"`confidence_level` must be in \(0, 1\), got 2"):
        mean_ci(np.arange(12.0), confidence_level=2)


def test_band_at_a_budget_is_boo_n_ci_on_the_same_resamples():
    gen = np.random.default_rng(11)
    val, test = gen.normal(size=60), gen.normal(size=60)
    band = boo_n_curve_ci(val, test, n=[1, 3, 7], n_resamples=500, method="bca", rng=5)
    for k in (1, 3, 7):
        single = boo_n_ci(val, test, n=k, n_resamples=500, method="bca", rng=5)
        at = band.at(k)
        np.testing.assert_allclose(at.bootstrap_distribution, single.bootstrap_distribution, rtol=0, atol=1e-12)
        assert at.estimate == pytest.approx(single.estimate, abs=1e-12)
        assert at.confidence_interval.low == pytest.approx(single.confidence_interval.low, abs=1e-12)
        assert at.confidence_interval.high == pytest.approx(single.confidence_interval.high, abs=1e-12)
    with pytest.raises(ValueError, match=r"`n` = 4 is not a budget of this band"):
        band.at(4)


def test_default_budgets_stop_at_m_minus_1_for_u_with_bca():
    # the jackknife evaluates U on m - 1 runs, where n = m is undefined
    assert default_budgets(7, estimator="U", method="bca").tolist() == list(range(1, 7))
    assert default_budgets(7, estimator="V", method="bca").tolist() == list(range(1, 8))
    assert default_budgets(7, estimator="U", method="percentile").tolist() == list(range(1, 8))
    assert default_budgets(1000, estimator="U", method="bca")[-1] == 999


# ----------------------------------------------------------------------------------------------------------
# Studentized (bootstrap-t) intervals and simultaneous bands


def weighted_boo_n_v(val: np.ndarray, test: np.ndarray, weights: np.ndarray, n: int) -> float:
    """Boo_n (V) of runs carrying ``weights`` (summing to 1): sum over tie blocks of (Q_b^n - Q_{b-1}^n) times
    the block's weighted mean test score, written here run block by run block."""
    total, below = 0.0, 0.0
    for value in np.unique(val):
        block = val == value
        share = weights[block].sum()
        if share > 0:
            total += ((below + share) ** n - below**n) * (weights[block] @ test[block]) / share
        below += share
    return total


def delta_method_se(val: np.ndarray, test: np.ndarray, counts: np.ndarray, n: int) -> float:
    """sqrt(sum_i p_i L_i^2 / m), L_i the numerical derivative of the weighted Boo_n towards run i."""
    m = counts.sum()
    p = counts / m
    step = 1e-6
    influence = np.empty(val.size)
    for i in range(val.size):
        towards = np.eye(val.size)[i] - p
        influence[i] = (
            weighted_boo_n_v(val, test, p + step * towards, n) - weighted_boo_n_v(val, test, p - step * towards, n)
        ) / (2 * step)
    return float(np.sqrt(p @ influence**2 / m))


@pytest.mark.parametrize("cache_elements", [None, 1], ids=["one-pass", "budget-by-budget"])
def test_studentized_band_from_numerical_influence_functions(monkeypatch, cache_elements):
    """Bootstrap-t from first principles: each resample's Boo_n from boo_n, its standard error from numerical
    derivatives of the weighted statistic, the symmetric interval est +- q se (Hall 1988), the sup-t band."""
    if cache_elements is not None:  # one resample and one budget at a time
        monkeypatch.setattr(kernels, "CACHE_ELEMENTS", cache_elements)
    val, test = ranked(*tied_runs(m=14, seed=3))
    budgets, n_resamples, level = [1, 3, 7], 60, 0.9
    band = boo_n_curve_ci(
        val,
        test,
        n=budgets,
        n_resamples=n_resamples,
        confidence_level=level,
        method="studentized",
        rng=5,
        bounds=(None, None),
    )
    idx = materialised(5, val.size, n_resamples)
    counts = np.array([np.bincount(i, minlength=val.size) for i in idx])
    estimate = boo_n(val, test, n=budgets)
    se = np.array([delta_method_se(val, test, np.ones(val.size), n) for n in budgets])
    values = np.array([boo_n(val[i], test[i], n=budgets) for i in idx])
    errors = np.array([[delta_method_se(val, test, c, n) for n in budgets] for c in counts])
    t = np.abs(values - estimate) / errors
    q = np.quantile(t, level, axis=0)
    worst, reach = test.min(), 2 * test.max() - test.min()  # the plausible range intervals are cut to
    np.testing.assert_allclose(band.low, np.maximum(estimate - q * se, worst), rtol=1e-6)
    np.testing.assert_allclose(band.high, np.minimum(estimate + q * se, reach), rtol=1e-6)
    np.testing.assert_allclose(band.bootstrap_distribution, values, rtol=0, atol=1e-12)
    # every budget is <= m / 2, so all enter the simultaneous band's one critical value
    c = np.quantile(t.max(axis=1), level)
    np.testing.assert_allclose(band.simultaneous_low, np.maximum(estimate - c * se, worst), rtol=1e-6)
    np.testing.assert_allclose(band.simultaneous_high, np.minimum(estimate + c * se, reach), rtol=1e-6)
    assert (band.low == worst).any()  # the cut is exercised (budget 7 with these resamples)
    assert band.method == "studentized"


def test_studentized_mean_is_bootstrap_t_of_the_mean():
    """n = 1: the influence of run i is t_i - mean, so se* is the resample's plug-in sd / sqrt(m)."""
    scores = np.sort(np.random.default_rng(7).normal(0.8, 0.01, 25))  # ranked: the order draws index
    res = mean_ci(scores, n_resamples=400, method="studentized-u", rng=3, bounds=(None, None))
    samples = scores[materialised(3, 25, 400)]
    t = np.abs(samples.mean(axis=1) - scores.mean()) / (samples.std(axis=1) / 5)
    half = np.quantile(t, 0.95) * scores.std() / 5
    assert res.confidence_interval.low == pytest.approx(scores.mean() - half, abs=1e-13)
    assert res.confidence_interval.high == pytest.approx(scores.mean() + half, abs=1e-13)


def test_studentized_batches_sized_by_their_work_hold_the_same_resamples(monkeypatch):
    """Studentized batches hold fewer resamples (a resample costs budgets x blocks): the same draws all the same."""
    monkeypatch.setattr(kernels, "BATCH_ELEMENTS", 40 * 10)  # 10 resamples per batch of draws, fewer studentized
    val, test = tied_runs()
    budgets = list(range(1, 21))
    sizes = []
    sizing = kernels.batch_sizes

    def recording(n_resamples, runs, elements=None):
        sizes.append(runs)
        return sizing(n_resamples, runs, elements)

    monkeypatch.setattr(kernels, "batch_sizes", recording)
    plain = boo_n_curve_ci(val, test, n=budgets, n_resamples=150, method="percentile", rng=2)
    student = boo_n_curve_ci(val, test, n=budgets, n_resamples=150, rng=2)
    assert sizes[0] == val.size < sizes[-1]  # the studentized batches were sized by work
    np.testing.assert_allclose(plain.bootstrap_distribution, student.bootstrap_distribution, rtol=0, atol=1e-15)


def test_studentized_shares_the_resamples_of_the_other_methods():
    val, test = tied_runs()
    plain = boo_n_curve_ci(val, test, n=[1, 4], n_resamples=300, method="percentile", rng=9)
    student = boo_n_curve_ci(val, test, n=[1, 4], n_resamples=300, rng=9)
    np.testing.assert_allclose(plain.bootstrap_distribution, student.bootstrap_distribution, rtol=0, atol=1e-15)


def test_studentized_large_work_studentizes_the_first_resamples(monkeypatch):
    """Above the work bound only the first resamples get a standard error; the distribution is unchanged."""
    val, test = tied_runs(m=30)
    budgets, rng = np.array([2, 5]), np.random.default_rng
    full = intervals.curve_distribution(val, test, True, budgets, "V", True, 300, "studentized", rng(4))
    monkeypatch.setattr(intervals, "STUDENTIZED_WORK", 10)
    monkeypatch.setattr(intervals, "STUDENTIZED_RESAMPLES", 70)
    cut = intervals.curve_distribution(val, test, True, budgets, "V", True, 300, "studentized", rng(4))
    np.testing.assert_allclose(cut.dist, full.dist, rtol=0, atol=1e-13)
    np.testing.assert_allclose(cut.pivot.studentized(), full.pivot.studentized()[:70], rtol=0, atol=1e-9)


def test_studentized_constant_and_single_run():
    assert boo_n_ci([0.5] * 6, n=2, n_resamples=50, rng=0).confidence_interval == resampling.ConfidenceInterval(
        0.5, 0.5
    )
    with pytest.warns(FewRunsWarning):
        single = mean_ci([0.7], n_resamples=20, rng=0)
    assert single.confidence_interval == resampling.ConfidenceInterval(0.7, 0.7)


def test_degenerate_resamples_give_the_plausible_range():
    """Two runs: a resample drawing one run twice has se* = 0, so |T| is unbounded in half of the resamples;
    the 95 % interval is then the plausible range: from the worst test score to the best plus the range."""
    with pytest.warns(FewRunsWarning):
        res = boo_n_ci([0.1, 0.2], [0.3, 0.5], n=1, n_resamples=200, rng=0)
    assert res.confidence_interval.low == 0.3 and res.confidence_interval.high == pytest.approx(0.7, abs=1e-15)
    with pytest.warns(FewRunsWarning):  # lower is better: the range extends below the best (lowest) score
        res = boo_n_ci([0.1, 0.2], [0.3, 0.5], n=1, maximize=False, n_resamples=200, rng=0)
    assert res.confidence_interval.low == pytest.approx(0.1, abs=1e-15) and res.confidence_interval.high == 0.5


def test_runaway_studentized_interval_is_cut_to_the_plausible_range():
    """19 runs near 0 and one far outlier: resamples without it have a tiny se*, so q is huge."""
    rng = np.random.default_rng(1)
    test = np.r_[rng.normal(0.0, 0.01, 19), 1.0]
    val = test + rng.normal(0.0, 0.01, 20)
    res = boo_n_ci(val, test, n=5, n_resamples=500, rng=0)
    assert res.confidence_interval.low == test.min()
    assert res.confidence_interval.high <= 2 * test.max() - test.min()


def test_band_trustworthy_up_to_half_of_m_and_simultaneous_contains_pointwise():
    val, test = tied_runs(m=20)
    for method in ("studentized", "percentile", "bca", "smoothed"):
        band = boo_n_curve_ci(val, test, n_resamples=400, method=method, rng=1)
        assert band.trustworthy.tolist() == [n <= 10 for n in range(1, 21)]
    # both symmetric about the estimate, the sup-t band holds the pointwise one where its critical value is taken
    # (equal where one budget's |t*| is the largest in enough resamples; both may end at the worst test score)
    ok = band.trustworthy
    band = boo_n_curve_ci(val, test, n_resamples=400, rng=1)
    assert (band.simultaneous_low[ok] <= band.low[ok]).all() and (band.simultaneous_high[ok] >= band.high[ok]).all()
    assert (band.simultaneous_high[ok] > band.high[ok]).sum() >= ok.sum() - 1


def test_percentile_simultaneous_band_is_sup_t_of_the_bootstrap_distribution():
    val, test = tied_runs(m=30)
    band = boo_n_curve_ci(val, test, n=[1, 5, 15, 30], n_resamples=500, method="percentile", rng=2, bounds=(None, None))
    dist, estimate = band.bootstrap_distribution, band.estimate
    sd = dist.std(axis=0, ddof=1)
    c = np.quantile((np.abs(dist - estimate) / sd)[:, :3].max(axis=1), 0.95)  # n = 30 > m / 2 is left out
    np.testing.assert_allclose(band.simultaneous_high, estimate + c * sd, rtol=1e-12)
    np.testing.assert_allclose(band.simultaneous_low, estimate - c * sd, rtol=1e-12)


def test_a_studentized_band_resamples_its_pivot_at_a_bounded_grid_of_budgets():
    assert default_budgets(1000).size == default_budgets(1000, method="percentile").size == 200
    for m in (30, 100, 1000, 10**6):
        budgets = default_budgets(m)
        reported = np.isin(budgets, [1, 5, 10, 7, 20])
        columns = intervals.pivot_columns(budgets, m, reported)
        assert (np.diff(columns) > 0).all() and columns[0] == 0 and columns[-1] == budgets.size - 1
        assert reported[columns].sum() == reported.sum()  # every reported budget is resampled
        assert budgets[columns][budgets[columns] <= m / 2].max() == budgets[budgets <= m / 2].max()  # trust's edge
        assert columns.size <= intervals.PIVOT_BUDGETS + 6  # the grid, the reported ones and the trusted edge
    few = np.arange(1, intervals.PIVOT_BUDGETS + 1)
    assert intervals.pivot_columns(few, 40).tolist() == list(range(few.size))  # few budgets: all of them


def test_a_band_interpolates_the_reaches_between_the_budgets_it_resampled():
    """Between two resampled budgets a band's reach, in standard errors, is their interpolation in log n; at a
    resampled budget the band is that budget's own interval."""
    rng = np.random.default_rng(8)
    val = rng.normal(size=80)
    test = 0.5 * val + rng.normal(size=80)
    band = boo_n_curve_ci(val, test, n_resamples=999, rng=2)  # n = 1..80: a grid of them resampled
    columns = band.studentized_errors.columns
    assert columns.size < band.n.size
    for k in columns[[1, 5, -3]]:
        single = boo_n_ci(val, test, n=int(band.n[k]), n_resamples=999, rng=2)
        np.testing.assert_allclose(
            [band.low[k], band.high[k]], [single.confidence_interval.low, single.confidence_interval.high], rtol=1e-12
        )
    errors = band.studentized_errors
    below = (errors.centre - band.low) / errors.standard_error  # no bounds: the reaches are linear
    trusted = columns[band.trustworthy[columns]]
    gap = int(np.argmax(np.diff(trusted)))  # the two trustworthy resampled budgets farthest apart
    nodes = trusted[gap : gap + 2]
    between = np.arange(nodes[0] + 1, nodes[1])
    assert between.size and (band.low[nodes[0] : nodes[1] + 1] > test.min()).all()  # not cut to the worst run
    expected = np.interp(np.log(band.n[between]), np.log(band.n[nodes]), below[nodes])
    np.testing.assert_allclose(below[between], expected, rtol=1e-9)


def test_studentized_resamples_bound_the_work_of_a_group():
    assert intervals.studentized_resamples(100, 100, 9999) == 9999  # small groups: every resample
    assert intervals.studentized_resamples(150, 150, 9999) == 3999  # 10^8 / 22,500 = 4,444 -> 3,999
    assert intervals.studentized_resamples(1000, 40, 9999) == 1999  # never fewer than 1,999
    assert intervals.studentized_resamples(10**4, 24, 999) == 999  # never more than were drawn
    work = []
    for m in (100, 200, 300, 500, 1000, 2000, 10**4, 10**5):
        budgets = default_budgets(m).size
        resamples = intervals.studentized_resamples(m, budgets, 9999)
        assert (resamples + 1) % 1000 == 0  # (B + 1) * 0.025 whole: the 95 % ends fall on resamples
        work.append(budgets * resamples)  # studentized work per run
    assert work == sorted(work, reverse=True)


# ----------------------------------------------------------------------------------------------------------
# Bounded scores


#: Twelve accuracies near the top: 0.2.0's default interval of Boo_5 reached 1.029 on them.
NEAR_ONE_VAL = [0.934, 0.926, 0.949, 0.933, 0.914, 0.941, 0.969, 0.958, 0.909, 0.892, 0.911, 0.931]
NEAR_ONE_TEST = [0.911, 0.924, 0.937, 0.926, 0.909, 0.938, 0.973, 0.968, 0.908, 0.906, 0.904, 0.935]


@pytest.mark.parametrize("method", ["studentized-u", "studentized", "percentile", "bca", "smoothed"])
def test_accuracies_near_one_get_intervals_inside_zero_one(method):
    val, test = np.array(NEAR_ONE_VAL), np.array(NEAR_ONE_TEST)
    result = boo_n_ci(val, test, n=5, method=method, n_resamples=999, rng=0)
    assert result.bounds == (0.0, 1.0)
    assert 0.0 <= result.confidence_interval.low <= result.estimate <= result.confidence_interval.high <= 1.0
    band = boo_n_curve_ci(val, test, n=[1, 5, 12], method=method, n_resamples=999, rng=0)
    assert np.all(band.simultaneous_high <= 1.0) and np.all(band.high <= 1.0)
    if method.startswith("studentized"):  # on the plain scale the same interval crosses 1: the data exercise it
        plain = boo_n_ci(val, test, n=5, method=method, n_resamples=999, rng=0, bounds=(None, None))
        assert plain.confidence_interval.high > 1.0


def test_declared_bounds_are_kept_and_checked():
    val, test = 100 * np.array(NEAR_ONE_VAL), 100 * np.array(NEAR_ONE_TEST)  # accuracy in percent
    assert boo_n_ci(val, test, n=5, n_resamples=999, rng=0).bounds == (-math.inf, math.inf)  # not in [0, 1]
    kept = boo_n_ci(val, test, n=5, n_resamples=999, rng=0, bounds=(0, 100))
    assert kept.bounds == (0.0, 100.0) and kept.confidence_interval.high <= 100.0
    # the interval is the one on [0, 1] scaled: a transformation of the scores moves it along
    unit = boo_n_ci(val / 100, test / 100, n=5, n_resamples=999, rng=0)
    assert kept.confidence_interval.high == pytest.approx(100 * unit.confidence_interval.high, rel=1e-10)
    assert boo_n_ci(val, test, n=5, n_resamples=99, rng=0, bounds=(None, 100)).bounds == (-math.inf, 100.0)
    for bad, message in [
        ((0, 90), r"`bounds` \(0, 90\) do not hold score 9\d\.\d+ at position \d+"),
        ((1, 0), r"`bounds` must have low < high"),
        ((0,), r"`bounds` must be a pair"),
        (("a", 1), r"`bounds` must be a pair of numbers or None"),
    ]:
        with pytest.raises(ValueError, match=message):
            boo_n_ci(val, test, n=5, n_resamples=9, rng=0, bounds=bad)


def test_studentized_u_is_centred_on_u_and_compared_with_v():
    """The centre is U of the runs, the resamples' centres are U of the resamples and their reference is V of
    the runs (their population's Boo_n); at n = 1 every one of them is the mean."""
    val, test = tied_runs(m=24, seed=2)
    band = boo_n_curve_ci(val, test, n=[1, 4, 9], n_resamples=120, method="studentized-u", rng=3, bounds=(None, None))
    errors = band.studentized_errors
    np.testing.assert_allclose(errors.centre, boo_n(val, test, n=[1, 4, 9], estimator="U"), atol=1e-13)
    np.testing.assert_allclose(errors.reference, boo_n(val, test, n=[1, 4, 9]), atol=1e-13)
    ranked_val, ranked_test = ranked(val, test)
    idx = materialised(3, val.size, 120)
    expected = [boo_n(ranked_val[i], ranked_test[i], n=[1, 4, 9], estimator="U") for i in idx]
    np.testing.assert_allclose(errors.resample_centres, expected, atol=1e-12)
    np.testing.assert_allclose(band.bootstrap_distribution[:, 0], errors.resample_centres[:, 0], atol=1e-12)
    # the interval: centre +- q se, q the 95 % quantile of |centre* - reference| / se*, widened to hold V
    t = np.abs(errors.resample_centres - errors.reference) / errors.resample_standard_errors
    half = np.quantile(t, 0.95, axis=0) * errors.standard_error
    np.testing.assert_allclose(band.low, np.minimum(errors.centre - half, band.estimate), rtol=1e-10)
    np.testing.assert_allclose(band.high, np.maximum(errors.centre + half, band.estimate), rtol=1e-10)
