"""Training curves across runs (boontrack.training): exact small cases, invariants, validation, real histories."""

from __future__ import annotations

import math
import warnings
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from boontrack.exceptions import FewRunsWarning
from boontrack.training import best_so_far, training_curves
from boontrack.training_output import write_training_curves

UNBOUNDED = (None, None)


def _long(histories: dict[str, dict[int, float]], group: dict[str, str] | None = None) -> dict[str, list]:
    """Long-form columns from {run: {step: value}}."""
    rows = [(run, step, value) for run, points in histories.items() for step, value in points.items()]
    data = {"run_id": [r for r, _, _ in rows], "step": [s for _, s, _ in rows], "value": [v for _, _, v in rows]}
    if group is not None:
        data["model"] = [group[r] for r, _, _ in rows]
    return data


def test_means_on_mismatched_grids_are_the_exact_means_of_the_runs_that_logged_each_step():
    histories = {
        "a": {0: 0.1, 10: 0.3, 20: 0.7},
        "b": {10: 0.2, 20: 0.4, 30: 0.9},
        "c": {0: 0.3, 20: 0.8},
    }
    with pytest.warns(FewRunsWarning, match="1 of 4 steps"):
        curves = training_curves(_long(histories), min_runs=2, n_resamples=99, rng=1, bounds=UNBOUNDED)
    steps = sorted({s for points in histories.values() for s in points})
    assert curves.step.tolist() == steps
    for k, s in enumerate(steps):
        logged = [Fraction(points[s]) for points in histories.values() if s in points]
        assert curves.runs[k] == len(logged)
        assert curves.mean[k] == pytest.approx(float(sum(logged) / len(logged)), rel=1e-15, abs=1e-16)
        if len(logged) > 1:
            mean = sum(logged) / len(logged)
            variance = sum((x - mean) ** 2 for x in logged) / (len(logged) - 1)
            assert curves.standard_error[k] == pytest.approx(math.sqrt(variance / len(logged)), rel=1e-12)
        else:  # one run: no spread, no band, and not among the steps the simultaneous band covers
            assert math.isnan(curves.standard_error[k]) and math.isnan(curves.low[k]) and not curves.enough_runs[k]


def test_two_runs_give_the_plausible_range_as_band():
    """Half the resamples draw one run twice (se* = 0, the ratio unbounded), so q is unbounded and the band is
    the runs' range widened by itself on each side: [min - span, max + span]."""
    a, b = [1.0, 3.0, -2.0], [2.0, 7.0, -2.5]
    data = {"run_id": ["a"] * 3 + ["b"] * 3, "step": [1, 2, 3] * 2, "value": a + b}
    curves = training_curves(data, min_runs=2, n_resamples=199, rng=3)
    low, high = np.minimum(a, b), np.maximum(a, b)
    span = high - low
    for band in ((curves.low, curves.high), (curves.simultaneous_low, curves.simultaneous_high)):
        np.testing.assert_allclose(band[0], low - span)
        np.testing.assert_allclose(band[1], high + span)


def test_two_runs_in_the_unit_interval_are_cut_at_its_bounds():
    data = {"run_id": ["a", "b"], "step": [5, 5], "value": [0.2, 0.9]}
    curves = training_curves(data, min_runs=2, n_resamples=199, rng=3)
    assert curves.bounds == (0.0, 1.0)
    assert (curves.low[0], curves.high[0]) == pytest.approx((0.0, 1.0))


def test_a_step_where_every_run_has_the_same_value_has_a_point_band():
    values = {"a": [0.1, 0.3], "b": [0.1, 0.5], "c": [0.1, 0.4], "d": [0.1, 0.2]}
    data = _long({run: {1: v[0], 2: v[1]} for run, v in values.items()})
    curves = training_curves(data, min_runs=2, n_resamples=499, rng=5)
    assert curves.mean[0] == 0.1 and curves.standard_error[0] == 0.0
    for bound in (curves.low, curves.high, curves.simultaneous_low, curves.simultaneous_high):
        assert bound[0] == 0.1
    assert curves.low[1] < curves.mean[1] < curves.high[1]
    assert curves.simultaneous_low[1] <= curves.low[1] and curves.high[1] <= curves.simultaneous_high[1]


def _runs(m: int, steps: int, seed: int) -> dict[str, list]:
    rng = np.random.default_rng(seed)
    values = 1.0 + rng.normal(size=(m, 1)) + rng.normal(size=(m, steps))
    return {
        "run_id": np.repeat([f"r{i}" for i in range(m)], steps).tolist(),
        "step": np.tile(np.arange(steps), m).tolist(),
        "value": values.ravel().tolist(),
    }


def test_steps_with_few_runs_are_marked_warned_and_left_out_of_the_simultaneous_band():
    data = _runs(m=6, steps=4, seed=2)
    extra = {"run_id": data["run_id"] + ["r0", "r1"], "step": data["step"] + [9, 9], "value": data["value"] + [5, 6]}
    plain = training_curves(data, n_resamples=499, rng=7)
    with pytest.warns(FewRunsWarning, match=r"fewer than 5 runs.*'all': 1 of 5 steps"):
        marked = training_curves(extra, n_resamples=499, rng=7)
    assert marked.step.tolist() == [0, 1, 2, 3, 9] and marked.runs.tolist() == [6, 6, 6, 6, 2]
    assert marked.enough_runs.tolist() == [True, True, True, True, False]
    assert math.isnan(marked.simultaneous_low[4]) and math.isnan(marked.simultaneous_high[4])
    assert marked.low[4] < marked.mean[4] == 5.5 < marked.high[4]  # the pointwise band is there, marked
    # the same resamples: the marked step changes nothing at the others
    for name in ("mean", "low", "high", "simultaneous_low", "simultaneous_high"):
        np.testing.assert_array_equal(getattr(marked, name)[:4], getattr(plain, name))


def test_groups_are_computed_apart_and_labelled():
    data = _long(
        {"a": {1: 1.0, 2: 2.0}, "b": {1: 3.0, 2: 4.0}, "c": {1: 10.0}, "d": {1: 20.0, 3: 30.0}},
        group={"a": "x", "b": "x", "c": "y", "d": "y"},
    )
    with pytest.warns(FewRunsWarning, match="'y': 1 of 2 steps"):
        curves = training_curves(data, group_by="model", min_runs=2, n_resamples=99, rng=0)
    assert curves.groups == ("x", "y")
    assert curves.group.tolist() == ["x", "x", "y", "y"] and curves.step.tolist() == [1, 2, 1, 3]
    assert curves.mean.tolist() == [2.0, 3.0, 15.0, 30.0]
    assert curves.of("y").runs.tolist() == [2, 1]


def test_a_dataframe_with_named_columns_is_read_as_a_mapping_is():
    pd = pytest.importorskip("pandas")
    data = _runs(m=5, steps=3, seed=4)
    frame = pd.DataFrame(data).rename(columns={"run_id": "seed", "step": "epoch", "value": "val_acc"})
    from_frame = training_curves(frame, value="val_acc", run="seed", step="epoch", n_resamples=199, rng=2)
    from_mapping = training_curves(data, n_resamples=199, rng=2)
    np.testing.assert_array_equal(from_frame.high, from_mapping.high)
    assert from_frame.metric == "val_acc"


# -- best so far ------------------------------------------------------------------------------------------


def test_best_so_far_keeps_the_running_best_and_the_test_at_its_first_step():
    val = np.array([[0.5, 0.7, 0.6, 0.7, 0.8], [0.9, np.nan, 0.2, 0.95, 0.1]])
    test = np.array([[1.0, 2.0, 3.0, 4.0, 5.0], [6.0, np.nan, 7.0, 8.0, 9.0]])
    nan = math.nan
    np.testing.assert_array_equal(
        best_so_far(val, None, maximize=True), [[0.5, 0.7, 0.7, 0.7, 0.8], [0.9, nan, 0.9, 0.95, 0.95]]
    )
    # the tie at the fourth step keeps the model of the second (early stopping replaces it only when better)
    np.testing.assert_array_equal(best_so_far(val, test, maximize=True), [[1, 2, 2, 2, 5], [6, nan, 6, 8, 8]])
    np.testing.assert_array_equal(best_so_far(val, test, maximize=False), [[1, 1, 1, 1, 1], [6, nan, 7, 7, 9]])


def test_best_so_far_curve_averages_each_runs_test_at_its_best_validation_step():
    data = {
        "run_id": ["a"] * 3 + ["b"] * 3,
        "step": [1, 2, 3, 1, 2, 3],
        "val_loss": [3.0, 2.0, 2.5, 4.0, 4.5, 1.0],
        "test_acc": [0.1, 0.2, 0.3, 0.4, 0.5, 0.6],
    }
    curves = training_curves(
        data, value="val_loss", test="test_acc", curve="best-so-far", maximize=False, min_runs=2, n_resamples=99, rng=0
    )
    # a: best val at steps 1, 2, 2 -> test 0.1, 0.2, 0.2; b: 1, 1, 3 -> 0.4, 0.4, 0.6
    assert curves.mean == pytest.approx([0.25, 0.3, 0.4])
    assert curves.curve == "best-so-far" and curves.test == "test_acc" and curves.maximize is False
    assert curves.direction == "lower is better, as asked"


def test_best_so_far_of_a_loss_without_a_direction_is_refused():
    data = {"run_id": ["a", "b"], "step": [1, 1], "val_loss": [1.0, 2.0]}
    with pytest.raises(ValueError, match=r"'val_loss' looks like a loss.*`maximize=False`"):
        training_curves(data, value="val_loss", curve="best-so-far")
    values = training_curves(data, value="val_loss", min_runs=2, n_resamples=9, rng=0)
    assert values.maximize is None and values.direction == ""  # a curve of values needs no direction
    data["val_acc"] = data.pop("val_loss")
    best = training_curves(data, value="val_acc", curve="best-so-far", min_runs=2, n_resamples=9, rng=0)
    assert best.maximize is True and best.direction.startswith("higher is better by default: nothing said")


# -- invariants -------------------------------------------------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), order_seed=st.integers(0, 2**32 - 1), shift=st.floats(-1e3, 1e3))
def test_row_order_does_not_matter_and_a_shift_moves_everything_by_it(seed, order_seed, shift):
    data = _runs(m=6, steps=4, seed=seed)
    order = np.random.default_rng(order_seed).permutation(len(data["value"]))
    shuffled = {column: [values[i] for i in order] for column, values in data.items()}
    shifted = {**data, "value": [v + shift for v in data["value"]]}
    base = training_curves(data, n_resamples=199, rng=11, bounds=UNBOUNDED)
    again = training_curves(shuffled, n_resamples=199, rng=11, bounds=UNBOUNDED)
    moved = training_curves(shifted, n_resamples=199, rng=11, bounds=UNBOUNDED)
    for name in ("mean", "low", "high", "simultaneous_low", "simultaneous_high"):
        np.testing.assert_array_equal(getattr(again, name), getattr(base, name))
        np.testing.assert_allclose(getattr(moved, name), getattr(base, name) + shift, rtol=0, atol=1e-9)
    np.testing.assert_allclose(moved.standard_error, base.standard_error, rtol=1e-6, atol=1e-9)


# -- long curves: chunks of steps, and the steps a band is computed at ---------------------------------------


def _dyadic_runs(m: int, steps: int, seed: int) -> dict[str, np.ndarray]:
    """Runs whose values are multiples of 1/8 below 32, some runs missing some steps: every sum and square of a
    resample is exact in floating point whatever order it is summed in, so that two computations of the same
    resamples that group them differently (chunks, batches, matrix products) must agree to the last bit."""
    rng = np.random.default_rng(seed)
    values = rng.integers(0, 256, size=(m, steps)) / 8
    values[rng.random((m, steps)) < 0.15] = np.nan
    run, step = np.nonzero(~np.isnan(values))
    return {"run_id": np.char.add("r", run.astype(str)), "step": step, "value": values[run, step]}


def _direct_studentized(data: dict[str, np.ndarray], n_resamples: int, seed: int) -> np.ndarray:
    """|t*| of every resample at every step, one resample and step at a time, as the module's docstring defines it
    (each step's values centred on its first run's value; 0/0 is 0, x/0 and a step no drawn run logged are
    UNBOUNDED), from the resamples ``numpy.random.default_rng(seed)`` draws: rows of m run positions."""
    from boontrack._bootstrap.intervals import UNBOUNDED

    runs, steps = np.unique(data["run_id"]), np.unique(data["step"])
    grid = np.full((runs.size, steps.size), np.nan)
    grid[np.searchsorted(runs, data["run_id"]), np.searchsorted(steps, data["step"])] = data["value"]
    draws = np.random.default_rng(seed).integers(0, runs.size, size=(n_resamples, runs.size), dtype=np.int32)
    ratios = np.empty((n_resamples, steps.size))
    for s in range(steps.size):
        column = grid[:, s]
        logged = ~np.isnan(column)
        reference = column[np.argmax(logged)]
        centred = column - reference
        mean = reference + centred[logged].sum() / logged.sum()
        for b, drawn in enumerate(draws):
            picked = centred[drawn][logged[drawn]]
            if picked.size == 0:
                ratios[b, s] = UNBOUNDED
                continue
            total, squares = picked.sum(), (picked**2).sum()
            shift = total / picked.size
            error = (
                math.sqrt(max(squares - total * shift, 0.0) / (picked.size - 1) / picked.size) if picked.size > 1 else 0
            )
            apart = (reference + shift) - mean
            ratios[b, s] = abs(apart / error) if error > 0 else (UNBOUNDED if apart != 0 else 0.0)
    return ratios


@pytest.mark.parametrize("width", [1, 2, 5])
def test_steps_studentized_in_chunks_give_the_quantiles_of_every_resample_exactly(monkeypatch, width):
    """The pointwise quantile at each step and the largest |t*| over the steps with enough runs, computed a few steps
    and a few resamples at a time, are those of the same resamples evaluated one by one here, to the last bit."""
    from boontrack import training
    from boontrack._bootstrap.scales import Scale

    n_resamples, seed = 199, 4
    data = _dyadic_runs(m=6, steps=13, seed=1)
    monkeypatch.setattr(training, "CHUNK_ELEMENTS", n_resamples * width)
    monkeypatch.setattr(training, "BATCH_ELEMENTS", 16 * width)  # a few resamples per batch: many batches
    grid = training._grids(data["run_id"], np.zeros(data["value"].size), data["step"], data["value"], None)["0.0"]
    moments = training._moments(grid.values)
    enough = moments.runs >= 5
    at = np.arange(grid.steps.size)
    quantiles, largest = training._studentized_quantiles(
        moments, at, enough, 0.95, n_resamples, np.random.default_rng(seed), Scale(-math.inf, math.inf)
    )
    ratios = _direct_studentized(data, n_resamples, seed)
    np.testing.assert_array_equal(quantiles, np.quantile(ratios, 0.95, axis=0))
    np.testing.assert_array_equal(largest, ratios[:, enough].max(axis=1))


def test_a_curve_in_chunks_equals_it_in_one_piece(monkeypatch):
    from boontrack import training

    data = _dyadic_runs(m=7, steps=40, seed=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FewRunsWarning)
        whole = training_curves(data, n_resamples=299, rng=5, bounds=UNBOUNDED)
        monkeypatch.setattr(training, "CHUNK_ELEMENTS", 299 * 3)
        monkeypatch.setattr(training, "BATCH_ELEMENTS", 64)
        chunked = training_curves(data, n_resamples=299, rng=5, bounds=UNBOUNDED)
    for name in ("mean", "standard_error", "low", "high", "simultaneous_low", "simultaneous_high"):
        np.testing.assert_array_equal(getattr(chunked, name), getattr(whole, name))


def test_a_long_curve_gets_its_bands_at_band_steps_the_same_as_a_curve_of_those_steps_alone(monkeypatch):
    """Beyond BAND_STEPS steps, the bands are computed at BAND_STEPS of them, evenly spread, first and last
    included: there they are the bands of the curve made of those steps alone (the same resamples; a step's
    band is its own, the simultaneous one is over those steps); the other steps keep their mean and runs, and
    plots draw the band steps."""
    from boontrack import training

    monkeypatch.setattr(training, "BAND_STEPS", 6)
    data = _dyadic_runs(m=8, steps=26, seed=3)
    data["value"][data["step"] == 0] = np.arange(np.count_nonzero(data["step"] == 0))  # every run at the first
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FewRunsWarning)
        long = training_curves(data, n_resamples=199, rng=6, bounds=UNBOUNDED)
        banded = np.isfinite(long.low)
        kept = np.isin(data["step"], long.step[banded])
        alone = training_curves({k: v[kept] for k, v in data.items()}, n_resamples=199, rng=6, bounds=UNBOUNDED)
    assert long.step[banded].tolist() == [0, 5, 10, 15, 20, 25] == alone.step.tolist()
    for name in ("low", "high", "simultaneous_low", "simultaneous_high"):
        np.testing.assert_array_equal(getattr(long, name)[banded], getattr(alone, name))
        assert np.isnan(getattr(long, name)[~banded]).all()
    assert long.step.size == 26 and np.isfinite(long.mean).all() and (long.runs > 0).all()
    assert long.plotted().step.tolist() == alone.step.tolist()  # what the PNG and report.html draw
    assert alone.plotted().step.tolist() == alone.step.tolist()


def test_the_memory_of_a_curve_grows_with_its_points_not_with_resamples_times_steps():
    """Allocations traced while 6 runs of 200,000 steps get their bands with 1,999 resamples: at most 12 numbers
    of 8 bytes per point and 8 chunks of studentized values (64 MiB), where keeping every resample's value at
    every step would take 3.2 GB. tracemalloc counts numpy's allocations; the figure does not depend on the
    machine's load."""
    import tracemalloc

    from boontrack import training

    runs, steps = 6, 200_000
    data = {
        "run_id": np.repeat(np.arange(runs).astype(str).astype(object), steps),
        "step": np.tile(np.arange(steps), runs),
        "value": np.random.default_rng(0).normal(size=runs * steps),
    }
    tracemalloc.start()
    try:
        curves = training_curves(data, n_resamples=1999, rng=1)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert curves.step.size == steps and np.count_nonzero(np.isfinite(curves.low)) == training.BAND_STEPS
    assert peak <= 12 * 8 * runs * steps + 8 * 8 * training.CHUNK_ELEMENTS, peak


# -- validation -------------------------------------------------------------------------------------------


GOOD = {"run_id": ["a", "a", "b", "b"], "step": [1, 2, 1, 2], "value": [1.0, 2.0, 3.0, 4.0]}


@pytest.mark.parametrize(
    "data, options, message",
    [
        (GOOD, {"value": "acc"}, r"`value`: `data` has no column 'acc'"),
        ({**GOOD, "value": [1.0, math.nan, 3.0, 4.0]}, {}, r"`value`: column 'value' must be finite.*row 1 is nan"),
        ({**GOOD, "step": [1, 1, 1, 2]}, {}, r"2 rows for run 'a' at step 1"),
        ({**GOOD, "step": ["x"] * 4}, {}, r"`step`: column 'step' must hold real numbers"),
        ({**GOOD, "model": ["x", "y", "x", "x"]}, {"group_by": "model"}, r"`group_by`: run 'a' has rows in more"),
        (GOOD, {"min_runs": 1}, r"`min_runs` must be at least 2"),
        (GOOD, {"min_runs": 2.0}, r"`min_runs` must be an integer"),
        (GOOD, {"test": "value"}, r"`test` is for curve='best-so-far'"),
        (GOOD, {"curve": "mean"}, r"`curve` must be one of 'value', 'best-so-far'"),
        (GOOD, {"confidence_level": 1.0}, r"`confidence_level` must be in \(0, 1\)"),
        (GOOD, {"n_resamples": 0}, r"`n_resamples` must be an integer >= 1"),
        (GOOD, {"bounds": (0, 2)}, r"`bounds` \(0, 2\) do not hold score 3.0"),
        (GOOD, {"maximize": "yes", "curve": "best-so-far"}, r"`maximize` must be true or false, got 'yes'"),
        ({"run_id": [], "step": [], "value": []}, {}, r"`data` has no rows"),
        ({**GOOD, "step": [1, 2, 1]}, {}, r"`step`: the column has 3 rows, `value`'s 4"),
    ],
)
def test_bad_input_is_refused_naming_the_parameter(data, options, message):
    with pytest.raises(ValueError, match=message):
        training_curves(data, **{"min_runs": 2, "n_resamples": 9, **options})


# -- real histories -----------------------------------------------------------------------------------------


def test_best_so_far_on_the_as_reader_random_search_matches_its_logged_running_best(shared_data):
    """The Boo_n paper's random search logged, at each evaluation, the run's best validation accuracy so far and
    whether the evaluation improved on it: the best-so-far curve's mean is their mean, and its test curve the mean
    of the test accuracy at the last improving evaluation. Runs evaluated on different iteration grids."""
    pd = pytest.importorskip("pandas")
    table = pd.read_csv(shared_data / "boon-paper" / "cbtrs_results.csv")
    table = table.rename(columns={"cbtest_CN_test_2500ex.txt_accuracy": "test"})
    table = table[["log", "iterations_done", "valid_accuracy", "best_valid_accuracy", "test"]]
    options = {"run": "log", "step": "iterations_done", "curve": "best-so-far", "maximize": True}
    options |= {"min_runs": 2, "n_resamples": 99, "rng": 0}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FewRunsWarning)  # late steps reached by one run only
        val = training_curves(table, value="valid_accuracy", **options)
        test = training_curves(table, value="valid_accuracy", test="test", **options)
    logged = table.groupby("iterations_done")["best_valid_accuracy"].agg(["mean", "size"])
    assert val.step.tolist() == logged.index.tolist() and val.runs.tolist() == logged["size"].tolist()
    np.testing.assert_allclose(val.mean, logged["mean"], rtol=1e-12)
    ordered = table.sort_values(["log", "iterations_done"])
    improved = ordered["valid_accuracy"] > ordered.groupby("log")["valid_accuracy"].shift().pipe(
        lambda before: before.groupby(ordered["log"]).cummax()
    ).fillna(-np.inf)
    at_best = ordered["test"].where(improved).groupby(ordered["log"]).ffill()
    expected = at_best.groupby(ordered["iterations_done"]).mean()
    np.testing.assert_allclose(test.mean, expected.to_numpy(), rtol=1e-12)
    assert len(set(zip(table["log"], table["iterations_done"]))) == len(table) and val.step.size > 300


# -- coverage ---------------------------------------------------------------------------------------------


def test_the_simultaneous_band_covers_a_simulated_mean_curve_near_its_ceiling():
    """One cell of ``tests/benchmarks/bench_training_curves.py`` (an accuracy rising to about 0.99, 10 runs, 30
    steps), few sweeps, the true mean from 50,000 runs (its error is about 1 % of the bands'): simultaneous
    coverage not significantly below 93 % (2.5 standard errors), at a width between the pointwise band's and
    three times it."""
    from bench_training_curves import coverage

    sweeps = 100
    cell = coverage("ceiling", 10, sweeps, n_resamples=299, seed=3, truth_runs=50_000)
    assert cell.sweeps == sweeps
    assert cell.simultaneous >= 0.93 - 2.5 * math.sqrt(0.93 * 0.07 / sweeps), cell
    assert 1.0 < cell.width_ratio < 3.0, cell


# -- files ------------------------------------------------------------------------------------------------


def test_the_files_hold_the_curves_and_a_png(tmp_path):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("matplotlib")
    data = _runs(m=6, steps=4, seed=8)
    data = {column: values + extra for (column, values), extra in zip(data.items(), (["r0"], [7], [1.5]))}
    with pytest.warns(FewRunsWarning):
        curves = training_curves(data, n_resamples=199, rng=0)
    written = write_training_curves(curves, tmp_path / "out")
    assert [path.name for path in written] == ["training_curves.csv", "training_curves.png"]
    assert written[1].read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    table = pd.read_csv(written[0])
    assert table.columns.tolist() == [
        "group", "step", "runs", "mean", "standard_error", "ci_low", "ci_high", "simultaneous_low",
        "simultaneous_high", "enough_runs",
    ]  # fmt: skip
    assert table["step"].tolist() == [0, 1, 2, 3, 7] and table["enough_runs"].tolist() == [True] * 4 + [False]
    for column, values in (
        ("mean", curves.mean),
        ("ci_low", curves.low),
        ("simultaneous_high", curves.simultaneous_high),
    ):
        np.testing.assert_allclose(table[column], values, rtol=1e-15)  # NaN where the step has one run
    assert [path.name for path in write_training_curves(curves, tmp_path / "csv", plots=False)] == [
        "training_curves.csv"
    ]
