"""Training curves of a Ray Tune experiment (``curves``): each trial's per-iteration results are the history of every
metric it reports, step = ``training_iteration``. The shared sweep of 3 models x 5 seeds x 20 epochs
(:mod:`training_sweep`) run by Tune for real (on the session's Ray), summarized by the callback, then read back by
``ray-tune:PATH`` from Python and from the command line: the curves hold the means computed with numpy from the
reported values."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from boontrack.backends import open_source
from boontrack.cli import main
from boontrack.directory import DirectorySink
from boontrack.pipeline import run_job
from boontrack.spec import Spec

from training_sweep import CURVES, MODELS, N_RESAMPLES, SEEDS, check_written, csv_curves, epoch_metrics

pytestmark = [pytest.mark.ray, pytest.mark.slow]  # a Tune run of 15 trials x 20 iterations

SPEC = dict(
    val="val_acc", test="test_acc", group_by="model", seed_column="seed", curves=CURVES, n_resamples=N_RESAMPLES
)


@dataclass
class EpochsSweep:
    path: Path  #: the experiment directory
    callback: object  #: the BoonCallback that summarized it with curves
    run_ids: dict[str, tuple[str, int]]  #: trial id -> (model, seed)


@pytest.fixture(scope="module")
def epochs_sweep(ray_local, tmp_path_factory) -> EpochsSweep:
    """The sweep run by Tune (``mode="max"`` of ``val_acc``): each trial reports one epoch's metrics per iteration,
    with its own ``epoch`` counter from 0 (not the step of the curves, which is ``training_iteration``, from 1);
    the callback asks for the sweep's curves."""
    from ray import tune

    from boontrack.ray import BoonCallback

    # the rows, not the function that makes them: Ray ships the closure's data by value, while the workers
    # cannot import the tests' modules
    reports = {(model, seed): epoch_metrics(model, seed) for model in MODELS for seed in SEEDS}

    def trainable(config: dict) -> None:
        from ray import tune

        for epoch, metrics in enumerate(reports[(config["model"], config["seed"])]):
            tune.report({**metrics, "epoch": epoch})

    root = tmp_path_factory.mktemp("tune-epochs")
    callback = BoonCallback(**SPEC, out=root / "callback", plots=False)
    grid = tune.Tuner(
        trainable,
        param_space={"model": tune.grid_search(list(MODELS)), "seed": tune.grid_search(list(SEEDS))},
        tune_config=tune.TuneConfig(metric="val_acc", mode="max", reuse_actors=True),
        run_config=tune.RunConfig(
            name="epochs", storage_path=str(root / "ray_results"), callbacks=[callback], verbose=0
        ),
    ).fit()
    run_ids = {r.metrics["trial_id"]: (r.config["model"], r.config["seed"]) for r in grid}
    return EpochsSweep(root / "ray_results" / "epochs", callback, run_ids)


def test_the_source_gives_each_trials_results_with_step_the_iteration(epochs_sweep):
    source = open_source(f"ray-tune:{epochs_sweep.path}")
    asked = {run_id: key for run_id, key in epochs_sweep.run_ids.items() if key in (("mlp", 1), ("cnn", 4))}
    histories = source.read_histories(["val_loss", "epoch"], list(asked))
    assert sorted(histories) == ["epoch", "val_loss"]
    for points in histories.values():
        assert list(points.columns) == ["run_id", "step", "value"]
        assert set(points["run_id"]) == set(asked)
    for run_id, key in asked.items():
        losses = histories["val_loss"].loc[histories["val_loss"]["run_id"] == run_id]
        assert losses["step"].tolist() == list(range(1, 21))
        assert losses["value"].tolist() == [metrics["val_loss"] for metrics in epoch_metrics(*key)]  # JSON: exact
        epochs = histories["epoch"].loc[histories["epoch"]["run_id"] == run_id]
        assert epochs["step"].tolist() == list(range(1, 21)) and epochs["value"].tolist() == list(range(20))


def test_the_callback_writes_the_curves_of_the_results_it_saw(epochs_sweep):
    result = epochs_sweep.callback.result
    assert result.status == "updated", result.error
    assert result.summary.spec.direction == "higher is better, said by the mode of the Tune experiment 'epochs'"
    check_written(csv_curves(Path(result.location) / "training_curves.csv"), epochs_sweep.run_ids)


def test_the_source_agrees_with_the_callback_to_the_fingerprint(epochs_sweep):
    """The histories enter the fingerprint: the callback's summary is up to date for the experiment directory."""
    result = epochs_sweep.callback.result
    again = run_job(open_source(f"ray-tune:{epochs_sweep.path}"), Spec(**SPEC), sink=DirectorySink(result.location))
    assert again.status == "unchanged" and again.fingerprint == result.fingerprint


def test_summarize_with_curves_writes_training_curves_csv(epochs_sweep, tmp_path):
    out = tmp_path / "out"
    result = CliRunner().invoke(
        main,
        [
            "summarize", f"ray-tune:{epochs_sweep.path}", "--val", "val_acc", "--test", "test_acc", "--group-by",
            "model", "--seed-column", "seed", *(f"--curves={entry}" for entry in CURVES), "--resamples",
            str(N_RESAMPLES), "--no-plots", "--out", str(out),
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    check_written(csv_curves(out / "training_curves.csv"), epochs_sweep.run_ids)
    assert "Training curve of 'val_loss', group cnn: 20 steps (1-20), 5 runs" in result.output
