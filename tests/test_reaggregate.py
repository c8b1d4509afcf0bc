"""The scheduled job: config validation, idempotent reruns, crash repair, failures and concurrent copies."""

from __future__ import annotations

import dataclasses
import fcntl
import json
import os
import re
import signal
import subprocess
import sys
import warnings
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import boontrack
from boontrack import cli
from boontrack.backends import Source
from boontrack.directory import DirectorySink
from boontrack.exceptions import WriteBackWarning
from boontrack.pipeline import change_token, fingerprint, run_job
from boontrack.reaggregate import Job, load_config, run_jobs
from boontrack.runtable import RunTable

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"

JOB = """
[[jobs]]
name = "small"
source = "runs.csv"
val = "acc"
test = "test_acc"
group_by = ["model"]
n = [1, 3]
n_resamples = 200
out = "summaries/small"
"""


@pytest.fixture
def workdir(tmp_path) -> Path:
    """A directory with runs.csv (12 runs, two groups) and boontrack.toml holding JOB."""
    _write_runs(tmp_path / "runs.csv")
    (tmp_path / "boontrack.toml").write_text(JOB)
    return tmp_path


def _write_runs(path: Path, *, first_acc: float = 0.5) -> None:
    acc = np.linspace(0.5, 0.8, 12)
    acc[0] = first_acc
    pd.DataFrame(
        {
            "run_id": [f"r{i}" for i in range(12)],
            "model": ["a", "b"] * 6,
            "acc": acc,
            "test_acc": np.linspace(0.45, 0.75, 12)[::-1],
        }
    ).to_csv(path, index=False)


def reaggregate(config: Path, *args: str):
    return CliRunner().invoke(cli.main, ["reaggregate", "--config", str(config), *args])


def _snapshot(directory: Path) -> dict[str, int]:
    return {str(p.relative_to(directory)): p.stat().st_mtime_ns for p in directory.rglob("*")}


def _expected_fingerprint(workdir: Path) -> str:
    (job,) = load_config(workdir / "boontrack.toml")
    table = RunTable.from_frame(pd.read_csv(workdir / "runs.csv"), job.spec)
    return fingerprint(table, job.spec, source_identity=str((workdir / "runs.csv").resolve()))


def test_second_run_writes_nothing_and_a_change_writes_once(workdir):
    out = workdir / "summaries" / "small"
    first = reaggregate(workdir / "boontrack.toml")
    assert first.exit_code == 0, first.output
    assert first.stdout == f"small: updated ({out})\n"
    assert DirectorySink(out).read_fingerprint() == _expected_fingerprint(workdir)
    before = _snapshot(workdir / "summaries")

    second = reaggregate(workdir / "boontrack.toml")
    assert (second.exit_code, second.stdout) == (0, "small: unchanged\n")
    assert _snapshot(workdir / "summaries") == before

    _write_runs(workdir / "runs.csv", first_acc=0.55)
    third = reaggregate(workdir / "boontrack.toml")
    assert third.stdout.startswith("small: updated")
    assert DirectorySink(out).read_fingerprint() == _expected_fingerprint(workdir)
    assert reaggregate(workdir / "boontrack.toml").stdout == "small: unchanged\n"


def test_force_rewrites(workdir):
    reaggregate(workdir / "boontrack.toml")
    assert reaggregate(workdir / "boontrack.toml", "--force").stdout.startswith("small: updated")


def test_a_failing_job_does_not_stop_the_others(workdir):
    broken = JOB.replace('"small"', '"broken"').replace("runs.csv", "gone.csv").replace("small", "broken")
    (workdir / "boontrack.toml").write_text(broken + JOB)
    result = reaggregate(workdir / "boontrack.toml")
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[0] == f"broken: failed: cannot read {workdir / 'gone.csv'}: no such file"
    assert lines[1].startswith("small: updated")
    assert not (workdir / "summaries" / "broken").exists()


def test_a_crash_before_the_fingerprint_is_repaired_by_the_next_run(workdir, monkeypatch):
    original = DirectorySink.write_fingerprint
    crashes = []

    def crash_once(self, fp):
        if not crashes:
            crashes.append(fp)
            raise OSError("disk full")
        original(self, fp)

    monkeypatch.setattr(DirectorySink, "write_fingerprint", crash_once)
    out = workdir / "summaries" / "small"
    crashed = reaggregate(workdir / "boontrack.toml")
    assert crashed.exit_code == 1
    assert crashed.stdout == f"small: failed: writing the summary to {out} failed: OSError: disk full\n"
    assert crashed.stderr == ""  # said once, in the job's line
    assert DirectorySink(out).read_fingerprint() is None

    repaired = reaggregate(workdir / "boontrack.toml")
    assert repaired.exit_code == 0 and repaired.stdout.startswith("small: updated")
    assert DirectorySink(out).read_fingerprint() == crashes[0] == _expected_fingerprint(workdir)
    assert reaggregate(workdir / "boontrack.toml").stdout == "small: unchanged\n"


def test_a_locked_destination_is_skipped(workdir):
    (workdir / "summaries").mkdir()
    with open(workdir / "summaries" / ".small.lock", "a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        result = reaggregate(workdir / "boontrack.toml", "--lock-timeout", "0.2")
    assert (result.exit_code, result.stdout) == (0, "small: skipped: locked (another run in progress)\n")
    assert not (workdir / "summaries" / "small").exists()


@pytest.mark.slow
def test_two_copies_at_once_leave_one_consistent_result(workdir):
    command = [
        sys.executable,
        "-c",
        "from boontrack.cli import main; main()",
        "reaggregate",
        "--config",
        str(workdir / "boontrack.toml"),
    ]
    copies = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in "ab"]
    outcomes = [copy.communicate(timeout=120) for copy in copies]
    assert [copy.returncode for copy in copies] == [0, 0], outcomes
    lines = sorted(stdout.strip().split(" (")[0] for stdout, _ in outcomes)
    assert lines in (["small: unchanged", "small: updated"], ["small: skipped: locked", "small: updated"])
    out = workdir / "summaries" / "small"
    assert DirectorySink(out).read_fingerprint() == _expected_fingerprint(workdir)
    manifest = pd.read_json(out / ".boontrack-manifest.json", typ="series")
    assert all((out / name).is_file() for name in manifest["files"])
    assert {p.name for p in (workdir / "summaries").iterdir()} == {"small", ".small.lock"}


# --- invalid configs -----------------------------------------------------------------------------------------

SECOND = JOB.replace('"small"', '"second"').replace("summaries/small", "summaries/second")


@pytest.mark.parametrize(
    ("config", "message"),
    [
        (JOB + SECOND.replace('val = "acc"', 'valu = "acc"'), "job 'second': unknown key 'valu' \\(known keys: "),
        (JOB + SECOND.replace('val = "acc"\n', ""), "job 'second': 'val' is required"),
        (JOB + SECOND.replace("n = [1, 3]", 'n = "5"'), "job 'second': `n` must be a list of integers >= 1"),
        (
            JOB + SECOND.replace("n_resamples = 200", "n_resamples = 1.5"),
            "job 'second': `n_resamples` must be an integer",
        ),
        (JOB + SECOND.replace("n = [1, 3]", 'estimator = "Z"'), "job 'second': `estimator` must be one of V, U, W"),
        (
            JOB + SECOND.replace('val = "acc"', 'val = "val_loss"').replace('test = "test_acc"', 'test = "test_loss"'),
            "job 'second': 'val_loss' looks like a loss .* add `maximize = false` \\(or `maximize = true`",
        ),
        (
            JOB + SECOND.replace('val = "acc"', 'val = "val_loss"'),
            "job 'second': 'val_loss' and 'test_acc' disagree on which way is better .* say which way with "
            "`maximize = true` or `maximize = false`",
        ),
        (JOB + SECOND + "write_back = 'yes'\n", "job 'second': 'write_back' must be true or false"),
        (JOB + SECOND.replace('out = "summaries/second"', ""), "job 'second': no destination"),
        (JOB + SECOND.replace("summaries/second", ""), "job 'second': 'out' must be a non-empty string"),
        (JOB + SECOND + "options = { timeout = [1] }\n", "job 'second': option 'timeout' must be a string, number"),
        (JOB + SECOND + "options = 3\n", "job 'second': 'options' must be a table"),
        (JOB + JOB, "jobs 'small' and 'small' have the same name"),
        (JOB + SECOND.replace("summaries/second", "summaries/small"), "jobs 'small' and 'second' have the same out"),
        (JOB + SECOND.replace('name = "second"', ""), "job #2: 'name' is required"),
        (JOB + "[settings]\n", "unknown top-level key 'settings'"),
        ("", "no \\[\\[jobs\\]\\] tables"),
        (JOB + "[[jobs]\n", "is not valid TOML"),
    ],
)
def test_an_invalid_config_runs_nothing(workdir, config, message):
    (workdir / "boontrack.toml").write_text(config)
    result = reaggregate(workdir / "boontrack.toml")
    assert result.exit_code == 2, result.output
    assert result.stdout == "" and result.stderr.count("\n") == 1 and result.stderr.startswith("Error: ")
    assert re.search(message, result.stderr), result.stderr
    assert not (workdir / "summaries").exists()  # the valid first job did not run


def test_a_secret_option_is_never_echoed(workdir):
    secret = "s3cr3t-Value-42"
    (workdir / "boontrack.toml").write_text(JOB + f'options = {{ api_key = "{secret}", timeout = [1] }}\n')
    result = reaggregate(workdir / "boontrack.toml", "--force")
    assert result.exit_code == 2 and "option 'timeout'" in result.stderr
    assert secret not in result.output + result.stderr


def test_a_binary_config_is_refused_naming_the_file(tmp_path):
    config = tmp_path / "boontrack.toml"
    config.write_bytes(b"\x89PNG\r\n\x1a\n\x00\xff\xfe")
    result = reaggregate(config)
    assert result.exit_code == 2
    assert result.stderr == f"Error: config {config} is not UTF-8 text (byte 0); a TOML file is expected\n"


def test_a_missing_config(tmp_path):
    result = reaggregate(tmp_path / "nope.toml")
    assert result.exit_code == 2 and "cannot read config" in result.stderr


def test_relative_paths_are_relative_to_the_config_file(workdir, monkeypatch):
    monkeypatch.chdir("/")
    (job,) = load_config(workdir / "boontrack.toml")
    assert job.source == str(workdir / "runs.csv") and job.out == workdir / "summaries" / "small"


def test_the_example_config_is_valid():
    jobs = load_config(EXAMPLES / "boontrack.toml")
    assert len(jobs) >= 2 and len({job.name for job in jobs}) == len(jobs)


def test_the_spellings_of_0_2_0_are_accepted_with_a_warning_naming_the_new_ones(workdir):
    config = workdir / "boontrack.toml"
    config.write_text(JOB.replace("n_resamples = 200", "resamples = 200\nminimize = true\nconfidence = 0.9"))
    with pytest.warns(DeprecationWarning) as record:
        (job,) = load_config(config)
    assert (job.spec.n_resamples, job.spec.maximize, job.spec.confidence_level) == (200, False, 0.9)
    assert sorted(str(w.message).split(";")[0] for w in record) == [
        "`confidence` is now `confidence_level`",
        "`minimize` is now `maximize`",
        "`resamples` is now `n_resamples`",
    ]
    config.write_text(JOB.replace("n_resamples = 200", "resamples = 0"))
    with warnings.catch_warnings():
        warnings.simplefilter("default", DeprecationWarning)  # as outside the tests: shown, not raised
        result = reaggregate(config)
    assert result.exit_code == 2 and result.stderr.splitlines() == [
        "Warning: `resamples` is now `n_resamples`; the old name is accepted until boontrack 0.4.0",
        "Error: job 'small': `resamples` must be an integer >= 1 or 'auto', got 0",
    ]


def test_a_file_job_refuses_the_best_validation_step(workdir):
    config = workdir / "boontrack.toml"
    config.write_text(JOB + 'pick = "best-val-step"\n')
    result = reaggregate(config)
    assert result.exit_code == 1
    assert "a file of one row per run, holds one value per run and metric" in result.output
    assert "summarize with `pick = 'last'`" in result.output


def test_a_job_without_n_reports_the_default_budgets_its_groups_have_runs_for(workdir):
    config = workdir / "boontrack.toml"
    config.write_text(JOB.replace("n = [1, 3]\n", ""))
    (job,) = load_config(config)
    assert job.spec.n is None
    result = reaggregate(config)
    assert result.exit_code == 0, result.output
    assert result.output.startswith("small: updated")
    summary = json.loads((workdir / "summaries" / "small" / "summary.json").read_text())
    for group in summary["groups"].values():  # 6 runs each: Boo_1 and Boo_5, Boo_10 left out
        assert (sorted(group["boo_n"]), group["left_out_budgets"]) == (["1", "5"], [10])


def test_a_job_with_n_too_large_for_its_groups_fails_naming_the_key(workdir):
    config = workdir / "boontrack.toml"
    config.write_text(JOB.replace("n = [1, 3]", "n = [1, 10]"))
    result = reaggregate(config)
    assert result.exit_code == 1
    assert "small: failed: too few runs for n = 10" in result.output and "smaller `n`" in result.output


#: ``boontrack reaggregate`` as on a host whose lock does not reach the other writer (two Kubernetes nodes, or
#: two hosts sharing the output directory over NFS): the lock always says "acquired".
_WITHOUT_LOCK = """
import contextlib, sys
from boontrack import cli, reaggregate
reaggregate._lock = lambda path, timeout: contextlib.nullcontext(True)
sys.argv = ["boontrack", *sys.argv[1:]]
cli.main()
"""


@pytest.mark.slow
def test_two_hosts_without_a_shared_lock_still_end_with_one_complete_result(workdir):
    command = [
        sys.executable,
        "-c",
        _WITHOUT_LOCK,
        "reaggregate",
        "--force",
        "--config",
        str(workdir / "boontrack.toml"),
    ]
    for _ in range(3):
        copies = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in "ab"]
        outcomes = [copy.communicate(timeout=120) for copy in copies]
        assert [copy.returncode for copy in copies] == [0, 0], outcomes
        assert all(stdout.startswith("small: updated") for stdout, _ in outcomes), outcomes
    out = workdir / "summaries" / "small"
    assert DirectorySink(out).read_fingerprint() == _expected_fingerprint(workdir)
    manifest = pd.read_json(out / ".boontrack-manifest.json", typ="series")
    on_disk = {str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()}
    published = {".boontrack-manifest.json", ".boontrack-fingerprint", ".boontrack-change-token"}  # a file has one
    assert on_disk == {*manifest["files"], *published}
    assert {p.name for p in (workdir / "summaries").iterdir()} == {"small"}  # no staging or previous left


# --- change tokens in a directory ----------------------------------------------------------------------------


class _TokenSource(Source):
    """Runs in memory with a change token that the test sets; counts the full reads."""

    def __init__(self, frame: pd.DataFrame, token: str = "t0") -> None:
        self.frame, self.token, self.reads = frame, token, 0

    def describe(self) -> str:
        return "memory"

    def identity(self) -> str:
        return "memory:runs"

    def change_token(self) -> str | None:
        return self.token

    def read(self, request):
        self.reads += 1
        return self.frame


@pytest.fixture
def token_source(workdir) -> _TokenSource:
    return _TokenSource(pd.read_csv(workdir / "runs.csv"))


def _spec(workdir):
    (job,) = load_config(workdir / "boontrack.toml")
    return job.spec


def test_a_directory_keeps_the_token_with_its_summary_and_an_unchanged_token_skips_the_read(workdir, token_source):
    out, spec = workdir / "out", _spec(workdir)
    first = run_job(token_source, spec, sink=DirectorySink(out), plots=False)
    assert first.status == "updated" and token_source.reads == 1
    token = change_token(token_source, spec)
    assert DirectorySink(out).read_change_token() == (token, first.fingerprint)
    assert json.loads((out / DirectorySink.CHANGE_TOKEN_FILE).read_text()) == {
        "token": token,
        "fingerprint": first.fingerprint,
    }
    before = _snapshot(out)

    second = run_job(token_source, spec, sink=DirectorySink(out), plots=False)
    assert (second.status, second.fingerprint, token_source.reads) == ("unchanged", first.fingerprint, 1)
    assert run_job(token_source, spec, sink=DirectorySink(out), plots=False, force=True).status == "updated"
    assert token_source.reads == 2

    token_source.token = "t1"  # something changed (here nothing that enters the summary): read, then keep the token
    assert run_job(token_source, spec, sink=DirectorySink(out), plots=False).status == "unchanged"
    assert token_source.reads == 3
    assert DirectorySink(out).read_change_token() == (change_token(token_source, spec), first.fingerprint)
    assert run_job(token_source, spec, sink=DirectorySink(out), plots=False).status == "unchanged"
    assert token_source.reads == 3
    assert {p.name for p in workdir.iterdir()} == {"runs.csv", "boontrack.toml", "out"}  # no pending token file
    assert set(_snapshot(out)) == set(before)


def test_the_token_depends_on_the_spec_and_the_version(workdir, token_source, monkeypatch):
    spec = _spec(workdir)
    token = change_token(token_source, spec)
    assert change_token(token_source, dataclasses.replace(spec, n=(1, 2))) != token
    assert change_token(token_source, spec, prefix="other/") != token
    monkeypatch.setattr(boontrack, "__version__", "999.0")
    assert change_token(token_source, spec) != token


def test_a_token_is_trusted_only_with_the_fingerprint_it_was_stored_for(workdir, token_source, monkeypatch):
    out, spec = workdir / "out", _spec(workdir)
    run_job(token_source, spec, sink=DirectorySink(out), plots=False)
    stored = json.loads((out / DirectorySink.CHANGE_TOKEN_FILE).read_text())
    (out / DirectorySink.CHANGE_TOKEN_FILE).write_text(json.dumps({**stored, "fingerprint": "f" * 64}))
    assert DirectorySink(out).read_change_token() is None
    assert run_job(token_source, spec, sink=DirectorySink(out), plots=False).status == "unchanged"
    assert token_source.reads == 2  # read in full, and the token stored again for the summary it describes
    assert json.loads((out / DirectorySink.CHANGE_TOKEN_FILE).read_text()) == stored

    # A write that crashes before its fingerprint publishes neither its summary nor its token.
    token_source.token = "t1"
    token_source.frame = token_source.frame.assign(acc=token_source.frame["acc"] + 0.01)
    monkeypatch.setattr(DirectorySink, "write_fingerprint", lambda self, fp: (_ for _ in ()).throw(OSError("full")))
    with pytest.warns(WriteBackWarning, match="OSError: full"):
        assert run_job(token_source, spec, sink=DirectorySink(out), plots=False).status == "write-failed"
    monkeypatch.undo()
    assert json.loads((out / DirectorySink.CHANGE_TOKEN_FILE).read_text()) == stored
    assert run_job(token_source, spec, sink=DirectorySink(out), plots=False).status == "updated"


def test_a_pending_token_file_of_a_dead_writer_is_removed(workdir):
    out = workdir / "out"
    out.mkdir()
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    from boontrack.directory import _HOST_ID

    pending = workdir / f".out.token-{dead.stdout.strip()}-{_HOST_ID}-{'a' * 12}"
    pending.write_text("{}")
    DirectorySink(out)
    assert not pending.exists()


def _jobs_side_by_side(count: int) -> str:
    """``count`` jobs writing their summaries side by side into summaries/, as a discovering job's sweeps do."""
    return "".join(
        JOB.replace('"small"', f'"job-{k}"').replace("summaries/small", f"summaries/job-{k}") + "plots = false\n"
        for k in range(count)
    )


def test_an_unchanged_pass_looks_at_each_summary_a_fixed_number_of_times(workdir, file_system_looks):
    """The folder of summaries side by side is listed once per pass, and a job looks at its own summary only:
    twice the jobs cost twice the looks, where each job's sink once listed the folder and stat-ed every entry
    (four times the looks, and a pass over 10^4 sweeps that took an hour)."""
    summaries = workdir / "summaries"
    looks = {}
    for count in (4, 8):
        (workdir / "boontrack.toml").write_text(_jobs_side_by_side(count))
        assert reaggregate(workdir / "boontrack.toml").exit_code == 0
        file_system_looks.clear()
        unchanged = reaggregate(workdir / "boontrack.toml")
        assert (unchanged.exit_code, unchanged.stdout.count(": unchanged\n")) == (0, count)
        looks[count] = [look for look in file_system_looks if look[1].startswith(str(summaries))]
        assert looks[count].count(("listdir", str(summaries))) == 1
    assert len(looks[8]) <= 2 * len(looks[4])


# --- discovery, workers, and the bound per tracking server ---------------------------------------------------


def test_a_file_source_cannot_discover(workdir):
    (workdir / "boontrack.toml").write_text(
        JOB.replace('source = "runs.csv"', 'source = "file:runs.csv"\ndiscover = true')
    )
    result = reaggregate(workdir / "boontrack.toml")
    assert result.exit_code == 2
    assert "job 'small': the 'file' backend cannot discover sweeps" in result.stderr


def test_workers_give_the_lines_and_exit_status_of_a_serial_run(workdir):
    broken = (
        JOB.replace('"small"', '"broken"')
        .replace("runs.csv", "gone.csv")
        .replace("summaries/small", "summaries/broken")
    )
    (workdir / "boontrack.toml").write_text(JOB + broken + SECOND)
    result = reaggregate(workdir / "boontrack.toml", "--workers", "2")
    assert result.exit_code == 1, result.output
    assert sorted(result.stdout.splitlines()) == [
        f"broken: failed: cannot read {workdir / 'gone.csv'}: no such file",
        f"second: updated ({workdir / 'summaries' / 'second'})",
        f"small: updated ({workdir / 'summaries' / 'small'})",
    ]
    again = reaggregate(workdir / "boontrack.toml", "--workers", "2")
    assert sorted(again.stdout.splitlines())[1:] == ["second: unchanged", "small: unchanged"]


def test_an_unchanged_pass_with_workers_starts_no_worker_process(workdir, monkeypatch):
    """The driver compares the change tokens itself: nothing to do costs no worker's start-up; a change does."""
    from boontrack import _workers

    (workdir / "boontrack.toml").write_text(JOB + SECOND)
    assert reaggregate(workdir / "boontrack.toml", "--workers", "2").exit_code == 0
    started = []
    worker = _workers._Worker
    monkeypatch.setattr(_workers, "_Worker", lambda *args: started.append(args) or worker(*args))
    again = reaggregate(workdir / "boontrack.toml", "--workers", "2")
    assert (again.exit_code, sorted(again.stdout.splitlines())) == (0, ["second: unchanged", "small: unchanged"])
    assert started == []

    _write_runs(workdir / "runs.csv", first_acc=0.9)
    changed = reaggregate(workdir / "boontrack.toml", "--workers", "2")
    assert changed.exit_code == 0, changed.output
    assert sorted(line.split(" (")[0] for line in changed.stdout.splitlines()) == ["second: updated", "small: updated"]
    assert len(started) == 2


class _RecordingEngine:
    """Runs nothing: records how many jobs of each server are in flight; finishes the oldest one per wait."""

    def __init__(self, slots: int) -> None:
        self.slots, self.running, self.most = slots, [], Counter()

    def submit(self, job, *, force, lock_timeout):
        self.running.append(job)
        in_flight = Counter(j.source_options.get("tracking_uri") for j in self.running)
        self.most |= in_flight
        assert len(self.running) <= self.slots
        return job.name

    def wait(self, handles, timeout=None):
        job = self.running.pop(0)
        assert job.name in handles
        return [(job.name, ("updated", None))]

    def close(self):
        self.closed = True


def _server_jobs(workdir, servers, count):
    spec = _spec(workdir)
    return [
        Job(
            name=f"{server}-{i}",
            source="mlflow:1",
            spec=spec,
            write_back=True,
            source_options={"tracking_uri": f"http://{server}", "parent": str(i)},
        )
        for i in range(count)
        for server in servers
    ]


@pytest.fixture
def no_driver_check(monkeypatch):
    """Jobs that the driver cannot look at (their servers do not exist): each is handed to the engine."""
    from boontrack import reaggregate

    monkeypatch.setattr(reaggregate, "_unchanged", lambda job: None)


def test_the_driver_runs_at_most_per_server_jobs_of_one_tracking_server(workdir, no_driver_check):
    jobs = _server_jobs(workdir, ("a", "b"), 6)
    engine = _RecordingEngine(slots=5)
    lines = []
    assert run_jobs(jobs, engine=engine, per_server=2, log=lines.append) == 0
    assert engine.most == Counter({"http://a": 2, "http://b": 2}) and engine.closed
    assert sorted(lines) == sorted(f"{job.name}: updated" for job in jobs)


def test_what_an_engine_reports_reaches_the_log_redacted(workdir, no_driver_check):
    """An engine's outcome and traceback, and a discovered sweep's label (a run name), pass through redaction."""
    secret = "hunter2-s3cr3t"

    class LeakingEngine(_RecordingEngine):
        def wait(self, handles, timeout=None):
            job = self.running.pop(0)
            trace = f"Traceback (most recent call last):\n  token={secret}\n"
            return [(job.name, (f"failed: POST https://user:{secret}@mlflow.internal/api refused", trace))]

    jobs = [dataclasses.replace(job, label=f"run api_key={secret}") for job in _server_jobs(workdir, ("a",), 2)]
    lines, traces = [], []
    assert run_jobs(jobs, engine=LeakingEngine(slots=2), log=lines.append, on_error=traces.append) == 2
    assert (len(lines), len(traces)) == (2, 2)
    assert [text for text in lines + traces if secret in text] == []


def test_jobs_waiting_behind_one_server_cost_the_scheduler_a_look_each(workdir, no_driver_check, monkeypatch):
    """2,000 jobs of one server, 32 slots, 4 per server: each job's server is looked up a bounded number of
    times (it was once per waiting job per finished job: 2,000^2 / 2)."""
    from boontrack import reaggregate

    looks = Counter()
    server = reaggregate._server
    monkeypatch.setattr(reaggregate, "_server", lambda job: looks.update([job.name]) or server(job))
    jobs = _server_jobs(workdir, ("a",), 2000)
    lines = []
    assert run_jobs(jobs, engine=_RecordingEngine(slots=32), per_server=4, log=lines.append) == 0
    assert [line.split(":")[0] for line in lines] == [job.name for job in jobs]  # in order
    assert max(looks.values()) <= 3


def _blocked(workdir: Path, names: list[str]) -> tuple[list[Job], list]:
    """Jobs named ``names`` over the runs of ``workdir``, each waiting in its worker for its destination's lock,
    which the caller holds (the returned open files) until it lets them go."""
    (summaries := workdir / "summaries").mkdir(exist_ok=True)
    (job,) = load_config(workdir / "boontrack.toml")
    jobs = [dataclasses.replace(job, name=name, out=summaries / name) for name in names]
    held = []
    for name in names:
        handle = open(summaries / f".{name}.lock", "a")  # noqa: SIM115 - released by the caller
        fcntl.flock(handle, fcntl.LOCK_EX)
        held.append(handle)
    return jobs, held


def _kill_worker_of(engine, task) -> dict[str, str]:
    """``kill -9`` of the worker running ``task``; waits until the engine has seen it die, and returns what the
    engine reported meanwhile (job name -> outcome)."""
    (worker,) = [w for w, t in engine._busy.items() if t is task]
    os.kill(worker.process.pid, signal.SIGKILL)
    attempts = task.attempts
    for _ in range(1200):  # a hang guard: the engine notices at its next look
        finished = engine.wait([task], timeout=0.1)
        if finished or task.attempts > attempts:
            return {done.job.name: outcome for done, (outcome, _) in finished}
    pytest.fail("the engine did not notice its worker's death")


def _outcomes_of(engine, tasks, results) -> dict[str, str]:
    while len(results) < len(tasks):
        results.update({task.job.name: outcome for task, (outcome, _) in engine.wait(tasks)})
    return results


@pytest.mark.slow
def test_a_killed_worker_loses_its_job_once_and_the_other_job_is_left_alone(workdir):
    """kill -9 of one of two busy workers: its job runs again on a new worker (once); the job of the other worker
    never notices. Killed twice, the job fails, naming why; the other still finishes."""
    from boontrack.reaggregate import ProcessEngine, run_job_line

    jobs, held = _blocked(workdir, ["a", "b"])
    engine = ProcessEngine(2, run_job_line)
    try:
        first, second = (engine.submit(job, force=False, lock_timeout=300) for job in jobs)
        assert _kill_worker_of(engine, first) == {}
        assert (first.attempts, second.attempts) == (2, 1)
        for handle in held:
            handle.close()
        results = _outcomes_of(engine, [first, second], {})
        assert results == {name: f"updated ({workdir / 'summaries' / name})" for name in "ab"}

        jobs, held = _blocked(workdir, ["c", "d"])
        third, fourth = (engine.submit(job, force=True, lock_timeout=300) for job in jobs)
        assert _kill_worker_of(engine, third) == {}
        results = _kill_worker_of(engine, third)
        for handle in held:
            handle.close()
        results = _outcomes_of(engine, [third, fourth], results)
        assert results["c"] == "failed: worker lost 2 times (killed by SIGKILL; killed by SIGKILL)"
        assert results["d"] == f"updated ({workdir / 'summaries' / 'd'})"
    finally:
        engine.close()
    assert not [w for w in (*engine._idle, *engine._busy)]


def test_workers_share_the_cpus_and_a_job_run_alone_takes_them_all(workdir, monkeypatch):
    """Each of N worker processes analyzes with its share of the CPUs (at least one thread): N jobs at once
    never start more bootstrap threads than there are CPUs. A job run in the driver uses them all."""
    from boontrack import reaggregate
    from boontrack._bootstrap import available_cpus

    submitted = []
    monkeypatch.setattr(
        reaggregate.ProcessEngine, "_start", lambda self, task: submitted.append(task.options["threads"])
    )
    for slots in (1, 2, 64):
        engine = reaggregate.ProcessEngine(slots, reaggregate.run_job_line)
        engine.submit(load_config(workdir / "boontrack.toml")[0], force=False, lock_timeout=1.0)
    assert submitted == [available_cpus(), max(1, available_cpus() // 2), 1]

    seen = []
    monkeypatch.setattr(
        reaggregate, "run_job", lambda *args, **kwargs: seen.append(kwargs["threads"]) or run_job(*args, **kwargs)
    )
    assert run_jobs(load_config(workdir / "boontrack.toml"), log=lambda line: None) == 0
    assert seen == [None]  # None: every CPU


def test_a_normalize_with_file_is_relative_to_the_config_file(workdir, monkeypatch):
    (workdir / "refs.csv").write_text("task,low,high\na,0,1\nb,0.5,1\n")
    (workdir / "boontrack.toml").write_text(JOB + 'task_column = "model"\nnormalize_with = "refs.csv"\n')
    monkeypatch.chdir("/")
    (job,) = load_config(workdir / "boontrack.toml")
    assert job.spec.normalize == (("a", 0.0, 1.0), ("b", 0.5, 1.0))
