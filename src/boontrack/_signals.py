"""Signals: work that SIGINT and SIGTERM stop between batches, sections they wait for, and processes that end
with their parent.

- :func:`stop_on_signals`: SIGINT and SIGTERM received inside the block stop the work: :class:`Stopped` is raised
  in the main thread, and every batch of the bootstrap, in any thread, looks before it starts
  (:func:`before_batch`), so that only the batches already running finish.
- :func:`signals_held`: SIGINT and SIGTERM received inside the block take effect when it ends. The two-renames
  publication of a summary directory runs in one, so a signal never leaves it half done.
- :func:`end_with_parent`: a worker process gets SIGTERM when its parent (the driver) ends, however the parent
  ends, ``kill -9`` included.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

#: The signals a job's critical sections hold, and that end a pass.
STOPPING = (signal.SIGINT, signal.SIGTERM)
#: Linux ``prctl`` option: the signal a process gets when its parent ends.
_PR_SET_PDEATHSIG = 1
#: Seconds between two looks at the parent, where the kernel cannot tell (not Linux).
_PARENT_POLL_S = 0.5
#: Environment variable naming a file to which each batch that starts appends a line (for tests, see
#: :func:`before_batch`); unset, nothing is written and a batch costs one look at an event.
BATCH_LOG_VARIABLE = "BOONTRACK_BATCH_LOG"


class Stopped(KeyboardInterrupt):
    """Work stopped by SIGINT or SIGTERM inside :func:`stop_on_signals`: no batch of resamples started after the
    signal, and the batches running then finished."""

    def __init__(self, signum: int) -> None:
        self.signum = signum
        super().__init__(f"interrupted by {signal.Signals(signum).name}")


class _Stop:
    """The signal that asked the work to stop, seen by every thread."""

    def __init__(self) -> None:
        self.asked = threading.Event()
        self.signum = int(signal.SIGINT)


_STOP = _Stop()


class _BatchLog:
    """One line per batch started, ``started`` or ``started after the signal``, in the file of
    :data:`BATCH_LOG_VARIABLE` (opened on the first batch; a line is flushed as it is written)."""

    def __init__(self, path: str) -> None:
        self._path = path
        self._lock = threading.Lock()
        self._file: Any = None

    def note(self) -> None:
        with self._lock:
            if self._file is None:
                self._file = open(self._path, "a", buffering=1, encoding="utf-8")  # noqa: SIM115 - for the process
            # Read after the caller's look: a signal in between counts the batch as started after it.
            self._file.write("started after the signal\n" if _STOP.asked.is_set() else "started\n")


_BATCH_LOG = _BatchLog(os.environ[BATCH_LOG_VARIABLE]) if os.environ.get(BATCH_LOG_VARIABLE) else None


@contextlib.contextmanager
def stop_on_signals() -> Iterator[None]:
    """Run the block so that SIGINT and SIGTERM stop it between batches: the signal is recorded for every
    thread's :func:`before_batch`, and :class:`Stopped` is raised in the main thread. A signal this process
    ignores stays ignored (a shell runs a job in the background so, with SIGINT ignored, out of the reach of
    Ctrl-C). The handlers before are restored after the block, and the record cleared. Outside the main thread
    the block runs as it is."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, _frame: Any) -> None:
        _STOP.signum = signum
        _STOP.asked.set()
        raise Stopped(signum)

    heard = [signum for signum in STOPPING if signal.getsignal(signum) is not signal.SIG_IGN]
    previous = {signum: signal.signal(signum, stop) for signum in heard}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, signal.SIG_DFL if handler is None else handler)
        _STOP.asked.clear()


def raise_if_stopped() -> None:
    """Raise :class:`Stopped` when a signal asked the work to stop (:func:`stop_on_signals`)."""
    if _STOP.asked.is_set():
        raise Stopped(_STOP.signum)


def before_batch() -> None:
    """:func:`raise_if_stopped`, else the batch starts: a line in the batch log, when
    :data:`BATCH_LOG_VARIABLE` names one."""
    raise_if_stopped()
    if _BATCH_LOG is not None:
        _BATCH_LOG.note()


@functools.cache
def libc() -> Any:
    """The C library (Linux), None elsewhere."""
    return ctypes.CDLL(None, use_errno=True) if sys.platform.startswith("linux") else None


@contextlib.contextmanager
def signals_held() -> Iterator[None]:
    """Run the block with SIGINT and SIGTERM held: one received meanwhile is delivered (once) when it ends,
    to the handler that was there before, which then ends the process or raises as it would have.

    Only the main thread can set signal handlers; in another thread the block runs as it is (a signal is then
    handled by the main thread, which this block does not hold).
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[int] = []
    previous: dict[int, Any] = {}
    try:
        for signum in STOPPING:
            previous[signum] = signal.signal(signum, lambda number, _frame: received.append(number))
        yield
    finally:
        for held, handler in previous.items():
            signal.signal(held, signal.SIG_DFL if handler is None else handler)
        for number in dict.fromkeys(received):
            signal.raise_signal(number)


def end_with_parent(parent_pid: int) -> None:
    """Have this process get SIGTERM when its parent ``parent_pid`` ends, whatever ends it.

    Linux: ``PR_SET_PDEATHSIG`` (the kernel sends it; a parent already gone is checked right after). Elsewhere
    a daemon thread looks at the parent every :data:`_PARENT_POLL_S` seconds. SIGTERM rather than SIGKILL: a
    section in :func:`signals_held` finishes first.
    """
    library = libc()
    if library is not None and library.prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0) == 0:
        if os.getppid() != parent_pid:  # the parent ended before the request was made
            os.kill(os.getpid(), signal.SIGTERM)
        return
    threading.Thread(target=_watch_parent, args=(parent_pid,), daemon=True, name="boontrack-parent").start()


def _watch_parent(parent_pid: int) -> None:
    while os.getppid() == parent_pid:
        time.sleep(_PARENT_POLL_S)
    os.kill(os.getpid(), signal.SIGTERM)
