"""The writer the crash tests kill: one summary of a sweep, in a process forked from a server process that has
already imported MLflow and boontrack (importing them costs a writer ~3 s of CPU; the kill stays a real SIGKILL
of a real process)."""

from __future__ import annotations

import os
import traceback
from pathlib import Path

from boontrack_mlflow import summarize_sweep

#: Everything a summary imports, imported once by the fork server (the crash tests' WRITERS) before it forks.
#: Installed modules only: Python 3.11's fork server does not take the tests' ``sys.path``, and a module it
#: cannot import (this one) it skips without a word, leaving every writer to import it all again.
PRELOAD = [
    "matplotlib.backends.backend_agg",
    "matplotlib.figure",
    "mlflow.tracking",
    "scipy.stats",
    "boontrack.analysis",
    "boontrack.plots",
    "boontrack.reports",
    "boontrack_mlflow._sink",
    "boontrack_mlflow._source",
]

#: What the writer summarizes with (the tests' SPEC).
SPEC = {"val": "val_acc", "test": "test_acc", "n": (1, 3), "n_resamples": 200}


def write(parent_id: str, uri: str, held_wait_s: int, report: str) -> None:
    """Summarize ``parent_id`` at ``uri`` with no retry; a failure's traceback goes to ``report``."""
    os.environ["MLFLOW_HTTP_REQUEST_MAX_RETRIES"] = "0"
    os.environ["MLFLOW_HTTP_REQUEST_TIMEOUT"] = str(held_wait_s)
    try:
        summarize_sweep(parent_id, tracking_uri=uri, raise_on_error=True, **SPEC)
    except BaseException:
        Path(report).write_text(traceback.format_exc())
        raise
