"""Fixtures shared by the whole test suite."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from hypothesis import settings

from processes import WITH_PARENT

# The test command runs every property test on the same examples each time (derandomized: seeded from the test),
# so that a run is red only where the code or the tests changed: a random search turned two proofs of "the suite
# passes every time" red on new edge cases (real bugs, each now pinned by a test). The search for new ones is a
# run of its own: `python -m pytest --hypothesis-profile=explore tests/test_array_api_fuzz.py tests/test_properties.py`.
settings.register_profile("repeatable", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile("repeatable")

REPOSITORY = Path(__file__).resolve().parents[1]
#: Real result tables published with the papers, beside the repository checkout (``<repo>/../shared/data``).
SHARED_DATA = REPOSITORY / ".." / "shared" / "data"
#: What the tools themselves keep in the checkout (virtual environment, caches); anything else a test leaves
#: there is a test writing into the user's working directory.
TOOL_LEFTOVERS = {".venv", ".hypothesis", ".pytest_cache", ".benchmarks", "__pycache__"}


def pytest_sessionstart(session: pytest.Session) -> None:
    """SIGTERM ends the run as Ctrl-C does, so the fixtures' teardown still stops the servers, Ray nodes and
    workers the tests started (with the default action, a terminated run leaves them running)."""

    def interrupt(signum: int, _frame) -> None:
        raise KeyboardInterrupt(f"signal {signal.Signals(signum).name}")

    signal.signal(signal.SIGTERM, interrupt)


# -- A parallel run (pytest-xdist, ``-n auto`` in the test command) ---------------------------------------------
#: Tests that start Ray: the Ray directory's and the conformance suite's Ray Tune cases (the session's
#: ``ray_local``, a ``ray start`` cluster, the Ray Tune example).
_RAY_TESTS = re.compile(r"^tests/integrations/ray/|\[ray_tune[-\]]")
#: Tests that read the built documentation site, which a worker builds once for its session (tests/test_docs_site.py).
_SITE_TESTS = re.compile(r"^tests/test_docs_site\.py::")


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: one worker per core this process may use, at most four (each worker starts its own MLflow
    server and wandb service; measured on 2 cores only)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, min(4, cores))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """Every test on its own, except that the tests starting Ray run in one worker, one after another: Ray then
    starts once, and two Ray instances never compete for the cores of a small machine. The tests of the built docs
    site run together too, so that one worker builds it, once. (xdist's ``loadgroup``
    would say this with marks, but its groups are lost under pytest 9, which ignores the node id it rewrites.)"""
    from xdist.scheduler import LoadScopeScheduling

    class RayTestsTogether(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            if _RAY_TESTS.search(nodeid):
                return "ray"
            return "docs-site" if _SITE_TESTS.search(nodeid) else nodeid

    return RayTestsTogether(config, log)


@pytest.fixture(autouse=True)
def _cli_logging_restored():
    """The command line quiets third-party loggers for its process (``MLFLOW_LOGGING_LEVEL`` and the loggers'
    levels); tests run it in-process, so every test gets both back as they were."""
    import logging

    from boontrack.cli import THIRD_PARTY_LOGGERS

    variable = os.environ.get("MLFLOW_LOGGING_LEVEL")
    levels = {name: logging.getLogger(name).level for name in THIRD_PARTY_LOGGERS}
    yield
    if variable is None:
        os.environ.pop("MLFLOW_LOGGING_LEVEL", None)
    else:
        os.environ["MLFLOW_LOGGING_LEVEL"] = variable
    for name, level in levels.items():
        logging.getLogger(name).setLevel(level)


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The shared data directory; the test is skipped when it is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared data not found at {SHARED_DATA}")
    return SHARED_DATA


@pytest.fixture
def file_system_looks(monkeypatch) -> list[tuple[str, str]]:
    """Every ``os.stat``, ``os.lstat``, ``os.listdir`` and ``os.scandir`` made during the test (pathlib's too), as
    (function, path), in order: what a piece of code asks of the file system, counted instead of timed. The
    calls themselves are the real ones."""
    looks: list[tuple[str, str]] = []

    def counted(name: str, function):
        def look(*args, **kwargs):
            path = args[0] if args else kwargs.get("path", ".")
            if isinstance(path, (str, bytes, os.PathLike)):  # not a file descriptor
                looks.append((name, os.fsdecode(path)))
            return function(*args, **kwargs)

        return look

    for name in ("stat", "lstat", "listdir", "scandir"):
        monkeypatch.setattr(os, name, counted(name, getattr(os, name)))
    return looks


@pytest.fixture(scope="session", autouse=True)
def _checkout_left_clean():
    """Fail the run if the tests created anything in the repository's top directory (e.g. ./mlruns, ./wandb)."""
    before = {p.name for p in REPOSITORY.iterdir()}
    yield
    created = {p.name for p in REPOSITORY.iterdir()} - before - TOOL_LEFTOVERS
    assert not created, f"tests wrote into the checkout: {sorted(created)}"


# -- Trackers: the real things, shared by the integration tests and the conformance suite ----------------------
SERVER_START_TIMEOUT_S = 120
#: uvicorn's start-up line names the port the server bound (it is started on port 0: no find-then-close race).
_LISTENING = re.compile(rb"Uvicorn running on http://127\.0\.0\.1:(\d+)")


@pytest.fixture(scope="session", autouse=True)
def _quiet_mlflow():
    """No "View run" links on stdout (and no extra request per call) for the MLflow runs the tests create."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MLFLOW_SUPPRESS_PRINTING_URL_TO_STDOUT", "true")
        yield


def _healthy(uri: str) -> bool:
    try:
        with urllib.request.urlopen(f"{uri}/health", timeout=2) as response:
            return response.status == 200 and response.read().strip() == b"OK"
    except OSError:
        return False


def _wait_for_server(process: subprocess.Popen, log_path: Path) -> str:
    """The server's URI once it answers its health check; fails the session if it exits or never does."""
    deadline = time.monotonic() + SERVER_START_TIMEOUT_S
    uri = None
    while uri is None or not _healthy(uri):
        if process.poll() is not None:
            pytest.fail(f"mlflow server exited with {process.returncode}:\n{log_path.read_text()}")
        if time.monotonic() > deadline:
            pytest.fail(f"mlflow server not ready after {SERVER_START_TIMEOUT_S} s:\n{log_path.read_text()}")
        if uri is None and (match := _LISTENING.search(log_path.read_bytes())):
            uri = f"http://127.0.0.1:{int(match.group(1))}"
        time.sleep(0.2)
    return uri


@pytest.fixture(scope="session")
def _mlflow_server_root(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("mlflow_server")


@pytest.fixture(scope="session")
def mlflow_server_store(mlflow_server, _mlflow_server_root) -> str:
    """The sqlite URI of the session server's own store, for tests that fill it in bulk (the server then sees the
    rows as its own)."""
    return f"sqlite:///{_mlflow_server_root / 'mlflow.db'}"


@pytest.fixture(scope="session")
def mlflow_server(_mlflow_server_root) -> str:
    """URI of a real ``mlflow server`` (sqlite backend, proxied artifacts) on 127.0.0.1, started once for the
    session on a port the system picks, and stopped at its end. Skips without the [mlflow] extra."""
    pytest.importorskip("mlflow", reason='needs the [mlflow] extra: pip install ".[mlflow]"')
    root = _mlflow_server_root
    env = {**os.environ, "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"}
    command = [
        sys.executable,
        "-c",
        WITH_PARENT,
        str(os.getpid()),
        sys.executable,
        "-m",
        "mlflow",
        "server",
        "--backend-store-uri",
        f"sqlite:///{root / 'mlflow.db'}",
        "--artifacts-destination",
        str(root / "artifacts"),
        "--host",
        "127.0.0.1",
        "--port",
        "0",
        "--workers",
        "1",
    ]
    log_path = root / "server.log"
    with open(log_path, "wb") as log:
        # Own session: stopping the process group also stops the uvicorn worker.
        process = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            yield _wait_for_server(process, log_path)
        finally:
            try:
                os.killpg(process.pid, signal.SIGTERM)
                process.wait(20)
            except ProcessLookupError:
                pass
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(10)


@pytest.fixture(scope="session")
def wandb_env(tmp_path_factory: pytest.TempPathFactory):
    """Isolated wandb settings for the whole session (no user config, no netrc, a fake key, quiet), restored at
    its end. Skips without the [wandb] extra."""
    pytest.importorskip("wandb", reason='needs the [wandb] extra: pip install ".[wandb]"')
    from wandb_double import API_KEY

    root = tmp_path_factory.mktemp("wandb-env")
    env = {
        name: str(root / name.lower())
        for name in ("WANDB_DIR", "WANDB_CONFIG_DIR", "WANDB_CACHE_DIR", "WANDB_DATA_DIR", "WANDB_ARTIFACT_DIR")
    }
    for path in env.values():
        Path(path).mkdir()
    env.update(
        WANDB_SILENT="true",
        WANDB_API_KEY=API_KEY,
        NETRC=str(root / "no-netrc"),
        WANDB_X_GRAPHQL_RETRY_MAX="1",
        WANDB_DISABLE_GIT="true",
    )
    with pytest.MonkeyPatch.context() as mp:
        for name in ("WANDB_BASE_URL", "WANDB_MODE", "WANDB_SWEEP_ID", "WANDB_ENTITY", "WANDB_PROJECT", "WANDB_RUN_ID"):
            mp.delenv(name, raising=False)
        for name, value in env.items():
            mp.setenv(name, value)
        yield root
        import wandb

        wandb.teardown()


@pytest.fixture(scope="session")
def ray_local():
    """A local Ray instance (2 CPUs, no dashboard), started once for the whole session and shut down at its
    end: Ray's start-up costs seconds. Skips without the [ray] extra."""
    ray = pytest.importorskip("ray", reason='needs the [ray] extra: pip install ".[ray]"')
    # address "local": a Ray of the session's own, never a cluster that `ray start` left on the host
    context = ray.init(
        address="local", num_cpus=2, include_dashboard=False, configure_logging=False, log_to_driver=False
    )
    try:
        yield context
    finally:
        ray.shutdown()
