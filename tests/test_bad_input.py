"""Bad input, on every command, as a shell meets it: each case is a fresh ``boontrack`` process that must exit 2
with one line on stderr (no traceback), print nothing on stdout and write nothing. And the messages a new user
met: a misspelt scheme, a file of one run, warnings with no report to read them in."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from boontrack.analysis import analyze
from boontrack.backends import open_source
from boontrack.exceptions import InputError
from boontrack.reports import format_table
from boontrack.runtable import RunTable
from boontrack.spec import Spec

DIGITS = Path(__file__).resolve().parents[1] / "examples" / "digits_sweep.csv"
BENCHMARK = DIGITS.with_name("benchmark_runs.csv")
TASKS = ("summarize", "benchmark.csv", "--val", "val_acc", "--group-by", "method", "--task-column", "task")
SUMMARIZE = ("summarize", "runs.csv", "--val", "val_acc", "--out", "out")
COMPARE = ("compare", "runs.csv", "other.csv", "--val", "val_acc")
JOB = '[[jobs]]\nname = "job"\nsource = "runs.csv"\nval = "val_acc"\nout = "out"\n'

#: (command line, the words its one line must hold); every case runs in a directory holding runs.csv (the demo's
#: runs), other.csv (the same runs), one.csv (one run), losses.csv, broken.toml and the configs named below.
CASES = {
    # summarize
    "summarize: resamples": ((*SUMMARIZE, "--resamples", "0"), "--resamples must be an integer >= 1 or 'auto', got 0"),
    "summarize: confidence": ((*SUMMARIZE, "--confidence", "1.5"), "--confidence must be a number between 0 and 1"),
    "summarize: budgets": ((*SUMMARIZE, "--n", "5,x"), "Invalid value for '--n'"),
    "summarize: bounds": ((*SUMMARIZE, "--bounds", "1", "0"), "--bounds must have low < high"),
    "summarize: threads": ((*SUMMARIZE, "--threads", "0"), "Invalid value for '--threads'"),
    "summarize: unknown column": (("summarize", "runs.csv", "--val", "nope"), "no column 'nope'"),
    "summarize: missing file": (("summarize", "missing.csv", "--val", "val_acc"), "cannot read missing.csv: no such"),
    "summarize: misspelt scheme": (("summarize", "mlfow:exp", "--val", "val_acc"), "did you mean 'mlflow:'?"),
    "summarize: one run": (("summarize", "one.csv", "--val", "val_acc", "--out", "out"), "group 'all' has 1 run"),
    "summarize: a loss without direction": (("summarize", "losses.csv", "--val", "val_loss"), "add --minimize"),
    "summarize: unknown backend option": ((*SUMMARIZE, "--option", "x=1"), "unknown option(s) for file sources"),
    "summarize: no tracking URI": (("summarize", "mlflow:exp", "--val", "val_acc"), "no MLflow tracking URI"),
    "summarize: no sqlite store": (
        ("summarize", "mlflow:exp", "--val", "val_acc", "--tracking-uri", "sqlite:///nothere.db"),
        "no MLflow store at sqlite:///nothere.db",
    ),
    "summarize: out is a file": (("summarize", "runs.csv", "--val", "val_acc", "--out", "one.csv"), "is a file"),
    "summarize: out holds other files": ((*SUMMARIZE[:4], "--out", "mine"), "holds files boontrack did not write"),
    "summarize: unknown task column": ((*TASKS[:-1], "nope"), "no column 'nope' (tried 'nope', 'params.nope'"),
    "summarize: one task": (("summarize", "one_task.csv", *TASKS[2:]), "holds one task ('cola')"),
    "summarize: a group missing a task": (
        ("summarize", "no_new_rte.csv", *TASKS[2:]),
        "group 'new' has no runs on task 'rte' (1 such pairs in all)",
    ),
    "summarize: task column that groups": ((*TASKS, "--group-by", "task"), "it cannot also group the runs"),
    "summarize: reference scores lack a task": (
        (*TASKS, "--normalize-with", "refs_lacking.csv"),
        "(--normalize-with) give none for task 'stsb'",
    ),
    "summarize: reference low >= high": (
        (*TASKS, "--normalize-with", "refs_flat.csv"),
        "--normalize-with refs_flat.csv, line 3: task 'mrpc' must have finite low < high, got low 0.5, high 0.5",
    ),
    "summarize: reference file missing": ((*TASKS, "--normalize-with", "nothere.csv"), "nothere.csv: cannot be read"),
    "summarize: reference file without a column": (
        (*TASKS, "--normalize-with", "runs.csv"),
        "needs a header with columns task, low, high and a row per task (no column 'task')",
    ),
    "summarize: normalize and reference scores": (
        (*TASKS, "--normalize", "min-max", "--normalize-with", "refs_flat.csv"),
        "give --normalize or --normalize-with, not both",
    ),
    "summarize: normalize without tasks": ((*SUMMARIZE, "--normalize", "min-max"), "give --task-column too"),
    # compare
    "compare: one source": (COMPARE[:2] + COMPARE[3:], "give two or more sources"),
    "compare: missing source": (("compare", "runs.csv", "missing.csv", "--val", "val_acc"), "cannot read missing.csv"),
    "compare: labels repeat": (("compare", "runs.csv", "runs.csv", "--val", "val_acc"), "default labels repeat"),
    "compare: claim": ((*COMPARE, "--require", "maybe"), "Invalid value for '--require'"),
    "compare: margin": ((*COMPARE, "--require", "not-worse", "--margin", "-1"), "--margin must be a finite number"),
    "compare: gate on": ((*COMPARE, "--gate-on", "median"), "Invalid value for '--gate-on'"),
    "compare: gate on without tasks": (
        (*COMPARE, "--gate-on", "mean", "--label", "a", "--label", "b"),
        "--gate-on names a difference across tasks: give --task-column",
    ),
    "compare: gate on its default without tasks": (
        (*COMPARE, "--gate-on", "iqm", "--label", "a", "--label", "b"),
        "--gate-on names a difference across tasks: give --task-column",
    ),
    "compare: a group missing a task": (
        ("compare", "benchmark.csv", "no_new_rte.csv", *TASKS[2:]),
        "group 'method=new,source=no_new_rte' has no runs on task 'rte'",
    ),
    "compare: destination": ((*COMPARE, "--write-to", "results.csv"), "--write-to: expected SCHEME:LOCATION"),
    "compare: missing config": (("compare", "--config", "missing.toml"), "cannot read config missing.toml"),
    "compare: broken config": (("compare", "--config", "broken.toml"), "is not valid TOML"),
    "compare: config and options": (("compare", "--config", "job.toml", "--val", "x"), "not both: --val"),
    # reaggregate
    "reaggregate: missing config": (("reaggregate", "--config", "missing.toml"), "cannot read config missing.toml"),
    "reaggregate: broken config": (("reaggregate", "--config", "broken.toml"), "is not valid TOML"),
    "reaggregate: bad value": (("reaggregate", "--config", "resamples.toml"), "`n_resamples` must be an integer"),
    "reaggregate: config is a directory": (("reaggregate", "--config", "."), "is a directory"),
    "reaggregate: workers": (
        ("reaggregate", "--config", "job.toml", "--workers", "0"),
        "Invalid value for '--workers'",
    ),
    "reaggregate: engine": (("reaggregate", "--config", "job.toml", "--engine", "nope"), "not an installed engine"),
    "reaggregate: discover without an experiment": (
        ("reaggregate", "--config", "discover.toml"),
        "job 'sweeps': mlflow: discover needs an experiment",
    ),
    # simulate
    "simulate: nothing to simulate": (("simulate",), "give either SOURCE or --population"),
    "simulate: one run per sweep": (("simulate", "--population", "normal", "--m", "1"), "--m must be at least 2"),
    "simulate: replications": (("simulate", "--population", "normal", "--replications", "0"), "--replications must"),
    "simulate: power": (("simulate", "--population", "normal", "--shift", "0.1", "--power", "2"), "--power must"),
    "simulate: population": (("simulate", "--population", "nope"), "Invalid value for '--population'"),
    "simulate: missing file": (("simulate", "missing.csv", "--val", "val_acc"), "cannot read missing.csv"),
    "simulate: unknown column": (("simulate", "runs.csv", "--val", "nope"), "no column 'nope'"),
    # demo
    "demo: trials": (("demo", "--trials", "1"), "Invalid value for '--trials'"),
    "demo: store is a directory": (("demo", "--store", "."), "is a directory"),
}


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> Path:
    """The files every case may name, in a directory of their own."""
    directory = tmp_path_factory.mktemp("inputs")
    shutil.copy(DIGITS, directory / "runs.csv")
    shutil.copy(DIGITS, directory / "other.csv")
    pd.read_csv(DIGITS).head(1).to_csv(directory / "one.csv", index=False)
    pd.DataFrame({"val_loss": np.linspace(0.1, 0.5, 12)}).to_csv(directory / "losses.csv", index=False)
    (directory / "mine").mkdir()
    (directory / "mine" / "notes.txt").write_text("the user's\n")
    (directory / "broken.toml").write_text("jobs = [oops\n")
    (directory / "job.toml").write_text(JOB)
    benchmark = pd.read_csv(BENCHMARK)
    benchmark.to_csv(directory / "benchmark.csv", index=False)
    benchmark[benchmark["task"] == "cola"].to_csv(directory / "one_task.csv", index=False)
    benchmark[(benchmark["task"] != "rte") | (benchmark["method"] != "new")].to_csv(
        directory / "no_new_rte.csv", index=False
    )
    (directory / "refs_lacking.csv").write_text("task,low,high\ncola,0,1\nmrpc,0,1\nrte,0,1\nsst2,0,1\n")
    (directory / "refs_flat.csv").write_text("task,low,high\ncola,0,1\nmrpc,0.5,0.5\n")
    (directory / "resamples.toml").write_text(JOB + "n_resamples = 0\n")
    discover = JOB.replace('"job"', '"sweeps"').replace('"runs.csv"', '"mlflow:"')
    (directory / "discover.toml").write_text(discover + 'tracking_uri = "sqlite:///nothere.db"\ndiscover = true\n')
    return directory


def _tree(directory: Path) -> dict[str, tuple[int, int]]:
    """Every file and directory under ``directory``: size and modification time."""
    return {str(p.relative_to(directory)): (p.stat().st_size, p.stat().st_mtime_ns) for p in directory.rglob("*")}


@pytest.mark.parametrize("case", CASES)
def test_bad_input_is_one_line_and_exit_2_and_nothing_written(case, inputs, tmp_path):
    args, said = CASES[case]
    if args[0] == "demo":
        pytest.importorskip("mlflow")
    work = tmp_path / "work"
    shutil.copytree(inputs, work)
    before = _tree(work)
    hidden = ("MLFLOW_TRACKING_URI", "GITHUB_STEP_SUMMARY", "RAY_ADDRESS")
    env = {key: value for key, value in os.environ.items() if key not in hidden}
    command = [sys.executable, "-c", "from boontrack.cli import main; main()", *args]
    done = subprocess.run(command, cwd=work, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert (done.returncode, done.stdout) == (2, ""), done.stderr
    assert done.stderr.startswith("Error: ") and done.stderr.count("\n") == 1, done.stderr
    assert said in done.stderr and "Traceback" not in done.stderr
    assert _tree(work) == before


@pytest.mark.parametrize(
    ("source", "closest"),
    [
        ("mlfow:exp", "mlflow:"),
        ("wandb-ofline:wandb", "wandb-offline:"),
        ("MLflow:x", "mlflow:"),
        ("optuan:x", "optuna:"),
    ],
)
def test_a_misspelt_scheme_is_named_with_the_closest_and_every_installed_one(source, closest):
    with pytest.raises(InputError) as refused:
        open_source(source)
    scheme = source.split(":")[0] + ":"
    assert str(refused.value).startswith(f"cannot read {source}: unknown scheme '{scheme}', did you mean '{closest}'?")
    assert "schemes: hydra:, mlflow:, optuna:, ray-tune:, wandb:, wandb-offline:;" in str(refused.value)
    assert "file types: .csv," in str(refused.value)


def test_a_scheme_like_nothing_installed_lists_them_and_a_file_keeps_its_message(tmp_path):
    with pytest.raises(InputError, match=r"^cannot read zz:top: unknown scheme 'zz:' \(schemes: hydra:, "):
        open_source("zz:top")
    with pytest.raises(InputError, match=r"unknown file type '\.xlsx'"):
        open_source(str(tmp_path / "runs.xlsx"))


def _few_runs() -> object:
    """8 runs: Boo_5 above m / 2 and Boo_10 left out, each a warning of the group."""
    frame = pd.DataFrame({"val": np.linspace(0.5, 0.9, 8), "test": np.linspace(0.4, 0.8, 8)})
    spec = Spec(val="val", test="test", n_resamples=99, maximize=True)
    return analyze(RunTable.from_frame(frame, spec), spec)


def test_warnings_point_to_a_report_only_where_one_was_written():
    summary = _few_runs()
    (group,) = summary.groups
    assert len(group.warnings) == 2 and not group.interval_limits
    pointed = format_table(summary, report_written=True).splitlines()
    assert pointed[-1] == "2 warning(s); see the summary's report for details."
    shown = format_table(summary).splitlines()
    assert not any("see the report" in line for line in shown)
    assert shown[-2:] == [f"Warning: {warning}" for warning in group.warnings]  # each in full, once
