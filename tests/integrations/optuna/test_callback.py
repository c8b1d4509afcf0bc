"""BoonCallback and summarize_study on real studies: summaries every k trials and at the end, written to a
directory and to MLflow, numbers checked against the exact oracles on the values the trials logged, and nothing
ever raised into ``study.optimize``."""

from __future__ import annotations

import json
import warnings

import optuna
import pytest
from click.testing import CliRunner

import boontrack.optuna
from boontrack import cli
from boontrack.exceptions import InputError, WriteBackWarning

from optuna_study import STUDY, Logged, make_objective, run_study
from oracles import exact_boo_n

pytestmark = pytest.mark.optuna
FAST = {"n_resamples": 99, "plots": False}


def oracle(val: list[float], test: list[float], n: int) -> float:
    return float(exact_boo_n(val, test, n, "V", enumerate_draws=False))


def test_the_callback_summarizes_every_k_trials_and_once_at_the_end(storage, tmp_path):
    out = tmp_path / "boon"
    boon = boontrack.optuna.BoonCallback(test="test_acc", n=(1, 2), every=3, out=out, **FAST)
    seen = []  # after each trial: the callback's last result, as optimize left it
    study, logged = run_study(storage, 7, callbacks=[boon, lambda study, trial: seen.append(boon.result)])
    assert [r is not None for r in seen] == [False, False, True, True, True, True, True]
    first, second = seen[2], seen[5]
    assert first.status == second.status == "updated" and first.fingerprint != second.fingerprint
    # after trial 5 (trials 0-5 done; 3 pruned, 5 failed): the completed trials 0, 1, 2, 4
    numbers = [0, 1, 2, 4]
    val, test = [logged.value[i] for i in numbers], [logged.test[i] for i in numbers]
    assert second.summary.group("all").boo_n[2].estimate == pytest.approx(oracle(val, test, 2), abs=1e-12)
    assert {d.run_id: d.reason for d in second.summary.dropped} == {"3": "status 'pruned'", "5": "status 'failed'"}

    final = boon.summarize(study)  # trial 6 came after the last summary
    assert final.status == "updated" and boon.result is final
    numbers = logged.completed()
    val, test = [logged.value[i] for i in numbers], [logged.test[i] for i in numbers]
    written = json.loads((out / "summary.json").read_text())
    assert written["groups"]["all"]["boo_n"]["2"]["estimate"] == pytest.approx(oracle(val, test, 2), abs=1e-12)
    assert written["groups"]["all"]["runs"] == 5
    again = boon.summarize(study)
    assert again.status == "unchanged" and again.summary is final.summary  # nothing written, the summary kept

    # the command line reads the same study from its storage and finds the directory up to date
    result = CliRunner().invoke(
        cli.main,
        [
            "summarize",
            f"optuna:{storage}",
            "--study",
            STUDY,
            "--val",
            "value",
            "--test",
            "test_acc",
            "--n",
            "1,2",
            "--resamples",
            "99",
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "Summary up to date, nothing written" in result.stderr


def test_trials_finished_in_threads_are_counted_once_each(tmp_path):
    boon = boontrack.optuna.BoonCallback(test="test_acc", n=2, every=3, out=tmp_path / "out", **FAST)
    logged = Logged()
    study = optuna.create_study(direction="maximize", sampler=optuna.samplers.RandomSampler(seed=0))
    study.optimize(make_objective(logged), n_trials=6, n_jobs=2, callbacks=[boon], catch=(RuntimeError,))
    # the 6th finished trial's summary sees every trial told, none running any more (unchanged when the 3rd one's,
    # run while the other thread went on, already saw them all)
    assert boon.result.status in ("updated", "unchanged")
    assert boon.result.summary.runs == len(logged.completed()) == 4
    assert {d.reason for d in boon.result.summary.dropped} == {"status 'pruned'", "status 'failed'"}


def test_summarize_study_pairs_the_best_reported_value_with_the_test_score():
    study, logged = run_study(None, 6)  # in memory
    result = boontrack.optuna.summarize_study(study, test="test_acc", n=3, pick="best_val_step", **FAST)
    assert result.status == "computed"  # no destination: the summary only
    numbers = logged.completed()
    best = [max(value for _, value in logged.history[i]) for i in numbers]
    test = [logged.test[i] for i in numbers]
    assert result.summary.group("all").boo_n[3].estimate == pytest.approx(oracle(best, test, 3), abs=1e-12)


@pytest.mark.parametrize(
    ("sampler", "note"),
    [
        (optuna.samplers.RandomSampler(seed=1), None),
        (optuna.samplers.TPESampler(seed=1, n_startup_trials=2), "sampler TPESampler: not i.i.d. random search"),
    ],
)
def test_the_summary_says_how_to_read_boo_n_of_a_sampler_that_is_not_random(sampler, note):
    study, _ = run_study(None, 6, sampler=sampler)
    source = boontrack.optuna.summarize_study(study, test="test_acc", n=2, **FAST).summary.source
    if note is None:
        assert source == f"Optuna study {STUDY!r}"
    else:
        assert source == (
            f"Optuna study {STUDY!r} ({note}, so Boo_n and the curve describe n trials drawn from the trials this "
            "study made, not a fresh run of the sampler)"
        )


@pytest.mark.parametrize("destination", ["a directory with other files", "a file"])
def test_the_callback_never_raises_into_optimize(tmp_path, destination):
    out = tmp_path / "out"
    if destination == "a file":
        out.write_text("not a directory")
    else:
        out.mkdir()
        (out / "notes.txt").write_text("the user's own file")
    boon = boontrack.optuna.BoonCallback(test="test_acc", n=2, every=2, out=out, **FAST)
    with pytest.warns(WriteBackWarning, match=f"writing the summary to {out} failed: InputError"):
        study, _ = run_study(None, 4, callbacks=[boon])
    assert len(study.trials) == 4  # optimize ran to the end
    assert boon.result.status == "write-failed" and not boon.result.ok and str(out) in boon.result.error
    assert boon.result.summary is not None and boon.result.destinations[0].status == "write-failed"
    assert (
        (out.read_text() == "not a directory")
        if destination == "a file"
        else sorted(p.name for p in out.iterdir()) == ["notes.txt"]
    )


def test_a_study_without_enough_trials_warns_and_goes_on(tmp_path):
    boon = boontrack.optuna.BoonCallback(test="test_acc", n=5, every=1, out=tmp_path / "out", **FAST)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        study, _ = run_study(None, 3, callbacks=[boon])
    assert len(study.trials) == 3
    assert boon.result.status == "failed" and "too few runs for n = 5: group 'all' has 3 runs" in boon.result.error
    assert any(issubclass(w.category, WriteBackWarning) for w in caught)


def test_without_an_mlflow_experiment_a_study_cannot_be_written_back(storage):
    run_study(storage, 2)
    result = CliRunner().invoke(
        cli.main, ["summarize", f"optuna:{storage}", "--val", "value", "--n", "1", "--write-back"]
    )
    assert result.exit_code == 2
    assert result.stderr == (
        f"Error: Optuna study {STUDY!r} cannot be written back to: write the summary to a directory with --out, or "
        "name the MLflow experiment that tracks the study (--option mlflow-experiment)\n"
    )


def test_mistakes_in_the_call_are_found_before_the_study_runs():
    with pytest.raises(InputError, match="`estimator` must be one of"):
        boontrack.optuna.BoonCallback(estimator="X")
    with pytest.raises(InputError, match="`every` must be an integer >= 1"):
        boontrack.optuna.BoonCallback(every=0)
    study = optuna.create_study(directions=["maximize", "minimize"])
    with pytest.raises(InputError, match=r"2 objectives \(values_0, values_1\): name the validation one with `val`"):
        boontrack.optuna.summarize_study(study)
    minimizing = optuna.create_study(study_name="loss", direction="minimize")
    with pytest.raises(InputError, match="the Optuna study 'loss' minimizes 'value', but `maximize=True` says"):
        boontrack.optuna.summarize_study(minimizing, maximize=True)


# -- MLflow: a study tracked by optuna-integration's MLflowCallback ----------------------------------------------
@pytest.fixture
def mlflow_uri(tmp_path):
    """A new sqlite MLflow store, and MLflow's process-wide tracking URI and experiment restored afterwards (the
    MLflowCallback sets both)."""
    mlflow = pytest.importorskip("mlflow")
    pytest.importorskip("optuna_integration")
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    previous = mlflow.get_tracking_uri()
    yield uri
    mlflow.set_tracking_uri(previous)
    mlflow.tracking.fluent._active_experiment_id = None


@pytest.mark.mlflow
@pytest.mark.slow
def test_a_study_tracked_in_mlflow_is_summarized_there_and_by_the_mlflow_source(storage, mlflow_uri, tmp_path):
    from mlflow import MlflowClient
    from optuna_integration import MLflowCallback

    logged = Logged()
    study = optuna.create_study(
        study_name=STUDY, storage=storage, direction="maximize", sampler=optuna.samplers.RandomSampler(seed=0)
    )
    objective = make_objective(logged)
    tracked = MLflowCallback(tracking_uri=mlflow_uri, metric_name="value")
    boon = boontrack.optuna.BoonCallback(
        test="test_acc", n=(1, 2), every=10, mlflow_experiment=STUDY, tracking_uri=mlflow_uri, **FAST
    )
    study.optimize(objective, n_trials=3, callbacks=[tracked, boon])  # trials 0-2: no pruned or failed trial
    result = boon.summarize(study)
    assert result.status == "updated", result.error
    numbers = logged.completed()
    assert numbers == [0, 1, 2]
    val, test = [logged.value[i] for i in numbers], [logged.test[i] for i in numbers]
    expected = oracle(val, test, 2)

    client = MlflowClient(mlflow_uri)
    experiment = client.get_experiment_by_name(STUDY)
    (summary_run,) = client.search_runs([experiment.experiment_id], "tags.`boontrack.role` = 'summary'")
    assert summary_run.data.metrics["boon/test_acc/boo_2"] == pytest.approx(expected, abs=1e-12)
    # the command line, reading the study from its storage, finds that summary run up to date
    cli_result = CliRunner().invoke(
        cli.main,
        [
            "summarize",
            f"optuna:{storage}",
            "--val",
            "value",
            "--test",
            "test_acc",
            "--n",
            "1,2",
            "--resamples",
            "99",
            "--write-back",
            "--option",
            f"mlflow-experiment={STUDY}",
            "--tracking-uri",
            mlflow_uri,
        ],
    )
    assert cli_result.exit_code == 0, cli_result.output
    assert "Summary up to date, nothing written: MLflow run " in cli_result.stderr

    # the MLflow runs the MLflowCallback logged hold the test score as a tag ("0.7"): --test test_acc reads it
    cli_result = CliRunner().invoke(
        cli.main,
        [
            "summarize",
            f"mlflow:{STUDY}",
            "--tracking-uri",
            mlflow_uri,
            "--val",
            "value",
            "--test",
            "test_acc",
            "--n",
            "1,2",
            "--resamples",
            "99",
            "--format",
            "json",
        ],
    )
    assert cli_result.exit_code == 0, cli_result.output
    read = json.loads(cli_result.stdout)
    assert read["groups"]["all"]["runs"] == 3 and read["dropped"] == []  # the summary run is not an input
    assert read["groups"]["all"]["boo_n"]["2"]["estimate"] == pytest.approx(expected, abs=1e-12)
