"""A sweep of 3 models x 5 seeds x 20 epochs logged with ``wandb.log`` in real offline runs, summarized with training
curves from the offline files (``training_curves.csv``) and, once synced (the wire-protocol double seeded from the
same files), by the sweep callback into the aggregate run: both hold the means computed here with numpy
(:mod:`training_sweep`)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from boontrack import cli
from boontrack_wandb import summarize_sweep

from offline_files import add_offline_runs, finish_offline_runs
from training_sweep import CURVES, MODELS, N_RESAMPLES, SEEDS, SERIES, check_written, csv_curves, epoch_metrics
from wandb_sweep import ENTITY

pytestmark = [pytest.mark.wandb, pytest.mark.slow]

#: The sweep's project and id, apart from the small sweep of the other tests.
PROJECT = SWEEP = "epochs"
#: Where each curve's series are in the aggregate run, before ``/<group>/<series>``.
PATHS = {
    "val_loss": "boon/train/val_loss",
    "best-so-far:val_acc": "boon/train/best-so-far/val_acc",
    "best-so-far:test_acc": "boon/train/best-so-far/test_acc",
}
#: The aggregate run's name of each series (column of ``training_curves.csv`` -> series).
NAMES = dict(zip(SERIES, ("runs", "mean", "ci_low", "ci_high", "band_low", "band_high")))


@pytest.fixture(scope="module")
def epoch_runs(wandb_env: Path, double) -> tuple[Path, dict[str, tuple[str, int]]]:
    """The sweep's offline runs, complete, also in the double (with the sweep, which maximizes val_acc): their
    directory and run id -> (model, seed)."""
    import wandb

    directory = wandb_env / "epochs"
    directory.mkdir()
    files, run_ids = [], {}
    for model in MODELS:
        for seed in SEEDS:
            run = wandb.init(
                entity=ENTITY,
                project=PROJECT,
                mode="offline",
                dir=str(directory),
                config={"model": model, "seed": seed},
                job_type="train",
                reinit="create_new",
                settings=wandb.Settings(sweep_id=SWEEP, console="off", x_disable_stats=True),
            )
            for epoch, metrics in enumerate(epoch_metrics(model, seed), start=1):
                run.log(metrics, step=epoch)
            run.finish()
            files.append(Path(run.settings.sync_file))
            run_ids[run.id] = (model, seed)
    finish_offline_runs(files)
    add_offline_runs(double, directory)
    double.add_sweep(ENTITY, PROJECT, SWEEP, config="method: grid\nmetric:\n  name: val_acc\n  goal: maximize\n")
    return directory, run_ids


def test_the_offline_runs_give_their_training_curves_in_a_file(epoch_runs, tmp_path):
    directory, run_ids = epoch_runs
    out = tmp_path / "out"
    arguments = [
        "summarize", f"wandb-offline:{directory}", "--val", "val_acc", "--test", "test_acc", "--maximize",
        "--group-by", "model", "--seed-column", "seed", *(f"--curves={entry}" for entry in CURVES), "--resamples",
        str(N_RESAMPLES), "--no-plots", "--out", str(out),
    ]  # fmt: skip
    result = CliRunner().invoke(cli.main, arguments)
    assert result.exit_code == 0, result.output
    check_written(csv_curves(out / "training_curves.csv"), run_ids)


def test_the_sweeps_aggregate_run_holds_its_training_curves_in_the_sweeps_direction(epoch_runs, fresh_log, tmp_path):
    _, run_ids = epoch_runs
    result = summarize_sweep(
        f"{ENTITY}/{PROJECT}/{SWEEP}",
        val="val_acc",
        test="test_acc",
        group_by="model",
        seed_column="seed",
        curves=CURVES,
        n_resamples=N_RESAMPLES,
        out=tmp_path / "out",
        plots=False,
        raise_on_error=True,
    )
    assert result.status == "updated", result.error
    assert result.summary.spec.direction == f"higher is better, said by the metric.goal of W&B sweep {SWEEP}"
    (aggregate,) = [run for key, run in fresh_log.runs.items() if key[1] == PROJECT and run.job_type == "boontrack"]
    rows = pd.DataFrame([row for row in aggregate.history if "boon/train/step" in row])
    written = {
        (entry, model): pd.DataFrame(
            {"step": rows["boon/train/step"]}
            | {column: rows[f"{PATHS[entry]}/{model}/{name}"] for column, name in NAMES.items()}
        )
        for entry in CURVES
        for model in MODELS
    }
    check_written(written, run_ids)
    from_file = csv_curves(tmp_path / "out" / "training_curves.csv")  # the same summary, in a file beside it
    for key, frame in written.items():
        pd.testing.assert_frame_equal(
            frame.reset_index(drop=True), from_file[key][frame.columns].reset_index(drop=True), check_dtype=False
        )
