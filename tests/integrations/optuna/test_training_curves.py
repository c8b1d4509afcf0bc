"""Training curves of an Optuna study (``curves``): the objective's intermediate values (``trial.report``) are its
history, step = the step reported. A real study in a sqlite storage, summarized from Python and from the command
line; the means checked against means computed here from the values the trials reported."""

from __future__ import annotations

import math
import warnings

import numpy as np
import optuna
import pandas as pd
import pytest
from click.testing import CliRunner

from boontrack import cli
from boontrack.backends import open_source
from boontrack.exceptions import BoontrackWarning, FewRunsWarning, InputError
from boontrack_optuna import OptunaSource, summarize_study

pytestmark = pytest.mark.optuna

STUDY, OBJECTIVE = "curves", "val_loss"
MODELS, SEEDS, STEPS = ("a", "b", "c"), 5, 4
#: Reports its steps and is then pruned: dropped from the summary, its points with it.
PRUNED = ("a", SEEDS)
#: Stops after 2 of the steps and completes: group c has 4 runs (fewer than 5) at steps 2-3.
SHORT = ("c", SEEDS - 1)


def _reported(model: str, seed: int) -> list[float]:
    """What the trial of (model, seed) reports at steps 0, 1, ...: a loss falling with the step, by model and seed."""
    steps = 2 if (model, seed) == SHORT else STEPS
    return [
        0.1 * MODELS.index(model) + 1 / (1 + step) + 0.013 * seed * step + math.sin(seed + step) / 97
        for step in range(steps)
    ]


REPORTED = {(model, seed): _reported(model, seed) for model in MODELS for seed in range(SEEDS)}


def _objective(trial: optuna.Trial) -> float:
    key = (trial.suggest_categorical("model", MODELS), trial.suggest_int("seed", 0, SEEDS))
    losses = REPORTED.get(key) or _reported(*key)
    for step, loss in enumerate(losses):
        trial.report(loss, step)
    if key == PRUNED:
        raise optuna.TrialPruned()
    return losses[-1]


def _expected() -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per group: the mean loss at each step over the completed trials that reported it, and how many did."""
    expected = {}
    for group in MODELS:
        rows = [loss + [np.nan] * (STEPS - len(loss)) for (model, _), loss in REPORTED.items() if model == group]
        table = np.array(rows)
        expected[group] = (np.nanmean(table, axis=0), np.sum(~np.isnan(table), axis=0))
    return expected


@pytest.fixture(scope="module")
def study(tmp_path_factory) -> tuple[str, optuna.Study]:
    """3 models x 5 seeds completed (objective ``val_loss``, minimized), one more trial pruned."""
    storage = f"sqlite:///{tmp_path_factory.mktemp('curves') / 'optuna.db'}"
    study = optuna.create_study(study_name=STUDY, storage=storage, direction="minimize")
    with warnings.catch_warnings():  # experimental since Optuna 3.2, and still so
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        study.set_metric_names([OBJECTIVE])
    for model, seed in [*REPORTED, PRUNED]:
        study.enqueue_trial({"model": model, "seed": seed})
    study.optimize(_objective, n_trials=len(REPORTED) + 1)
    return storage, study


def test_the_source_gives_the_reported_values_of_the_trials_asked_for(study):
    storage, optimized = study
    source = open_source(f"optuna:{storage}", study=STUDY)
    trials = {(t.params["model"], t.params["seed"]): str(t.number) for t in optimized.trials}
    asked = [trials[("b", 1)], trials[SHORT]]
    points = source.read_histories([OBJECTIVE], asked)[OBJECTIVE]
    assert list(points.columns) == ["run_id", "step", "value"]
    assert points["run_id"].tolist() == [asked[0]] * STEPS + [asked[1]] * 2
    assert points["step"].tolist() == [*range(STEPS), 0, 1]
    assert points["value"].tolist() == REPORTED[("b", 1)] + REPORTED[SHORT]


@pytest.mark.parametrize(
    ("metrics", "message"),
    [
        (["test_acc"], "Optuna study 'curves' has no per-step history of 'test_acc': Optuna records per step only "),
        ([OBJECTIVE, "value"], "'value': Optuna records per step only the intermediate values of the objective "),
    ],
)
def test_any_other_metric_is_refused_in_one_line(study, metrics, message):
    storage, _ = study
    source = open_source(f"optuna:{storage}", study=STUDY)
    with pytest.raises(InputError, match=message) as raised:
        source.read_histories(metrics, ["0"])
    assert "\n" not in str(raised.value)


def test_a_study_of_several_objectives_is_refused_in_one_line():
    study = optuna.create_study(study_name="two", directions=["maximize", "minimize"])
    study.optimize(lambda trial: (trial.suggest_float("x", 0, 1), 1.0), n_trials=2)
    with pytest.raises(InputError, match=r"^Optuna study 'two' has 2 objectives and Optuna records intermediate"):
        OptunaSource(study).read_histories(["values_0"], ["0", "1"])


def test_summarize_study_averages_the_intermediate_values_of_each_group(study, tmp_path):
    _, optimized = study
    options = dict(group_by="model", seed_column="seed", curves=[OBJECTIVE], n_resamples=99, plots=False)
    with pytest.warns(FewRunsWarning, match=f"training curves of '{OBJECTIVE}': .*'c': 2 of 4 steps"):
        result = summarize_study(optimized, out=tmp_path / "out", raise_on_error=True, **options)
    assert result.status == "updated"
    (curves,) = result.summary.training
    assert curves.metric == OBJECTIVE and curves.groups == MODELS
    for group, (mean, runs) in _expected().items():
        of = curves.of(group)
        assert of.step.tolist() == list(range(STEPS))
        np.testing.assert_allclose(of.mean, mean, rtol=1e-12)
        assert of.runs.tolist() == runs.tolist()
        assert (of.low <= of.mean).all() and (of.mean <= of.high).all()


def test_summarize_with_curves_writes_training_curves_csv(study, tmp_path):
    storage, _ = study
    out = tmp_path / "out"
    with warnings.catch_warnings():  # shown by the command as a line on stderr
        warnings.simplefilter("always", BoontrackWarning)
        result = CliRunner().invoke(
            cli.main,
            [
                "summarize", f"optuna:{storage}", "--study", STUDY, "--val", OBJECTIVE, "--group-by", "model",
                "--seed-column", "seed", "--curves", OBJECTIVE, "--resamples", "99", "--no-plots", "--out", str(out),
            ],
        )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert f"Warning: training curves of '{OBJECTIVE}': steps with fewer than 5 runs" in result.output
    written = pd.read_csv(out / "training_curves.csv")
    assert written["metric"].eq(OBJECTIVE).all()
    assert written["group"].tolist() == [group for group in MODELS for _ in range(STEPS)]
    assert written["step"].tolist() == list(range(STEPS)) * len(MODELS)
    expected = _expected()
    np.testing.assert_allclose(written["mean"], np.concatenate([expected[g][0] for g in MODELS]), rtol=1e-12)
    assert written["runs"].tolist() == np.concatenate([expected[g][1] for g in MODELS]).tolist()
    assert written["enough_runs"].tolist() == (written["runs"] >= 5).tolist()
    assert f"Training curve of '{OBJECTIVE}', group c: 4 steps (0-3), 4-5 runs; 2 steps with fewer than 5" in (
        result.output
    )


def test_curves_of_a_user_attribute_is_refused_on_the_command_line(study):
    storage, _ = study
    result = CliRunner().invoke(
        cli.main,
        ["summarize", f"optuna:{storage}", "--study", STUDY, "--val", OBJECTIVE, "--curves", "test_acc"],
    )
    assert result.exit_code == 2
    assert "no per-step history of 'test_acc': Optuna records per step only the intermediate values" in result.output
