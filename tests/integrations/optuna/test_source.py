"""``optuna:STORAGE_URL`` sources: a real study in a sqlite storage, read back trial by trial and summarized, with
the expected numbers computed from the values the trials logged through the exact oracles."""

from __future__ import annotations

import datetime
import json
import math
import sqlite3
import time

import optuna
import pytest
from click.testing import CliRunner

from boontrack import cli
from boontrack.backends import MetricRequest, open_source
from boontrack.runtable import RunTable
from boontrack.spec import Spec

from optuna_study import FAILED, PRUNED, STUDY, run_study
from oracles import exact_boo_n

pytestmark = pytest.mark.optuna
RESAMPLES = "99"


def invoke(*args: str):
    return CliRunner().invoke(cli.main, list(args))


def summarize_json(*args: str) -> dict:
    result = invoke("summarize", *args, "--resamples", RESAMPLES, "--format", "json", "--no-plots")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def oracle(val: list[float], test: list[float], n: int, *, maximize: bool = True) -> float:
    return float(exact_boo_n(val, test, n, "V", maximize=maximize, enumerate_draws=False))


@pytest.fixture(scope="module")
def every_state(tmp_path_factory):
    """8 trials by optimize (one pruned, one failed), one left running (asked, never told) and one waiting
    (enqueued), as a study being optimized by another process shows them; the tests only read it."""
    storage = f"sqlite:///{tmp_path_factory.mktemp('every-state') / 'optuna.db'}"
    study, logged = run_study(storage, 8)
    running = study.ask()
    running.suggest_float("lr", 1e-3, 1.0, log=True)
    study.enqueue_trial({"lr": 0.1, "model": "cnn"})
    return storage, study, logged, running.number


def test_every_trial_is_a_run_with_its_state_params_and_values(every_state):
    storage, study, logged, running = every_state
    frame = open_source(f"optuna:{storage}", study=STUDY).read(MetricRequest(val="value", test="test_acc"))
    frame = frame.set_index("run_id")
    assert frame.index.tolist() == [str(i) for i in range(10)]
    status = frame["status"].to_dict()
    assert status[str(PRUNED)] == "pruned" and status[str(FAILED)] == "failed"
    assert status[str(running)] == "running" and status["9"] == "waiting"
    completed = logged.completed()
    assert {status[str(i)] for i in completed} == {"finished"}
    for number in completed:
        run = frame.loc[str(number)]
        assert run["metrics.value"] == logged.value[number]
        assert run["metrics.test_acc"] == logged.test[number]
        assert run["tags.note"] == f"run {number}"
        trial = study.trials[number]
        assert run["params.lr"] == trial.params["lr"] and run["params.model"] == trial.params["model"]
    assert (frame.loc[[str(i) for i in completed], "duration_s"] >= 0).all()
    assert math.isnan(frame.loc[str(running), "duration_s"])


def test_trial_times_are_the_utc_moments_they_were(storage, monkeypatch):
    """Optuna stores naive local times: read in a time zone far from UTC, they are still the right moments."""
    monkeypatch.setenv("TZ", "America/Los_Angeles")
    time.tzset()
    try:
        before = datetime.datetime.now(datetime.timezone.utc)
        run_study(storage, 2)
        after = datetime.datetime.now(datetime.timezone.utc)
        frame = open_source(f"optuna:{storage}", study=STUDY).read(MetricRequest("value"))
    finally:
        monkeypatch.undo()
        time.tzset()
    assert ((frame["created_at"] >= before) & (frame["created_at"] <= after)).all()


def test_trials_that_did_not_complete_are_dropped_with_their_state(every_state):
    storage, _, logged, running = every_state
    spec = Spec(val="value", test="test_acc")
    table = RunTable.from_frame(
        open_source(f"optuna:{storage}", study=STUDY).read(MetricRequest("value", "test_acc")), spec
    )
    assert {d.run_id: d.reason for d in table.dropped} == {
        str(PRUNED): "status 'pruned'",
        str(FAILED): "status 'failed'",
        str(running): "status 'running'",
        "9": "status 'waiting'",
    }
    assert table.runs["run_id"].tolist() == sorted(str(i) for i in logged.completed())


def test_summary_numbers_are_those_of_the_logged_values(every_state):
    storage, _, logged, _ = every_state
    summary = summarize_json(
        f"optuna:{storage}", "--study", STUDY, "--val", "value", "--test", "test_acc", "--n", "1,3"
    )
    (group,) = summary["groups"].values()
    numbers = logged.completed()
    val, test = [logged.value[i] for i in numbers], [logged.test[i] for i in numbers]
    assert group["runs"] == len(numbers) == 6
    for n in (1, 3):
        assert group["boo_n"][str(n)]["estimate"] == pytest.approx(oracle(val, test, n), abs=1e-12)
    assert len(summary["dropped"]) == 4
    assert summary["source"].startswith(f"Optuna study {STUDY!r} at {storage}")


def test_best_val_step_pairs_the_best_reported_value_with_the_test_score(every_state):
    storage, _, logged, _ = every_state
    summary = summarize_json(
        f"optuna:{storage}",
        "--study",
        STUDY,
        "--val",
        "value",
        "--test",
        "test_acc",
        "--n",
        "1,3",
        "--pick",
        "best-val-step",
    )
    numbers = logged.completed()
    best = [max(value for _, value in logged.history[i]) for i in numbers]
    test = [logged.test[i] for i in numbers]
    assert best != [logged.value[i] for i in numbers]  # the best epoch is not always the last
    (group,) = summary["groups"].values()
    for n in (1, 3):
        assert group["boo_n"][str(n)]["estimate"] == pytest.approx(oracle(best, test, n), abs=1e-12)
    # Boo_n of the validation metric itself: its best-step values
    summary = summarize_json(
        f"optuna:{storage}", "--study", STUDY, "--val", "value", "--n", "3", "--pick", "best-val-step"
    )
    (group,) = summary["groups"].values()
    assert group["boo_n"]["3"]["estimate"] == pytest.approx(oracle(best, best, 3), abs=1e-12)


def test_a_study_is_summarized_in_its_direction(storage):
    study = optuna.create_study(study_name="loss", storage=storage, direction="minimize")
    losses = [0.5, 0.2, 0.9, 0.4]
    study.optimize(lambda trial: losses[trial.number] + 0 * trial.suggest_float("x", 0, 1), n_trials=4)
    result = invoke("summarize", f"optuna:{storage}", "--val", "value", "--n", "2", "--maximize")
    assert result.exit_code == 2
    assert result.stderr == (
        "Error: the Optuna study 'loss' minimizes 'value', but --maximize says the opposite: leave the direction out\n"
    )
    for agreeing in ([], ["--minimize"]):  # the study's direction, whether the caller says it too or not
        summary = summarize_json(f"optuna:{storage}", "--val", "value", "--n", "2", *agreeing)  # one study: no --study
        assert (summary["spec"]["maximize"], summary["spec"]["direction_from"]) == (False, "the Optuna study 'loss'")
        (group,) = summary["groups"].values()
        assert group["boo_n"]["2"]["estimate"] == pytest.approx(oracle(losses, losses, 2, maximize=False), abs=1e-12)


def test_multi_objective_studies_name_the_validation_objective(storage):
    study = optuna.create_study(study_name="pareto", storage=storage, directions=["maximize", "minimize"])
    rows = [(0.71, 3.0, 0.70), (0.74, 5.0, 0.72), (0.69, 1.0, 0.68), (0.80, 9.0, 0.77)]

    def objective(trial):
        trial.suggest_int("width", 8, 64)
        acc, latency, test = rows[trial.number]
        trial.set_user_attr("test_acc", test)
        return acc, latency

    study.optimize(objective, n_trials=4)
    acc, latency, test = (list(column) for column in zip(*rows))
    summary = summarize_json(
        f"optuna:{storage}", "--study", "pareto", "--val", "values_0", "--test", "test_acc", "--n", "2"
    )
    assert summary["groups"]["all"]["boo_n"]["2"]["estimate"] == pytest.approx(oracle(acc, test, 2), abs=1e-12)
    summary = summarize_json(f"optuna:{storage}", "--study", "pareto", "--val", "values_1", "--minimize", "--n", "2")
    assert summary["groups"]["all"]["boo_n"]["2"]["estimate"] == pytest.approx(
        oracle(latency, latency, 2, maximize=False), abs=1e-12
    )
    # a study with metric names: the objectives are read under those names
    with pytest.warns(optuna.exceptions.ExperimentalWarning):
        study.set_metric_names(["accuracy", "latency_ms"])
    summary = summarize_json(
        f"optuna:{storage}", "--study", "pareto", "--val", "accuracy", "--test", "test_acc", "--n", "2"
    )
    assert summary["groups"]["all"]["boo_n"]["2"]["estimate"] == pytest.approx(oracle(acc, test, 2), abs=1e-12)


# -- refusals: one line, exit 2, nothing created ---------------------------------------------------------------
def test_a_missing_storage_file_is_refused_and_not_created(tmp_path):
    path = tmp_path / "absent.db"
    result = invoke("summarize", f"optuna:sqlite:///{path}", "--study", "s", "--val", "value")
    assert result.exit_code == 2
    assert result.stderr == f"Error: no Optuna storage at sqlite:///{path}: the file {path} does not exist\n"
    assert not path.exists()


def test_a_database_that_is_not_an_optuna_storage_is_refused_and_left_as_it_was(tmp_path):
    path = tmp_path / "other.db"
    with sqlite3.connect(path) as connection:
        connection.execute("create table runs (id integer)")
    result = invoke("summarize", f"optuna:sqlite:///{path}", "--val", "value")
    assert result.exit_code == 2
    assert result.stderr.startswith(f"Error: sqlite:///{path} is not an Optuna storage (it has no ")
    with sqlite3.connect(path) as connection:
        tables = connection.execute("select name from sqlite_master where type = 'table'").fetchall()
    assert tables == [("runs",)]


def test_a_missing_study_is_named_with_the_studies_there(storage):
    for name in ("b", "a"):
        optuna.create_study(study_name=name, storage=storage)
    result = invoke("summarize", f"optuna:{storage}", "--study", "c", "--val", "value")
    assert result.exit_code == 2
    assert result.stderr == f"Error: no Optuna study named 'c' at {storage} (studies: 'a', 'b')\n"
    result = invoke("summarize", f"optuna:{storage}", "--val", "value")
    assert result.exit_code == 2
    assert (
        result.stderr == f"Error: the Optuna storage at {storage} holds 2 studies ('a', 'b'): name one with --study\n"
    )


def test_the_study_option_is_also_a_backend_option(every_state):
    storage = every_state[0]
    by_flag = summarize_json(f"optuna:{storage}", "--study", STUDY, "--val", "value", "--n", "2")
    by_option = summarize_json(f"optuna:{storage}", "--option", f"study={STUDY}", "--val", "value", "--n", "2")
    assert by_flag["groups"] == by_option["groups"]
    result = invoke("summarize", f"optuna:{storage}", "--option", "sweep=x", "--val", "value")
    assert result.exit_code == 2 and "unknown option(s) for optuna sources: --sweep" in result.stderr


def test_a_journal_file_is_read_as_a_storage(tmp_path):
    from optuna.storages import JournalStorage
    from optuna.storages.journal import JournalFileBackend

    path = tmp_path / "journal.log"
    study = optuna.create_study(
        study_name="j", storage=JournalStorage(JournalFileBackend(str(path))), direction="maximize"
    )
    values, tests = [0.61, 0.72, 0.58, 0.69], [0.60, 0.70, 0.59, 0.66]

    def objective(trial):
        trial.suggest_int("width", 8, 64)
        trial.set_user_attr("test_acc", tests[trial.number])
        return values[trial.number]

    study.optimize(objective, n_trials=4)
    content = path.read_bytes()
    summary = summarize_json(f"optuna:{path}", "--val", "value", "--test", "test_acc", "--n", "2")
    assert summary["groups"]["all"]["boo_n"]["2"]["estimate"] == pytest.approx(oracle(values, tests, 2), abs=1e-12)
    assert path.read_bytes() == content and sorted(p.name for p in tmp_path.iterdir()) == ["journal.log"]


def test_a_path_that_is_not_a_journal_file_is_refused(tmp_path, storage):
    absent = tmp_path / "absent.log"
    result = invoke("summarize", f"optuna:{absent}", "--val", "value")
    assert result.exit_code == 2 and not absent.exists()
    assert "expected a database URL (e.g. sqlite:///optuna.db) or an existing Optuna journal file" in result.stderr
    optuna.create_study(study_name="s", storage=storage)
    database = storage.removeprefix("sqlite:///")
    result = invoke("summarize", f"optuna:{database}", "--val", "value")
    assert result.stderr == f"Error: {database} is a SQLite database: read it as optuna:sqlite:///{database}\n"
    text = tmp_path / "notes.txt"
    text.write_text("not a journal\n")
    result = invoke("summarize", f"optuna:{text}", "--val", "value")
    assert result.stderr == f"Error: the Optuna storage at {text} holds no study\n"  # lines that are no records
    text.write_text('{"model": "cnn"}\n')  # JSON lines, but not Optuna's
    result = invoke("summarize", f"optuna:{text}", "--val", "value")
    assert result.stderr == f"Error: {text} is not an Optuna journal file: KeyError: 'op_code'\n"


def test_discovery_makes_a_job_of_each_study_of_the_storage(storage, tmp_path):
    """``discover = true`` on an Optuna storage: one job per study (a glob may choose them), each the job written
    by hand with ``study``."""
    from boontrack.reaggregate import discover_jobs, load_config, run_jobs

    run_study(storage, 8)
    other = optuna.create_study(study_name="other-study", storage=storage, direction="maximize")
    other.optimize(lambda trial: trial.suggest_float("x", 0, 1), n_trials=6)
    config = tmp_path / "boontrack.toml"
    template = '[[jobs]]\nname = "all"\nsource = "optuna:{storage}"\nval = "value"\nn = [1, 2]\nn_resamples = 99\n'
    template += 'plots = false\nout = "summaries"\ndiscover = {discover}\n'
    config.write_text(template.format(storage=storage, discover="true"))
    (job,) = load_config(config)
    jobs, failed = discover_jobs([job], log=lambda line: None)
    assert failed == 0 and [j.source_options for j in jobs] == [{"study": STUDY}, {"study": "other-study"}]
    lines = []
    assert run_jobs([job], log=lines.append) == 0
    assert lines[0] == "all: 2 sweeps found"
    assert [line.split(": ")[1].split(" ")[0] for line in lines[1:]] == ["updated", "updated"]
    assert sorted(p.name for p in (tmp_path / "summaries").iterdir() if p.is_dir()) == sorted([STUDY, "other-study"])

    config.write_text(template.format(storage=storage, discover='{ studies = "other-*" }'))
    jobs, _ = discover_jobs(load_config(config), log=lambda line: None)
    assert [j.name for j in jobs] == ["all/other-study"]
