"""The compiled studentized pass (numba, the ``fast`` extra) against the numpy pass it replaces, on the same draws."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from boontrack._bootstrap import compiled, intervals
from boontrack._bootstrap.kernels import RankedRuns, cdf_table
from boontrack.resampling import boo_n_curve_ci

pytest.importorskip("numba")


def _runs(m: int, decimals: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    val = np.round(rng.normal(0.8, 0.01, m), decimals)
    return val, np.round(val + rng.normal(0.0, 0.01, m), decimals)


def _close(compiled_values: np.ndarray, numpy_values: np.ndarray) -> None:
    np.testing.assert_allclose(compiled_values, numpy_values, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize(("m", "decimals"), [(40, 2), (40, 8), (300, 3)])  # heavy ties, none, some
@pytest.mark.parametrize(("estimator", "method"), [("V", "studentized-u"), ("U", "studentized"), ("V", "studentized")])
def test_the_compiled_pass_is_the_numpy_pass(m, decimals, estimator, method):
    val, test = _runs(m, decimals, seed=m + decimals)
    runs = RankedRuns(val, test, True)
    budgets = np.array([1, 2, 5, m // 4, m // 2, m])
    cdf, slope, _ = intervals.pivot_tables(cdf_table(m, budgets, estimator), budgets, estimator, method)
    positions = np.random.default_rng(7).integers(0, m, size=(500, m))
    kernel = compiled.studentized_kernel()
    assert kernel is not None
    ours = runs.boo_n_studentized(positions, cdf, slope, kernel)
    reference = runs.boo_n_studentized(positions, cdf, slope)
    _close(ours[0], reference[0])
    _close(ours[1], reference[1])
    assert (ours[1] > 0).any() and np.isfinite(ours[1]).all()


def test_a_band_is_the_same_with_the_compiled_pass(monkeypatch):
    val, test = _runs(60, 3, seed=1)
    reference = boo_n_curve_ci(val, test, n_resamples=999, rng=3)  # 60 x 60 x 999: below MIN_WORK, numpy
    monkeypatch.setattr(compiled, "MIN_WORK", 0)
    ours = boo_n_curve_ci(val, test, n_resamples=999, rng=3)
    for name in ("estimate", "low", "high", "simultaneous_low", "simultaneous_high"):
        _close(getattr(ours, name), getattr(reference, name))
    np.testing.assert_array_equal(ours.bootstrap_distribution, reference.bootstrap_distribution)


def test_the_switch_forces_numpy_and_the_cache_stays_out_of_the_package(monkeypatch):
    compiled.studentized_kernel()
    package = Path(compiled.__file__).parent
    assert not [*package.rglob("*.nbi"), *package.rglob("*.nbc")]
    monkeypatch.setenv(compiled.KERNEL_VARIABLE, "numpy")
    compiled.studentized_kernel.cache_clear()
    try:
        assert compiled.studentized_kernel() is None and compiled.compiled_pass(10**12) is None
    finally:
        compiled.studentized_kernel.cache_clear()
    assert compiled.compiled_pass(compiled.MIN_WORK - 1) is None
