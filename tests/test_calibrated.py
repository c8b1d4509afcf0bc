"""The studentized-u interval at a level calibrated by a second-level bootstrap (``"studentized-u-calibrated"``).

The exact check materialises the documented draws one by one: the interval's resamples (rows of
``rng.integers(0, m, size=(B, m), dtype=int32)``, as for ``"studentized-u"``), then the calibrating resamples,
then each one's inner resamples as positions among its own draws. At n = 1 U and V are the mean and se the
resample's plug-in standard deviation over sqrt(m), so the whole calibration is a few lines of numpy here.
"""

from __future__ import annotations

import numpy as np
import pytest

from boontrack._bootstrap import intervals
from boontrack._bootstrap.threads import using_threads
from boontrack.resampling import boo_n_ci, boo_n_curve_ci, mean_ci
from boontrack.simulate.coverage import _shared_resampling

CALIBRATED = "studentized-u-calibrated"
NEAR_ONE_VAL = [0.912, 0.921, 0.934, 0.929, 0.915, 0.941, 0.966, 0.971, 0.905, 0.901, 0.908, 0.933]
NEAR_ONE_TEST = [0.911, 0.924, 0.937, 0.926, 0.909, 0.938, 0.973, 0.968, 0.908, 0.906, 0.904, 0.935]


def runs(m: int = 18, seed: int = 5) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    val = rng.lognormal(0.0, 0.8, m)
    return val, val + rng.normal(0.0, 0.3, m)


def test_calibrated_mean_is_the_iterated_bootstrap_t_of_the_mean():
    """Hall & Martin's iterated bootstrap-t of the mean, written out: the level is the 95 % quantile of the
    calibrating resamples' prepivots (when above 95 %), and the interval takes that quantile of |T*|."""
    scores = np.sort(np.random.default_rng(7).lognormal(0.0, 1.0, 25))  # ranked: the order draws index
    m, b, level, inner = scores.size, 60, 0.95, intervals.INNER_RESAMPLES
    res = mean_ci(scores, n_resamples=b, confidence_level=level, method=CALIBRATED, rng=3, bounds=(None, None))
    draws = np.random.default_rng(3)
    resamples = scores[draws.integers(0, m, size=(b, m), dtype=np.int32)]
    calibrating = draws.integers(0, m, size=(b, m), dtype=np.int32)  # min(B, 249) = B of them
    nested = draws.integers(0, m, size=(b, inner, m), dtype=np.int32)

    def pivot(samples: np.ndarray, truth: np.ndarray) -> np.ndarray:
        return np.abs(samples.mean(axis=-1) - truth) / (samples.std(axis=-1) / np.sqrt(m))

    outer = scores[calibrating]
    inner_samples = np.stack([outer[k][nested[k]] for k in range(b)])  # (b, inner, m)
    shares = (pivot(inner_samples, outer.mean(axis=1)[:, None]) < pivot(outer, scores.mean())[:, None]).mean(axis=1)
    calibrated = max(level, np.quantile(shares, level))  # the calibration only widens
    assert calibrated > level  # it widens with these draws
    half = np.quantile(pivot(resamples, scores.mean()), calibrated) * scores.std() / np.sqrt(m)
    assert res.confidence_interval.low == pytest.approx(scores.mean() - half, abs=1e-13)
    assert res.confidence_interval.high == pytest.approx(scores.mean() + half, abs=1e-13)


def test_same_resamples_and_pivot_as_studentized_u_and_a_level_of_its_own():
    val, test = runs()
    budgets = [1, 3, 6]
    plain = boo_n_curve_ci(val, test, n=budgets, n_resamples=300, method="studentized-u", rng=4)
    calibrated = boo_n_curve_ci(val, test, n=budgets, n_resamples=300, method=CALIBRATED, rng=4)
    np.testing.assert_array_equal(calibrated.bootstrap_distribution, plain.bootstrap_distribution)
    errors, plain_errors = calibrated.studentized_errors, plain.studentized_errors
    np.testing.assert_array_equal(errors.resample_centres, plain_errors.resample_centres)
    np.testing.assert_array_equal(errors.standard_error, plain_errors.standard_error)
    np.testing.assert_array_equal(calibrated.simultaneous_low, plain.simultaneous_low)  # the band is not calibrated
    resampled = intervals.curve_distribution(val, test, True, np.array(budgets), "V", True, 300, CALIBRATED, rng(4))
    level = resampled.pivot.calibrated_level(0.95)
    assert level.shape == (3,) and np.all((level >= 0.95) & (level <= 1)) and np.any(level > 0.95)
    # at the calibrated level of each budget, the interval is studentized-u's at that level
    for k, n in enumerate(budgets):
        at_level = boo_n_ci(
            val, test, n=n, n_resamples=300, method="studentized-u", rng=4, confidence_level=float(level[k])
        )
        ours, theirs = calibrated.at(n).confidence_interval, at_level.confidence_interval
        assert (ours.low, ours.high) == pytest.approx((theirs.low, theirs.high), rel=1e-12)


def rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


@pytest.mark.parametrize("bounds", [None, (None, None)], ids=["unit-interval", "unbounded"])
def test_interval_holds_the_estimate_and_stays_in_the_bounds(bounds):
    val, test = np.array(NEAR_ONE_VAL), np.array(NEAR_ONE_TEST)
    for n in (1, 5):
        result = boo_n_ci(val, test, n=n, method=CALIBRATED, n_resamples=400, rng=1, bounds=bounds)
        interval = result.confidence_interval
        assert interval.low <= result.estimate <= interval.high
        if bounds is None:
            assert result.bounds == (0.0, 1.0) and 0.0 <= interval.low and interval.high <= 1.0
    band = boo_n_curve_ci(val, test, n=[1, 5, 12], method=CALIBRATED, n_resamples=400, rng=1)
    assert np.all(band.high <= 1.0) and np.all(band.low >= 0.0)
    assert np.all((band.low <= band.estimate) & (band.estimate <= band.high))


def test_same_seed_same_interval_whatever_the_batches_and_threads(monkeypatch):
    val, test = runs(m=30)
    first = boo_n_curve_ci(val, test, n=[2, 7], n_resamples=200, method=CALIBRATED, rng=11)
    again = boo_n_curve_ci(val, test, n=[2, 7], n_resamples=200, method=CALIBRATED, rng=np.random.default_rng(11))
    np.testing.assert_array_equal(first.low, again.low)
    np.testing.assert_array_equal(first.high, again.high)
    monkeypatch.setattr(intervals, "BATCH_ELEMENTS", 30 * 2 * intervals.INNER_RESAMPLES * 3)  # 3 rows per batch
    with using_threads(2):
        split = boo_n_curve_ci(val, test, n=[2, 7], n_resamples=200, method=CALIBRATED, rng=11)
    np.testing.assert_allclose(split.low, first.low, rtol=1e-12)
    np.testing.assert_allclose(split.high, first.high, rtol=1e-12)
    other = boo_n_curve_ci(val, test, n=[2, 7], n_resamples=200, method=CALIBRATED, rng=12)
    assert not np.array_equal(other.high, first.high)


def test_calibrating_resamples_bound_the_work():
    # 249 calibrating x 39 inner resamples while m x budgets x 249 x 39 <= 10^8 ...
    assert intervals.calibrating_resamples(100, 3, 999) == 249
    assert intervals.calibrating_resamples(100, 3, 99) == 99  # ... never more than the interval's resamples
    # ... beyond, 10^8 // (m x budgets x 39): 64 at 1,000 runs x 40 budgets, and at least 49
    assert intervals.calibrating_resamples(1000, 40, 9999) == 64
    assert intervals.calibrating_resamples(10_000, 24, 9999) == 49


def test_constant_scores_collapse():
    result = boo_n_ci([0.5] * 8, n=2, method=CALIBRATED, n_resamples=50, rng=0)
    assert (result.confidence_interval.low, result.confidence_interval.high) == (0.5, 0.5)


def test_one_resampling_serves_every_method_it_can():
    """A simulation resamples once for the calibrated method and reads studentized-u's and the percentile
    interval off the same resamples."""
    assert _shared_resampling((CALIBRATED,)) == {CALIBRATED: [CALIBRATED]}
    assert _shared_resampling(("studentized-u", CALIBRATED, "percentile")) == {
        CALIBRATED: [CALIBRATED, "studentized-u", "percentile"]
    }
    assert _shared_resampling(("studentized-u", "percentile", "bca")) == {
        "studentized-u": ["studentized-u", "percentile"],
        "bca": ["bca"],
    }
    assert _shared_resampling(("percentile", "studentized")) == {"studentized": ["studentized", "percentile"]}
