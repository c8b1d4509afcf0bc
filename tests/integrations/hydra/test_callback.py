"""The Hydra callback on real ``--multirun`` sweeps: records, grouping, failed jobs, options, and its failures.

Expected numbers come from the exact oracle of ``tests/oracles.py`` on the values the test gave the jobs.
"""

from __future__ import annotations

import atexit
import csv
import json
import re
import subprocess
import sys
import textwrap
from statistics import fmean

import numpy as np
import pytest
from click.testing import CliRunner
from omegaconf import OmegaConf

from boontrack import cli
from boontrack.backends import Direction
from boontrack.exceptions import InputError, WriteBackWarning
from boontrack_hydra._records import jobs_dir, returned_metrics, write_record

from oracles import exact_boo_n

pytestmark = pytest.mark.hydra

#: Validation and test scores by model and seed (hand-written, distinct within a model).
VAL = {"a": [0.71, 0.74, 0.69, 0.77, 0.72], "b": [0.80, 0.78, 0.83, 0.79, 0.81]}
TEST = {"a": [0.70, 0.75, 0.68, 0.73, 0.71], "b": [0.79, 0.77, 0.80, 0.78, 0.82]}


def scores(lr: float = 0.1) -> dict[str, dict[str, float]]:
    return {
        f"{model}/{lr}/{seed}": {"val_acc": VAL[model][seed], "test_acc": TEST[model][seed], "epochs": 3}
        for model in VAL
        for seed in range(5)
    }


def exact(val, test, n):
    return float(exact_boo_n(val, test, n, "V"))


def runs_csv(sweep) -> dict[str, dict[str, str]]:
    with open(sweep.out / "runs.csv", newline="") as handle:
        return {row["run_id"]: row for row in csv.DictReader(handle)}


@pytest.mark.slow
def test_multirun_summary_matches_the_estimator_core(run_sweep):
    sweep = run_sweep(scores(), "model=a,b", "seed=0,1,2,3,4", "lr=0.1")
    assert sweep.returncode == 0, sweep.stderr
    summary = sweep.summary()
    assert summary["metric"] == "test_acc" and summary["runs"] == 10 and summary["dropped"] == []
    # grouped by the overridden key that varies; not by the seed, nor by lr, overridden with one value
    assert summary["spec"]["group_by"] == ["model"] and summary["spec"]["seed_column"] == "seed"
    assert list(summary["groups"]) == ["a", "b"]
    for model in ("a", "b"):
        group = summary["groups"][model]
        assert group["runs"] == 5
        for n in (1, 5):
            assert group["boo_n"][str(n)]["estimate"] == pytest.approx(exact(VAL[model], TEST[model], n), abs=1e-12)
        assert group["mean"]["estimate"] == pytest.approx(fmean(TEST[model]), abs=1e-12)
    assert summary["comparisons"][0]["paired"] is True  # the same seeds in both groups
    runs = runs_csv(sweep)
    assert runs["7"]["tags.overrides"] == "model=b seed=2 lr=0.1" and runs["7"]["metrics.epochs"] == "3.0"
    assert runs["7"]["tags.output_dir"] == str(sweep.dir / "7")
    # the table is printed at the end of the multirun, from on_multirun_end
    assert f"boontrack: 10 jobs summarized in {sweep.out} (updated)" in sweep.stdout
    assert "test_acc: estimator V, 95% bootstrap CI, 10 runs, 0 dropped" in sweep.stdout
    assert "stopped early" not in sweep.stdout and "WriteBackWarning" not in sweep.stderr


@pytest.mark.slow
def test_a_failed_job_is_recorded_and_dropped_with_its_reason(run_sweep):
    table = scores()
    table["b/0.1/3"] = "fail"
    sweep = run_sweep(table, "model=a,b", "seed=0,1,2,3,4")
    # Hydra's basic sweeper raises the job's error after the batch and calls no on_multirun_end ...
    assert sweep.returncode == 1 and "RuntimeError: diverged at seed 3" in sweep.stderr
    # ... and the summary of the jobs that ran is made at exit
    assert "the multirun stopped early; summary of the jobs that ran" in sweep.stdout
    assert "job 8 (model=b seed=3) failed: RuntimeError: diverged at seed 3" in sweep.stdout
    summary = sweep.summary()
    assert summary["runs"] == 9
    assert summary["dropped"] == [{"run_id": "8", "reason": "status 'failed'", "group": "b"}]
    assert runs_csv(sweep)["8"]["tags.error"] == "RuntimeError: diverged at seed 3"
    kept = [0, 1, 2, 4]
    b_val, b_test = [VAL["b"][i] for i in kept], [TEST["b"][i] for i in kept]
    assert summary["groups"]["b"]["boo_n"]["1"]["estimate"] == pytest.approx(exact(b_val, b_test, 1), abs=1e-12)
    # the records read again through the source, as the callback's grouping spells it on the command line
    done = CliRunner().invoke(
        cli.main,
        ["summarize", f"hydra:{sweep.dir}", "--val", "val_acc", "--test", "test_acc", "--group-by", "model"]
        + ["--seed-column", "seed", "--resamples", "999", "--format", "json"],
    )
    assert done.exit_code == 0, done.output
    assert json.loads(done.output)["groups"] == summary["groups"]


def test_a_directory_without_records_is_one_line_on_the_command_line(tmp_path):
    done = CliRunner().invoke(cli.main, ["summarize", f"hydra:{tmp_path}", "--val", "val_acc"])
    assert done.exit_code == 2
    assert done.output.strip().splitlines() == [
        f"Error: no Hydra job records in {tmp_path / '.boontrack' / 'jobs'} (a --multirun with the callback "
        "boontrack.hydra.BoonCallback writes them)"
    ]


def test_curves_of_a_hydra_sweep_say_where_to_log_them_instead(tmp_path):
    jobs = tmp_path / ".boontrack" / "jobs"
    for job, val in enumerate(VAL["a"]):
        write_record(jobs, {"job": job, "status": "completed", "metrics": {"val_acc": val}})
    done = CliRunner().invoke(cli.main, ["summarize", f"hydra:{tmp_path}", "--val", "val_acc", "--curves", "val_acc"])
    assert done.exit_code == 2
    assert done.output.strip().splitlines() == [
        "Error: a Hydra job returns one value per metric, so a Hydra sweep has no per-step history for --curves: "
        "log each step from the job to MLflow, W&B or a file of one row per run and step, and summarize that source"
    ]


@pytest.mark.slow
def test_jobs_run_in_worker_processes_are_recorded_there_and_summarized(run_sweep):
    pytest.importorskip("hydra_plugins.hydra_joblib_launcher", reason="needs hydra-joblib-launcher (the test extra)")
    table = scores()
    table["a/0.1/1"] = "fail"
    sweep = run_sweep(table, "model=a,b", "seed=0,1,2,3,4", "hydra/launcher=joblib", "hydra.launcher.n_jobs=2")
    assert sweep.returncode == 1 and "RuntimeError: diverged at seed 1" in sweep.stderr
    launcher = re.search(r"launched by process (\d+)", sweep.stdout)[1]
    runs = runs_csv(sweep)
    workers = {runs[job]["metrics.pid"] for job in runs if job != "1"}
    assert launcher not in {pid.removesuffix(".0") for pid in workers}  # on_job_end ran in the workers
    summary = sweep.summary()
    assert summary["runs"] == 9 and summary["dropped"] == [{"run_id": "1", "reason": "status 'failed'", "group": "a"}]
    a_val, a_test = [VAL["a"][i] for i in (0, 2, 3, 4)], [TEST["a"][i] for i in (0, 2, 3, 4)]
    assert summary["groups"]["a"]["boo_n"]["1"]["estimate"] == pytest.approx(exact(a_val, a_test, 1), abs=1e-12)
    assert summary["groups"]["b"]["boo_n"]["5"]["estimate"] == pytest.approx(exact(VAL["b"], TEST["b"], 5), abs=1e-12)


@pytest.mark.slow
def test_jobs_returning_a_bare_number_give_a_validation_summary(run_sweep):
    values = {0.1: [0.61, 0.66, 0.64], 0.2: [0.70, 0.68, 0.73]}
    table = {f"a/{lr}/{seed}": value for lr, row in values.items() for seed, value in enumerate(row)}
    sweep = run_sweep(
        table,
        "lr=0.1,0.2",
        "seed=0,1,2",
        "+note=x",
        "hydra.callbacks.boontrack.test=null",
        "+hydra.callbacks.boontrack.n=[1,3]",
        "hydra.job.chdir=true",  # each job runs in its own directory; the sweep directory is relative to the start
        relative=True,
    )
    assert sweep.returncode == 0, sweep.stderr
    assert sorted(p.name for p in (sweep.dir / ".boontrack" / "jobs").iterdir()) == [f"{job}.json" for job in range(6)]
    summary = sweep.summary()
    assert summary["metric"] == "val_acc" and summary["has_test"] is False
    assert summary["spec"]["group_by"] == ["lr"]  # `note` takes one value
    assert list(summary["groups"]) == ["0.1", "0.2"]
    for lr, row in values.items():
        boo_n = summary["groups"][str(lr)]["boo_n"]
        for n in (1, 3):
            assert boo_n[str(n)]["estimate"] == pytest.approx(exact(row, None, n), abs=1e-12)


@pytest.mark.slow
def test_a_summary_that_cannot_be_written_warns_and_the_multirun_succeeds(run_sweep, tmp_path):
    taken = tmp_path / "sweep" / "boontrack"
    taken.mkdir(parents=True)
    (taken / "notes.txt").write_text("mine")
    sweep = run_sweep(scores(), "model=a,b", "seed=0,1")
    assert sweep.returncode == 0, sweep.stderr
    assert f"WriteBackWarning: writing the summary to {taken} failed: InputError: {taken} holds files" in sweep.stderr
    assert "holds files boontrack did not write (notes.txt)" in sweep.stderr
    assert f"boontrack: 4 jobs summarized in {taken} (write-failed)" in sweep.stdout  # and its table, computed
    assert sorted(p.name for p in (sweep.dir / ".boontrack" / "jobs").iterdir()) == [
        "0.json",
        "1.json",
        "2.json",
        "3.json",
    ]
    assert (taken / "notes.txt").read_text() == "mine"


@pytest.mark.slow
def test_the_summary_also_goes_to_mlflow_when_asked(run_sweep, tmp_path):
    mlflow = pytest.importorskip("mlflow")
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    client = mlflow.MlflowClient(uri)
    client.search_experiments()  # creates the store
    sweep = run_sweep(
        scores(),
        "model=a,b",
        "seed=0,1,2,3,4",
        f"+hydra.callbacks.boontrack.tracking_uri={uri}",
        "+hydra.callbacks.boontrack.mlflow_experiment=sweeps",
    )
    assert sweep.returncode == 0, sweep.stderr
    assert "boontrack: summary in MLflow run" in sweep.stdout
    experiment = client.get_experiment_by_name("sweeps")
    (run,) = client.search_runs([experiment.experiment_id], filter_string="tags.`boontrack.role` = 'summary'")
    for model in ("a", "b"):
        logged = run.data.metrics[f"boon/test_acc/{model}/boo_5"]
        assert logged == pytest.approx(exact(VAL[model], TEST[model], 5), abs=1e-12)
    assert sweep.summary()["groups"]["a"]["boo_n"]["5"]["estimate"] == pytest.approx(
        run.data.metrics["boon/test_acc/a/boo_5"]
    )


@pytest.mark.slow
def test_an_mlflow_failure_leaves_the_directory_summary(run_sweep, tmp_path):
    pytest.importorskip("mlflow")
    missing = f"sqlite:///{tmp_path / 'none' / 'mlflow.db'}"
    sweep = run_sweep(scores(), "model=a,b", "seed=0,1", f"+hydra.callbacks.boontrack.tracking_uri={missing}")
    assert sweep.returncode == 0, sweep.stderr
    assert "writing the summary to mlflow:app failed: InputError: no MLflow store at" in sweep.stderr
    assert sweep.summary()["runs"] == 4 and not (tmp_path / "none").exists()


@pytest.mark.slow
def test_a_new_multirun_into_the_same_directory_forgets_the_old_jobs(run_sweep):
    assert run_sweep(scores(), "model=a,b", "seed=0,1,2,3").returncode == 0
    sweep = run_sweep(scores(), "model=a", "seed=0,1,2")
    assert sweep.returncode == 0, sweep.stderr
    summary = sweep.summary()
    assert summary["runs"] == 3 and list(summary["groups"]) == ["all"]
    assert summary["groups"]["all"]["boo_n"]["1"]["estimate"] == pytest.approx(exact(VAL["a"][:3], TEST["a"][:3], 1))


@pytest.mark.slow
def test_bad_options_stop_hydra_before_any_job(run_sweep):
    sweep = run_sweep(scores(), "model=a,b", "seed=0,1", "+hydra.callbacks.boontrack.estimator=Z")
    assert sweep.returncode == 1
    assert "`estimator` must be one of V, U, W, got 'Z'" in sweep.stderr
    assert not sweep.dir.exists()


@pytest.mark.slow
def test_a_single_run_records_nothing(run_sweep, tmp_path):
    done = run_sweep(scores(), f"hydra.run.dir={tmp_path / 'run'}", multirun=False)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "run").is_dir() and not list(tmp_path.rglob(".boontrack"))
    assert "boontrack" not in done.stdout + done.stderr


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"val": ""}, "`val` must be a non-empty name, got ''"),
        ({"estimator": "Z"}, "`estimator` must be one of V, U, W, got 'Z'"),
        ({"n": 0}, "`n` must be a list of integers >= 1, got 0"),
        ({"n": [5, 5]}, "`n` repeats a budget"),
        ({"confidence_level": 2}, "`confidence_level` must be a number between 0 and 1, got 2"),
        ({"maximize": "yes"}, "`maximize` must be true or false, got 'yes'"),
        ({"group_by": [""]}, "`group_by` must be a list of column names"),
        ({"seed_column": ""}, "`seed_column` must be a non-empty name, got ''"),
        ({"out": ""}, "`out` must be a directory, got ''"),
        ({"plots": "no"}, "`plots` must be true or false, got 'no'"),
        ({"tracking_uri": "not a uri"}, "`tracking_uri` 'not a uri' is neither a URI nor an existing directory"),
        ({"mlflow_experiment": ""}, "`mlflow_experiment` must be a non-empty name, got ''"),
        ({"pick": "best_val_step"}, "a Hydra job returns one value per metric: there is no per-step history"),
        (
            {"curves": ["val_loss"]},
            "a Hydra job returns one value per metric, so a Hydra sweep has no per-step history for `curves`: log "
            "each step from the job to MLflow, W&B or a file of one row per run and step, and summarize that source",
        ),
        ({"estimatr": "U"}, "unknown option `estimatr` (known: `val`, `test`"),
    ],
)
def test_bad_options_are_one_clear_error(options, message):
    from boontrack.hydra import BoonCallback

    with pytest.raises(InputError, match=f"^{re.escape(message)}"):
        BoonCallback(**{"val": "val_acc", **options})


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"confidence": 2}, "`confidence` must be a number between 0 and 1, got 2"),
        ({"minimize": "yes"}, "`minimize` must be true or false, got 'yes'"),
        ({"resamples": 0}, "`resamples` must be an integer >= 1 or 'auto', got 0"),
        ({"bootstrap_seed": -1}, "`bootstrap_seed` must be an integer >= 0, got -1"),
        ({"seed_key": ""}, "`seed_key` must be a non-empty name, got ''"),
        ({"mlflow_tracking_uri": "not a uri"}, "`mlflow_tracking_uri` 'not a uri' is neither a URI"),
    ],
)
def test_the_spellings_of_0_2_0_warn_and_errors_name_them_as_typed(options, message):
    from boontrack.hydra import BoonCallback

    (old,) = options
    with pytest.warns(DeprecationWarning, match=f"^`{old}` is now `"), pytest.raises(InputError) as info:
        BoonCallback(**{"val": "val_acc", **options})
    assert str(info.value).startswith(message)


def test_options_as_hydra_passes_them():
    from boontrack.hydra import BoonCallback

    config = OmegaConf.create({"n": [1, 3], "group_by": ["model", "lr"]})
    callback = BoonCallback(val="val_acc", n=config.n, group_by=config.group_by, maximize=False)
    assert callback.spec.n == (1, 3) and callback.spec.group_by == ("model", "lr") and not callback.spec.maximize
    with pytest.warns(DeprecationWarning, match="`minimize` is now `maximize`"):
        assert BoonCallback(val="v", minimize=True).spec.maximize is False
    assert BoonCallback(val="v", n=5, group_by="model").spec.group_by == ("model",)


def test_a_sweep_with_nothing_to_summarize_warns(tmp_path):
    from boontrack.hydra import BoonCallback

    callback = BoonCallback(val="val_acc", plots=False)
    jobs = tmp_path / ".boontrack" / "jobs"
    for job in range(3):
        write_record(jobs, {"job": job, "status": "completed", "params": {"seed": job}, "metrics": {}})
    with pytest.warns(WriteBackWarning, match="no column 'val_acc'"):
        assert callback.summarize(tmp_path) is None
    with pytest.warns(WriteBackWarning, match="no Hydra job records in"):
        assert callback.summarize(tmp_path / "elsewhere") is None


def test_an_unreadable_record_is_left_out_with_a_warning(tmp_path):
    from boontrack.hydra import BoonCallback

    jobs = tmp_path / ".boontrack" / "jobs"
    for job, (val, test) in enumerate(zip(VAL["a"], TEST["a"])):
        write_record(jobs, {"job": job, "status": "completed", "metrics": {"v": val, "t": test}})
    (jobs / "5.json").write_text("{not json")
    callback = BoonCallback(val="v", test="t", plots=False, print_table=False, n_resamples=99)
    with pytest.warns(WriteBackWarning, match=r"5\.json is left out"):
        result = callback.summarize(tmp_path)
    assert result.status == "updated" and result.summary.runs == 5
    assert result.summary.groups[0].boo_n[5].estimate == pytest.approx(exact(VAL["a"], TEST["a"], 5), abs=1e-12)


@pytest.mark.parametrize(
    ("returned", "metrics"),
    [
        (0.5, {"val_acc": 0.5}),
        (3, {"val_acc": 3.0}),
        (np.float32(0.25), {"val_acc": 0.25}),
        (np.array(0.75), {"val_acc": 0.75}),
        (
            {"val_acc": 0.9, "test_acc": np.float64(0.8), "name": "x", "ok": True, "curve": [1, 2]},
            {"val_acc": 0.9, "test_acc": 0.8},
        ),
        (OmegaConf.create({"val_acc": 0.9, "nested": {"a": 1}}), {"val_acc": 0.9}),
        (True, {}),
        (None, {}),
        ("0.9", {}),
        (np.array([0.1, 0.2]), {}),
    ],
)
def test_returned_values_become_metrics(returned, metrics):
    assert returned_metrics(returned, val="val_acc") == metrics


def test_importing_the_short_name_is_cheap_and_the_class_is_a_hydra_callback():
    code = textwrap.dedent(
        """
        import json, sys
        import boontrack.hydra, boontrack_hydra
        heavy = sorted(m for m in sys.modules if m.partition(".")[0] in ("hydra", "omegaconf", "numpy", "pandas"))
        from hydra.experimental.callback import Callback
        from hydra.utils import get_class
        located = get_class("boontrack.hydra.BoonCallback")
        same = located is boontrack.hydra.BoonCallback is boontrack_hydra.BoonCallback
        print(json.dumps({"heavy": heavy, "callback": issubclass(located, Callback) and same}))
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(done.stdout) == {"heavy": [], "callback": True}


def test_without_hydra_the_error_says_what_to_install():
    code = "import sys; sys.modules['hydra'] = None; import boontrack.hydra; boontrack.hydra.BoonCallback"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1] == (
        'boontrack.exceptions.MissingExtraError: boontrack.hydra.BoonCallback needs hydra: pip install ".[hydra]" in a boontrack checkout'
    )


def test_a_sweep_written_to_a_directory_and_to_mlflow_is_read_once_and_analyzed_once(tmp_path, monkeypatch):
    mlflow = pytest.importorskip("mlflow")
    import boontrack.analysis
    from boontrack.hydra import BoonCallback
    from boontrack_hydra._records import HydraSweepSource

    monkeypatch.chdir(tmp_path)  # the experiment the callback creates keeps its artifacts in ./mlruns
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    mlflow.MlflowClient(uri).search_experiments()  # creates the store
    jobs = tmp_path / "sweep" / ".boontrack" / "jobs"
    for job, (model, seed) in enumerate((model, seed) for model in VAL for seed in range(5)):
        metrics = {"val_acc": VAL[model][seed], "test_acc": TEST[model][seed]}
        write_record(
            jobs, {"job": job, "status": "completed", "params": {"model": model, "seed": seed}, "metrics": metrics}
        )
    calls = {"read": 0, "analyze": 0}

    def counted(name, function):
        def call(*args, **kwargs):
            calls[name] += 1
            return function(*args, **kwargs)

        return call

    monkeypatch.setattr(HydraSweepSource, "read", counted("read", HydraSweepSource.read))
    monkeypatch.setattr(boontrack.analysis, "analyze", counted("analyze", boontrack.analysis.analyze))
    callback = BoonCallback(
        val="val_acc", test="test_acc", tracking_uri=uri, mlflow_experiment="sweeps", plots=False, print_table=False
    )
    result = callback.summarize(tmp_path / "sweep")
    assert calls == {"read": 1, "analyze": 1}
    assert [(d.status, d.error) for d in result.destinations] == [("updated", None), ("updated", None)]
    assert json.loads((tmp_path / "sweep" / "boontrack" / "summary.json").read_text())["runs"] == 10
    client = mlflow.MlflowClient(uri)
    experiment = client.get_experiment_by_name("sweeps")
    (run,) = client.search_runs([experiment.experiment_id], filter_string="tags.`boontrack.role` = 'summary'")
    assert run.data.tags["boontrack.fingerprint"] == result.fingerprint
    assert run.data.metrics["boon/test_acc/a/boo_5"] == pytest.approx(exact(VAL["a"], TEST["a"], 5), abs=1e-12)


def test_the_optuna_sweepers_direction_is_the_direction_of_the_number_each_job_returns(tmp_path):
    from boontrack.hydra import BoonCallback
    from boontrack_hydra._records import HydraSweepSource

    def config(sweeper: dict) -> OmegaConf:
        hydra = {
            "runtime": {"cwd": str(tmp_path)},
            "sweep": {"dir": "sweep"},
            "job": {"name": "app"},
            "sweeper": sweeper,
        }
        return OmegaConf.create({"hydra": hydra})

    callback = BoonCallback(val="val_loss", maximize=False, plots=False, print_table=False)
    optuna = "hydra_plugins.hydra_optuna_sweeper.optuna_sweeper.OptunaSweeper"
    try:
        callback.on_multirun_start(config({"_target_": optuna, "direction": "minimize"}))
        direction = HydraSweepSource(tmp_path / "sweep").direction("val_loss")
        assert direction == Direction(maximize=False, said_by="the direction of Hydra's Optuna sweeper")
        assert HydraSweepSource(tmp_path / "sweep").direction("test_loss") is None
        callback.on_multirun_start(config({"_target_": optuna, "direction": ["minimize", "maximize"]}))
        assert HydraSweepSource(tmp_path / "sweep").direction("val_loss") is None  # two objectives
        basic = "hydra._internal.core_plugins.basic_sweeper.BasicSweeper"
        callback.on_multirun_start(config({"_target_": basic}))
        assert HydraSweepSource(tmp_path / "sweep").direction("val_loss") is None
    finally:
        atexit.unregister(callback._summarize_at_exit)


def test_a_loss_without_a_direction_is_said_when_the_multirun_starts(tmp_path):
    from boontrack.hydra import BoonCallback

    basic = {"_target_": "hydra._internal.core_plugins.basic_sweeper.BasicSweeper"}
    optuna = {"_target_": "hydra_plugins.hydra_optuna_sweeper.optuna_sweeper.OptunaSweeper", "direction": "minimize"}

    def start(sweeper: dict, **options) -> None:
        hydra = {"runtime": {"cwd": str(tmp_path)}, "sweep": {"dir": "sweep"}, "job": {"name": "app"}}
        callback = BoonCallback(val="val_loss", plots=False, print_table=False, **options)
        try:
            callback.on_multirun_start(OmegaConf.create({"hydra": {**hydra, "sweeper": sweeper}}))
        finally:
            atexit.unregister(callback._summarize_at_exit)

    loss = r"'val_loss' looks like a loss .* add `maximize: false` \(or `maximize: true`"
    with pytest.warns(WriteBackWarning, match=f"^boontrack: deciding the direction of the metric failed: {loss}"):
        start(basic)
    assert (tmp_path / "sweep" / ".boontrack" / "sweep.json").is_file()  # the sweep prepared all the same
    with pytest.raises(InputError, match=f"^{loss}"):
        start(basic, raise_on_error=True)
    with pytest.raises(InputError, match="^the direction of Hydra's Optuna sweeper minimizes 'val_loss', but "):
        start(optuna, maximize=True, raise_on_error=True)
    start(optuna)  # the sweeper's direction
    start(basic, maximize=False)  # the caller's
    write_record(jobs_dir(tmp_path / "sweep"), {"job": 0, "status": "completed", "metrics": {"val_loss": 0.3}})
    with pytest.warns(WriteBackWarning, match=f"^summarizing the Hydra sweep in .* failed: {loss}"):
        assert BoonCallback(val="val_loss", plots=False, print_table=False).summarize(tmp_path / "sweep") is None
