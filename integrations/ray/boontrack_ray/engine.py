"""``boontrack reaggregate --engine ray``: each job of a pass as a Ray task, on a cluster or a local Ray.

The driver (the ``boontrack`` command) discovers the sweeps, then hands :class:`RayEngine` one job at a time;
each task runs :func:`boontrack.reaggregate.run_job_line`, the same function a local worker runs, and returns
its log line's outcome. The driver keeps at most ``slots`` tasks in flight, and at most ``per_server`` of one
tracking server (see :mod:`boontrack.reaggregate`), and logs each job's line as its task ends.

A task whose worker dies (node lost, out of memory, killed) is run again by Ray up to ``max_retries`` times;
after that its job's line says it failed and the others go on. Nothing is lost by a retry, an interrupted
pass or a second pass at once: a job writes through the sinks' own crash-safe protocols (a directory
published in one swap, the MLflow summary run that converges to one complete summary per key), never
through a lock, so rerunning a pass is safe and redoes only what was not finished.

Every Ray worker needs boontrack and the trackers' extras installed (for example a cluster's image, or
``runtime_env={"pip": ["boontrack[mlflow]"]}``) and the trackers' credentials in its environment.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from collections.abc import Callable, Sequence
from typing import Any

from boontrack.integration import BackendError, import_optional, redact
from boontrack.reaggregate import Job, run_job_line

__all__ = ["DEFAULT_CONNECT_TIMEOUT_S", "DEFAULT_MAX_RETRIES", "RayEngine"]

#: Times Ray runs a task again after its worker died.
DEFAULT_MAX_RETRIES = 2
#: Seconds the driver waits for a Ray cluster to answer (``--ray-timeout``) before the pass fails.
DEFAULT_CONNECT_TIMEOUT_S = 60.0


class RayEngine:
    """Runs jobs as Ray tasks (one CPU each).

    Parameters
    ----------
    slots
        Tasks in flight at once (``--workers``).
    address
        The cluster (``ray://HOST:10001`` or ``HOST:6379``, or ``auto``: the cluster ``ray start`` last started
        on this host); None: ``RAY_ADDRESS``, else a new local Ray instance of this pass alone (never another
        user's cluster on the host). A Ray already initialised in this process is used as it is, and left
        running.
    max_retries
        Times a task is run again after its worker died.
    run
        What a task runs; :func:`~boontrack.reaggregate.run_job_line` (a wrapper of it for tests or logging).
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
        self._address = address or os.environ.get("RAY_ADDRESS") or "local"
        self._run = run
        self._timeout = connect_timeout
        self._started = False
        self._task: Any = None
        self._running: set[Any] = set()

    def submit(self, job: Job, *, force: bool, lock_timeout: float) -> Any:
        if self._task is None:
            self._connect()
            self._task = self._ray.remote(num_cpus=1, max_retries=self.max_retries, retry_exceptions=False)(self._run)
        ref = self._task.remote(job, force=force, lock_timeout=lock_timeout, threads=1)  # a task has one CPU
        self._running.add(ref)
        return ref

    def wait(self, handles: Sequence[Any], timeout: float | None = None) -> list[tuple[Any, tuple[str, str | None]]]:
        done, _ = self._ray.wait(list(handles), num_returns=1, timeout=timeout)
        finished = []
        for ref in done:
            self._running.discard(ref)
            try:
                finished.append((ref, self._ray.get(ref)))
            except Exception as exc:  # the task's worker died on every attempt
                reason = redact(" ".join(str(exc).split()))[:300] or type(exc).__name__
                finished.append((ref, (f"failed: Ray task lost after {self.max_retries} retries ({reason})", None)))
        return finished

    def close(self) -> None:
        """Cancel the tasks still running (they stop as after Ctrl-C: a summary being published finishes), and
        shut down the local Ray this engine started."""
        for ref in self._running:
            self._ray.cancel(ref)
        self._running.clear()
        if self._started:
            self._ray.shutdown()

    def _connect(self) -> None:
        """``ray.init`` within :attr:`connect_timeout` seconds: a cluster address that nothing answers fails
        at once (a refused connection) or after the bound, with one line, instead of Ray's endless retries."""
        if self._ray.is_initialized():
            return
        where = redact(self._address)
        _check_reachable(self._address, self._timeout)
        failure: list[BaseException] = []

        def connect() -> None:
            worker_log = logging.getLogger("ray._private.worker")
            worker_log.addFilter(_not_main_thread_note)
            try:
                self._ray.init(
                    address=self._address, include_dashboard=False, configure_logging=False, log_to_driver=False
                )
            except BaseException as exc:  # noqa: BLE001 - reported by the waiting thread
                failure.append(exc)
            finally:
                worker_log.removeFilter(_not_main_thread_note)

        attempt = threading.Thread(target=connect, daemon=True, name="boontrack-ray-init")
        attempt.start()
        attempt.join(self._timeout)
        if attempt.is_alive():
            raise BackendError(f"the Ray cluster at {where} did not answer within {self._timeout:g} s (--ray-timeout)")
        if failure:
            detail = redact(" ".join(_last_words(str(failure[0])).split()))[:300] or type(failure[0]).__name__
            raise BackendError(f"cannot start or join Ray at {where}: {detail}{_client_server_lost_hint(detail)}")
        self._started = True


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


def _not_main_thread_note(record: logging.LogRecord) -> bool:
    """Drops Ray's note that its SIGTERM handler is not set (``ray.init`` outside the main thread): the driver's
    own handler ends the pass, which is the point."""
    return "SIGTERM handler is not set" not in record.getMessage()


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
