"""Sweep in MLflow -> summarize_sweep -> summary run: values, artifacts, idempotency, supersession, concurrency."""

from __future__ import annotations

import csv
import io
import json
import re
import subprocess
import sys
import threading
from pathlib import Path

import mlflow
import numpy as np
import pytest

from boontrack.backends import SUMMARY_ROLE_TAG
from boontrack.exceptions import InputError, WriteBackWarning
from boontrack.mlflow import sweep  # the short alias module
from boontrack_mlflow import summarize_sweep

from mlflow_helpers import boo_n_v, mixed_sweep, new_sweep, snapshot, summary_runs

pytestmark = pytest.mark.mlflow

N = (1, 3, 5)
FAST = {"n_resamples": 200}  # the bootstrap is not under test here


def expected_scores(sweep) -> tuple[np.ndarray, np.ndarray]:
    """(val, test) of the finished children with the metric, last logged values, as the test logged them."""
    kept = sweep.finished()
    return (np.array([c["val"][-1] for c in kept.values()]), np.array([c["test"][-1] for c in kept.values()]))


def read_artifact(client, run_id: str, name: str, tmp_path: Path) -> bytes:
    return Path(client.download_artifacts(run_id, name, str(tmp_path))).read_bytes()


def test_round_trip(any_uri, tmp_path):
    sweep_ = mixed_sweep(any_uri)
    client = sweep_.client
    before = snapshot(client, [sweep_.parent_id, *sweep_.children])

    result = summarize_sweep(sweep_.parent_id, val="val_acc", test="test_acc", n=N, tracking_uri=any_uri, **FAST)

    assert result.status == "updated" and result.ok
    (summary,) = summary_runs(client, sweep_.experiment_id)
    tags = summary.data.tags
    assert tags[SUMMARY_ROLE_TAG] == "summary"
    assert tags["mlflow.parentRunId"] == sweep_.parent_id
    assert tags["boontrack.fingerprint"] == result.fingerprint
    assert "boontrack" in tags["mlflow.note.content"]
    assert summary.info.status == "FINISHED"

    val, test = expected_scores(sweep_)
    metrics = summary.data.metrics
    assert metrics["boon/runs"] == val.size == 12
    assert metrics["boon/dropped"] == 3  # FAILED, RUNNING, missing metric
    assert metrics["boon/test_acc/mean"] == pytest.approx(test.mean(), abs=1e-12)
    for n in N:
        assert metrics[f"boon/test_acc/boo_{n}"] == pytest.approx(boo_n_v(val, test, n), abs=1e-12)
    curve = client.get_metric_history(summary.info.run_id, "boon/test_acc/curve")
    steps = [m.step for m in curve]
    assert steps == sorted(set(steps)) and steps[0] == 1  # one point per n, the step is n
    by_step = {m.step: m.value for m in curve}
    assert by_step[1] == pytest.approx(test.mean(), abs=1e-12)
    assert by_step[5] == pytest.approx(boo_n_v(val, test, 5), abs=1e-12)

    artifacts = {a.path for a in client.list_artifacts(summary.info.run_id)}
    assert {"summary.json", "report.md", "curves.csv", "runs.csv"} <= artifacts
    document = json.loads(read_artifact(client, summary.info.run_id, "summary.json", tmp_path))
    assert json.dumps(document)  # valid JSON with every number
    report = read_artifact(client, summary.info.run_id, "report.md", tmp_path).decode()
    assert "test_acc" in report
    rows = list(
        csv.DictReader(io.StringIO(read_artifact(client, summary.info.run_id, "curves.csv", tmp_path).decode()))
    )
    assert len(rows) >= len(steps)

    # the missing metric is dropped with its reason, not silently
    missing = next(r for r, c in sweep_.children.items() if c["val"] is None)
    reasons = {d.run_id: d.reason for d in result.summary.dropped}
    assert missing in reasons and "val_acc" in reasons[missing]
    assert before == snapshot(client, [sweep_.parent_id, *sweep_.children])  # the user's runs are untouched


def test_second_run_writes_nothing_and_a_new_child_supersedes_once(sqlite_uri):
    sweep_ = mixed_sweep(sqlite_uri, finished=8)
    client = sweep_.client
    first = summarize_sweep(sweep_.parent_id, val="val_acc", test="test_acc", n=N, tracking_uri=sqlite_uri, **FAST)
    (old,) = summary_runs(client, sweep_.experiment_id)
    state = snapshot(client, [old.info.run_id])

    again = summarize_sweep(sweep_.parent_id, val="val_acc", test="test_acc", n=N, tracking_uri=sqlite_uri, **FAST)
    assert again.status == "unchanged" and again.fingerprint == first.fingerprint
    assert snapshot(client, [old.info.run_id]) == state  # metric histories, tags and artifacts unchanged
    assert [r.info.run_id for r in summary_runs(client, sweep_.experiment_id)] == [old.info.run_id]

    sweep_.add_child(val=[0.97], test=[0.96], params={"seed": 50, "lr": 0.1})
    changed = summarize_sweep(sweep_.parent_id, val="val_acc", test="test_acc", n=N, tracking_uri=sqlite_uri, **FAST)
    assert changed.status == "updated" and changed.fingerprint != first.fingerprint
    (new,) = summary_runs(client, sweep_.experiment_id)
    assert new.info.run_id != old.info.run_id
    assert [r.info.run_id for r in summary_runs(client, sweep_.experiment_id, deleted=True)] == [old.info.run_id]
    val, test = expected_scores(sweep_)
    curve = client.get_metric_history(new.info.run_id, "boon/test_acc/curve")
    assert len(curve) == len({m.step for m in curve}) == val.size  # no stale points from the old summary
    assert {m.step: m.value for m in curve}[3] == pytest.approx(boo_n_v(val, test, 3), abs=1e-12)

    third = summarize_sweep(sweep_.parent_id, val="val_acc", test="test_acc", n=N, tracking_uri=sqlite_uri, **FAST)
    assert third.status == "unchanged"
    assert len(summary_runs(client, sweep_.experiment_id)) == 1


def test_concurrent_summaries_leave_one_live_summary_run(mlflow_server):
    sweep_ = mixed_sweep(mlflow_server, finished=6)
    results = []

    def summarize() -> None:
        results.append(
            summarize_sweep(sweep_.parent_id, val="val_acc", test="test_acc", n=N, tracking_uri=mlflow_server, **FAST)
        )

    threads = [threading.Thread(target=summarize) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(r.ok for r in results) and {r.fingerprint for r in results} == {results[0].fingerprint}
    live = summary_runs(sweep_.client, sweep_.experiment_id)
    assert len(live) == 1
    assert live[0].data.tags["boontrack.fingerprint"] == results[0].fingerprint
    assert (
        summarize_sweep(
            sweep_.parent_id, val="val_acc", test="test_acc", n=N, tracking_uri=mlflow_server, **FAST
        ).status
        == "unchanged"
    )


def test_sweep_context_manager_opens_parent_and_summarizes(sqlite_uri):
    previous = mlflow.get_tracking_uri()
    name = new_sweep(sqlite_uri).experiment_name + "-ctx"
    try:
        with sweep(val="val_acc", n=(1, 2), experiment=name, tracking_uri=sqlite_uri, **FAST) as handle:
            for seed in range(5):
                with mlflow.start_run(nested=True):
                    mlflow.log_param("seed", seed)
                    mlflow.log_metric("val_acc", 0.5 + seed / 10)
        assert handle.result.status == "updated"
        client = mlflow.MlflowClient(sqlite_uri)
        assert client.get_run(handle.parent_run_id).info.status == "FINISHED"
        (summary,) = summary_runs(client, handle.experiment_id)
        assert summary.data.metrics["boon/val_acc/mean"] == pytest.approx(0.7)

        with pytest.raises(RuntimeError, match="diverged"):
            with sweep(val="val_acc", experiment=name, tracking_uri=sqlite_uri) as failed:
                raise RuntimeError("diverged")
        assert client.get_run(failed.parent_run_id).info.status == "FAILED" and failed.result is None
    finally:
        while mlflow.active_run():
            mlflow.end_run()
        mlflow.set_tracking_uri(previous)


def test_a_sweep_of_eight_seeds_reports_the_budgets_it_has_runs_for(sqlite_uri):
    """The README's sweep with 8 seeds and no n: Boo_1 and Boo_5, and Boo_10 named as left out."""
    previous = mlflow.get_tracking_uri()
    name = new_sweep(sqlite_uri).experiment_name + "-eight"
    scores = [0.61, 0.74, 0.66, 0.70, 0.58, 0.79, 0.63, 0.69]
    try:
        with sweep(val="val_acc", experiment=name, tracking_uri=sqlite_uri, **FAST) as handle:
            for seed, score in enumerate(scores):
                with mlflow.start_run(nested=True):
                    mlflow.log_param("seed", seed)
                    mlflow.log_metric("val_acc", score)
    finally:
        while mlflow.active_run():
            mlflow.end_run()
        mlflow.set_tracking_uri(previous)
    assert handle.result.status == "updated", handle.result.error
    (group,) = handle.result.summary.groups
    assert sorted(group.boo_n) == [1, 5] and group.left_out_budgets == (10,)
    assert group.boo_n[5].estimate == pytest.approx(boo_n_v(np.array(scores), np.array(scores), 5), abs=1e-12)
    (summary,) = summary_runs(mlflow.MlflowClient(sqlite_uri), handle.experiment_id)
    assert "boon/val_acc/boo_5" in summary.data.metrics and "boon/val_acc/boo_10" not in summary.data.metrics


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"val": "val_acc", "n": (1, 10)}, r"too few runs for n = 10: group 'all' has 3 runs.*smaller `n`"),
        ({"val": "val_f1"}, r"no column 'val_f1' .*available columns: .*metrics.val_acc"),
    ],
)
def test_data_problems_warn_and_fail_the_result_instead_of_raising(sqlite_uri, options, message):
    sweep_ = mixed_sweep(sqlite_uri, finished=3)
    with pytest.warns(WriteBackWarning, match=message):
        result = summarize_sweep(sweep_.parent_id, tracking_uri=sqlite_uri, **options, **FAST)
    assert (result.status, result.summary, result.ok) == ("failed", None, False)
    assert re.search(message, result.error) and "--" not in result.error
    with pytest.raises(InputError, match=message):
        summarize_sweep(sweep_.parent_id, tracking_uri=sqlite_uri, raise_on_error=True, **options, **FAST)
    assert summary_runs(sweep_.client, sweep_.experiment_id) == []


def test_a_sweep_without_runs_warns_and_fails_the_result(sqlite_uri):
    sweep_ = new_sweep(sqlite_uri)
    with pytest.warns(WriteBackWarning, match="no runs"):
        result = summarize_sweep(sweep_.parent_id, val="val_acc", tracking_uri=sqlite_uri, **FAST)
    assert result.status == "failed"


def test_an_invalid_spec_is_a_mistake_in_the_call_and_raises(sqlite_uri):
    sweep_ = mixed_sweep(sqlite_uri, finished=3)
    with pytest.raises(InputError, match="^`estimator` must be one of V, U, W, got 'X'$"):
        summarize_sweep(sweep_.parent_id, val="val_acc", estimator="X", tracking_uri=sqlite_uri)
    with pytest.raises(InputError, match=r"^'val_loss' looks like a loss .* add `maximize=False`"):
        summarize_sweep(sweep_.parent_id, val="val_loss", tracking_uri=sqlite_uri)  # MLflow records no direction
    assert summary_runs(sweep_.client, sweep_.experiment_id) == []


def test_a_loss_is_summarized_lower_is_better_when_said_so(sqlite_uri):
    sweep_ = new_sweep(sqlite_uri)
    losses = {0: 0.9, 1: 0.3, 2: 0.5, 3: 0.7}
    tests = {0: 0.8, 1: 0.35, 2: 0.45, 3: 0.6}
    for seed, loss in losses.items():
        sweep_.add_child(val=[loss], test=[tests[seed]], params={"seed": seed}, metric_names=("val_loss", "test_loss"))
    result = summarize_sweep(
        sweep_.parent_id, val="val_loss", test="test_loss", maximize=False, n=(2,), tracking_uri=sqlite_uri, **FAST
    )
    assert result.status == "updated", result.error
    assert result.summary.spec.direction == "lower is better, as asked"
    expected = boo_n_v(np.array(list(losses.values())), np.array(list(tests.values())), 2, maximize=False)
    assert result.summary.groups[0].boo_n[2].estimate == pytest.approx(expected, abs=1e-12)


def test_a_csv_export_and_the_mlflow_store_of_the_same_runs_give_the_same_numbers(sqlite_uri, tmp_path):
    """Same runs, same seed: the same summary whether read from MLflow or from a CSV in another row order."""
    from boontrack.backends import MetricRequest, open_source
    from boontrack.pipeline import run_job
    from boontrack.spec import Spec

    sweep_ = new_sweep(sqlite_uri)
    rng = np.random.default_rng(11)
    for model, base in (("cnn", 0.80), ("mlp", 0.78)):
        for seed in range(7):
            val = float(np.round(base + 0.03 * rng.standard_normal(), 3))  # rounded: ties in validation
            sweep_.add_child(
                val=[val], test=[val + 0.01 * rng.standard_normal()], params={"model": model, "seed": seed}
            )
    tracked = open_source(f"mlflow:{sweep_.experiment_name}", parent=sweep_.parent_id, tracking_uri=sqlite_uri)
    spec = Spec(val="val_acc", test="test_acc", seed_column="seed", n=(1, 5), n_resamples=300)
    export = tmp_path / "export.csv"
    frame = tracked.read(MetricRequest(val="val_acc", test="test_acc"))
    frame.sample(frac=1.0, random_state=5).to_csv(export, index=False)  # an export lists runs in its own order

    from_mlflow, from_csv = (run_job(source, spec).summary.to_dict() for source in (tracked, open_source(str(export))))
    assert from_mlflow["comparisons"][0]["paired"]
    del from_mlflow["source"], from_csv["source"]
    assert json.dumps(from_mlflow) == json.dumps(from_csv)


def test_an_unknown_parent_run_warns_and_fails_the_result(sqlite_uri):
    sweep_ = new_sweep(sqlite_uri)
    with pytest.warns(WriteBackWarning, match="no MLflow run with id 'f00'"):
        result = summarize_sweep("f00", val="val_acc", experiment=sweep_.experiment_id, tracking_uri=sqlite_uri)
    assert (result.status, result.location) == ("failed", "")


def _write_back(sweep_, uri: str) -> list[str]:
    """``boontrack summarize`` of the sweep with ``--write-back`` (a small bootstrap)."""
    return [
        "summarize",
        f"mlflow:{sweep_.experiment_id}",
        "--tracking-uri",
        uri,
        "--parent",
        sweep_.parent_id,
        "--val",
        "val_acc",
        "--test",
        "test_acc",
        "--n",
        "1,3",
        "--resamples",
        "200",
        "--write-back",
    ]


def test_an_unchanged_write_back_prints_the_stored_summary_without_analyzing(sqlite_uri, monkeypatch):
    from click.testing import CliRunner

    from boontrack.cli import main

    command = _write_back(mixed_sweep(sqlite_uri, finished=8), sqlite_uri)
    first = CliRunner().invoke(main, command)
    assert first.exit_code == 0, first.output

    def no_analysis(*args, **kwargs):
        raise AssertionError("an unchanged summary must not be analyzed again")

    monkeypatch.setattr("boontrack.analysis.analyze", no_analysis)
    again = CliRunner().invoke(main, command)
    assert again.exit_code == 0, again.output
    assert again.stdout == first.stdout and "up to date" in again.stderr


#: A command line in a fresh process, then which of MLflow, matplotlib and boontrack's plotting it loaded.
_LOADED_AFTER = """
import sys
from boontrack.cli import main
main(sys.argv[1:], standalone_mode=False)
print("loaded:", [name for name in ("mlflow", "matplotlib", "boontrack.plots") if name in sys.modules])
"""


def test_an_unchanged_write_back_by_sql_loads_neither_mlflow_nor_matplotlib(sqlite_uri):
    """Up to date is decided by SQL and the stored summary.json read from the summary run's artifact directory:
    no MlflowClient (MLflow's imports are 1-2 s of CPU) and no plotting, where the first write needed both."""
    from click.testing import CliRunner

    from boontrack.cli import main

    command = _write_back(mixed_sweep(sqlite_uri, finished=8), sqlite_uri)
    first = CliRunner().invoke(main, command)
    assert first.exit_code == 0, first.output
    again = subprocess.run([sys.executable, "-c", _LOADED_AFTER, *command], capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    assert again.stdout == first.stdout + "loaded: []\n"
    assert "up to date, nothing written" in again.stderr


def test_a_summary_json_gone_from_the_artifact_directory_is_written_again(sqlite_uri):
    from click.testing import CliRunner

    from boontrack.cli import main
    from boontrack_mlflow._client import local_artifact_directory

    sweep_ = mixed_sweep(sqlite_uri, finished=8)
    command = _write_back(sweep_, sqlite_uri)
    first = CliRunner().invoke(main, command)
    assert first.exit_code == 0, first.output
    (lost,) = summary_runs(sweep_.client, sweep_.experiment_id)
    (local_artifact_directory(lost.info.artifact_uri) / "summary.json").unlink()
    again = CliRunner().invoke(main, command)
    assert again.exit_code == 0, again.output
    assert again.stdout == first.stdout and "Summary written" in again.stderr
    (rewritten,) = summary_runs(sweep_.client, sweep_.experiment_id)
    assert rewritten.info.run_id != lost.info.run_id
    assert (local_artifact_directory(rewritten.info.artifact_uri) / "summary.json").is_file()
