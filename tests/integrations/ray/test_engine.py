"""``boontrack reaggregate --engine ray``: jobs as tasks of a real local Ray, retried when their worker dies."""

from __future__ import annotations

import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from boontrack import cli
from boontrack.exceptions import InputError
from boontrack.reaggregate import load_config, run_job_line, run_jobs

from csv_jobs import NAMES, write_csv_jobs

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

pytestmark = pytest.mark.ray


@pytest.fixture
def workdir(tmp_path) -> Path:
    """Three jobs over three small CSV files."""
    write_csv_jobs(tmp_path)
    return tmp_path


def _outcomes(lines):
    return sorted(line.split(" (")[0] for line in lines)


def test_a_pass_on_ray_gives_the_lines_and_exit_status_of_a_serial_pass(ray_local, workdir):
    config = str(workdir / "boontrack.toml")
    first = CliRunner().invoke(cli.main, ["reaggregate", "--config", config, "--engine", "ray", "--workers", "2"])
    assert first.exit_code == 0, first.output
    assert sorted(first.stdout.splitlines()) == [f"{n}: updated ({workdir / 'summaries' / n})" for n in NAMES]
    second = CliRunner().invoke(cli.main, ["reaggregate", "--config", config, "--engine", "ray", "--workers", "2"])
    assert (second.exit_code, _outcomes(second.stdout.splitlines())) == (0, [f"{n}: unchanged" for n in NAMES])

    (workdir / "beta.csv").unlink()
    third = CliRunner().invoke(cli.main, ["reaggregate", "--config", config, "--engine", "ray"])
    assert third.exit_code == 1
    assert f"beta: failed: cannot read {workdir / 'beta.csv'}: no such file" in third.stdout.splitlines()


def _dying(marker: Path, *, every_time: bool = False):
    """A task body whose worker process dies (the first time, or every time, for jobs named beta)."""

    def run(job, **options):
        if job.name == "beta" and (every_time or not marker.exists()):
            marker.touch()
            os._exit(1)
        return run_job_line(job, **options)

    return run


def test_a_task_whose_worker_dies_is_retried(ray_local, workdir):
    from boontrack_ray.engine import RayEngine

    lines = []
    engine = RayEngine(2, max_retries=1, run=_dying(workdir / "died-once"))
    assert run_jobs(load_config(workdir / "boontrack.toml"), engine=engine, log=lines.append) == 0
    assert (workdir / "died-once").exists()
    assert _outcomes(lines) == [f"{n}: updated" for n in NAMES]


def test_an_interrupted_pass_fails_its_lost_job_only_and_a_rerun_finishes_it(ray_local, workdir):
    from boontrack_ray.engine import RayEngine

    lines = []
    engine = RayEngine(2, max_retries=1, run=_dying(workdir / "died", every_time=True))
    assert run_jobs(load_config(workdir / "boontrack.toml"), engine=engine, log=lines.append) == 1
    lost = next(line for line in lines if line.startswith("beta: "))
    assert lost.startswith("beta: failed: Ray task lost after 1 retries")
    assert not (workdir / "summaries" / "beta").exists()

    lines.clear()
    assert run_jobs(load_config(workdir / "boontrack.toml"), engine=RayEngine(2), log=lines.append) == 0
    assert _outcomes(lines) == ["alpha: unchanged", "beta: updated", "gamma: unchanged"]


def test_without_ray_the_engine_names_the_extra(workdir, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)
    result = CliRunner().invoke(
        cli.main, ["reaggregate", "--config", str(workdir / "boontrack.toml"), "--engine", "ray"]
    )
    assert result.exit_code == 2
    assert result.stderr == 'Error: --engine ray needs ray: pip install ".[ray]" in a boontrack checkout\n'
    assert not (workdir / "summaries").exists()


def _raising_secret(job, **options):
    raise RuntimeError("the tracker said password=hunter2-secret")


def test_a_lost_task_s_reason_is_redacted(ray_local, workdir):
    from boontrack_ray.engine import RayEngine

    lines = []
    engine = RayEngine(2, max_retries=0, run=_raising_secret)
    assert run_jobs(load_config(workdir / "boontrack.toml"), engine=engine, log=lines.append) == 3
    assert all("Ray task lost" in line and "hunter2" not in line for line in lines), lines


def test_without_an_address_the_pass_has_a_ray_of_its_own(monkeypatch):
    from boontrack_ray.engine import RayEngine

    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    assert RayEngine(1)._address == "local"  # never the cluster `ray start` last started on the host
    monkeypatch.setenv("RAY_ADDRESS", "10.0.0.1:6379")
    assert RayEngine(1)._address == "10.0.0.1:6379"
    assert RayEngine(1, address="ray://head:10001")._address == "ray://head:10001"


@pytest.mark.parametrize(
    "address",
    ["auto", "local", "10.0.0.1:6379", "head-1.example.org:6379", "[::1]:6379", "ray://head:10001", "ray://head"],
)
def test_a_ray_address_is_auto_local_host_port_or_ray_client_s(address):
    from boontrack_ray.engine import RayEngine

    assert RayEngine(1, address=address)._address == address


@pytest.mark.parametrize("address", ["not an address", "head", "head:port", "http://head:8265", "ray://", "a/b:1"])
def test_anything_else_is_refused_when_the_engine_is_made_naming_where_it_came_from(address, monkeypatch):
    from boontrack_ray.engine import RayEngine

    with pytest.raises(InputError, match=rf"^`address` '{re.escape(address)}' is not a Ray address: give HOST:PORT"):
        RayEngine(1, address=address)
    monkeypatch.setenv("RAY_ADDRESS", address)
    with pytest.raises(InputError, match=r"^RAY_ADDRESS '.*' is not a Ray address"):
        RayEngine(1)


def test_the_ray_extra_allows_the_ray_these_tests_run_on_and_no_later_minor_release():
    """The upper bound is the tested one: a Ray release changed how ``ray.init`` may be called (2.60 could not
    start a local Ray from a helper thread), so the extra moves on once the suite has run on the next one."""
    import ray
    from packaging.requirements import Requirement

    pyproject = tomllib.loads((Path(__file__).parents[3] / "pyproject.toml").read_text(encoding="utf-8"))
    (extra,) = (Requirement(line) for line in pyproject["project"]["optional-dependencies"]["ray"])
    assert extra.specifier.contains(ray.__version__)
    assert any(bound.operator == "<" for bound in extra.specifier)


def _reaggregate_process(workdir: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    command = [sys.executable, "-c", "from boontrack.cli import main; main()", "reaggregate"]
    command += ["--config", str(workdir / "boontrack.toml"), "--engine", "ray", *args]
    environment = {key: value for key, value in os.environ.items() if key != "RAY_ADDRESS"}
    return subprocess.run(command, capture_output=True, text=True, timeout=600, env={**environment, **(env or {})})


@pytest.mark.slow
def test_a_ray_address_where_nothing_listens_fails_at_once_in_one_line(workdir):
    with socket.socket() as held:  # bound, never listening: connections are refused
        held.bind(("127.0.0.1", 0))
        address = f"127.0.0.1:{held.getsockname()[1]}"
        done = _reaggregate_process(workdir, "--ray-address", address)
    assert done.returncode == 1, done.stderr
    assert f"Error: cannot reach the Ray cluster at {address} (Connection refused; is its head running?)" in (
        done.stderr.splitlines()
    )
    assert done.stdout == "" and not (workdir / "summaries").exists()


@pytest.mark.slow
def test_an_unchanged_pass_never_starts_or_joins_ray(workdir):
    """The driver compares the change tokens before it asks Ray for anything: with every job unchanged, a pass
    given a Ray address where nothing listens succeeds; once a job changed, it needs Ray and says so."""
    first = CliRunner().invoke(cli.main, ["reaggregate", "--config", str(workdir / "boontrack.toml")])
    assert first.exit_code == 0, first.output
    with socket.socket() as held:  # bound, never listening: connections are refused
        held.bind(("127.0.0.1", 0))
        address = f"127.0.0.1:{held.getsockname()[1]}"
        unchanged = _reaggregate_process(workdir, "--ray-address", address, "--workers", "2")
        assert (unchanged.returncode, _outcomes(unchanged.stdout.splitlines())) == (
            0,
            [f"{n}: unchanged" for n in NAMES],
        ), unchanged.stderr
        with open(workdir / "beta.csv", "a") as runs:
            runs.write("r8,0.7,0.6\n")
        changed = _reaggregate_process(workdir, "--ray-address", address, "--workers", "2")
    assert changed.returncode == 1
    assert f"Error: cannot reach the Ray cluster at {address} (Connection refused; is its head running?)" in (
        changed.stderr.splitlines()
    )


@pytest.mark.slow
@pytest.mark.parametrize("scheme", ["", "ray://"])
def test_a_ray_address_that_never_answers_fails_after_the_bound(workdir, scheme):
    with socket.socket() as silent:  # accepts connections (the kernel does), never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        address = f"{scheme}127.0.0.1:{silent.getsockname()[1]}"
        # the smallest whole bound: the pass's outcome does not depend on it, only its length does
        done = _reaggregate_process(workdir, "--ray-address", address, "--ray-timeout", "1")
    assert done.returncode == 1, done.stderr
    assert f"Error: the Ray cluster at {address} did not answer within 1 s (--ray-timeout)" in done.stderr.splitlines()


@pytest.fixture(scope="module")
def ray_client_cluster(tmp_path_factory):
    """A Ray cluster of its own (``ray start --head``, one CPU) with a Ray Client server, and the environment a
    driver needs to reach it: Ray's token authentication, on by default, with a token of this fixture's own.
    Stopped (its whole process group) at the end of the module."""
    pytest.importorskip("ray.util.client")
    pytest.importorskip("grpc", reason='Ray Client needs ray[client], part of the "ray" extra')
    ports = []
    for _ in range(2):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            ports.append(probe.getsockname()[1])
    env = {**os.environ, "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(16)}
    env.pop("RAY_ADDRESS", None)
    # On SIGTERM the head first marks its node draining (for Ray Serve) and waits up to 30 s for it; the driver
    # has long disconnected by then, and the GCS, stopped with it, never answers: 30 s of nothing per session.
    env["RAY_GRACEFUL_SHUTDOWN_DRAIN_TIMEOUT_S"] = "0"
    # The head's Ray Client proxy forks a server for each driver while gRPC's threads run; gRPC's fork handlers
    # then made that server exit at once for 3 of the first drivers of 10 new clusters (the engine's hint,
    # CLIENT_SERVER_LOST), none of 34 without them. A cluster set up as the integration's README advises.
    env["GRPC_ENABLE_FORK_SUPPORT"] = "0"
    temp = Path(tempfile.mkdtemp(prefix="ray-", dir="/tmp"))  # Ray's socket paths must stay short
    log = tmp_path_factory.mktemp("ray-head") / "head.log"
    command = [sys.executable, "-m", "ray.scripts.scripts", "start", "--head", "--block"]  # this Python's Ray
    command += [f"--port={ports[0]}", f"--ray-client-server-port={ports[1]}"]
    command += ["--num-cpus=1", "--include-dashboard=false", "--disable-usage-stats", f"--temp-dir={temp}"]
    with open(log, "wb") as output:
        head = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    try:
        deadline = time.monotonic() + 180
        # The head says it blocks before its Ray Client server listens (a pass then found the port refused).
        while b"will now block forever" not in log.read_bytes() or not _listening(ports[1]):
            if head.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"ray start failed:\n{log.read_text()}")
            time.sleep(0.5)
        yield f"ray://127.0.0.1:{ports[1]}", {k: env[k] for k in ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN")}
    finally:
        os.killpg(head.pid, signal.SIGTERM)
        try:
            head.wait(90)
        except subprocess.TimeoutExpired:
            os.killpg(head.pid, signal.SIGKILL)
            head.wait(30)
        shutil.rmtree(temp, ignore_errors=True)


def _listening(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


@pytest.mark.slow
def test_a_pass_through_a_ray_client_address(ray_client_cluster, workdir):
    """``--ray-address ray://HOST:PORT`` after ``pip install ".[ray]"`` (Ray Client is in the extra)."""
    address, env = ray_client_cluster
    done = _reaggregate_process(workdir, "--ray-address", address, "--workers", "2", env=env)
    assert done.returncode == 0, done.stderr
    assert sorted(done.stdout.splitlines()) == [f"{n}: updated ({workdir / 'summaries' / n})" for n in NAMES]


def test_a_server_traceback_in_a_failure_is_told_by_its_last_line():
    """Ray Client relays the server's traceback in the error's message; the one-line error keeps what went wrong,
    and when the proxy lost the server it started, says what to do."""
    from boontrack_ray.engine import _client_server_lost_hint, _last_words

    relayed = (
        "Initialization failure from server:\nTraceback (most recent call last):\n"
        '  File "proxier.py", line 765, in Datapath\n    if not self.proxy_manager.start_specific_server(\n'
        "RuntimeError: Starting Ray client server failed. See ray_client_server_23000.err for detailed logs.\n"
    )
    assert _last_words(relayed).startswith("RuntimeError: Starting Ray client server failed")
    assert _last_words("connection refused") == "connection refused"
    zombie = "psutil.ZombieProcess: PID still exists but it's a zombie (pid=12234)"
    for lost in (_last_words(relayed), zombie):
        assert "GRPC_ENABLE_FORK_SUPPORT=0" in _client_server_lost_hint(lost)
    assert _client_server_lost_hint("connection refused") == ""
