"""Reading MLflow runs into the run frame: columns, statuses, summary-run exclusion, best-val-step pairing."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from mlflow.entities import Metric

from boontrack.backends import SUMMARY_ROLE_TAG, MetricRequest, load_backend
from boontrack.exceptions import InputError
from boontrack_mlflow import MlflowBackend, MlflowSource

from mlflow_helpers import mixed_sweep, new_sweep

pytestmark = pytest.mark.mlflow


def test_entry_point_resolves_to_the_backend():
    backend = load_backend("mlflow")
    assert isinstance(backend, MlflowBackend)
    assert set(backend.options) == {"parent", "tracking-uri", "read-path"}


def test_run_frame_columns_and_values(any_uri):
    sweep = mixed_sweep(any_uri)
    frame = MlflowSource(sweep.experiment_name, parent=sweep.parent_id, tracking_uri=any_uri).read(
        MetricRequest("val_acc", "test_acc")
    )
    assert sorted(frame["run_id"]) == sorted(sweep.children)  # parent not included, no run dropped
    frame = frame.set_index("run_id")
    for run_id, logged in sweep.children.items():
        row = frame.loc[run_id]
        assert row["status"] == logged["status"].lower()
        assert row["params.seed"] == str(logged["params"]["seed"])
        assert row["tags.mlflow.parentRunId"] == sweep.parent_id
        if logged["val"]:
            # "last" = the value at the highest step
            assert row["metrics.val_acc"] == logged["val"][-1]
            assert row["metrics.test_acc"] == logged["test"][-1]
        else:
            assert np.isnan(row["metrics.val_acc"])
    running = [r for r, c in sweep.children.items() if c["status"] == "RUNNING"]
    assert np.isnan(frame.loc[running[0], "duration_s"])
    finished = frame[frame["status"] == "finished"]
    assert (finished["duration_s"] >= 0).all() and finished["duration_s"].notna().all()
    assert frame["created_at"].dtype == "datetime64[ns, UTC]"
    run = sweep.client.get_run(running[0])
    assert frame.loc[running[0], "created_at"] == pd.Timestamp(run.info.start_time, unit="ms", tz="UTC")


def test_experiment_by_id_and_whole_experiment(sqlite_uri, monkeypatch):
    sweep = mixed_sweep(sqlite_uri, finished=3)
    # an id is looked up as an id: no name lookup that is bound to fail first
    monkeypatch.setattr("mlflow.MlflowClient.get_experiment_by_name", lambda *a: pytest.fail("looked up by name"))
    frame = MlflowSource(sweep.experiment_id, tracking_uri=sqlite_uri).read(MetricRequest("val_acc"))
    # without a parent the parent run is left out by itself: it has child runs, so it is no trial
    assert sorted(frame["run_id"]) == sorted(sweep.children)
    lone = sweep.client.create_run(sweep.experiment_id).info.run_id  # a run without children stays a trial
    frame = MlflowSource(sweep.experiment_id, tracking_uri=sqlite_uri).read(MetricRequest("val_acc"))
    assert sorted(frame["run_id"]) == sorted([*sweep.children, lone])
    via_backend = load_backend("mlflow").open_source("", parent=sweep.parent_id, tracking_uri=sqlite_uri)
    assert sorted(via_backend.read(MetricRequest("val_acc"))["run_id"]) == sorted(sweep.children)


def test_summary_runs_are_never_read(any_uri):
    sweep = new_sweep(any_uri)
    kept = sweep.add_child(val=[0.5])
    summary = sweep.client.create_run(
        sweep.experiment_id, tags={"mlflow.parentRunId": sweep.parent_id, SUMMARY_ROLE_TAG: "summary"}
    )
    sweep.client.log_metric(summary.info.run_id, "val_acc", 0.9)
    sweep.client.log_metric(summary.info.run_id, "boon/val_acc/boo_5", 0.9)
    for source in (
        MlflowSource(sweep.experiment_name, parent=sweep.parent_id, tracking_uri=any_uri),
        MlflowSource(sweep.experiment_name, tracking_uri=any_uri),
    ):
        frame = source.read(MetricRequest("val_acc"))
        assert kept in set(frame["run_id"]) and summary.info.run_id not in set(frame["run_id"])
        assert not any(c.startswith("metrics.boon/") for c in frame.columns)  # nothing of it left behind


def test_best_val_step_pairs_test_with_best_epoch(any_uri):
    sweep = new_sweep(any_uri)
    rising = sweep.add_child(val=[0.5, 0.7, 0.9, 0.6], test=[0.4, 0.6, 0.8, 0.65])
    tie = sweep.add_child(val=[0.8, 0.7, 0.8], test=[0.71, 0.72, 0.73])  # best reached twice: earliest epoch
    single = sweep.add_child(val=[0.55], test=[0.44])
    test_once = sweep.add_child(val=[0.3, 0.9, 0.4], test=None)
    sweep.client.log_metric(test_once, "test_acc", 0.77, step=2)  # evaluated once, after training
    gap = sweep.add_child(val=[0.2, 0.95, 0.1], test=None)
    # a test history without a point at the best step
    sweep.client.log_batch(gap, metrics=[Metric("test_acc", v, 1, step) for step, v in ((0, 0.1), (2, 0.3))])
    source = MlflowSource(sweep.experiment_id, parent=sweep.parent_id, tracking_uri=any_uri)
    frame = source.read(MetricRequest("val_acc", "test_acc", pick="best_val_step")).set_index("run_id")
    assert frame.loc[rising, ["metrics.val_acc", "metrics.test_acc"]].tolist() == [0.9, 0.8]
    assert frame.loc[tie, ["metrics.val_acc", "metrics.test_acc"]].tolist() == [0.8, 0.71]
    assert frame.loc[single, ["metrics.val_acc", "metrics.test_acc"]].tolist() == [0.55, 0.44]
    assert frame.loc[test_once, ["metrics.val_acc", "metrics.test_acc"]].tolist() == [0.9, 0.77]
    assert frame.loc[gap, "metrics.val_acc"] == 0.95 and np.isnan(frame.loc[gap, "metrics.test_acc"])

    minimized = source.read(MetricRequest("val_acc", "test_acc", maximize=False, pick="best_val_step"))
    minimized = minimized.set_index("run_id")
    assert minimized.loc[rising, ["metrics.val_acc", "metrics.test_acc"]].tolist() == [0.5, 0.4]


def test_best_val_step_asks_histories_only_of_runs_with_more_than_one_step(any_uri, monkeypatch):
    from boontrack_mlflow import _read

    monkeypatch.setenv("BOONTRACK_MLFLOW_READ_PATH", "client")  # the client path's requests (test_sql.py: SQL)
    sweep = new_sweep(any_uri)
    epochs = {sweep.add_child(val=[0.5, 0.9, 0.7], test=[0.4, 0.8, 0.6]) for _ in range(2)}
    once = {
        sweep.add_child(val=[0.6 + k / 100], test=[0.5 + k / 100]): (0.6 + k / 100, 0.5 + k / 100) for k in range(5)
    }
    asked: list[set] = []
    histories = _read.metric_histories
    monkeypatch.setattr(_read, "metric_histories", lambda c, ids, key: asked.append(set(ids)) or histories(c, ids, key))
    source = MlflowSource(sweep.experiment_id, parent=sweep.parent_id, tracking_uri=any_uri)
    frame = source.read(MetricRequest("val_acc", "test_acc", pick="best_val_step")).set_index("run_id")
    assert asked == [epochs, epochs]  # val and test histories of the two multi-epoch runs, nothing else
    for run_id in epochs:
        assert frame.loc[run_id, ["metrics.val_acc", "metrics.test_acc"]].tolist() == [0.9, 0.8]
    for run_id, values in once.items():
        assert frame.loc[run_id, ["metrics.val_acc", "metrics.test_acc"]].tolist() == list(values)


def test_best_val_step_splits_truncated_history_requests(mlflow_server, monkeypatch):
    """More points than one get-history-bulk answer holds: the request is split, nothing is lost."""
    from boontrack_mlflow import _read

    monkeypatch.setattr(_read, "HISTORY_POINTS_PER_REQUEST", 7)
    sweep = new_sweep(mlflow_server)
    runs = {sweep.add_child(val=list(np.linspace(0.1, 0.1 * k, 3 + k)), test=None): 0.1 * k for k in range(1, 6)}
    frame = MlflowSource(sweep.experiment_id, parent=sweep.parent_id, tracking_uri=mlflow_server).read(
        MetricRequest("val_acc", pick="best_val_step")
    )
    got = frame.set_index("run_id")["metrics.val_acc"]
    assert got.to_dict() == pytest.approx(runs)


@pytest.mark.parametrize(
    ("location", "options", "message"),
    [
        ("no-such-experiment", {}, "no MLflow experiment named or with id 'no-such-experiment'"),
        ("987654", {}, "no MLflow experiment named or with id '987654'"),
        ("", {}, "needs an experiment"),
        (
            "x",
            {"colour": "red"},
            "unknown option(s) for mlflow sources: `colour` (known: `parent`, `read_path`, `tracking_uri`)",
        ),
    ],
)
def test_bad_selection_is_an_input_error(sqlite_uri, location, options, message):
    with pytest.raises(InputError) as info:
        MlflowBackend().open_source(location, tracking_uri=sqlite_uri, **options).read(MetricRequest("val_acc"))
    assert message in str(info.value)


def test_deleted_unknown_or_foreign_parent_is_an_input_error(sqlite_uri):
    sweep = new_sweep(sqlite_uri)
    other = new_sweep(sqlite_uri)
    with pytest.raises(InputError, match="belongs to experiment"):
        MlflowSource(other.experiment_name, parent=sweep.parent_id, tracking_uri=sqlite_uri).identity()
    with pytest.raises(InputError, match="no MLflow run with id 'f00'"):
        MlflowSource(sweep.experiment_name, parent="f00", tracking_uri=sqlite_uri).identity()
    sweep.client.delete_run(sweep.parent_id)
    with pytest.raises(InputError, match=f"parent run {sweep.parent_id} is deleted"):
        MlflowSource(sweep.experiment_name, parent=sweep.parent_id, tracking_uri=sqlite_uri).read(MetricRequest("v"))


def test_identity_is_stable_and_free_of_the_uri(sqlite_uri):
    sweep = new_sweep(sqlite_uri)
    by_name = MlflowSource(sweep.experiment_name, parent=sweep.parent_id, tracking_uri=sqlite_uri)
    by_id = MlflowSource(sweep.experiment_id, parent=sweep.parent_id, tracking_uri=sqlite_uri)
    by_parent = MlflowSource(parent=sweep.parent_id, tracking_uri=sqlite_uri)
    assert by_name.identity() == by_id.identity() == by_parent.identity()
    assert "sqlite" not in by_name.identity()
    assert by_name.identity() != MlflowSource(sweep.experiment_id, tracking_uri=sqlite_uri).identity()
