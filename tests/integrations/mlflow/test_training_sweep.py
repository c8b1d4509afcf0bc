"""A sweep of 3 models x 5 seeds x 20 epochs logged as a training script logs it (``mlflow.log_metrics(...,
step=epoch)`` in nested runs of a parent), into the embedded store and through a server, summarized with
training curves by the callback that opens the parent: each group run's ``boon/train/...`` series, read back as
metric histories, hold the means computed here with numpy (:mod:`training_sweep`)."""

from __future__ import annotations

import uuid

import mlflow
import pandas as pd
import pytest
from mlflow import MlflowClient

from boontrack_mlflow import sweep

from training_sweep import CURVES, MODELS, N_RESAMPLES, SEEDS, check_written, epoch_metrics

pytestmark = [pytest.mark.mlflow, pytest.mark.slow]

#: Where each curve's series are on a group run.
PATHS = {
    "val_loss": "boon/train/val_loss",
    "best-so-far:val_acc": "boon/train/best-so-far/val_acc",
    "best-so-far:test_acc": "boon/train/best-so-far/test_acc",
}
#: The series of each curve (name after its path, column of ``training_curves.csv``).
SERIES = {
    "runs": "runs",
    "mean": "mean",
    "ci_low": "ci_low",
    "ci_high": "ci_high",
    "band_low": "simultaneous_low",
    "band_high": "simultaneous_high",
}


def _log_sweep(uri: str) -> tuple[object, dict[str, tuple[str, int]]]:
    """The sweep logged with MLflow's fluent API under ``boontrack.mlflow.sweep``; its result and run ids."""
    previous = mlflow.get_tracking_uri()
    run_ids = {}
    options = dict(group_by="model", seed_column="seed", maximize=True, curves=CURVES, n_resamples=N_RESAMPLES)
    try:
        with sweep(
            val="val_acc",
            test="test_acc",
            pick="best-val-step",
            experiment=f"epochs-{uuid.uuid4().hex[:10]}",
            tracking_uri=uri,
            plots=False,
            raise_on_error=True,
            **options,
        ) as handle:
            for model in MODELS:
                for seed in SEEDS:
                    with mlflow.start_run(nested=True) as run:
                        mlflow.log_params({"model": model, "seed": seed})
                        for epoch, metrics in enumerate(epoch_metrics(model, seed), start=1):
                            mlflow.log_metrics(metrics, step=epoch)
                    run_ids[run.info.run_id] = (model, seed)
    finally:
        while mlflow.active_run():
            mlflow.end_run()
        mlflow.set_tracking_uri(previous)
    return handle, run_ids


def test_each_group_run_holds_the_sweeps_training_curves(any_uri):
    handle, run_ids = _log_sweep(any_uri)
    assert handle.result.status == "updated", handle.result.error
    client = MlflowClient(any_uri)
    group_runs = client.search_runs([handle.experiment_id], "tags.`boontrack.role` = 'group-curve'")
    written = {}
    for run in group_runs:
        for entry in CURVES:
            columns = {}
            for name, column in SERIES.items():
                history = client.get_metric_history(run.info.run_id, f"{PATHS[entry]}/{name}")
                points = sorted(history, key=lambda point: point.step)
                columns["step"] = [point.step for point in points]
                columns[column] = [point.value for point in points]
            written[entry, run.data.tags["boontrack.group"]] = pd.DataFrame(columns)
    check_written(written, run_ids)
    note = group_runs[0].data.tags["mlflow.note.content"]
    assert "Under `boon/train/best-so-far/`: of each run's best validation value so far" in note
