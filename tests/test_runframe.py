"""The shared run-frame layer: the best-validation pick (hand-built histories with the pick written down),
the frame's column typing, summary-run recognition, option checking and artifact paths."""

from __future__ import annotations

import math
from datetime import datetime, timezone

import numpy as np
import pandas as pd
import pytest

from boontrack.backends import MetricRequest
from boontrack.exceptions import InputError
from boontrack.runframe import (
    RunRecord,
    apply_best_val_step,
    artifact_path,
    build_run_frame,
    build_run_frame_long,
    check_options,
    is_summary_run,
    pick_best_val_step,
    write_artifacts,
)


def points(history: dict[str, list[tuple[int, float]]]) -> pd.DataFrame:
    """Long-format points from {run_id: [(step, value), ...]} in logging order."""
    rows = [(run, step, value) for run, pts in history.items() for step, value in pts]
    return pd.DataFrame(rows, columns=["run_id", "step", "value"])


NAN = math.nan

# Each case: val history, test history, the expected (best step, val, test) written down by hand.
CASES = {
    # test logged with validation at every step: the test at the best step (step 2)
    "same_steps": ([(0, 0.5), (1, 0.7), (2, 0.9), (3, 0.6)], [(0, 0.4), (1, 0.6), (2, 0.8), (3, 0.65)], (2, 0.9, 0.8)),
    # the best value reached at steps 0 and 2: the earliest (the checkpoint early stopping keeps)
    "tie": ([(0, 0.8), (1, 0.7), (2, 0.8)], [(0, 0.71), (1, 0.72), (2, 0.73)], (0, 0.8, 0.71)),
    # the case: the test evaluated once after training, at a step after every validation point
    "test_once_after": ([(0, 0.70), (1, 0.74), (2, 0.72)], [(3, 0.731)], (1, 0.74, 0.731)),
    # a single test point at the last validation step (MLflow's usual step for a final evaluation)
    "test_once_at_last": ([(0, 0.3), (1, 0.9), (2, 0.4)], [(2, 0.77)], (1, 0.9, 0.77)),
    # several test points, none at the best step: no test for this model
    "test_elsewhere": ([(0, 0.2), (1, 0.95), (2, 0.1)], [(0, 0.1), (2, 0.3)], (1, 0.95, NAN)),
    # NaN validation at a step: not a candidate, even though it would be "largest" in no order
    "nan_val": ([(0, 0.6), (1, NAN), (2, 0.65)], [(0, 0.5), (1, 0.9), (2, 0.55)], (2, 0.65, 0.55)),
    # NaN test at the best step: NaN (the value from another step would describe another model)
    "nan_test_at_best": ([(0, 0.6), (1, 0.9)], [(0, 0.5), (1, NAN)], (1, 0.9, NAN)),
    # a step logged twice (a resumed run): the last value logged for it counts
    "relogged_step": ([(0, 0.9), (1, 0.5), (0, 0.4)], [(0, 0.8), (1, 0.45)], (1, 0.5, 0.45)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_pick_follows_the_documented_rule(name):
    val, test, (step, want_val, want_test) = CASES[name]
    picked = pick_best_val_step(points({"r": val}), points({"r": test}), maximize=True)
    assert picked.loc["r", "step"] == step and picked.loc["r", "val"] == want_val
    got = picked.loc["r", "test"]
    assert (math.isnan(got) and math.isnan(want_test)) or got == want_test


def test_pick_is_computed_for_every_run_at_once():
    val = {name: case[0] for name, case in CASES.items()}
    test = {name: case[1] for name, case in CASES.items()}
    picked = pick_best_val_step(points(val), points(test), maximize=True)
    assert list(picked.index) == sorted(CASES)
    for name, (_, _, (step, want_val, want_test)) in CASES.items():
        assert picked.loc[name, "step"] == step and picked.loc[name, "val"] == want_val
        assert np.isnan(want_test) if np.isnan(picked.loc[name, "test"]) else picked.loc[name, "test"] == want_test


def test_minimize_picks_the_lowest_and_its_earliest_tie():
    val = {"loss": [(0, 0.9), (1, 0.3), (2, 0.5), (3, 0.3)]}
    test = {"loss": [(0, 0.1), (1, 0.2), (2, 0.3), (3, 0.4)]}
    picked = pick_best_val_step(points(val), points(test), maximize=False)
    assert picked.loc["loss", ["step", "val", "test"]].tolist() == [1, 0.3, 0.2]


def test_runs_without_points_are_absent_and_without_test_not_logged():
    picked = pick_best_val_step(points({"a": [(0, 0.5)], "b": [(0, NAN)]}), points({"c": [(0, 1.0)]}))
    assert list(picked.index) == ["a"]  # "b" has no usable validation point, "c" no validation at all
    assert not picked.loc["a", "test_logged"] and np.isnan(picked.loc["a", "test"])
    assert pick_best_val_step(points({"a": [(0, 0.5)]})).loc["a", "val"] == 0.5


def test_apply_replaces_the_picked_values_and_keeps_the_last_ones_otherwise():
    frame = pd.DataFrame(
        {"run_id": ["a", "b", "c"], "metrics.val": [0.1, 0.2, 0.3], "metrics.test": [0.11, 0.22, 0.33]}
    )
    picked = pick_best_val_step(
        points({"a": [(0, 0.9), (1, 0.1)], "b": [(0, 0.8)]}), points({"a": [(0, 0.95), (1, 0.11)]})
    )
    out = apply_best_val_step(frame, picked, MetricRequest("val", "test", pick="best_val_step"))
    # a: both picked; b: val picked, no test point (a summary value set once): kept; c: no history at all
    assert out["metrics.val"].tolist() == [0.9, 0.8, 0.3]
    assert out["metrics.test"].tolist() == [0.95, 0.22, 0.33]
    assert frame["metrics.val"].tolist() == [0.1, 0.2, 0.3]  # the input is not modified


def test_frame_typing_is_one_for_every_backend():
    frame = build_run_frame(
        [
            RunRecord(
                "r1",
                "FINISHED",
                datetime(2026, 1, 1, tzinfo=timezone.utc),
                12.5,
                {"lr": "0.1"},
                {"acc": 0.5},
                {"note": "x"},
            ),
            RunRecord("r2", "", "2026-01-01T00:00:03", None, {"lr": 0.2, "seed": 1}, {"acc": 1}, {}),
            RunRecord("s", "FINISHED", None, None, {}, {"boon/acc/boo_5": 0.9}, {"boontrack.role": "summary"}),
        ]
    )
    assert list(frame.columns) == [
        "run_id",
        "status",
        "created_at",
        "duration_s",
        "params.lr",
        "params.seed",
        "metrics.acc",
        "tags.note",
    ]
    assert frame["run_id"].tolist() == ["r1", "r2"] and frame["status"].tolist() == ["finished", "unknown"]
    assert str(frame["run_id"].dtype) == str(frame["status"].dtype) == str(frame["tags.note"].dtype) == "str"
    assert frame["created_at"].dtype == "datetime64[ns, UTC]"
    assert frame["created_at"].tolist()[1] == pd.Timestamp("2026-01-01T00:00:03", tz="UTC")
    assert frame["metrics.acc"].dtype == "float64" and np.isnan(frame["duration_s"].iloc[1])
    assert frame["tags.note"].isna().tolist() == [False, True]


def test_an_empty_frame_has_the_contract_columns():
    frame = build_run_frame([])
    assert list(frame.columns) == ["run_id", "status", "created_at", "duration_s"] and frame.empty


@pytest.mark.parametrize(
    "records",
    [
        [
            RunRecord(
                "r1",
                "FINISHED",
                datetime(2026, 1, 1, tzinfo=timezone.utc),
                12.5,
                {"lr": "0.1", "seed": "3"},
                {"acc": 0.5, "loss": NAN},
                {"note": "x", "empty": None},
            ),
            RunRecord("r2", "", None, None, {"lr": "0.2"}, {"acc": math.inf}, {"note": ""}),
            RunRecord("s", "RUNNING", None, None, {"boon.n": "5"}, {"boon/acc": 0.9}, {"boontrack.role": "summary"}),
            RunRecord("c", "FINISHED", None, None, {}, {}, {"boontrack.role": "group-curve"}),
            RunRecord("r3", "FAILED", datetime(2026, 1, 2, tzinfo=timezone.utc), None, {}, {}, {}),
        ],
        [RunRecord("only", "KILLED", datetime(2026, 1, 1, tzinfo=timezone.utc), 1.0)],
        [],
    ],
)
def test_the_long_builder_gives_the_frame_of_the_record_builder(records):
    def long(attribute: str) -> pd.DataFrame:
        rows = [(r.run_id, k, v) for r in records for k, v in getattr(r, attribute).items()]
        return pd.DataFrame(rows, columns=["run_id", "key", "value"])

    runs = pd.DataFrame(
        {
            "run_id": [r.run_id for r in records],
            "status": [r.status for r in records],
            "created_at": pd.to_datetime(pd.Series([r.created_at for r in records], dtype=object), utc=True),
            "duration_s": [np.nan if r.duration_s is None else r.duration_s for r in records],
        }
    )
    frame = build_run_frame_long(runs, params=long("params"), metrics=long("metrics"), tags=long("tags"))
    pd.testing.assert_frame_equal(frame, build_run_frame(records))


def test_summary_runs_are_recognised_by_one_marker():
    assert is_summary_run({"boontrack.role": "summary"}) and is_summary_run({"boontrack.role": "group-curve"})
    assert not is_summary_run({"boontrack.role": "input"}) and not is_summary_run({})


def test_options_are_checked_once_for_every_backend():
    given = check_options("mlflow", {"tracking-uri": "x", "parent": None}, ["parent", "tracking-uri"])
    assert given == {"tracking_uri": "x"}
    with pytest.raises(InputError, match=r"unknown option\(s\) for wandb sources: `colour` \(known: `group`\)"):
        check_options("wandb", {"colour": "red"}, ["group"])


@pytest.mark.parametrize("bad", ["", "/etc/passwd", "../x", "a/../../x", "a\\..\\x"])
def test_artifact_paths_that_leave_the_directory_are_refused(bad, tmp_path):
    with pytest.raises(ValueError, match="artifact path"):
        write_artifacts(tmp_path / "out", {"ok.txt": b"1", bad: b"2"})
    assert not (tmp_path / "out").exists()  # nothing written when any path is refused


def test_artifacts_are_written_below_the_directory(tmp_path):
    written = write_artifacts(tmp_path, {"a.txt": b"1", "plots/b.png": b"2"})
    assert written == [tmp_path / "a.txt", tmp_path / "plots" / "b.png"]
    assert (tmp_path / "plots" / "b.png").read_bytes() == b"2"
    with pytest.raises(ValueError, match="reserved"):
        artifact_path("metrics.json", reserved={"metrics.json"})


def test_no_points_give_no_picks():
    empty = pd.DataFrame({"run_id": [], "step": [], "value": []})
    assert pick_best_val_step(empty, empty).empty
