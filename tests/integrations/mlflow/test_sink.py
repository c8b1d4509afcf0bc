"""The MLflow sink on its own: what a write puts in the summary run, curve thinning, abandoned partial runs."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest

from boontrack.backends import SUMMARY_ROLE_TAG, CurveSeries, SummaryOutputs
from boontrack.integrations.mlflow import MlflowSource
from boontrack.integrations.mlflow._sink import ABANDONED_AFTER_MS, KEY_TAG, MAX_CURVE_POINTS, thin_curve

from integrations.mlflow.mlflow_helpers import new_sweep, summary_runs

pytestmark = pytest.mark.mlflow

KEY = "0123456789abcdef0123456789abcdef"
OUTPUTS = SummaryOutputs(
    metrics={"boon/acc/boo_5": 0.8125, "boon/runs": 7.0},
    curves=[CurveSeries("boon/acc/curve", np.arange(1, 8), np.linspace(0.5, 0.8, 7))],
    artifacts={"summary.json": b'{"a": 1}', "nested/report.md": "# Résumé\n".encode()},
    description="**boontrack** summary",
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
    assert run.info.run_name == "boontrack summary" and run.info.status == "FINISHED"
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


def test_abandoned_partial_runs_are_cleaned_and_fresh_ones_kept(sqlite_uri):
    sweep = new_sweep(sqlite_uri)
    tags = {SUMMARY_ROLE_TAG: "summary", KEY_TAG: KEY, "mlflow.parentRunId": sweep.parent_id}
    now = int(time.time() * 1000)
    crashed = sweep.client.create_run(sweep.experiment_id, start_time=now - 2 * ABANDONED_AFTER_MS, tags=tags)
    in_progress = sweep.client.create_run(sweep.experiment_id, start_time=now, tags=tags)
    other_key = sweep.client.create_run(sweep.experiment_id, tags={**tags, KEY_TAG: "f" * 32})

    sink = MlflowSource(parent=sweep.parent_id, tracking_uri=sqlite_uri).sink(KEY)
    sink.write(OUTPUTS)
    sink.write_fingerprint("fp-1")
    live = {r.info.run_id for r in summary_runs(sweep.client, sweep.experiment_id)}
    assert live == {sink.run_id, in_progress.info.run_id, other_key.info.run_id}
    assert crashed.info.run_id in {r.info.run_id for r in summary_runs(sweep.client, sweep.experiment_id, deleted=True)}
