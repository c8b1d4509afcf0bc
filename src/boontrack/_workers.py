"""Worker processes on this machine for ``boontrack reaggregate --workers N`` (:class:`ProcessEngine`).

Each worker is a fresh Python process (``spawn``: no tracker client is shared with it) with its own pipe to the
driver, and runs one job at a time. What this gives over a plain process pool:

- a worker that dies (``kill -9``, out of memory) loses only its own job, which is run once more on a new
  worker; the jobs of the other workers go on;
- a worker ends with its driver, however the driver ends (:func:`boontrack._signals.end_with_parent`), and
  when its pipe closes;
- the driver can stop the workers within a bound (:meth:`ProcessEngine.close`: SIGTERM, then SIGKILL).

Workers ignore SIGINT: Ctrl-C in a terminal reaches the whole process group, and it is the driver that decides
how a pass ends.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from boontrack._redact import redact

#: Times a job whose worker died is run again, on a new worker.
WORKER_RETRIES = 1
#: Seconds a worker is given to end after SIGTERM (it finishes a held section first) before SIGKILL.
TERMINATE_WAIT_S = 5.0


@dataclass(eq=False)
class Task:
    """One job given to the engine: what :meth:`ProcessEngine.submit` returns."""

    job: Any
    options: dict[str, Any]
    attempts: int = 0
    lost: list[str] = field(default_factory=list)


class _Worker:
    """A worker process and the driver's end of its pipe."""

    def __init__(self, context: Any, run: Callable[..., Any]) -> None:
        self.connection, child_end = context.Pipe()
        self.process = context.Process(
            target=_serve, args=(child_end, os.getpid(), run), daemon=True, name="boontrack-worker"
        )
        self.process.start()
        child_end.close()

    def stop(self) -> None:
        """Ask an idle worker to exit (it reads None)."""
        try:
            self.connection.send(None)
        except OSError:  # already gone
            pass

    def end_reason(self) -> str:
        self.process.join(TERMINATE_WAIT_S)
        code = self.process.exitcode
        if code is not None and code < 0:
            return f"killed by {signal.Signals(-code).name}"
        return f"exited with status {code}" if code is not None else "stopped answering"


class ProcessEngine:
    """``slots`` worker processes on this machine, started as jobs need them, each calling ``run(job, **options)``
    for the jobs it is given (a module-level function: a worker imports it by name)."""

    def __init__(self, slots: int, run: Callable[..., tuple[str, str | None]]) -> None:
        import multiprocessing

        from boontrack._bootstrap import available_cpus

        self.slots = slots
        self._run = run
        self._threads = max(1, available_cpus() // slots)  # each worker's share: no more threads than CPUs
        self._context = multiprocessing.get_context("spawn")
        self._idle: list[_Worker] = []
        self._busy: dict[_Worker, Task] = {}

    def submit(self, job: Any, *, force: bool, lock_timeout: float) -> Task:
        task = Task(job, {"force": force, "lock_timeout": lock_timeout, "threads": self._threads})
        self._start(task)
        return task

    def wait(self, handles: Sequence[Task], timeout: float | None = None) -> list[tuple[Task, tuple[str, str | None]]]:
        """The tasks of ``handles`` that finished, once at least one has (or ``timeout`` seconds passed: then
        possibly none). A task whose worker died is started again (:data:`WORKER_RETRIES`), or finishes as
        failed."""
        from multiprocessing.connection import wait

        wanted = set(handles)
        while True:
            workers = {w.connection: w for w, task in self._busy.items() if task in wanted}
            if not workers:
                return []
            ready = wait(list(workers), timeout)
            finished = []
            for connection in ready:
                worker = workers[connection]
                task = self._busy.pop(worker)
                try:
                    result = connection.recv()
                except (EOFError, OSError):  # the worker died with the job
                    result = self._lost(task, worker)
                else:
                    self._idle.append(worker)
                if result is not None:
                    finished.append((task, result))
            done = [(task, result) for task, result in finished if task in wanted]
            if done or not ready:
                return done

    def close(self) -> None:
        """End every worker: idle ones are asked to exit; busy ones get SIGTERM (a held section finishes
        first), then SIGKILL after :data:`TERMINATE_WAIT_S` seconds."""
        for worker in self._idle:
            worker.stop()
        for worker in self._busy:
            if worker.process.is_alive():
                os.kill(worker.process.pid, signal.SIGTERM)
        for worker in [*self._idle, *self._busy]:
            worker.process.join(TERMINATE_WAIT_S)
            if worker.process.is_alive():
                worker.process.kill()
                worker.process.join()
            worker.connection.close()
        self._idle.clear()
        self._busy.clear()

    def _start(self, task: Task) -> None:
        worker = self._idle.pop() if self._idle else _Worker(self._context, self._run)
        task.attempts += 1
        worker.connection.send((task.job, task.options))
        self._busy[worker] = task

    def _lost(self, task: Task, worker: _Worker) -> tuple[str, None] | None:
        """Start a task whose worker died again, or its result when it was lost too often."""
        task.lost.append(worker.end_reason())
        worker.connection.close()
        if task.attempts <= WORKER_RETRIES:
            self._start(task)
            return None
        return f"failed: worker lost {task.attempts} times ({redact('; '.join(task.lost))})", None


def _serve(connection: Any, driver: int, run: Callable[..., Any]) -> None:
    """A worker's life: jobs from the pipe, one at a time, each answered with its line, until the pipe gives
    None or closes."""
    from boontrack._signals import end_with_parent

    end_with_parent(driver)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    while True:
        try:
            message = connection.recv()
        except (EOFError, OSError):
            return
        if message is None:
            return
        job, options = message
        connection.send(run(job, **options))
