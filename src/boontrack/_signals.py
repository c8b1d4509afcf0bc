"""Signals: sections that SIGINT and SIGTERM wait for, and processes that end with their parent.

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
        for signum, handler in previous.items():
            signal.signal(signum, signal.SIG_DFL if handler is None else handler)
        for signum in dict.fromkeys(received):
            signal.raise_signal(signum)


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
