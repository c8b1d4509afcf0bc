"""``boontrack demo``: a real sweep into a local sqlite store, summarized with write-back, not duplicated."""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner
from mlflow import MlflowClient
from mlflow.entities import ViewType

from boontrack.demo import EXPERIMENT, demo_command, run_demo

pytestmark = [pytest.mark.mlflow, pytest.mark.slow]


def test_demo_trains_summarizes_and_reuses_its_sweep(tmp_path):
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
    assert len(trials) == 5 and len(runs) == 1 + 10 + 1

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
