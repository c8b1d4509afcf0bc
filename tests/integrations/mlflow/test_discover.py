"""Discovering the sweeps of an MLflow store, and the change token that spares an unchanged sweep its full read."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import uuid

import pytest
from click.testing import CliRunner
from mlflow import MlflowClient

from boontrack import cli
from boontrack.exceptions import InputError
from boontrack.reaggregate import discover_jobs, load_config, run_jobs
from boontrack_mlflow import _discover
from boontrack_mlflow._sink import CHANGE_TOKEN_TAG, FINGERPRINT_TAG
from boontrack_mlflow._source import MlflowSource

from mlflow_helpers import new_sweep, summary_runs

pytestmark = pytest.mark.mlflow

TEMPLATE = """
[[jobs]]
name = "org"
source = "mlflow:{location}"
tracking_uri = "{uri}"
val = "val_acc"
test = "test_acc"
n = [1, 3]
n_resamples = 200
plots = false
{extra}
"""


def _config(tmp_path, uri, *, location="", discover="true", extra="write_back = true", name="boontrack.toml"):
    path = tmp_path / name
    path.write_text(TEMPLATE.format(location=location, uri=uri, extra=f"discover = {discover}\n{extra}"))
    return path


def _add_children(sweep, count, *, start=0.6):
    return [sweep.add_child(val=[start + 0.01 * i], test=[start + 0.02 * i], params={"seed": i}) for i in range(count)]


def _second_parent(sweep, name="second"):
    """Another parent run in the sweep's experiment; children added with _add_children go under it."""
    parent = sweep.client.create_run(sweep.experiment_id, run_name=name)
    sweep.client.set_terminated(parent.info.run_id, "FINISHED")
    return dataclasses.replace(sweep, parent_id=parent.info.run_id, children={})


@pytest.fixture
def store(sqlite_uri):
    """An experiment with two sweeps (4 children each), a parent without children and a plain run."""
    first = new_sweep(sqlite_uri)
    _add_children(first, 4)
    second = _second_parent(first)
    _add_children(second, 4, start=0.7)
    empty = _second_parent(first, "empty")
    first.client.create_run(first.experiment_id, run_name="plain")
    return first, second, empty


def test_each_sweep_of_an_experiment_is_the_job_written_by_hand(store, sqlite_uri, tmp_path):
    first, second, _ = store
    (template,) = load_config(_config(tmp_path, sqlite_uri, location=first.experiment_name))
    lines = []
    jobs, failed = discover_jobs([template], log=lines.append)
    assert (failed, lines) == (0, ["org: 2 sweeps found"])
    assert [job.name for job in jobs] == [f"org/{first.experiment_id}-{s.parent_id}" for s in (first, second)]
    assert [job.label for job in jobs] == [f"{first.experiment_name}/parent", f"{first.experiment_name}/second"]

    by_hand = tmp_path / "by-hand.toml"
    by_hand.write_text(
        TEMPLATE.format(
            location=first.experiment_id, uri=sqlite_uri, extra=f'parent = "{second.parent_id}"\nwrite_back = true'
        )
    )
    (written,) = load_config(by_hand)
    assert dataclasses.replace(jobs[1], name="org", label="") == written


def test_new_sweeps_are_found_on_the_next_run_and_each_line_names_its_sweep(store, sqlite_uri, tmp_path):
    first, second, empty = store
    config = _config(tmp_path, sqlite_uri, location=first.experiment_id, extra='out = "summaries"')
    result = CliRunner().invoke(cli.main, ["reaggregate", "--config", str(config)])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == "org: 2 sweeps found"
    prefix = f"org/{first.experiment_id}-"
    assert lines[1].startswith(f"{prefix}{first.parent_id} ({first.experiment_name}/parent): updated")
    assert lines[2].startswith(f"{prefix}{second.parent_id} ({first.experiment_name}/second): updated")
    assert (tmp_path / "summaries" / f"{first.experiment_id}-{second.parent_id}" / "summary.json").is_file()

    _add_children(empty, 3)
    again = CliRunner().invoke(cli.main, ["reaggregate", "--config", str(config)])
    assert again.exit_code == 0, again.output
    assert again.stdout.splitlines() == [
        "org: 3 sweeps found",
        f"{prefix}{first.parent_id} ({first.experiment_name}/parent): unchanged",
        f"{prefix}{second.parent_id} ({first.experiment_name}/second): unchanged",
        f"{prefix}{empty.parent_id} ({first.experiment_name}/empty): updated "
        f"({tmp_path / 'summaries' / f'{first.experiment_id}-{empty.parent_id}'})",
    ]


def test_experiments_by_name_glob_and_by_search_filter(sqlite_uri, tmp_path):
    prefix = f"team-{uuid.uuid4().hex[:8]}"
    sweeps = [new_sweep(sqlite_uri, name=f"{prefix}-{suffix}") for suffix in ("cifar", "sst", "x_y")]
    for sweep in sweeps:
        _add_children(sweep, 3)
    new_sweep(sqlite_uri, name=f"{prefix}xy")  # LIKE's _ would match it; the glob does not
    client = MlflowClient(sqlite_uri)
    client.set_experiment_tag(sweeps[1].experiment_id, "team", prefix)

    def found(discover):
        (template,) = load_config(_config(tmp_path, sqlite_uri, discover=discover))
        jobs, failed = discover_jobs([template], log=lambda line: None)
        assert failed == 0
        return [job.source_options["parent"] for job in jobs]

    assert found(f'{{ experiments = "{prefix}-*" }}') == [s.parent_id for s in sweeps]
    # Once summarized, the sweeps of every experiment are known as sweeps without a search each.
    assert _pass(_config(tmp_path, sqlite_uri, discover=f'{{ experiments = "{prefix}-*" }}')) == ["updated"] * 3
    experiments = _discover.search_experiments(client, f"{prefix}-*", None)
    assert _discover._summarized_parents(client, experiments) == {s.parent_id for s in sweeps}
    assert found(f'{{ experiments = "{prefix}-x_y" }}') == [sweeps[2].parent_id]
    assert found(f"{{ filter = \"tags.team = '{prefix}'\" }}") == [sweeps[1].parent_id]
    assert found(f'{{ experiments = "{prefix}-c*", filter = "tags.team = \'{prefix}\'" }}') == []


@pytest.mark.parametrize(
    ("location", "discover", "extra", "message"),
    [
        ("", "true", "write_back = true", "discover needs an experiment"),
        ("exp", '{ experiments = "a*" }', "write_back = true", "as mlflow:exp or in discover, not both"),
        ("exp", "true", 'parent = "abc"\nwrite_back = true', "give no parent"),
        ("", '{ experiments = "it\'s" }', "write_back = true", "cannot contain a quote"),
    ],
)
def test_a_discovery_that_cannot_be_made_fails_its_job_only(sqlite_uri, tmp_path, location, discover, extra, message):
    (template,) = load_config(_config(tmp_path, sqlite_uri, location=location, discover=discover, extra=extra))
    lines = []
    assert run_jobs([template], log=lines.append) == 1
    assert lines[0].startswith("org: failed: discovering sweeps: mlflow: ") and message in lines[0], lines


def test_an_unknown_discover_key_is_refused_with_the_config(sqlite_uri, tmp_path):
    with pytest.raises(InputError, match="unknown discover key 'sweeps' for 'mlflow' \\(known: experiments, filter\\)"):
        load_config(_config(tmp_path, sqlite_uri, location="x", discover='{ sweeps = "all" }'))


# --- the change token ------------------------------------------------------------------------------------------


@pytest.fixture
def one_sweep(sqlite_uri, tmp_path):
    sweep = new_sweep(sqlite_uri)
    _add_children(sweep, 4)
    config = _config(tmp_path, sqlite_uri, location=sweep.experiment_id)
    return sweep, config


def _pass(config, **options):
    lines = []
    failed = run_jobs(load_config(config), log=lines.append, **options)
    assert failed == 0, lines
    return [line.split(": ", 1)[1].split(" (")[0] for line in lines[1:]]


@pytest.fixture
def reads(monkeypatch):
    """How many times the runs of a sweep were read in full."""
    calls = []
    original = MlflowSource._read_runs  # by SQL or through the client, whichever the store allows
    monkeypatch.setattr(MlflowSource, "_read_runs", lambda *a, **k: calls.append(1) or original(*a, **k))
    return calls


def test_an_unchanged_sweep_is_not_read_and_each_run_that_ends_is_a_change(one_sweep, reads):
    sweep, config = one_sweep
    assert _pass(config) == ["updated"] and len(reads) == 1
    assert _pass(config) == ["unchanged"] and len(reads) == 1  # the token matched: no full read

    sweep.add_child(val=[0.9], test=[0.9])  # a new finished child
    assert _pass(config) == ["updated"] and len(reads) == 2
    running = sweep.add_child(val=[0.95], test=[0.95], status=None)  # a new child still running: not a change yet
    assert _pass(config) == ["unchanged"] and len(reads) == 2
    sweep.client.set_terminated(running, "FAILED")  # it ends (failed): its end time is the latest
    assert _pass(config) == ["updated"] and len(reads) == 3
    assert _pass(config) == ["unchanged"] and len(reads) == 3
    assert _pass(config, force=True) == ["updated"] and len(reads) == 4


def test_an_unchanged_pass_asks_four_small_questions_per_sweep(store, sqlite_uri, tmp_path, monkeypatch):
    first, _, _ = store
    config = _config(tmp_path, sqlite_uri, location=first.experiment_id)
    assert _pass(config) == ["updated", "updated"]
    calls = []
    for name in ("get_run", "get_experiment", "get_experiment_by_name", "search_runs", "search_experiments"):
        original = getattr(MlflowClient, name)
        monkeypatch.setattr(
            MlflowClient, name, lambda self, *a, _f=original, _n=name, **k: calls.append(_n) or _f(self, *a, **k)
        )
    assert _pass(config) == ["unchanged", "unchanged"]
    # Discovery: the experiment (resolved, then read), its top-level runs, the summaries under its parents (a
    # parent summarized before is a sweep), one child of each other top-level run (the parent without children
    # and the plain run). Then each sweep: its parent run, its experiment, its latest-ended child, the runs of
    # its summary key.
    discovery = ["get_experiment", "get_experiment", "search_runs", "search_runs", "search_runs", "search_runs"]
    assert calls == discovery + ["get_run", "get_experiment", "search_runs", "search_runs"] * 2


def test_the_token_is_trusted_only_on_a_complete_summary_with_its_fingerprint(one_sweep, reads):
    sweep, config = one_sweep
    _pass(config)
    (summary,) = summary_runs(sweep.client, sweep.experiment_id)
    stored = json.loads(summary.data.tags[CHANGE_TOKEN_TAG])
    assert stored["fingerprint"] == summary.data.tags[FINGERPRINT_TAG]

    # A token stored for other inputs: read in full, found unchanged by its fingerprint, the token replaced.
    sweep.client.set_tag(summary.info.run_id, CHANGE_TOKEN_TAG, json.dumps({**stored, "fingerprint": "0" * 64}))
    assert _pass(config) == ["unchanged"] and len(reads) == 2
    assert json.loads(sweep.client.get_run(summary.info.run_id).data.tags[CHANGE_TOKEN_TAG]) == stored
    assert _pass(config) == ["unchanged"] and len(reads) == 2

    # A summary that is no longer complete (a crash left it running): its token is not trusted, it is rewritten.
    sweep.client.update_run(summary.info.run_id, status="RUNNING")
    assert _pass(config) == ["updated"] and len(reads) == 3
    (rewritten,) = summary_runs(sweep.client, sweep.experiment_id)
    assert rewritten.info.run_id != summary.info.run_id and rewritten.info.status == "FINISHED"


@pytest.mark.slow
def test_two_passes_at_once_with_workers_leave_one_complete_summary_per_sweep(mlflow_server, tmp_path):
    first = new_sweep(mlflow_server)
    _add_children(first, 4)
    second = _second_parent(first)
    _add_children(second, 3)
    config = _config(tmp_path, mlflow_server, location=first.experiment_id)
    command = [
        sys.executable,
        "-c",
        "from boontrack.cli import main; main()",
        "reaggregate",
        "--workers",
        "2",
        "--force",
        "--config",
        str(config),
    ]
    copies = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in "ab"]
    outcomes = [copy.communicate(timeout=300) for copy in copies]
    assert [copy.returncode for copy in copies] == [0, 0], outcomes
    for stdout, _ in outcomes:
        assert sorted(line.split(": ")[1].split(" ")[0] for line in stdout.splitlines()[1:]) == ["updated"] * 2

    lines = []
    assert run_jobs(load_config(config), log=lines.append) == 0
    assert [line.split(": ", 1)[1] for line in lines[1:]] == ["unchanged", "unchanged"]
    client = MlflowClient(mlflow_server)
    summaries = summary_runs(client, first.experiment_id)
    assert sorted(s.data.tags["mlflow.parentRunId"] for s in summaries) == sorted([first.parent_id, second.parent_id])
    assert all(s.info.status == "FINISHED" and FINGERPRINT_TAG in s.data.tags for s in summaries)


def test_a_tracker_that_cannot_give_the_token_has_its_runs_read_every_time(one_sweep, reads, monkeypatch):
    from mlflow.exceptions import MlflowException
    from mlflow.protos.databricks_pb2 import INVALID_PARAMETER_VALUE

    def refused(*args):
        raise MlflowException("Invalid comparator 'IS NULL'", error_code=INVALID_PARAMETER_VALUE)

    monkeypatch.setattr(_discover, "sweep_change_token", refused)
    sweep, config = one_sweep
    assert _pass(config) == ["updated"] and _pass(config) == ["unchanged"] and len(reads) == 2
