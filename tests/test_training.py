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
