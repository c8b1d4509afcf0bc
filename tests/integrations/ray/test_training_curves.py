"""Training curves of a Ray Tune experiment (``curves``): each trial's per-iteration results are the history of every
metric it reports, step = ``training_iteration``. One real Tune run (on the session's Ray) summarized by the
callback, then read back by ``ray-tune:PATH`` from Python and from the command line; the means checked against
means computed here from the values the trials reported."""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from boontrack.backends import open_source
from boontrack.cli import main
from boontrack.directory import DirectorySink
from boontrack.exceptions import BoontrackWarning, FewRunsWarning
from boontrack.pipeline import run_job
from boontrack.spec import Spec

pytestmark = [pytest.mark.ray, pytest.mark.slow]  # a Tune run of 15 trials: about 8 s

METRIC = "val_loss"
MODELS, SEEDS, ITERATIONS = ("a", "b", "c"), 5, 4
#: Stops after 2 iterations: group c has 4 runs (fewer than 5) at iterations 3-4.
SHORT = ("c", SEEDS - 1)
SPEC = dict(val=METRIC, group_by="model", seed_column="seed", curves=[METRIC], n_resamples=99)


def _reported(model: str, seed: int) -> list[float]:
    """The loss the trial of (model, seed) reports at its iterations 1, 2, ...: falling, by model and seed."""
    count = 2 if (model, seed) == SHORT else ITERATIONS
    return [0.1 * MODELS.index(model) + 1 / (1 + i) + 0.013 * seed * i + math.sin(seed + i) / 97 for i in range(count)]


REPORTED = {(model, seed): _reported(model, seed) for model in MODELS for seed in range(SEEDS)}


def _expected() -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per group: the mean loss at each iteration over the trials that reported it, and how many did."""
    expected = {}
    for group in MODELS:
        rows = [loss + [np.nan] * (ITERATIONS - len(loss)) for (model, _), loss in REPORTED.items() if model == group]
        table = np.array(rows)
        expected[group] = (np.nanmean(table, axis=0), np.sum(~np.isnan(table), axis=0))
    return expected


@dataclass
class CurvesSweep:
    path: Path  #: the experiment directory
    callback: object  #: the BoonCallback that summarized it with curves
    warned: list[warnings.WarningMessage]
    trial_ids: dict[tuple[str, int], str]


@pytest.fixture(scope="module")
def curves_sweep(ray_local, tmp_path_factory) -> CurvesSweep:
    """3 models x 5 seeds run by Tune; each trial reports ``val_loss`` and its own ``epoch`` (10, 20, ...), not the
    step the curves use; the callback asks for the curve of ``val_loss``."""
    from ray import tune

    from boontrack.ray import BoonCallback

    def trainable(config: dict) -> None:
        from ray import tune

        for i, loss in enumerate(REPORTED[(config["model"], config["seed"])]):
            tune.report({METRIC: loss, "epoch": 10 * (i + 1)})

    root = tmp_path_factory.mktemp("tune-curves")
    callback = BoonCallback(**SPEC, out=root / "callback", plots=False)
    with warnings.catch_warnings(record=True) as warned:
        warnings.simplefilter("always")
        grid = tune.Tuner(
            trainable,
            param_space={"model": tune.grid_search(list(MODELS)), "seed": tune.grid_search(list(range(SEEDS)))},
            tune_config=tune.TuneConfig(metric=METRIC, mode="min", reuse_actors=True),
            run_config=tune.RunConfig(
                name="curves", storage_path=str(root / "ray_results"), callbacks=[callback], verbose=0
            ),
        ).fit()
    trial_ids = {(r.config["model"], r.config["seed"]): r.metrics["trial_id"] for r in grid}
    return CurvesSweep(root / "ray_results" / "curves", callback, list(warned), trial_ids)


def assert_expected_means(curves) -> None:
    """``curves`` (one metric's :class:`~boontrack.training.TrainingCurves`) are the means computed here."""
    assert curves.metric == METRIC and curves.groups == MODELS
    for group, (mean, runs) in _expected().items():
        of = curves.of(group)
        assert of.step.tolist() == list(range(1, ITERATIONS + 1))  # training_iteration, not the reported epoch
        np.testing.assert_allclose(of.mean, mean, rtol=1e-12)
        assert of.runs.tolist() == runs.tolist()
        assert (of.low <= of.mean).all() and (of.mean <= of.high).all()


def test_the_source_gives_each_trials_results_with_step_the_iteration(curves_sweep):
    source = open_source(f"ray-tune:{curves_sweep.path}")
    asked = [curves_sweep.trial_ids[("b", 1)], curves_sweep.trial_ids[SHORT]]
    histories = source.read_histories([METRIC, "epoch"], asked)
    points = histories[METRIC].sort_values(["run_id", "step"]).reset_index(drop=True)
    assert list(points.columns) == ["run_id", "step", "value"]
    expected = pd.DataFrame(
        [(asked[0], i + 1, v) for i, v in enumerate(REPORTED[("b", 1)])]
        + [(asked[1], i + 1, v) for i, v in enumerate(REPORTED[SHORT])],
        columns=["run_id", "step", "value"],
    ).sort_values(["run_id", "step"], ignore_index=True)
    pd.testing.assert_frame_equal(points, expected)  # exactly: JSON keeps the reported floats
    epochs = histories["epoch"].sort_values(["run_id", "step"])
    assert epochs["value"].tolist() == [10.0 * (i + 1) for i in expected["step"] - 1]


def test_the_callback_keeps_the_histories_of_its_curves(curves_sweep):
    result = curves_sweep.callback.result
    assert result.status == "updated", result.error
    (curves,) = result.summary.training
    assert_expected_means(curves)
    few = [w for w in curves_sweep.warned if issubclass(w.category, FewRunsWarning)]
    assert [str(w.message) for w in few] == [
        f"training curves of '{METRIC}': steps with fewer than 5 runs are marked (enough_runs False) and left out of "
        "the simultaneous band: 'c': 2 of 4 steps"
    ]


def test_the_source_agrees_with_the_callback_to_the_fingerprint(curves_sweep):
    """The histories enter the fingerprint: the callback's summary is up to date for the experiment directory."""
    result = curves_sweep.callback.result
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FewRunsWarning)
        again = run_job(open_source(f"ray-tune:{curves_sweep.path}"), Spec(**SPEC), sink=DirectorySink(result.location))
    assert again.status == "unchanged" and again.fingerprint == result.fingerprint


def test_summarize_with_curves_writes_training_curves_csv(curves_sweep, tmp_path):
    out = tmp_path / "out"
    with warnings.catch_warnings():  # shown by the command as a line on stderr
        warnings.simplefilter("always", BoontrackWarning)
        result = CliRunner().invoke(
            main,
            [
                "summarize", f"ray-tune:{curves_sweep.path}", "--val", METRIC, "--group-by", "model",
                "--seed-column", "seed", "--curves", METRIC, "--resamples", "99", "--no-plots", "--out", str(out),
            ],
        )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert f"Warning: training curves of '{METRIC}': steps with fewer than 5 runs" in result.output
    written = pd.read_csv(out / "training_curves.csv")
    assert written["metric"].eq(METRIC).all()
    assert written["group"].tolist() == [group for group in MODELS for _ in range(ITERATIONS)]
    assert written["step"].tolist() == list(range(1, ITERATIONS + 1)) * len(MODELS)
    expected = _expected()
    np.testing.assert_allclose(written["mean"], np.concatenate([expected[g][0] for g in MODELS]), rtol=1e-12)
    assert written["runs"].tolist() == np.concatenate([expected[g][1] for g in MODELS]).tolist()
    assert written["enough_runs"].tolist() == (written["runs"] >= 5).tolist()
    assert f"Training curve of '{METRIC}', group c: 4 steps (1-4), 4-5 runs; 2 steps with fewer than 5" in result.output
