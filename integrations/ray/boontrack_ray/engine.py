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

from collections.abc import Callable, Sequence
from typing import Any

from boontrack.integration import import_optional
from boontrack.reaggregate import Job, run_job_line

__all__ = ["DEFAULT_MAX_RETRIES", "RayEngine"]

#: Times Ray runs a task again after its worker died.
DEFAULT_MAX_RETRIES = 2


class RayEngine:
    """Runs jobs as Ray tasks (one CPU each).

    Parameters
    ----------
    slots
        Tasks in flight at once (``--workers``).
    address
        The cluster (``ray://HOST:10001`` or ``HOST:6379``); None: ``RAY_ADDRESS``, else a local Ray instance.
        A Ray already initialised in this process is used as it is, and left running.
    max_retries
        Times a task is run again after its worker died.
    run
        What a task runs; :func:`~boontrack.reaggregate.run_job_line` (a wrapper of it for tests or logging).
    """

    def __init__(
        self,
        slots: int,
        *,
        address: str | None = None,
        max_retries: int = DEFAULT_MAX_RETRIES,
        run: Callable[..., tuple[str, str | None]] = run_job_line,
    ) -> None:
        self._ray = import_optional("ray", extra="ray", needed_for="--engine ray")
        self.slots = slots
        self.max_retries = max_retries
        self._started = not self._ray.is_initialized()
        if self._started:
            self._ray.init(address=address, include_dashboard=False, configure_logging=False, log_to_driver=False)
        self._task = self._ray.remote(num_cpus=1, max_retries=max_retries, retry_exceptions=False)(run)

    def submit(self, job: Job, *, force: bool, lock_timeout: float) -> Any:
        return self._task.remote(job, force=force, lock_timeout=lock_timeout, threads=1)  # a task has one CPU

    def wait(self, handles: Sequence[Any]) -> list[tuple[Any, tuple[str, str | None]]]:
        done, _ = self._ray.wait(list(handles), num_returns=1)
        finished = []
        for ref in done:
            try:
                finished.append((ref, self._ray.get(ref)))
            except Exception as exc:  # the task's worker died on every attempt
                reason = " ".join(str(exc).split())[:300] or type(exc).__name__
                finished.append((ref, (f"failed: Ray task lost after {self.max_retries} retries ({reason})", None)))
        return finished

    def close(self) -> None:
        if self._started:
            self._ray.shutdown()
