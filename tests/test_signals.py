"""Jobs that end, and take their workers with them: real ``boontrack reaggregate`` processes, real signals.

Each pass runs in its own session, so its process group is the driver and its workers; after the signal the
group must empty within a bound (a hang guard, not a timing). Jobs are held in their workers by the lock on
their destination, which the test holds.
"""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from processes import BOONTRACK, BOUND_S, wait_for

JOB = """
[[jobs]]
name = "{name}"
source = "runs.csv"
val = "acc"
n = [1, 3]
n_resamples = 99
plots = false
out = "summaries/{name}"
"""
NAMES = ("a", "b", "c")


@pytest.fixture
def held_jobs(tmp_path):
    """A config of three jobs whose destination locks this test holds: (config path, open lock files)."""
    acc = np.linspace(0.5, 0.8, 10)
    pd.DataFrame({"run_id": [f"r{i}" for i in range(10)], "acc": acc}).to_csv(tmp_path / "runs.csv", index=False)
    (tmp_path / "boontrack.toml").write_text("".join(JOB.format(name=name) for name in NAMES))
    (tmp_path / "summaries").mkdir()
    locks = []
    for name in NAMES:
        handle = open(tmp_path / "summaries" / f".{name}.lock", "a")  # noqa: SIM115 - closed below
        fcntl.flock(handle, fcntl.LOCK_EX)
        locks.append(handle)
    yield tmp_path / "boontrack.toml", locks
    for handle in locks:
        handle.close()


def _start(config: Path, *args: str) -> subprocess.Popen:
    command = [sys.executable, "-c", "from boontrack.cli import main; main()", "reaggregate", "--config", str(config)]
    env = {**os.environ, "BOONTRACK_STOP_GRACE": "1"}
    return subprocess.Popen(
        [*command, "--lock-timeout", "600", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,
    )


def _group(pgid: int) -> list[int]:
    """The live processes of process group ``pgid`` (zombies are gone already)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if fields[0] != "Z" and int(fields[2]) == pgid:
            found.append(int(entry.name))
    return found


def _workers(pgid: int) -> list[int]:
    """The worker processes of the group (multiprocessing's resource tracker is in the group too)."""
    found = []
    for pid in _group(pgid):
        try:
            if b"spawn_main" in Path(f"/proc/{pid}/cmdline").read_bytes():
                found.append(pid)
        except OSError:
            pass
    return found


def _workers_busy(process: subprocess.Popen, count: int) -> None:
    """Wait until the driver has ``count`` worker processes (spawned when their jobs were handed out)."""
    wait_for(lambda: len(_workers(process.pid)) >= count or process.poll() is not None, f"{count} workers")
    assert process.poll() is None, process.communicate()


pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads process groups from /proc")


@pytest.mark.slow
@pytest.mark.parametrize(("signum", "name"), [(signal.SIGTERM, "SIGTERM"), (signal.SIGINT, "SIGINT")])
def test_a_signal_to_the_driver_ends_the_pass_and_its_workers(held_jobs, signum, name):
    config, _ = held_jobs
    process = _start(config, "--workers", "2")
    try:
        _workers_busy(process, 2)
        os.kill(process.pid, signum)
        out, err = process.communicate(timeout=BOUND_S)
        wait_for(lambda: not _group(process.pid), "the workers to end")
    finally:
        if _group(process.pid):
            os.killpg(process.pid, signal.SIGKILL)
    assert process.returncode == 128 + signum, err
    assert f"Error: interrupted by {name}: 1 job not run" in err.splitlines()
    assert out == ""  # no job finished: the two running were stopped, the third never started
    assert sorted(p.name for p in (config.parent / "summaries").iterdir()) == [f".{n}.lock" for n in NAMES]


@pytest.mark.slow
def test_workers_end_when_the_driver_is_killed(held_jobs):
    config, _ = held_jobs
    process = _start(config, "--workers", "2")
    try:
        _workers_busy(process, 2)
        workers = _workers(process.pid)
        os.kill(process.pid, signal.SIGKILL)
        process.communicate(timeout=BOUND_S)
        wait_for(lambda: not _group(process.pid), "the workers of a killed driver to end")
    finally:
        if _group(process.pid):
            os.killpg(process.pid, signal.SIGKILL)
    assert len(workers) == 2


@pytest.mark.slow
def test_sigterm_ends_a_pass_run_in_the_driver_at_once(held_jobs):
    config, _ = held_jobs
    process = _start(config)
    lock = config.parent / "summaries" / f".{NAMES[0]}.lock"
    try:
        # the first job waits for its lock in the driver itself
        wait_for(lambda: _has_open(process.pid, lock) or process.poll() is not None, "the job to wait")
        os.kill(process.pid, signal.SIGTERM)
        _, err = process.communicate(timeout=BOUND_S)
    finally:
        if _group(process.pid):
            os.killpg(process.pid, signal.SIGKILL)
    assert process.returncode == 128 + signal.SIGTERM, err
    assert f"Error: interrupted by SIGTERM: {len(NAMES) - 1} jobs not run" in err.splitlines()


def _has_open(pid: int, path: Path) -> bool:
    try:
        return any(os.readlink(fd) == str(path) for fd in Path(f"/proc/{pid}/fd").iterdir())
    except OSError:
        return False


# -- the two-renames swap of an out directory holds SIGINT and SIGTERM ------------------------------------------

_SWAP_UNDER_SIGNAL = """
import errno, os, signal, sys
from pathlib import Path
from boontrack import directory
from boontrack.backends import SummaryOutputs

# Python's own handling of the two signals, whatever this process inherited: a child keeps a signal its parent
# ignored or blocked, and the test process has run other tests and libraries before this one (seen: a SIGINT
# with no effect at all, in a test process that had run many others; never with this file alone).
print("inherited:", signal.getsignal(signal.SIGINT), sorted(signal.pthread_sigmask(signal.SIG_BLOCK, [])), file=sys.stderr)
signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})
signal.signal(signal.SIGINT, signal.default_int_handler)
signal.signal(signal.SIGTERM, signal.SIG_DFL)

def no_exchange(first, second):
    raise OSError(errno.EINVAL, "no atomic exchange here")  # as on NFS: the two-renames path

directory._exchange = no_exchange
into_place = directory.DirectorySink._rename_into_place

def signalled(self, staging, previous):
    os.kill(os.getpid(), getattr(signal, sys.argv[2]))  # between the two renames: no destination now
    into_place(self, staging, previous)

directory.DirectorySink._rename_into_place = signalled
sink = directory.DirectorySink(sys.argv[1])
sink.write(SummaryOutputs(metrics={"boon/x": 2.0}, curves=(), artifacts={}, description="second"))
sink.write_fingerprint("f" * 64)
print("after the swap")
"""


@pytest.mark.parametrize("name", ["SIGTERM", "SIGINT"])
def test_a_signal_between_the_two_renames_waits_for_the_second(tmp_path, name):
    from boontrack.backends import SummaryOutputs
    from boontrack.directory import DirectorySink

    out = tmp_path / "out"
    first = DirectorySink(out)
    first.write(SummaryOutputs(metrics={"boon/x": 1.0}, curves=(), artifacts={}, description="first"))
    first.write_fingerprint("e" * 64)
    done = subprocess.run(
        [sys.executable, "-c", _SWAP_UNDER_SIGNAL, str(out), name], capture_output=True, text=True, timeout=BOUND_S
    )
    signum = getattr(signal, name)
    # the signal took effect once the swap was done: the process ended there, as the signal asks
    here = signal.getsignal(signal.SIGINT), sorted(signal.pthread_sigmask(signal.SIG_BLOCK, []))
    assert done.returncode == -signum, f"{done.stderr}\nthis test process: {here}"
    assert "after the swap" not in done.stdout
    assert DirectorySink(out).read_fingerprint() == "f" * 64
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


# -- a summary stops between two batches of its bootstrap ------------------------------------------------------


@pytest.fixture(scope="module")
def large_sweep(tmp_path_factory) -> Path:
    """200,000 runs in 2 groups: on 2 threads each group runs on a thread of its own, which a signal does not
    interrupt, batch after batch for a while (before the stop, SIGINT left both to finish: 15 s and more)."""
    from bench_summarize import make_table

    path = tmp_path_factory.mktemp("large") / "runs.csv"
    make_table(200_000, 2).to_csv(path, index=False)
    return path


def _batches(log: Path) -> list[str]:
    return log.read_text().splitlines() if log.exists() else []


@pytest.mark.slow
@pytest.mark.parametrize(("signum", "name"), [(signal.SIGINT, "SIGINT"), (signal.SIGTERM, "SIGTERM")])
def test_a_signal_stops_a_summary_between_two_batches_with_one_line(large_sweep, tmp_path, signum, name):
    """The summary is signalled once its bootstrap has started (its batch log, BOONTRACK_BATCH_LOG, has a line);
    the bound is a count: a batch starts after the signal only where its thread looked just before it came (at
    most one per thread; 2 here). Nothing is written: the summary directory is made after the analysis."""
    from boontrack._signals import BATCH_LOG_VARIABLE

    log, out = tmp_path / "batches.log", tmp_path / "out"
    arguments = ["summarize", str(large_sweep), "--val", "val_acc", "--test", "test_acc", "--group-by", "model"]
    process = subprocess.Popen(
        [sys.executable, "-c", BOONTRACK, *arguments, "--threads", "2", "--out", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, BATCH_LOG_VARIABLE: str(log)},
        start_new_session=True,
    )
    try:
        wait_for(lambda: bool(_batches(log)) or process.poll() is not None, "the bootstrap's first batch")
        assert process.poll() is None, process.communicate()
        os.kill(process.pid, signum)
        stdout, stderr = process.communicate(timeout=BOUND_S)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
    batches = _batches(log)
    assert process.returncode == 128 + signum, stderr
    assert stderr.splitlines() == [f"Error: interrupted by {name}"]  # one line, no traceback
    assert stdout == ""
    assert batches.count("started after the signal") <= 2, batches
    assert sorted(path.name for path in tmp_path.iterdir()) == ["batches.log"]


def test_a_command_leaves_an_ignored_signal_ignored_and_its_handlers_as_they_were():
    """A shell starts a background job with SIGINT ignored, out of the reach of Ctrl-C: it stays so."""
    from boontrack._signals import stop_on_signals

    before = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)}
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with stop_on_signals():
            assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
            assert signal.getsignal(signal.SIGTERM) not in (before[signal.SIGTERM], signal.SIG_IGN)
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
        assert signal.getsignal(signal.SIGTERM) == before[signal.SIGTERM]
    finally:
        for signum, handler in before.items():
            signal.signal(signum, handler)
