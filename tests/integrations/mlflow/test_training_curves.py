"""Training curves of an MLflow sweep (``curves``): the histories read by SQL and through the client (their
requests counted), and the series written on each group's curve run, checked against means computed here."""

from __future__ import annotations

import numpy as np
import pytest
from mlflow import MlflowClient

from boontrack.exceptions import FewRunsWarning
from boontrack_mlflow import MlflowSource, summarize_sweep

from mlflow_helpers import new_sweep

pytestmark = pytest.mark.mlflow

#: Epochs per run; run 4 of group "b" stops after 4 of them, so group b has 4 runs (fewer than 5) at steps 4-5.
EPOCHS = 6


def _sweep(uri: str):
    """2 models x 5 seeds, val_acc and val_loss logged per epoch (step = epoch); the losses logged, by run."""
    sweep = new_sweep(uri)
    losses = {}
    for model, offset in (("a", 0.0), ("b", 0.3)):
        for seed in range(5):
            epochs = 4 if (model, seed) == ("b", 4) else EPOCHS
            loss = [offset + 1.0 / (1 + step) + 0.01 * seed * step for step in range(epochs)]
            run_id = sweep.add_child(
                val=[1 - v / 4 for v in loss],
                test=loss,
                params={"model": model, "seed": seed},
                metric_names=("val_acc", "val_loss"),
            )
            losses[run_id] = (model, loss)
    return sweep, losses


def _expected(losses: dict) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per group: the mean loss at each step over the runs that logged it, and how many did."""
    expected = {}
    for group in ("a", "b"):
        rows = [loss + [np.nan] * (EPOCHS - len(loss)) for model, loss in losses.values() if model == group]
        table = np.array(rows)
        expected[group] = (np.nanmean(table, axis=0), np.sum(~np.isnan(table), axis=0))
    return expected


def test_each_group_run_gets_the_training_series_with_step_the_epoch(sqlite_uri):
    sweep, losses = _sweep(sqlite_uri)
    options = dict(val="val_acc", group_by="model", seed_column="seed", curves=["val_loss"], n_resamples=99)
    with pytest.warns(FewRunsWarning, match="training curves of 'val_loss': .*'b': 2 of 6 steps"):
        result = summarize_sweep(sweep.parent_id, tracking_uri=sqlite_uri, plots=False, raise_on_error=True, **options)
    assert result.status == "updated"
    client = MlflowClient(sqlite_uri)
    group_runs = client.search_runs([sweep.experiment_id], "tags.`boontrack.role` = 'group-curve'")
    assert sorted(run.data.tags["boontrack.group"] for run in group_runs) == ["a", "b"]
    for run in group_runs:
        mean, runs = _expected(losses)[run.data.tags["boontrack.group"]]

        def series(name: str, run_id: str = run.info.run_id) -> dict[int, float]:
            return {m.step: m.value for m in client.get_metric_history(run_id, f"boon/train/val_loss/{name}")}

        assert list(series("mean")) == list(range(EPOCHS))
        np.testing.assert_allclose(list(series("mean").values()), mean, rtol=1e-12)
        assert list(series("runs").values()) == runs.tolist()
        low, high = series("band_low"), series("band_high")
        assert list(low) == list(high) == [step for step in range(EPOCHS) if runs[step] >= 5]  # none where few
        assert all(low[step] <= mean[step] <= high[step] for step in low)
        assert all(series("ci_low")[s] <= mean[s] <= series("ci_high")[s] for s in range(EPOCHS))
        assert "`boon/train/val_loss/mean`: the mean over the group's runs" in run.data.tags["mlflow.note.content"]
    again = summarize_sweep(sweep.parent_id, tracking_uri=sqlite_uri, plots=False, raise_on_error=True, **options)
    assert again.status == "unchanged"  # by the sweep's change token: not even read


def test_the_client_path_reads_a_history_per_metric_in_one_request(mlflow_server, monkeypatch):
    """Against a server, one get-history-bulk request per metric for up to 100 runs: the price of curves."""
    from mlflow_tools import CountingProxy

    sweep, losses = _sweep(mlflow_server)
    proxy = CountingProxy(mlflow_server)
    try:
        source = MlflowSource(sweep.experiment_id, parent=sweep.parent_id, tracking_uri=proxy.url)
        source.experiment_id()
        proxy.take()
        histories = source.read_histories(["val_loss", "val_acc"], list(losses))
        counts = proxy.take()
    finally:
        proxy.server.shutdown()
    assert counts == {"GET /ajax-api/2.0/mlflow/metrics/get-history-bulk": 2}, counts
    points = histories["val_loss"]
    for run_id, (_, loss) in losses.items():
        logged = points.loc[points["run_id"] == run_id]
        assert logged["step"].tolist() == list(range(len(loss)))
        np.testing.assert_array_equal(logged["value"], loss)
