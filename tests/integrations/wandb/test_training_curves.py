"""Training curves of W&B runs (``curves``): each run's history read from its offline file or through the API (the
wire-protocol double), the means written to ``training_curves.csv`` and to the aggregate run checked against the
histories the session's runs logged."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from boontrack import cli

from wandb_sweep import ENTITY, EPOCHS, PROJECT, SWEEP

pytestmark = pytest.mark.wandb


def _mean_histories(logged: dict) -> dict[str, tuple[np.ndarray, int]]:
    """Per model, the mean val_acc at each epoch over the finished runs, and their number (the failed run is
    dropped from the summary and from its curves; boontrack's own run is never read)."""
    finished = [run for run in logged.values() if run.exit_code == 0 and run.job_type == "train"]
    means = {}
    for model in ("cnn", "mlp"):
        histories = np.array(
            [[row["val_acc"] for row in run.history] for run in finished if run.config["model"] == model]
        )
        means[model] = (histories.mean(axis=0), len(histories))
    return means


def test_summarize_curves_of_offline_runs_averages_the_finished_runs_of_each_group(offline_runs, tmp_path):
    directory, logged = offline_runs
    out = tmp_path / "out"
    result = CliRunner().invoke(
        cli.main,
        [
            "summarize", f"wandb-offline:{directory}", "--val", "val_acc", "--group-by", "model", "--curves",
            "val_acc", "--resamples", "99", "--no-plots", "--out", str(out),
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    written = pd.read_csv(out / "training_curves.csv")
    for model, (mean, runs) in _mean_histories(logged).items():
        group = written.loc[written["group"] == model]
        assert group["step"].tolist() == list(range(EPOCHS))
        assert group["runs"].tolist() == [runs] * EPOCHS
        np.testing.assert_allclose(group["mean"], mean, rtol=1e-12)
    assert sorted(written["group"].unique()) == ["cnn", "mlp"]
    assert f"Training curve of 'val_acc', group mlp: {EPOCHS} steps (0-{EPOCHS - 1}), 6 runs" in result.output


def test_the_aggregate_run_gets_the_series_and_a_chart_with_the_band_of_each_metric(fresh_log, offline_runs):
    from boontrack.backends import open_source
    from boontrack.pipeline import run_job, summary_key
    from boontrack.spec import Spec
    from boontrack_wandb._sink import TRAINING_FIELDS

    source = open_source(f"wandb:{ENTITY}/{PROJECT}", sweep=SWEEP)
    spec = Spec(val="val_acc", group_by=("model",), curves=("val_acc",), n_resamples=99)
    sink = source.sink(summary_key(source.identity(), spec))
    result = run_job(source, spec, sink=sink, plots=False, raise_on_write_error=True)
    assert result.status == "updated"
    run = fresh_log.runs[(ENTITY, PROJECT, sink.run_id)]
    rows = [row for row in run.history if "boon/train/step" in row]
    for model, (mean, runs) in _mean_histories(offline_runs[1]).items():
        logged = {row["boon/train/step"]: row[f"boon/train/val_acc/{model}/mean"] for row in rows}
        assert list(logged) == list(range(EPOCHS))
        np.testing.assert_allclose(list(logged.values()), mean, rtol=1e-12)
        assert [row[f"boon/train/val_acc/{model}/runs"] for row in rows] == [runs] * EPOCHS
        assert all(
            row[f"boon/train/val_acc/{model}/band_low"] <= row[f"boon/train/val_acc/{model}/mean"] for row in rows
        )
    defined = run.config["_wandb"]["m"]  # define_metric records; "5" is the step metric's 1-based position
    position = {m.get("1"): i + 1 for i, m in enumerate(defined)}
    steps_of = {m.get("1"): m.get("5") for m in defined}
    assert steps_of["boon/train/val_acc/cnn/ci_high"] == position["boon/train/step"]
    assert run.summary["boontrack/training_table"]["nrows"] == 2 * EPOCHS
    panel = run.config["_wandb"]["visualize"]["boontrack/training_chart/val_acc"]["panel_config"]
    assert panel["panelDefId"] in fresh_log.charts  # the curve preset, its band the pointwise one
    assert panel["fieldSettings"] == TRAINING_FIELDS
