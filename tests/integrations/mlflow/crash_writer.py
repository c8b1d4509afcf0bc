"""The writer the crash tests kill: one summary of a sweep, in a process forked from a server process that has
already imported MLflow and boontrack (importing them costs a writer ~3 s of CPU; the kill stays a real SIGKILL
of a real process)."""

from __future__ import annotations

import os
import traceback
from pathlib import Path

# Everything a summary imports, imported once by the fork server (the crash tests' WRITERS) before it forks.
import matplotlib.backends.backend_agg  # noqa: F401
import matplotlib.figure  # noqa: F401
import mlflow.tracking  # noqa: F401
import scipy.stats  # noqa: F401

import boontrack.analysis  # noqa: F401
import boontrack.plots  # noqa: F401
import boontrack.reports  # noqa: F401
from boontrack_mlflow import _sink, _source, summarize_sweep  # noqa: F401

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
