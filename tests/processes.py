"""For tests that run boontrack in real processes and signal them: one hang guard for every wait, and the command
line in a child with Python's own handling of SIGINT and SIGTERM."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

#: Hang guard: seconds a process may take to show up, answer or end on a loaded machine (a bound, not a timing).
BOUND_S = 120

#: ``boontrack`` in a child with Python's own handling of SIGINT and SIGTERM, whatever it inherited (an ignored or
#: blocked signal stays so across exec, and the command leaves an ignored one ignored; see the swap test in
#: ``tests/test_signals.py``): ``[sys.executable, "-c", BOONTRACK, *arguments]``.
BOONTRACK = (
    "import signal; signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM}); "
    "signal.signal(signal.SIGINT, signal.default_int_handler); signal.signal(signal.SIGTERM, signal.SIG_DFL); "
    "from boontrack.cli import main; main()"
)


def wait_for(condition: Callable[[], bool], what: str) -> None:
    """Wait until ``condition()`` holds, looking every 0.1 s; fail the test after :data:`BOUND_S` seconds."""
    deadline = time.monotonic() + BOUND_S
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"still waiting after {BOUND_S} s for {what}")
        time.sleep(0.1)


#: ``[sys.executable, "-c", WITH_PARENT, str(os.getpid()), *command]`` runs ``command`` so that it, and whatever it
#: starts, ends when the test process ends, however that ends: a pytest worker killed by SIGKILL (or by a SIGTERM
#: to the run's controller) left its MLflow servers running, since they run in a session of their own so that the
#: fixture can stop their uvicorn worker with them. This guard gets SIGTERM from the kernel when the test process
#: ends (``end_with_parent``) and passes it to its process group; start it with ``start_new_session=True``.
WITH_PARENT = """
import os, signal, subprocess, sys

def stop(signum, frame):
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    os.killpg(0, signal.SIGTERM)

signal.signal(signal.SIGTERM, stop)
from boontrack.integration import end_with_parent
end_with_parent(int(sys.argv[1]))
sys.exit(subprocess.Popen(sys.argv[2:]).wait())
"""
