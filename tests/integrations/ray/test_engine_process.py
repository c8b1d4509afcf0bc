"""``boontrack reaggregate --engine ray`` as a user runs it: a fresh process, no Ray running (the pass starts a Ray
of its own, with no fixture's Ray in the test process doing it instead), real signals, a real MLflow sqlite store.

Every process of a pass carries a marker in its environment (the command's, inherited by its Ray driver process,
the Ray it starts and that Ray's workers), so a test can tell that none is left once the pass ended, and end any
that is.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from csv_jobs import NAMES, write_csv_jobs
from processes import BOONTRACK, BOUND_S, wait_for

pytestmark = [
    pytest.mark.ray,
    pytest.mark.slow,
    pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="finds a pass's processes in /proc"),
]

#: The environment variable that marks the processes of one pass.
MARKER = "BOONTRACK_TEST_PASS"


@dataclass
class Pass:
    """A running ``boontrack reaggregate --engine ray`` process, its output files and its marker."""

    process: subprocess.Popen
    marker: str
    out: Path
    err: Path

    def finish(self) -> int:
        return self.process.wait(BOUND_S)

    def stdout(self) -> str:
        return self.out.read_text()

    def stderr(self) -> str:
        return self.err.read_text()

    def processes(self, title: bytes = b"") -> list[int]:
        """The live processes of this pass (with ``title`` in their command line, when given)."""
        needle = f"{MARKER}={self.marker}".encode()
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                alive = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
                ours = needle in (entry / "environ").read_bytes().split(b"\0")
                titled = title in (entry / "cmdline").read_bytes()
            except OSError:  # ended meanwhile
                continue
            if alive and ours and titled:
                found.append(int(entry.name))
        return found


@pytest.fixture
def start_pass(tmp_path) -> Iterator:
    """Starts passes (``start_pass(config, *arguments, env={...})``) without RAY_ADDRESS; at the end of the test,
    every process of each one is ended and reaped."""
    started: list[Pass] = []

    def start(config: Path, *arguments: str, env: dict[str, str] | None = None) -> Pass:
        marker = uuid.uuid4().hex
        environment = {key: value for key, value in os.environ.items() if key != "RAY_ADDRESS"}
        environment.update({MARKER: marker, **(env or {})})
        command = [sys.executable, "-c", BOONTRACK, "reaggregate", "--config", str(config), "--engine", "ray"]
        out, err = tmp_path / f"stdout-{marker}", tmp_path / f"stderr-{marker}"
        with open(out, "wb") as stdout, open(err, "wb") as stderr:
            process = subprocess.Popen(
                [*command, *arguments], stdout=stdout, stderr=stderr, env=environment, start_new_session=True
            )
        started.append(Pass(process, marker, out, err))
        return started[-1]

    yield start
    for run in started:
        if run.process.poll() is None:
            run.process.kill()
        run.process.wait(BOUND_S)
        for pid in run.processes():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:  # ended meanwhile
                pass


@pytest.fixture
def csv_jobs(tmp_path) -> Path:
    """A config of three jobs over three small CSV files, written to ``summaries/NAME``."""
    return write_csv_jobs(tmp_path)


def _updated(config: Path, names=NAMES) -> list[str]:
    return [f"{name}: updated ({config.parent / 'summaries' / name})" for name in names]


@pytest.fixture
def held_locks(csv_jobs) -> Iterator[list]:
    """The locks of the three jobs' destinations, held by the test: their tasks wait (in a Ray worker each) until
    the files are closed."""
    (csv_jobs.parent / "summaries").mkdir()
    locks = [open(csv_jobs.parent / "summaries" / f".{name}.lock", "a") for name in NAMES]  # noqa: SIM115
    for lock in locks:
        fcntl.flock(lock, fcntl.LOCK_EX)
    yield locks
    for lock in locks:
        lock.close()


def test_a_pass_without_an_address_starts_a_ray_of_its_own_and_keeps_ray_s_lines_off_standard_output(
    csv_jobs, held_locks, start_pass
):
    """With no address the pass starts a Ray of its own (Ray 2.60 started from a helper thread died with it: the
    first task failed after 60 s, exit 1), and ends it. A worker killed under a task makes Ray print ``(raylet) A
    worker died ...`` (yellow on a terminal): on standard error, without colour codes when that is a file;
    standard output is one line per job. The test kills a worker whose task waits for its lock."""
    run = start_pass(csv_jobs, "--workers", "2", "--lock-timeout", str(BOUND_S))
    _wait_for_tasks(run, 1)
    os.kill(_task_workers(run)[0], signal.SIGKILL)  # Ray runs the task again on a new worker
    wait_for(lambda: "(raylet)" in run.stderr() or run.process.poll() is not None, "Ray's line on the worker")
    for lock in held_locks:
        lock.close()
    assert run.finish() == 0, run.stderr()
    assert sorted(run.stdout().splitlines()) == _updated(csv_jobs)
    assert "(raylet) A worker died" in run.stderr()
    assert "\x1b[" not in run.stderr() + run.stdout()
    wait_for(lambda: not run.processes(), "the pass's Ray to end")


def test_tasks_running_when_the_grace_ends_are_cancelled_and_ray_ends_with_the_pass(csv_jobs, held_locks, start_pass):
    """SIGTERM with no grace (BOONTRACK_STOP_GRACE=0) while two tasks wait for their locks: both are cancelled,
    the third job never starts, and the Ray of the pass ends with it."""
    run = start_pass(csv_jobs, "--workers", "2", "--lock-timeout", str(BOUND_S), env={"BOONTRACK_STOP_GRACE": "0"})
    _wait_for_tasks(run, 2)
    os.kill(run.process.pid, signal.SIGTERM)
    assert run.finish() == 128 + signal.SIGTERM, run.stderr()
    assert run.stderr().splitlines()[-1] == "Error: interrupted by SIGTERM: 1 job not run"
    assert run.stdout() == ""
    wait_for(lambda: not run.processes(), "the pass's Ray to end")


def test_the_ray_of_a_pass_ends_when_its_command_is_killed(csv_jobs, held_locks, start_pass):
    """``kill -9`` of the command: its Ray driver process gets SIGTERM from the kernel, stops its tasks and ends,
    and the local Ray it started with it."""
    run = start_pass(csv_jobs, "--workers", "2", "--lock-timeout", str(BOUND_S))
    _wait_for_tasks(run, 2)
    run.process.kill()
    assert run.finish() == -signal.SIGKILL
    wait_for(lambda: not run.processes(), "the Ray of a killed command to end")


def _wait_for_tasks(run: Pass, count: int) -> None:
    """Wait until ``count`` of the pass's tasks run (in Ray workers)."""
    wait_for(lambda: len(_task_workers(run)) >= count or run.process.poll() is not None, f"{count} running tasks")
    assert run.process.poll() is None, run.stderr()


def _task_workers(run: Pass) -> list[int]:
    """The pass's Ray workers running a job (Ray titles a worker by the task it runs)."""
    return run.processes(title=b"ray::run_job_line")


def test_a_ray_address_that_is_not_one_is_refused_before_any_work(csv_jobs, start_pass):
    run = start_pass(csv_jobs, "--ray-address", "not an address")
    assert run.finish() == 2
    assert run.stderr() == (
        "Error: --ray-address 'not an address' is not a Ray address: give HOST:PORT, ray://HOST:PORT, auto or local\n"
    )
    assert run.stdout() == "" and not (csv_jobs.parent / "summaries").exists()


# -- a signal to a pass whose jobs write to an MLflow store ----------------------------------------------------

RUNS_PER_SWEEP = 20
MLFLOW_JOB = """
[[jobs]]
name = "{name}"
source = "mlflow:{name}"
parent = "{parent}"
tracking_uri = "{uri}"
val = "val_acc"
test = "test_acc"
n = [1, 3]
n_resamples = 999
plots = false
write_back = true
"""


@pytest.fixture(scope="module")
def mlflow_store(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    """An MLflow sqlite store with one sweep per job name (a parent and its finished children, artifacts under
    the module's directory): the store's file, and each sweep's parent run id. Tests write to copies of it."""
    pytest.importorskip("mlflow", reason='needs the [mlflow] extra: pip install ".[mlflow]"')
    from mlflow import MlflowClient

    from mlflow_helpers import Sweep

    root = tmp_path_factory.mktemp("mlflow-store")
    client = MlflowClient(f"sqlite:///{root / 'mlflow.db'}")
    rng = np.random.default_rng(2)
    parents = {}
    for name in NAMES:
        experiment = client.create_experiment(name, artifact_location=(root / "artifacts" / name).as_uri())
        parent = client.create_run(experiment, run_name="parent").info.run_id
        client.set_terminated(parent, "FINISHED")
        sweep = Sweep(client, experiment, name, parent)
        for seed in range(RUNS_PER_SWEEP):
            sweep.add_child(val=[rng.uniform(0.6, 0.9)], test=[rng.uniform(0.6, 0.9)], params={"seed": seed})
        parents[name] = parent
    return root / "mlflow.db", parents


def _running_runs(uri: str) -> list[str]:
    from mlflow import MlflowClient
    from mlflow.entities import ViewType

    client = MlflowClient(uri)
    experiments = [e.experiment_id for e in client.search_experiments(view_type=ViewType.ALL)]
    runs = client.search_runs(experiments, run_view_type=ViewType.ALL)
    return [run.info.run_name for run in runs if run.info.status == "RUNNING"]


@pytest.mark.parametrize(("signum", "name"), [(signal.SIGTERM, "SIGTERM"), (signal.SIGINT, "SIGINT")])
def test_a_signal_ends_a_pass_on_ray_after_its_running_job_and_takes_ray_with_it(
    mlflow_store, tmp_path, start_pass, signum, name
):
    """Signalled once the first job's bootstrap has started in its Ray task (the batch log has a line), the pass
    starts no other job, lets the running one finish (its grace, BOONTRACK_STOP_GRACE, outlasts it), and exits
    128 + the signal with one line; no MLflow run is left RUNNING and no process of the pass is left. Before,
    SIGTERM aborted the command 3 s after the signal (SIGABRT, exit 134), Ray's tasks with it, and once left a
    summary run RUNNING."""
    from boontrack._signals import BATCH_LOG_VARIABLE

    store, parents = mlflow_store
    uri = f"sqlite:///{shutil.copy(store, tmp_path / 'mlflow.db')}"
    config = tmp_path / "boontrack.toml"
    config.write_text("".join(MLFLOW_JOB.format(name=n, parent=parents[n], uri=uri) for n in NAMES))
    batches = tmp_path / "batches.log"
    environment = {BATCH_LOG_VARIABLE: str(batches), "BOONTRACK_STOP_GRACE": str(BOUND_S)}
    run = start_pass(config, "--workers", "1", env=environment)
    wait_for(lambda: batches.exists() or run.process.poll() is not None, "the first job's bootstrap")
    assert run.process.poll() is None, run.stderr()
    os.kill(run.process.pid, signum)

    assert run.finish() == 128 + signum, run.stderr()
    finished = run.stdout().splitlines()
    *_, last = run.stderr().splitlines()
    not_run = len(NAMES) - len(finished)
    assert last == f"Error: interrupted by {name}: {not_run} job{'s' * (not_run != 1)} not run"
    assert 1 <= len(finished) < len(NAMES)  # the job running at the signal finished; the last one never started
    assert all(line.split(" (")[0].endswith(": updated") for line in finished), finished
    assert _running_runs(uri) == []
    wait_for(lambda: not run.processes(), "the pass's Ray to end")
