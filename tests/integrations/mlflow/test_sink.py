"""The MLflow sink on its own: what a write puts in the summary run, curve thinning, abandoned partial runs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from boontrack.backends import SUMMARY_ROLE_TAG, CurveSeries, MetricRequest, SummaryOutputs
from boontrack_mlflow import MlflowSource
from boontrack_mlflow._sink import (
    KEY_TAG,
    MAX_CURVE_POINTS,
    WRITE_RECORD_PREFIX,
    WRITE_TAG,
    thin_curve,
)

from mlflow_helpers import new_sweep, summary_runs

pytestmark = pytest.mark.mlflow

KEY = "0123456789abcdef0123456789abcdef"
OUTPUTS = SummaryOutputs(
    metrics={"boon/acc/boo_5": 0.8125, "boon/runs": 7.0},
    curves=[CurveSeries("boon/acc/curve", np.arange(1, 8), np.linspace(0.5, 0.8, 7))],
    artifacts={
        "summary.json": b'{"spec": {"val": "metrics.val", "test": "acc", "n": [1, 5], "estimator": "V", "group_by": null}}',
        "nested/report.md": "# Résumé\n".encode(),
    },
    description="**boontrack** summary",
    tables={
        "curves": (
            ["group", "n", "estimate", "ci_low", "ci_high", "time"],
            [["cnn", 1, 0.5, 0.4, 0.6, None], ["cnn", 2, 0.6, 0.5, 0.7, None], ["mlp", 1, 0.55, None, None, None]],
        )
    },
)


def test_thin_curve_keeps_ends_and_log_spacing():
    n = np.arange(1, 5001)
    kept, values = thin_curve(CurveSeries("k", n, n * 2.0))
    assert kept.size <= MAX_CURVE_POINTS and kept[0] == 1 and kept[-1] == 5000
    assert np.all(np.diff(kept) > 0) and np.array_equal(values, kept * 2.0)
    assert np.all(kept[:100] == np.arange(1, 101))  # dense where the curve bends, sparse at large n
    short = CurveSeries("k", np.arange(1, 11), np.arange(10.0))
    assert thin_curve(short)[0].tolist() == list(range(1, 11))


def test_write_contents(sqlite_uri, tmp_path):
    sweep = new_sweep(sqlite_uri)
    sink = MlflowSource(parent=sweep.parent_id, tracking_uri=sqlite_uri).sink(KEY)
    assert sink.read_fingerprint() is None
    sink.write(OUTPUTS)
    assert sink.read_fingerprint() is None  # not complete until the fingerprint is written
    sink.write_fingerprint("fp-1")
    assert sink.read_fingerprint() == "fp-1"
    assert sink.run_id in sink.location()

    run = sweep.client.get_run(sink.run_id)
    assert run.info.run_name == "boon acc V n=1,5" and run.info.status == "FINISHED"
    assert run.data.params == {
        "boon.val": "metrics.val",
        "boon.test": "acc",
        "boon.n": "1,5",
        "boon.estimator": "V",
        "boon.group_by": "",
    }
    assert run.data.tags[SUMMARY_ROLE_TAG] == "summary" and run.data.tags[KEY_TAG] == KEY
    assert run.data.tags["mlflow.parentRunId"] == sweep.parent_id
    assert run.data.tags["mlflow.note.content"] == OUTPUTS.description
    for key, value in OUTPUTS.metrics.items():
        (point,) = sweep.client.get_metric_history(sink.run_id, key)
        assert (point.value, point.step, point.timestamp) == (value, 0, run.info.start_time)
    curve = sweep.client.get_metric_history(sink.run_id, "boon/acc/curve")
    assert [(m.step, m.value) for m in curve] == list(zip(range(1, 8), np.linspace(0.5, 0.8, 7)))
    for name, content in OUTPUTS.artifacts.items():
        assert Path(sweep.client.download_artifacts(sink.run_id, name, str(tmp_path))).read_bytes() == content


def test_crashed_partial_runs_are_cleaned_and_lookalikes_kept(sqlite_uri):
    sweep = new_sweep(sqlite_uri)
    sink = MlflowSource(parent=sweep.parent_id, tracking_uri=sqlite_uri).sink(KEY)
    # a write that crashed after creating its run: recorded in the experiment, left RUNNING
    write_id = "c" * 32
    sweep.client.set_experiment_tag(sweep.experiment_id, WRITE_RECORD_PREFIX + write_id, f"{KEY} 0")
    tags = {SUMMARY_ROLE_TAG: "summary", KEY_TAG: KEY, "mlflow.parentRunId": sweep.parent_id}
    crashed = sweep.client.create_run(sweep.experiment_id, tags={**tags, WRITE_TAG: write_id})
    unrecorded = sweep.client.create_run(sweep.experiment_id, tags={**tags, WRITE_TAG: "d" * 32})
    other_key = sweep.client.create_run(sweep.experiment_id, tags={**tags, KEY_TAG: "f" * 32, WRITE_TAG: write_id})

    sink.write(OUTPUTS)
    sink.write_fingerprint("fp-1")
    live = {r.info.run_id for r in summary_runs(sweep.client, sweep.experiment_id)}
    assert live == {sink.run_id, unrecorded.info.run_id, other_key.info.run_id}
    assert crashed.info.run_id in {r.info.run_id for r in summary_runs(sweep.client, sweep.experiment_id, deleted=True)}
    records = {k for k in sweep.client.get_experiment(sweep.experiment_id).tags if k.startswith(WRITE_RECORD_PREFIX)}
    assert records == {WRITE_RECORD_PREFIX + sweep.client.get_run(sink.run_id).data.tags[WRITE_TAG]}


def test_one_curve_run_per_group_under_the_summary_run(sqlite_uri):
    sweep = new_sweep(sqlite_uri)
    sink = MlflowSource(parent=sweep.parent_id, tracking_uri=sqlite_uri).sink(KEY)
    sink.write(OUTPUTS)
    sink.write_fingerprint("fp-1")
    children = sweep.client.search_runs([sweep.experiment_id], f"tags.mlflow.parentRunId = '{sink.run_id}'")
    by_name = {r.info.run_name: r for r in children}
    assert set(by_name) == {"cnn", "mlp"} and all(r.info.status == "FINISHED" for r in children)

    def points(run, key):
        return [(m.step, m.value) for m in sweep.client.get_metric_history(run.info.run_id, key)]

    cnn, mlp = by_name["cnn"], by_name["mlp"]
    assert points(cnn, "boon/curve") == [(1, 0.5), (2, 0.6)]
    assert points(cnn, "boon/curve/ci_low") == [(1, 0.4), (2, 0.5)]
    assert points(cnn, "boon/curve/ci_high") == [(1, 0.6), (2, 0.7)]
    assert points(mlp, "boon/curve") == [(1, 0.55)] and points(mlp, "boon/curve/ci_low") == []  # no band: no point
    assert cnn.data.tags["boontrack.group"] == "cnn" and cnn.data.tags[SUMMARY_ROLE_TAG] == "group-curve"
    # the curve run's page says what its metrics are and at which n the listed value is
    note = cnn.data.tags["mlflow.note.content"]
    assert "group cnn:" in note and "(n = 1 to 2)" in note and "those at n = 2." in note and "Compare" in note
    # never read back as input, from the experiment as from the sweep
    frame = MlflowSource(sweep.experiment_name, tracking_uri=sqlite_uri).read(MetricRequest("val"))
    assert frame.empty


def test_an_up_to_date_summary_run_gives_its_summary_back(sqlite_uri):
    sweep = new_sweep(sqlite_uri)
    source = MlflowSource(parent=sweep.parent_id, tracking_uri=sqlite_uri)
    writer = source.sink(KEY)
    writer.write(OUTPUTS)
    writer.write_fingerprint("fp-1")

    reader = source.sink(KEY)
    assert reader.read_summary("fp-1") is None  # nothing found yet: read_fingerprint() first
    assert reader.read_fingerprint() == "fp-1"
    assert reader.read_summary("fp-1") == {
        "spec": {"val": "metrics.val", "test": "acc", "n": [1, 5], "estimator": "V", "group_by": None}
    }
    assert reader.read_summary("fp-other") is None  # another fingerprint: recompute
    assert reader._made_client is None  # found by SQL, read from the run's artifact directory


@pytest.mark.parametrize(
    ("uri", "directory"),
    [
        ("file:///srv/ml%20runs/1/abc/artifacts", "/srv/ml runs/1/abc/artifacts"),
        ("file://localhost/srv/mlruns/1/abc/artifacts", "/srv/mlruns/1/abc/artifacts"),
        ("/srv/mlruns/1/abc/artifacts", "/srv/mlruns/1/abc/artifacts"),
        ("mlruns/1/abc/artifacts", None),  # relative: to a working directory this process may not share
        ("file://fileserver/mlruns/1/abc/artifacts", None),
        ("mlflow-artifacts:/1/abc/artifacts", None),
        ("s3://bucket/mlruns/1/abc/artifacts", None),
        ("", None),
        (None, None),
    ],
)
def test_only_artifacts_on_this_machine_are_read_without_the_client(uri, directory):
    from boontrack_mlflow._client import local_artifact_directory

    assert local_artifact_directory(uri) == (None if directory is None else Path(directory))


def test_a_completing_writer_never_deletes_a_newer_summary_still_being_written(sqlite_uri):
    # Two writers that see each other's completion at different moments must not each delete the other's
    # summary (which left none): only summaries older than the newest complete one are superseded.
    import time

    sweep = new_sweep(sqlite_uri)
    source = MlflowSource(parent=sweep.parent_id, tracking_uri=sqlite_uri)
    older, newer = source.sink(KEY), source.sink(KEY)
    older.write(OUTPUTS)
    time.sleep(0.01)  # distinct start times: the second run is the newer one
    newer.write(OUTPUTS)
    older.write_fingerprint("fp-1")  # complete first, while the newer run has no fingerprint yet
    live = {r.info.run_id for r in summary_runs(sweep.client, sweep.experiment_id)}
    assert live == {older.run_id, newer.run_id}

    newer.write_fingerprint("fp-1")  # the newest complete summary supersedes the older one
    (kept,) = summary_runs(sweep.client, sweep.experiment_id)
    assert kept.info.run_id == newer.run_id and source.sink(KEY).read_fingerprint() == "fp-1"
