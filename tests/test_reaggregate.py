"""The scheduled job: config validation, idempotent reruns, crash repair, failures and concurrent copies."""

from __future__ import annotations

import fcntl
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from boontrack import cli
from boontrack.files import DirectorySink
from boontrack.pipeline import fingerprint
from boontrack.reaggregate import load_config
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
resamples = 200
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
    command = [sys.executable, "-c", "from boontrack.cli import main; main()", "reaggregate", "--config",
               str(workdir / "boontrack.toml")]  # fmt: skip
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
        (JOB + SECOND.replace("n = [1, 3]", 'n = "5"'), "job 'second': n must be a list of integers >= 1"),
        (JOB + SECOND.replace("resamples = 200", "resamples = 1.5"), "job 'second': resamples must be an integer"),
        (JOB + SECOND.replace("n = [1, 3]", 'estimator = "Z"'), "job 'second': estimator must be one of V, U, W"),
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


def test_a_job_without_n_reports_the_default_budgets_its_groups_have_runs_for(workdir):
    config = workdir / "boontrack.toml"
    config.write_text(JOB.replace("n = [1, 3]\n", 'pick = "best_val_step"\n'))
    (job,) = load_config(config)
    assert (job.spec.n, job.spec.pick) == (None, "best_val_step")
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
    command = [sys.executable, "-c", _WITHOUT_LOCK, "reaggregate", "--force", "--config", str(workdir / "boontrack.toml")]
    for _ in range(3):
        copies = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in "ab"]
        outcomes = [copy.communicate(timeout=120) for copy in copies]
        assert [copy.returncode for copy in copies] == [0, 0], outcomes
        assert all(stdout.startswith("small: updated") for stdout, _ in outcomes), outcomes
    out = workdir / "summaries" / "small"
    assert DirectorySink(out).read_fingerprint() == _expected_fingerprint(workdir)
    manifest = pd.read_json(out / ".boontrack-manifest.json", typ="series")
    on_disk = {str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()}
    assert on_disk == {*manifest["files"], ".boontrack-manifest.json", ".boontrack-fingerprint"}
    assert {p.name for p in (workdir / "summaries").iterdir()} == {"small"}  # no staging or previous left
