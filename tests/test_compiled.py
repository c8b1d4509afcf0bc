"""The compiled passes (numba, the ``fast`` extra) against the numpy passes they replace, on the same draws."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from boontrack._bootstrap import compiled, intervals
from boontrack._bootstrap.kernels import RankedRuns, cdf_table
from boontrack.compare import boo_n_difference_ci
from boontrack.resampling import boo_n_ci, boo_n_curve_ci

pytest.importorskip("numba")


def _runs(m: int, decimals: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    val = np.round(rng.normal(0.8, 0.01, m), decimals)
    return val, np.round(val + rng.normal(0.0, 0.01, m), decimals)


def _close(compiled_values: np.ndarray, numpy_values: np.ndarray) -> None:
    np.testing.assert_allclose(compiled_values, numpy_values, rtol=1e-12, atol=1e-15)


def _same_result(ours, reference) -> None:
    """Two bootstrap results alike to rounding: estimate, interval ends and every resample's value."""
    ends = [(r.estimate, r.confidence_interval.low, r.confidence_interval.high) for r in (ours, reference)]
    _close(np.array(ends[0]), np.array(ends[1]))
    _close(ours.bootstrap_distribution, reference.bootstrap_distribution)


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


@pytest.mark.parametrize("decimals", [2, 8])  # ties (the spread terms), none
def test_the_studentized_pass_in_python_is_the_numpy_pass(decimals):
    val, test = _runs(30, decimals, seed=6)
    runs = RankedRuns(val, test, True)
    budgets = np.array([1, 3, 10, 30])
    cdf, slope, _ = intervals.pivot_tables(cdf_table(30, budgets, "V"), budgets, "V", "studentized-u")
    positions = np.random.default_rng(4).integers(0, 30, size=(5, 30))
    ours = runs.boo_n_studentized(positions, cdf, slope, compiled._studentized_loops)
    reference = runs.boo_n_studentized(positions, cdf, slope)
    _close(ours[0], reference[0])
    _close(ours[1], reference[1])
    assert (runs.blocks < 30) == (decimals == 2) and (reference[1] > 0).any()


def test_a_band_is_the_same_with_the_compiled_pass(monkeypatch):
    val, test = _runs(60, 3, seed=1)
    reference = boo_n_curve_ci(val, test, n_resamples=999, rng=3)  # 60 x 60 x 999: below MIN_WORK, numpy
    monkeypatch.setattr(compiled, "MIN_WORK", 0)
    ours = boo_n_curve_ci(val, test, n_resamples=999, rng=3)
    for name in ("estimate", "low", "high", "simultaneous_low", "simultaneous_high"):
        _close(getattr(ours, name), getattr(reference, name))
    _close(ours.bootstrap_distribution, reference.bootstrap_distribution)


@pytest.mark.parametrize(
    ("m", "decimals"), [(50, 8), (3000, 1), (300, 3)]
)  # per position: no ties, big blocks; per block
@pytest.mark.parametrize("dtype", [np.int32, np.int64])
@pytest.mark.parametrize("squares", [False, True])
def test_the_compiled_count_is_the_numpy_count(m, decimals, dtype, squares):
    val, test = _runs(m, decimals, seed=m)
    runs = RankedRuns(val, test, True)
    positions = np.random.default_rng(5).integers(0, m, size=(70, m)).astype(dtype)
    kernel = compiled.counting_kernel()
    assert kernel is not None
    ours = runs.block_totals(positions, squares=squares, counting=kernel)
    reference = runs.block_totals(positions, squares=squares)
    assert len(ours) == len(reference) == 2 + squares
    np.testing.assert_array_equal(ours[0], reference[0])
    for mine, theirs in zip(ours[1:], reference[1:]):
        if not runs._per_position:  # numpy's weighted bincount adds the draws in the same order: the same bits
            np.testing.assert_array_equal(mine, theirs)
        _close(mine, theirs)


def test_the_count_in_python_is_the_compiled_count():
    val, test = _runs(30, 2, seed=4)
    runs = RankedRuns(val, test, True)
    positions = np.random.default_rng(6).integers(0, 30, size=(4, 30)).astype(np.uint32)
    totals = [np.empty((4, runs.blocks), dtype=np.intp), np.empty((4, runs.blocks)), np.empty((4, runs.blocks))]
    compiled._count_loops(positions, 0, runs._block_of.view(np.uintp), runs._test, *totals, True)
    reference = runs.block_totals(positions.astype(np.int64), squares=True)
    for mine, theirs in zip(totals, reference):
        _close(mine, theirs)


@pytest.mark.parametrize(("m", "decimals"), [(1, 2), (50, 8), (3000, 1), (300, 3), (20_000, 3)])
def test_resamples_counted_as_drawn_are_numpys_draws_counted(monkeypatch, m, decimals):
    """The compiled drawing draws numpy's numbers, batch after batch and chunk after chunk, and leaves the
    generator where numpy's draws leave it: the counts are numpy's to the bit, the sums to rounding."""
    from boontrack._bootstrap import kernels

    monkeypatch.setattr(compiled, "DRAW_CHUNK", 3 * m + 1)  # chunks of 3 resamples: boundaries inside batches
    val, test = _runs(m, decimals, seed=m)
    runs = RankedRuns(val, test, True)
    # batches of 7 counted resamples (and at least 7 resamples' positions): the same draws, cut elsewhere
    monkeypatch.setattr(kernels, "BATCH_ELEMENTS", 7 * max(m, kernels.COUNTED_WEIGHT * runs.blocks))
    counting = compiled.counting_kernel()
    assert counting is not None and counting.drawn_totals is not None
    ours, theirs = np.random.default_rng(m), np.random.default_rng(m)
    drawn = list(runs.resampled(ours, 40, squared=23, counting=counting))
    positions = list(runs.resampled(theirs, 40, counting=None))
    assert len(drawn) > 2 and sum(batch.counts.shape[0] for batch in drawn) == 40
    reference = runs.block_totals(np.concatenate(positions), squares=True)
    counts, sums = (np.concatenate([getattr(batch, name) for batch in drawn]) for name in ("counts", "sums"))
    np.testing.assert_array_equal(counts, reference[0])
    _close(sums, reference[1])
    with_squares = [batch.squares is not None for batch in drawn]
    assert with_squares == [runs.blocks < m and sum(len(b.counts) for b in drawn[:k]) < 23 for k in range(len(drawn))]
    first = drawn[0].squares
    if first is not None:
        _close(first, reference[2][: len(first)])
    assert ours.integers(1 << 62) == theirs.integers(1 << 62)


def test_the_drawing_in_python_is_the_compiled_drawing():
    val, test = _runs(30, 2, seed=8)
    runs = RankedRuns(val, test, True)
    counting = compiled.counting_kernel()
    assert counting is not None and counting.drawn_totals is not None
    totals = {}
    for name, draw in (("compiled", counting.drawn_totals), ("python", compiled._draw_count_loops)):
        arrays = [np.empty((5, runs.blocks), dtype=np.intp), np.empty((5, runs.blocks)), np.empty((5, runs.blocks))]
        draw(np.random.default_rng(3), 30, runs._block_of.view(np.uintp), runs._test, *arrays, True)
        totals[name] = arrays
    for mine, theirs in zip(totals["python"], totals["compiled"]):
        _close(mine, theirs)


def test_a_drawing_whose_draws_are_not_numpys_is_not_used(monkeypatch):
    """Where numba's generator would draw other numbers than numpy's, the resamples are drawn by numpy."""
    counting = compiled.counting_kernel()
    assert counting is not None and counting.drawn_totals is not None
    assert compiled._draws_agree(counting.drawn_totals)

    def off_by_one(rng, m, *rest):  # numpy's draws, but one draw late
        rng.integers(0, m, dtype=np.int32)
        compiled._draw_count_loops(rng, m, *rest)

    assert not compiled._draws_agree(off_by_one)
    monkeypatch.setattr(compiled, "_draws_agree", lambda draw: False)
    compiled.counting_kernel.cache_clear()
    try:
        refused = compiled.counting_kernel()
        assert refused is not None and refused.drawn_totals is None
        runs = RankedRuns(*_runs(50, 3, seed=1), True)
        batches = list(runs.resampled(np.random.default_rng(0), 10, counting=refused))
        assert all(isinstance(batch, np.ndarray) for batch in batches)
    finally:
        compiled.counting_kernel.cache_clear()


@pytest.mark.parametrize(("m", "decimals"), [(50, 8), (3000, 1), (300, 3)])
@pytest.mark.parametrize("estimator", ["V", "U"])
def test_the_compiled_boo_n_is_the_numpy_boo_n(m, decimals, estimator):
    val, test = _runs(m, decimals, seed=m + 1)
    runs = RankedRuns(val, test, True)
    cdf = cdf_table(m, np.array([1, 2, 5, m // 4, m // 2, m]), estimator)
    positions = np.random.default_rng(9).integers(0, m, size=(60, m), dtype=np.int32)
    counting = compiled.counting_kernel()
    assert counting is not None
    _close(runs.boo_n(positions, cdf, counting), runs.boo_n(positions, cdf))
    _close(runs.estimate(cdf), runs.boo_n(np.arange(m)[None, :], cdf, counting)[0])
    other = cdf_table(m, np.array([3, m // 3]), estimator)  # another table after the first: not its transpose
    _close(runs.boo_n(positions, other, counting), runs.boo_n(positions, other))
    _close(runs.boo_n(positions, cdf, counting), runs.boo_n(positions, cdf))


@pytest.mark.parametrize("decimals", [2, 8])  # big blocks; single runs, some without draws
def test_the_evaluation_in_python_is_the_numpy_evaluation(decimals):
    val, test = _runs(30, decimals, seed=5)
    runs = RankedRuns(val, test, True)
    cdf = cdf_table(30, np.array([1, 3, 10]), "V")
    positions = np.random.default_rng(6).integers(0, 30, size=(4, 30))
    counts, sums = runs.block_totals(positions)
    assert (counts == 0).any() == (decimals == 8)  # blocks without draws: mean 0 in the loops
    values = np.empty((4, 3))
    compiled._boo_n_loops(counts, sums, cdf.T.copy(), values)
    _close(values + runs._offset, runs.boo_n(positions, cdf))


@pytest.mark.parametrize("method", ["percentile", "studentized-u"])
def test_an_interval_is_the_same_with_the_compiled_count(monkeypatch, method):
    val, test = _runs(200, 4, seed=2)
    reference = boo_n_ci(val, test, n=5, method=method, n_resamples=999, rng=8)  # 200 x 999 draws: numpy's count
    monkeypatch.setattr(compiled, "MIN_DRAWS", 0)
    ours = boo_n_ci(val, test, n=5, method=method, n_resamples=999, rng=8)
    _same_result(ours, reference)
    assert not np.array_equal(ours.bootstrap_distribution, ours.bootstrap_distribution[0])


@pytest.mark.parametrize("paired", [False, True])
@pytest.mark.parametrize("method", ["percentile", "studentized-u"])
def test_a_difference_is_the_same_with_the_compiled_count(monkeypatch, paired, method):
    a_val, a_test = _runs(120, 3, seed=3)
    b_val, b_test = _runs(120, 3, seed=4)
    options = dict(n=5, paired=paired, method=method, n_resamples=499, rng=2)
    reference = boo_n_difference_ci(a_val, b_val, a_test, b_test, **options)  # 240 x 499 draws: numpy's count
    monkeypatch.setattr(compiled, "MIN_DRAWS", 0)
    ours = boo_n_difference_ci(a_val, b_val, a_test, b_test, **options)
    _same_result(ours, reference)


@pytest.mark.parametrize(("decimals", "method"), [(2, "studentized-u"), (8, "studentized")])  # ties, none
@pytest.mark.parametrize("in_python", [False, True])
def test_the_compiled_influences_are_numpys(decimals, method, in_python):
    from boontrack._bootstrap.differences import BudgetGroup

    val, test = _runs(50, decimals, seed=decimals)
    group = BudgetGroup(val, test, True, np.array([1, 5, 10]), "V", method)
    counts = np.bincount(
        (np.random.default_rng(1).integers(0, 50, size=(6, 50)) + 50 * np.arange(6)[:, None]).ravel(), minlength=300
    ).reshape(6, 50)
    counting = compiled.counting_kernel()
    assert counting is not None
    if in_python:
        counting = counting._replace(influences=compiled._influence_loops)
    ours = np.stack(list(group.influences(counts, counting)))
    reference = np.stack(list(group.influences(counts)))
    assert ours.shape == reference.shape == (3, 6, 50)
    _close(ours, reference)


#: The budgets of the pivot of a curve of 40 runs whose budgets 1 and 5 are reported (a grid of 1..40 and these).
PIVOT_COLUMNS = intervals.pivot_columns(np.arange(1, 41), 40, np.isin(np.arange(1, 41), [1, 5])).size


@pytest.mark.parametrize(
    ("loader", "threshold", "value", "decimals"),
    [
        ("counting_kernel", "MIN_DRAWS", 60_000, 3),  # above a group's 40 x 999 draws, below both groups'
        # above a group's 40 runs x the budgets of its pivot x 999 resamples, every one studentized; below both's
        ("studentized_kernel", "MIN_WORK", 40 * PIVOT_COLUMNS * 999 + 1, 8),
    ],
)
def test_an_analysis_whose_groups_together_repay_numba_runs_every_group_compiled(
    monkeypatch, loader, threshold, value, decimals
):
    import pandas as pd

    from boontrack.analysis import analyze
    from boontrack.runtable import RunTable
    from boontrack.spec import Spec

    groups = [_runs(40, decimals, seed=seed) for seed in (11, 12)]
    frame = pd.DataFrame(
        {
            "val": np.concatenate([val for val, _ in groups]),
            "test": np.concatenate([test for _, test in groups]),
            "model": np.repeat(["a", "b"], 40),
        }
    )
    spec = Spec(val="val", test="test", group_by=("model",), n=(1, 5), n_resamples=999, maximize=True)
    table, alone = RunTable.from_frame(frame, spec), RunTable.from_frame(frame[frame.model == "a"], spec)
    monkeypatch.setattr(compiled, "MIN_WORK", 10**18)
    monkeypatch.setattr(compiled, "MIN_DRAWS", 10**18)
    reference = analyze(table, spec, threads=1)  # numpy's passes
    kernel, loaded = getattr(compiled, loader)(), []
    monkeypatch.setattr(compiled, loader, lambda: loaded.append(1) or kernel)
    monkeypatch.setattr(compiled, threshold, value)
    analyze(alone, spec, threads=1)
    assert not loaded
    ours = analyze(table, spec, threads=1)
    assert loaded
    assert compiled.compiled_counting(1) is None and compiled.compiled_pass(1) is None  # the commitment ends
    for mine, theirs in zip(ours.groups, reference.groups):
        _close(mine.curve.estimate, theirs.curve.estimate)
        _close(np.array([mine.curve.ci_low, mine.curve.ci_high]), np.array([theirs.curve.ci_low, theirs.curve.ci_high]))


def test_threads_that_ask_for_a_kernel_at_once_load_it_once(monkeypatch):
    import threading

    loaders = compiled._numba, compiled.studentized_kernel, compiled.counting_kernel
    made, compile_once = [], compiled._compiled
    monkeypatch.setattr(compiled, "_compiled", lambda loops: made.append(loops.__name__) or compile_once(loops))
    start, kernels = threading.Barrier(4), []

    def ask() -> None:
        start.wait()
        kernels.append(compiled.studentized_kernel())

    for loader in loaders:
        loader.cache_clear()
    try:
        threads = [threading.Thread(target=ask) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
        assert made == ["_studentized_loops"]
        assert len(kernels) == 4 and all(kernel is kernels[0] is not None for kernel in kernels)
    finally:
        for loader in loaders:
            loader.cache_clear()


def test_the_switch_forces_numpy_and_the_cache_stays_out_of_the_package(monkeypatch):
    compiled.studentized_kernel()
    package = Path(compiled.__file__).parent
    assert not [*package.rglob("*.nbi"), *package.rglob("*.nbc")]
    monkeypatch.setenv(compiled.KERNEL_VARIABLE, "numpy")
    loaders = compiled._numba, compiled.studentized_kernel, compiled.counting_kernel
    for loader in loaders:
        loader.cache_clear()
    try:
        assert compiled.studentized_kernel() is None and compiled.compiled_pass(10**12) is None
        assert compiled.counting_kernel() is None and compiled.compiled_counting(10**12, loaded=True) is None
    finally:
        for loader in loaders:
            loader.cache_clear()
    assert compiled.compiled_pass(compiled.MIN_WORK - 1) is None
    assert compiled.compiled_counting(compiled.MIN_DRAWS - 1) is None
