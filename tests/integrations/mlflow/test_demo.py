"""``boontrack demo``: a real sweep into a local sqlite store, summarized with write-back, not duplicated."""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner
from mlflow import MlflowClient
from mlflow.entities import ViewType

from boontrack.cli import main
from boontrack.reports import format_table
from boontrack_mlflow.demo import EXPERIMENT, demo_command, run_demo

pytestmark = [pytest.mark.mlflow, pytest.mark.slow]


def test_demo_trains_summarizes_and_reuses_its_sweep(tmp_path, monkeypatch):
    store = tmp_path / "demo" / "mlflow.db"
    lines: list[str] = []
    result = run_demo(store, trials=5, echo=lines.append)
    assert result.status == "updated" and result.ok
    assert {g.label for g in result.summary.groups} == {"logistic-regression", "mlp"}
    assert f"mlflow ui --backend-store-uri sqlite:///{store.resolve()}" in lines[-1]
    assert (tmp_path / "demo" / "artifacts").is_dir()  # artifacts beside the store, not in the working dir

    client = MlflowClient(f"sqlite:///{store.resolve()}")
    experiment = client.get_experiment_by_name(EXPERIMENT)
    runs = client.search_runs([experiment.experiment_id], run_view_type=ViewType.ALL)
    trials = [r for r in runs if r.data.params.get("model") == "mlp"]
    (summary,) = [r for r in runs if r.data.tags.get("boontrack.role") == "summary"]
    curve_runs = [r for r in runs if r.data.tags.get("mlflow.parentRunId") == summary.info.run_id]
    assert len(trials) == 5 and len(runs) == 1 + 10 + 1 + len(curve_runs)
    assert summary.info.run_name == "boon test_acc V n=1,5"
    assert {r.info.run_name for r in curve_runs} == {"logistic-regression", "mlp"}
    parent_id = summary.data.tags["mlflow.parentRunId"]
    assert f"The sweep's parent run: {parent_id}" in lines

    # the MLP's test score is taken at its epoch of best validation, computed here from the logged histories
    paired = []
    for run in trials:
        val = {m.step: m.value for m in client.get_metric_history(run.info.run_id, "val_acc")}
        test = {m.step: m.value for m in client.get_metric_history(run.info.run_id, "test_acc")}
        assert len(val) > 1
        best = max(val.values())
        paired.append(test[min(step for step, v in val.items() if v == best)])
    assert summary.data.metrics["boon/test_acc/mlp/mean"] == pytest.approx(np.mean(paired), abs=1e-12)

    again = run_demo(store, trials=5, echo=lines.append)
    assert again.status == "unchanged" and again.fingerprint == result.fingerprint
    assert len(client.search_runs([experiment.experiment_id], run_view_type=ViewType.ALL)) == len(runs)

    cli = CliRunner().invoke(demo_command, ["--store", str(store), "--trials", "5"])
    assert cli.exit_code == 0, cli.output
    assert "Reusing the finished demo sweep" in cli.output and "already up to date" in cli.output

    # the README's command reads the demo's store back and prints the demo's table, from the store's directory
    monkeypatch.chdir(tmp_path)
    readme = CliRunner().invoke(
        main,
        [
            "summarize",
            "mlflow:boontrack-demo",
            "--tracking-uri",
            "sqlite:///demo/mlflow.db",
            "--parent",
            parent_id,
            "--val",
            "val_acc",
            "--test",
            "test_acc",
            "--group-by",
            "model",
            "--seed-column",
            "seed",
            "--pick",
            "best-val-step",
        ],
    )
    assert readme.exit_code == 0, readme.output
    # the same table; the demo wrote its summary, so its warnings are counted and read in the summary run's report
    assert format_table(result.summary) in readme.stdout
    assert format_table(result.summary, report_written=True) in "\n".join(lines)
