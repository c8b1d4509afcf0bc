"""``boontrack reaggregate --engine ray``: each job of a pass as a Ray task, on a cluster or a local Ray.

The driver (the ``boontrack`` command) discovers the sweeps, then hands :class:`RayEngine` one job at a time;
each task runs :func:`boontrack.reaggregate.run_job_line`, the same function a local worker runs, and returns
its log line's outcome. The driver keeps at most ``slots`` tasks in flight, and at most ``per_server`` of one
tracking server (see :mod:`boontrack.reaggregate`), and logs each job's line as its task ends.

Ray is driven from a child process of the driver, the *Ray driver process*, unless the caller's process has
initialised Ray itself (then that Ray is used as it is, from the caller's process). The child:

- starts or joins Ray on its main thread. ``ray.init`` outside the main thread cannot start a local Ray: Ray
  has the processes it starts (GCS, raylet) killed when the *thread* that started them ends (``PR_SET_PDEATHSIG``
  is per thread on Linux), so a local Ray started in a helper thread died with it, and the first task failed
  60 s later ("Failed to connect to GCS");
- runs in a session of its own, so the signals of a terminal or of a process group (Ctrl-C, ``timeout(1)``)
  reach the ``boontrack`` driver alone, which decides how a pass ends. ``ray.init`` installs Ray's own handlers
  for SIGTERM in the process that calls it (Python's ``sys.exit``, and the core worker's C++ failure handler,
  which aborts the process 3 s after the signal); in the child they are replaced by one that ends the child in
  order, and the driver keeps Python's own handling of SIGINT and SIGTERM;
- writes Ray's output (the ``(raylet) ...`` lines, Ray's C++ logs) to standard error, without colour codes when
  standard error is not a terminal: standard output is one line per job;
- ends with the driver, however the driver ends (SIGTERM on the driver's death, or the end of its pipe), and
  takes the local Ray it started with it.

A task whose worker dies (node lost, out of memory, killed) is run again by Ray up to ``max_retries`` times;
after that its job's line says it failed and the others go on. Nothing is lost by a retry, an interrupted
pass or a second pass at once: a job writes through the sinks' own crash-safe protocols (a directory
published in one swap, the MLflow summary run that converges to one complete summary per key), never
through a lock, so rerunning a pass is safe and redoes only what was not finished.

Every Ray worker needs boontrack and the trackers' extras installed (for example a cluster's image, or
``runtime_env={"pip": ["boontrack[mlflow]"]}``) and the trackers' credentials in its environment.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import re
import signal
import socket
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from boontrack.integration import (
    BackendError,
    InputError,
    Job,
    end_with_parent,
    import_optional,
    option_name,
    redact,
    run_job_line,
)

__all__ = ["DEFAULT_CONNECT_TIMEOUT_S", "DEFAULT_MAX_RETRIES", "RayEngine"]

#: Times Ray runs a task again after its worker died.
DEFAULT_MAX_RETRIES = 2
#: Seconds the driver waits for a Ray cluster to answer (``--ray-timeout``) before the pass fails.
DEFAULT_CONNECT_TIMEOUT_S = 60.0
#: Seconds the tasks cancelled at the end of a pass are given to stop (a summary being published finishes
#: first), as worker processes are given after SIGTERM, before Ray is shut down.
CANCEL_WAIT_S = 5.0
#: Seconds the Ray driver process may take to start Python and import Ray, before it starts or joins Ray.
DRIVER_START_TIMEOUT_S = 120.0
#: Seconds the Ray driver process may take beyond a request's own wait to answer it, or, at the end of a pass,
#: to stop its tasks and shut down Ray, before it is killed (its local Ray with it). With the default
#: BOONTRACK_STOP_GRACE, a signalled pass ends within Kubernetes' 30 s before its SIGKILL.
DRIVER_ANSWER_TIMEOUT_S = 15.0
#: The Ray addresses boontrack accepts: ``auto``, ``local``, ``HOST:PORT`` and ``ray://HOST[:PORT]`` (Ray Client).
RAY_ADDRESS = re.compile(r"auto|local|(?:ray://)?(?:\[[0-9A-Fa-f:.]+\]|[\w.-]+):\d{1,5}|ray://[\w.-]+")
_CONNECTING, _READY = "connecting", "ready"


class RayEngine:
    """Runs jobs as Ray tasks (one CPU each).

    Parameters
    ----------
    slots
        Tasks in flight at once (``--workers``).
    address
        The cluster (``ray://HOST:10001`` or ``HOST:6379``, or ``auto``: the cluster ``ray start`` last started
        on this host); None: ``RAY_ADDRESS``, else a new local Ray instance of this pass alone (never another
        user's cluster on the host), shut down at the end of the pass. Any other value is an
        :class:`~boontrack.exceptions.InputError`, raised here, before any work. A Ray already initialised in
        this process is used as it is, and left running.
    max_retries
        Times a task is run again after its worker died.
    run
        What a task runs; :func:`~boontrack.reaggregate.run_job_line` (a wrapper of it for tests or logging; a
        module-level function unless Ray is initialised in this process: it is sent to the Ray driver process).
    connect_timeout
        Seconds to wait for the cluster to answer, when the first job is submitted (nothing is started for a
        pass with nothing to do); then :class:`~boontrack.exceptions.BackendError`.
    """

    def __init__(
        self,
        slots: int,
        *,
        address: str | None = None,
        max_retries: int = DEFAULT_MAX_RETRIES,
        run: Callable[..., tuple[str, str | None]] = run_job_line,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT_S,
    ) -> None:
        self._ray = import_optional("ray", extra="ray", needed_for="--engine ray")
        self.slots = slots
        self.max_retries = max_retries
        self._address = _checked_address(address)
        self._run = run
        self._timeout = connect_timeout
        self._keys = itertools.count()
        self._tasks: _RayTasks | _DriverProcess | None = None

    def submit(self, job: Job, *, force: bool, lock_timeout: float) -> int:
        if self._tasks is None:
            self._tasks = self._connect()
        key = next(self._keys)
        self._tasks.submit(key, job, {"force": force, "lock_timeout": lock_timeout, "threads": 1})  # one CPU a task
        return key

    def wait(self, handles: Sequence[int], timeout: float | None = None) -> list[tuple[int, tuple[str, str | None]]]:
        return self._tasks.wait(list(handles), timeout) if self._tasks is not None else []

    def close(self) -> None:
        """Cancel the tasks still running (they stop as after Ctrl-C: a summary being published finishes), wait
        :data:`CANCEL_WAIT_S` seconds for them, and shut down the local Ray this engine started."""
        if self._tasks is not None:
            self._tasks.close()
            self._tasks = None

    def _connect(self) -> _RayTasks | _DriverProcess:
        """The caller's Ray, when this process has one; else a Ray driver process that started or joined Ray
        within :attr:`connect_timeout` seconds: a cluster address that nothing answers fails at once (a refused
        connection) or after the bound, with one line, instead of Ray's endless retries."""
        if self._ray.is_initialized():
            return _RayTasks(self._ray, self._run, self.max_retries)
        _check_reachable(self._address, self._timeout)
        return _DriverProcess(self._address, self._run, self.max_retries, self._timeout)


def _checked_address(address: str | None) -> str:
    """The address to start or join Ray at (``local``: a Ray of this pass alone), or an InputError naming the
    option (``--ray-address`` on the command line) when it is not a Ray address."""
    from_environment = address is None and bool(os.environ.get("RAY_ADDRESS"))
    chosen = address or os.environ.get("RAY_ADDRESS") or "local"
    if RAY_ADDRESS.fullmatch(chosen) is None:
        named = "RAY_ADDRESS" if from_environment else option_name("address")
        raise InputError(
            f"{named} {redact(chosen)!r} is not a Ray address: give HOST:PORT, ray://HOST:PORT, auto or local"
        )
    return chosen


class _RayTasks:
    """Jobs as tasks of the Ray this process is connected to, each known by the key the engine gave it."""

    def __init__(self, ray: Any, run: Callable[..., tuple[str, str | None]], max_retries: int) -> None:
        self._ray = ray
        self._max_retries = max_retries
        self._task = ray.remote(num_cpus=1, max_retries=max_retries, retry_exceptions=False)(run)
        self._running: dict[Any, int] = {}  # object ref -> key

    def submit(self, key: int, job: Job, options: dict[str, Any]) -> None:
        self._running[self._task.remote(job, **options)] = key

    def wait(self, keys: list[int], timeout: float | None) -> list[tuple[int, tuple[str, str | None]]]:
        wanted = set(keys)
        refs = [ref for ref, key in self._running.items() if key in wanted]
        if not refs:
            return []
        done, _ = self._ray.wait(refs, num_returns=1, timeout=timeout)
        return [(self._running.pop(ref), self._result(ref)) for ref in done]

    def close(self) -> None:
        """Cancel the running tasks, and wait :data:`CANCEL_WAIT_S` seconds for them to stop."""
        refs = list(self._running)
        for ref in refs:
            self._ray.cancel(ref)
        if refs:
            self._ray.wait(refs, num_returns=len(refs), timeout=CANCEL_WAIT_S)
        self._running.clear()

    def _result(self, ref: Any) -> tuple[str, str | None]:
        try:
            return self._ray.get(ref)
        except Exception as exc:  # the task's worker died on every attempt
            reason = redact(" ".join(str(exc).split()))[:300] or type(exc).__name__
            return f"failed: Ray task lost after {self._max_retries} retries ({reason})", None


class _DriverProcess:
    """The Ray driver process (:func:`_serve`) and the driver's end of its pipe: the same requests as
    :class:`_RayTasks`, each answer awaited within a bound."""

    def __init__(self, address: str, run: Callable[..., Any], max_retries: int, connect_timeout: float) -> None:
        import multiprocessing

        context = multiprocessing.get_context("spawn")  # a fresh process: no Ray, no tracker client shared with it
        self._connection, child_end = context.Pipe()
        self._process = context.Process(
            target=_serve, args=(child_end, os.getpid(), address, run, max_retries), daemon=True, name="boontrack-ray"
        )
        self._process.start()
        child_end.close()
        where = redact(address)
        try:
            if self._answer(DRIVER_START_TIMEOUT_S) != _CONNECTING:
                raise BackendError(f"the Ray driver process did not start within {DRIVER_START_TIMEOUT_S:g} s")
            answer = self._answer(connect_timeout)
            if answer is None:
                raise BackendError(
                    f"the Ray cluster at {where} did not answer within {connect_timeout:g} s (--ray-timeout)"
                )
            if answer != _READY:
                detail = redact(" ".join(_last_words(answer).split()))[:300]
                raise BackendError(f"cannot start or join Ray at {where}: {detail}{_client_server_lost_hint(detail)}")
        except BaseException:
            self._kill()
            raise

    def submit(self, key: int, job: Job, options: dict[str, Any]) -> None:
        self._request("submit", key, job, options)

    def wait(self, keys: list[int], timeout: float | None) -> list[tuple[int, tuple[str, str | None]]]:
        self._request("wait", keys, timeout)
        within = None if timeout is None else timeout + DRIVER_ANSWER_TIMEOUT_S
        answer = self._answer(within)
        if answer is None:
            self._kill()
            raise BackendError(f"the Ray driver process did not answer within {within:g} s")
        return answer

    def close(self) -> None:
        """Tell the Ray driver process to stop its tasks and Ray, and wait for it to end within a bound; then
        kill it (its local Ray goes with it)."""
        with contextlib.suppress(OSError):
            self._connection.send(None)
        deadline = time.monotonic() + CANCEL_WAIT_S + DRIVER_ANSWER_TIMEOUT_S
        while self._process.is_alive() and (left := deadline - time.monotonic()) > 0:
            # read a late answer (a wait that a second signal cut short), so that the process is not stuck writing it
            if self._connection.poll(min(left, 0.5)):
                with contextlib.suppress(Exception):
                    self._connection.recv()
        self._kill()

    def _request(self, *request: Any) -> None:
        try:
            self._connection.send(request)
        except OSError:
            raise BackendError(f"the Ray driver process ended ({self._end()})") from None

    def _answer(self, within: float | None) -> Any:
        """The process's next message; None when none came within ``within`` seconds (None: no bound)."""
        if not self._connection.poll(within):
            return None
        try:
            return self._connection.recv()
        except (EOFError, OSError):
            raise BackendError(f"the Ray driver process ended ({self._end()})") from None

    def _end(self) -> str:
        self._process.join(DRIVER_ANSWER_TIMEOUT_S)
        code = self._process.exitcode
        if code is None:
            return "still running"
        return f"killed by {signal.Signals(-code).name}" if code < 0 else f"exit status {code}"

    def _kill(self) -> None:
        if self._process.is_alive():
            self._process.kill()
        self._process.join()
        self._connection.close()


def _serve(connection: Any, driver: int, address: str, run: Callable[..., Any], max_retries: int) -> None:
    """The Ray driver process: starts or joins Ray on its main thread, then runs the driver's requests (submit,
    wait) until it says stop (None) or its pipe closes; then cancels the tasks still running and shuts Ray down."""
    os.setsid()  # out of the terminal's and the driver's process group: the driver alone handles their signals
    end_with_parent(driver)
    os.dup2(2, 1)  # Ray prints to standard output, and its C++ code writes to its descriptors
    if not sys.stderr.isatty():
        os.environ["RAY_COLOR_PREFIX"] = "0"  # Ray colours its prefixes unless told not to
    import ray

    connection.send(_CONNECTING)
    try:
        ray.init(address=address, include_dashboard=False, configure_logging=False, log_to_driver=False)
    except Exception as exc:  # noqa: BLE001 - told to the driver, which reports it in one line
        connection.send(str(exc) or type(exc).__name__)
        return
    # ray.init set Ray's SIGTERM handlers (sys.exit, and the core worker's failure handler that aborts 3 s after
    # the signal): this process ends in order instead, like after the driver's last request.
    signal.signal(signal.SIGTERM, _stop_serving)
    tasks = _RayTasks(ray, run, max_retries)
    try:
        connection.send(_READY)
        while (request := connection.recv()) is not None:
            name, *arguments = request
            if name == "submit":
                tasks.submit(*arguments)
            else:
                connection.send(tasks.wait(*arguments))
    except EOFError:  # the driver is gone
        pass
    finally:
        tasks.close()
        ray.shutdown()


def _stop_serving(signum: int, _frame: Any) -> None:
    raise SystemExit(128 + signum)


def _last_words(message: str) -> str:
    """A server's traceback relayed in an error's message ends with what went wrong: keep that line (cutting the
    whole message to one line of 300 characters kept only the traceback's first frames)."""
    if "Traceback (most recent call last)" not in message:
        return message
    lines = [line for line in message.splitlines() if line.strip()]
    return lines[-1] if lines else message


#: How Ray Client's proxy says that the server it started for this driver exited at once: its own message, or
#: psutil's when the server exited between the proxy's two checks that it runs (``start_specific_server`` in
#: Ray's ``ray/util/client/server/proxier.py``).
CLIENT_SERVER_LOST = ("Starting Ray client server failed", "psutil.ZombieProcess")


def _client_server_lost_hint(detail: str) -> str:
    """What to do when Ray Client's proxy lost the server it forked for this driver. The proxy forks it while
    gRPC's threads run, and gRPC's fork handlers then make it exit at once: 3 of the first drivers of 10 new
    clusters here (Ray 2.x), none of 34 with ``GRPC_ENABLE_FORK_SUPPORT=0`` in the head's environment."""
    if not any(message in detail for message in CLIENT_SERVER_LOST):
        return ""
    return (
        " (Ray Client's proxy lost the server it started for this pass; the next pass usually connects, and a head "
        "started with GRPC_ENABLE_FORK_SUPPORT=0 in its environment avoids it)"
    )


def _check_reachable(address: str, timeout: float) -> None:
    """BackendError when nothing accepts a connection at a ``HOST:PORT`` or ``ray://HOST:PORT`` address (refused:
    at once; no answer: after ``timeout`` seconds). Other addresses (``local``, ``auto``) are Ray's to find."""
    host, sep, port = address.removeprefix("ray://").rpartition(":")
    if not sep or not port.isdigit():
        return
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout):
            pass
    except TimeoutError:
        raise BackendError(
            f"the Ray cluster at {redact(address)} did not answer within {timeout:g} s (--ray-timeout)"
        ) from None
    except OSError as exc:
        raise BackendError(
            f"cannot reach the Ray cluster at {redact(address)} ({exc.strerror or exc}; is its head running?)"
        ) from None
