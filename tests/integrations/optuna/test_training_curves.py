"""Training curves of an Optuna study (``curves``): the objective's intermediate values (``trial.report``) are its
history, step = the step reported. The shared sweep of 3 models x 5 seeds x 20 epochs (:mod:`training_sweep`) run as
a study in a journal file, its objective the validation accuracy, summarized from Python and from the command
line: the curves hold the means computed with numpy from the reported values."""

from __future__ import annotations

import warnings

import optuna
import pytest
from click.testing import CliRunner

from boontrack import cli
from boontrack.backends import open_source
from boontrack.exceptions import InputError
from boontrack_optuna import OptunaSource, summarize_study

from training_sweep import MODELS, N_RESAMPLES, SEEDS, check_written, csv_curves, epoch_metrics

pytestmark = pytest.mark.optuna

STUDY, OBJECTIVE = "epochs", "val_acc"
#: What Optuna holds per step: the objective, as logged and as its running best.
CURVES = (OBJECTIVE, f"best-so-far:{OBJECTIVE}")
#: A trial that reports its epochs and is then pruned: dropped from the summary, its points with it.
PRUNED = ("cnn", len(SEEDS))


def _objective(trial: optuna.Trial) -> float:
    model, seed = trial.suggest_categorical("model", list(MODELS)), trial.suggest_int("seed", 0, len(SEEDS))
    logged = epoch_metrics(model, seed)
    for epoch, metrics in enumerate(logged, start=1):
        trial.report(metrics[OBJECTIVE], epoch)
    if (model, seed) == PRUNED:
        raise optuna.TrialPruned()
    return logged[-1][OBJECTIVE]


@pytest.fixture(scope="module")
def study(tmp_path_factory) -> tuple[str, optuna.Study, dict[str, tuple[str, int]]]:
    """The sweep as a study maximizing ``val_acc`` (each trial reports it per epoch), one more trial pruned, in a
    journal file (a tenth of the time of a sqlite storage): the file, the study and the completed trials' run ids
    -> (model, seed)."""
    storage = str(tmp_path_factory.mktemp("epochs") / "journal.log")
    journal = optuna.storages.JournalStorage(optuna.storages.journal.JournalFileBackend(storage))
    study = optuna.create_study(study_name=STUDY, storage=journal, direction="maximize")
    with warnings.catch_warnings():  # experimental since Optuna 3.2, and still so
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        study.set_metric_names([OBJECTIVE])
    for model in MODELS:
        for seed in SEEDS:
            study.enqueue_trial({"model": model, "seed": seed})
    study.enqueue_trial(dict(zip(("model", "seed"), PRUNED)))
    study.optimize(_objective, n_trials=len(MODELS) * len(SEEDS) + 1)
    completed = study.get_trials(states=(optuna.trial.TrialState.COMPLETE,))
    return storage, study, {str(t.number): (t.params["model"], t.params["seed"]) for t in completed}


def test_the_source_gives_the_reported_values_of_the_trials_asked_for(study):
    storage, _, run_ids = study
    source = open_source(f"optuna:{storage}", study=STUDY)
    asked = {run_id: key for run_id, key in run_ids.items() if key in (("mlp", 1), ("cnn", 4))}
    points = source.read_histories([OBJECTIVE], list(asked))[OBJECTIVE]
    assert list(points.columns) == ["run_id", "step", "value"]
    for run_id, key in asked.items():
        logged = points.loc[points["run_id"] == run_id]
        assert logged["step"].tolist() == list(range(1, 21))
        assert logged["value"].tolist() == [metrics[OBJECTIVE] for metrics in epoch_metrics(*key)]
    assert set(points["run_id"]) == set(asked)


@pytest.mark.parametrize(
    ("metrics", "message"),
    [
        (["test_acc"], "Optuna study 'epochs' has no per-step history of 'test_acc': Optuna records per step only "),
        ([OBJECTIVE, "value"], "'value': Optuna records per step only the intermediate values of the objective "),
    ],
)
def test_any_other_metric_is_refused_in_one_line(study, metrics, message):
    storage, _, _ = study
    source = open_source(f"optuna:{storage}", study=STUDY)
    with pytest.raises(InputError, match=message) as raised:
        source.read_histories(metrics, ["0"])
    assert "\n" not in str(raised.value)


def test_a_study_of_several_objectives_is_refused_in_one_line():
    study = optuna.create_study(study_name="two", directions=["maximize", "minimize"])
    study.optimize(lambda trial: (trial.suggest_float("x", 0, 1), 1.0), n_trials=2)
    with pytest.raises(InputError, match=r"^Optuna study 'two' has 2 objectives and Optuna records intermediate"):
        OptunaSource(study).read_histories(["values_0"], ["0", "1"])


def test_summarize_study_gives_the_curves_of_the_objective(study, tmp_path):
    _, optimized, run_ids = study
    result = summarize_study(
        optimized,
        val=OBJECTIVE,  # without it, the best-so-far entry is checked against "value" before the study is seen
        group_by="model",
        seed_column="seed",
        curves=CURVES,
        n_resamples=N_RESAMPLES,
        out=tmp_path / "out",
        plots=False,
        raise_on_error=True,
    )
    assert result.status == "updated", result.error
    assert result.summary.spec.direction == f"higher is better, said by the Optuna study {STUDY!r}"
    check_written(csv_curves(tmp_path / "out" / "training_curves.csv"), run_ids, CURVES)


def test_summarize_with_curves_writes_training_curves_csv(study, tmp_path):
    storage, _, run_ids = study
    out = tmp_path / "out"
    result = CliRunner().invoke(
        cli.main,
        [
            "summarize", f"optuna:{storage}", "--study", STUDY, "--val", OBJECTIVE, "--group-by", "model",
            "--seed-column", "seed", *(f"--curves={entry}" for entry in CURVES), "--resamples", str(N_RESAMPLES),
            "--no-plots", "--out", str(out),
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    check_written(csv_curves(out / "training_curves.csv"), run_ids, CURVES)
    assert f"Training curve of '{OBJECTIVE}', group cnn: 20 steps (1-20), 5 runs" in result.output


def test_curves_of_a_user_attribute_is_refused_on_the_command_line(study):
    storage, _, _ = study
    result = CliRunner().invoke(
        cli.main,
        ["summarize", f"optuna:{storage}", "--study", STUDY, "--val", OBJECTIVE, "--curves", "test_acc"],
    )
    assert result.exit_code == 2
    assert "no per-step history of 'test_acc': Optuna records per step only the intermediate values" in result.output
