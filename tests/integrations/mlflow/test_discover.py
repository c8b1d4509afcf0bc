"""Discovering the sweeps of an MLflow store, and the change token that spares an unchanged sweep its full read."""

from __future__ import annotations

import dataclasses
import json
import re
import subprocess
import sys
import time
import uuid

import numpy as np
import pytest
from click.testing import CliRunner
from mlflow import MlflowClient
from mlflow.entities import Metric

from boontrack import cli
from boontrack.exceptions import InputError
from boontrack.reaggregate import discover_jobs, load_config, run_jobs
from boontrack_mlflow._sink import CHANGE_TOKEN_TAG, FINGERPRINT_TAG, MlflowSink
from boontrack_mlflow._source import MlflowSource
from boontrack_mlflow._sql import store_for

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
    assert jobs[1].change_token is not None  # as the discovery found it
    assert dataclasses.replace(jobs[1], name="org", label="", change_token=None) == written


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


@pytest.mark.parametrize("read_path", ["auto", "client"])
def test_experiments_by_name_glob_and_by_search_filter(sqlite_uri, tmp_path, read_path):
    prefix = f"team-{uuid.uuid4().hex[:8]}"
    sweeps = [new_sweep(sqlite_uri, name=f"{prefix}-{suffix}") for suffix in ("cifar", "sst", "x_y")]
    for sweep in sweeps:
        _add_children(sweep, 3)
    new_sweep(sqlite_uri, name=f"{prefix}xy")  # LIKE's _ would match it; the glob does not
    client = MlflowClient(sqlite_uri)
    client.set_experiment_tag(sweeps[1].experiment_id, "team", prefix)
    extra = f'write_back = true\noptions = {{ read_path = "{read_path}" }}'

    def found(discover):
        (template,) = load_config(_config(tmp_path, sqlite_uri, discover=discover, extra=extra))
        lines = []
        jobs, failed = discover_jobs([template], log=lines.append)
        assert failed == 0, lines
        return [job.source_options["parent"] for job in jobs]

    assert found(f'{{ experiments = "{prefix}-*" }}') == [s.parent_id for s in sweeps]
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
def test_a_discovery_that_cannot_be_made_is_refused_with_the_config(
    sqlite_uri, tmp_path, location, discover, extra, message
):
    config = _config(tmp_path, sqlite_uri, location=location, discover=discover, extra=extra)
    with pytest.raises(InputError, match="^job 'org': mlflow: .*" + re.escape(message)):
        load_config(config)  # bad input: the pass exits 2 and runs nothing, rather than failing this job each time


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


@pytest.mark.parametrize("uri", ["sqlite_uri", "mlflow_server"])
def test_a_child_added_with_a_clock_behind_the_others_is_a_change(uri, tmp_path, reads, request):
    """The token identifies the children, it does not compare their times: a child that started and ended
    before the others (its host's clock lags) still moves it."""
    uri = request.getfixturevalue(uri)
    sweep = new_sweep(uri)
    _add_children(sweep, 4)
    config = _config(tmp_path, uri, location=sweep.experiment_id)
    assert _pass(config) == ["updated"] and _pass(config) == ["unchanged"]
    reads.clear()
    hour_ago = int(time.time() * 1000) - 3_600_000
    late = sweep.client.create_run(
        sweep.experiment_id, start_time=hour_ago, tags={"mlflow.parentRunId": sweep.parent_id}
    ).info.run_id
    sweep.client.log_batch(late, metrics=[Metric("val_acc", 0.99, hour_ago, 0), Metric("test_acc", 0.9, hour_ago, 0)])
    sweep.client.set_terminated(late, "FINISHED", end_time=hour_ago + 1000)
    assert _pass(config) == ["updated"] and len(reads) == 1
    (summary,) = summary_runs(sweep.client, sweep.experiment_id)
    assert summary.data.metrics["boon/runs"] == 5


@pytest.mark.parametrize("uri", ["sqlite_uri", "mlflow_server"])
def test_a_child_that_ended_before_it_started_does_not_stop_its_sweep(uri, tmp_path, request):
    uri = request.getfixturevalue(uri)
    sweep = new_sweep(uri)
    _add_children(sweep, 4)
    skewed = sweep.add_child(val=[0.9], test=[0.9])
    started = sweep.client.get_run(skewed).info.start_time
    sweep.client.set_terminated(skewed, "FINISHED", end_time=started - 5000)
    assert _pass(_config(tmp_path, uri, location=sweep.experiment_id)) == ["updated"]
    by_time = _config(tmp_path, uri, location=sweep.experiment_id, extra='duration = "duration_s"\nout = "by-time"')
    lines = []
    assert run_jobs(load_config(by_time), log=lines.append) == 0, lines
    (summary,) = [p for p in (tmp_path / "by-time").iterdir() if p.is_dir()]
    report = json.loads((summary / "summary.json").read_text())
    assert [d["reason"] for d in report["dropped"]] == ["negative duration (-5.0 s: it ended before it started)"]


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


_UNCHANGED_PASS_THEN_SUMMARY = """
import sys
from boontrack.cli import main
main(["reaggregate", "--config", sys.argv[1]], standalone_mode=False)
main(["summarize", "mlflow:" + sys.argv[2], "--tracking-uri", sys.argv[3], "--val", "val_acc"], standalone_mode=False)
print("mlflow loaded:", "mlflow" in sys.modules)
"""


def test_an_unchanged_pass_and_a_summary_by_sql_load_no_mlflow(one_sweep, sqlite_uri):
    """Importing MLflow costs 1-2 s of a pass that finds nothing to do: by SQL, neither the change token, nor the
    look for the stored one, nor a read needs it (only a write does)."""
    sweep, config = one_sweep
    assert _pass(config) == ["updated"]
    done = subprocess.run(
        [sys.executable, "-c", _UNCHANGED_PASS_THEN_SUMMARY, str(config), sweep.experiment_id, sqlite_uri],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert ": unchanged" in done.stdout and "Boo_" in done.stdout
    assert done.stdout.rstrip().endswith("mlflow loaded: False")


def test_the_look_for_an_earlier_summary_finds_by_sql_what_the_client_finds(one_sweep, sqlite_uri):
    sweep, config = one_sweep
    _pass(config)
    (summary,) = summary_runs(sweep.client, sweep.experiment_id)
    key = summary.data.tags["boontrack.key"]
    sinks = {
        how: MlflowSink(lambda: sweep.client, sqlite_uri, sweep.experiment_id, sweep.parent_id, key, store=store)
        for how, store in (("sql", store_for(sqlite_uri)), ("client", None))
    }
    by_sql, by_client = (_described(sinks[how]._state(by_sql=True)) for how in ("sql", "client"))
    assert by_sql == by_client and by_sql[2] == summary.info.run_id and by_sql[3]
    assert sinks["sql"].read_change_token() == sinks["client"].read_change_token() is not None
    assert sinks["sql"]._made_client is None  # it never asked the client


def _described(state):
    own = sorted((r.info.run_id, r.info.status, r.info.start_time, dict(r.data.tags)) for r in state.own)
    return state.records, own, state.keep.info.run_id, state.clean


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
    from boontrack.exceptions import BackendError

    def refused(self):
        raise BackendError("MLflow at http://x failed while asking for changes: INVALID_PARAMETER_VALUE")

    monkeypatch.setattr(MlflowSource, "change_token", refused)
    sweep, config = one_sweep
    assert _pass(config) == ["updated"] and _pass(config) == ["unchanged"] and len(reads) == 2


#: Sweeps in each experiment of the discovery-cost test (each written back once: most of its time).
SWEEPS = 10


@pytest.mark.slow
def test_discovery_costs_requests_per_page_and_sweep_never_per_plain_run(mlflow_server, mlflow_server_store, tmp_path):
    """Two experiments with the same 10 sweeps, one of them also holding 10,000 plain runs (inserted in bulk into
    the server's own store), discovered through a proxy that counts the requests: the same few requests for
    both. Then an unchanged pass: a few requests per sweep, none of them a search of its children."""
    from mlflow_tools import CountingProxy, insert_children

    proxy = CountingProxy(mlflow_server)
    counts = {}
    for plain in (0, 10_000):
        sweep = new_sweep(mlflow_server)
        for k in range(SWEEPS):
            parent = sweep.client.create_run(sweep.experiment_id, run_name=f"sweep-{k}").info.run_id
            insert_children(mlflow_server_store, sweep.experiment_id, parent, 6, np.random.default_rng(k))
        if plain:
            insert_children(mlflow_server_store, sweep.experiment_id, None, plain, np.random.default_rng(99))
        (template,) = load_config(_config(tmp_path, proxy.url, location=sweep.experiment_id, name=f"{plain}.toml"))
        proxy.take()
        jobs, failed = discover_jobs([template], log=lambda line: None)
        counts[plain] = proxy.take()
        assert failed == 0 and len(jobs) == SWEEPS  # new_sweep's own parent has no children: not a sweep
    assert counts[0] == counts[10_000]
    searches = counts[10_000]["POST /api/2.0/mlflow/runs/search"]
    assert searches == 2 and sum(counts[10_000].values()) <= 4, counts  # the children, then their parents

    extra = 'write_back = true\ngroup_by = ["params.lr"]'  # one value: one group of the 6 trials
    config = _config(tmp_path, proxy.url, location=sweep.experiment_id, name="pass.toml", extra=extra)
    assert _pass(config) == ["updated"] * SWEEPS
    proxy.take()
    assert _pass(config) == ["unchanged"] * SWEEPS
    unchanged = proxy.take()
    per_sweep = (sum(unchanged.values()) - sum(counts[10_000].values())) / SWEEPS
    assert unchanged["POST /api/2.0/mlflow/runs/search"] - searches <= SWEEPS, unchanged  # the summary's, no children's
    assert per_sweep <= 4, unchanged
