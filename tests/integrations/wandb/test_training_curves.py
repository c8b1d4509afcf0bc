"""Training curves of W&B offline runs (``curves``): each run's history read from its file, the means written to
``training_curves.csv`` checked against the histories the session's runs logged."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from boontrack import cli

from wandb_sweep import EPOCHS

pytestmark = pytest.mark.wandb


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
    # The failed run is dropped from the summary and from its curves; boontrack's own run is never read.
    finished = [run for run in logged.values() if run.exit_code == 0 and run.job_type == "train"]
    for model, group in written.groupby("group"):
        histories = np.array(
            [[row["val_acc"] for row in run.history] for run in finished if run.config["model"] == model]
        )
        assert group["step"].tolist() == list(range(EPOCHS))
        assert group["runs"].tolist() == [len(histories)] * EPOCHS
        np.testing.assert_allclose(group["mean"], histories.mean(axis=0), rtol=1e-12)
    assert sorted(written["group"].unique()) == ["cnn", "mlp"]
    assert f"Training curve of 'val_acc', group mlp: {EPOCHS} steps (0-{EPOCHS - 1}), 6 runs" in result.output
