"""Trials logged by Ray's own ``MLflowLoggerCallback`` are one MLflow run each: boontrack's MLflow source reads them
as they are and finds the numbers the ``ray-tune:`` source finds in the experiment directory."""

from __future__ import annotations

import pytest

from boontrack.backends import open_source
from boontrack.pipeline import run_job
from boontrack.spec import Spec

from tune_sweep import BEST, ERRORED, LAST, RESAMPLES, TEST, VAL, N

pytest.importorskip("mlflow")
pytestmark = [pytest.mark.ray, pytest.mark.mlflow]


def spec(pick: str) -> Spec:
    return Spec(val=VAL, test=TEST, n=N, n_resamples=RESAMPLES, seed_column="seed", pick=pick)


@pytest.mark.parametrize("pick, expected", [("last", LAST), ("best_val_step", BEST)])
def test_mlflow_source_gives_the_numbers_of_the_tune_source(tune_sweep, pick, expected):
    from_mlflow = run_job(
        open_source(f"mlflow:{tune_sweep.mlflow['experiment']}", tracking_uri=tune_sweep.mlflow["uri"]), spec(pick)
    )
    from_tune = run_job(open_source(f"ray-tune:{tune_sweep.path}"), spec(pick))
    mlflow_groups, tune_groups = from_mlflow.summary.groups, from_tune.summary.groups
    assert [g.label for g in mlflow_groups] == [g.label for g in tune_groups] == ["a", "b"]
    for ours, theirs in zip(mlflow_groups, tune_groups):
        assert ours.runs == theirs.runs == sum(model == ours.label for model, _ in expected)
        for n in N:
            assert ours.boo_n[n].estimate == theirs.boo_n[n].estimate
        assert ours.mean.estimate == theirs.mean.estimate
    # the errored trial is a FAILED run; boontrack's own summary run in the experiment is not an input
    assert [d.reason for d in from_mlflow.summary.dropped] == ["status 'failed'"]


def test_each_trial_is_one_run_with_its_config_as_params(tune_sweep):
    from mlflow import MlflowClient

    client = MlflowClient(tune_sweep.mlflow["uri"])
    experiment = client.get_experiment_by_name(tune_sweep.mlflow["experiment"])
    trials = client.search_runs([experiment.experiment_id], "tags.trial_name LIKE 'trainable_%'")
    assert len(trials) == 10
    by_config = {(r.data.params["model"], int(r.data.params["seed"])): r.info.status for r in trials}
    assert by_config[ERRORED] == "FAILED" and sorted(by_config.values()).count("FINISHED") == 9


def test_callback_writes_the_summary_to_the_mlflow_experiment(tune_sweep):
    from mlflow import MlflowClient

    result = tune_sweep.callbacks["mlflow"].result
    assert result.status == "updated", result.error
    client = MlflowClient(tune_sweep.mlflow["uri"])
    experiment = client.get_experiment_by_name(tune_sweep.mlflow["experiment"])
    (summary,) = client.search_runs([experiment.experiment_id], "tags.`boontrack.role` = 'summary'")
    assert summary.info.run_id in result.location
    expected = tune_sweep.callbacks["last"].result.summary
    for group in expected.groups:
        metric = summary.data.metrics[f"boon/{TEST}/{group.label}/boo_{N[-1]}"]
        assert metric == pytest.approx(group.boo_n[N[-1]].estimate)
