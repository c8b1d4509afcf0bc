"""The metric and mode a Tune experiment was run with, read from its ``tuner.pkl`` without running its code.

Tune hands its callbacks neither ``TuneConfig.metric`` nor ``mode``, and its experiment state (JSON) does not
hold them; the ``tuner.pkl`` that ``tune.Tuner`` writes into the experiment directory does, inside a pickle
that also names the trainable, the searcher and the scheduler. Unpickling it for real would import and call
whatever those are. :func:`tune_goal` reads it with an unpickler that imports nothing: every class the pickle
names becomes an inert stand-in that only keeps its state, and the ``TuneConfig``'s state gives the two fields.
"""

from __future__ import annotations

import io
import pickle
from pathlib import Path
from typing import Any

#: ``tuner.pkl`` is a few kilobytes; a larger file is not read.
_MAX_BYTES = 4 * 1024 * 1024
TUNER_FILE = "tuner.pkl"


class _StandIn:
    """An instance of a class the pickle names: its arguments and state, kept, never acted on."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.args = args

    def __setstate__(self, state: Any) -> None:
        self.state = state


class _InertUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        return type(name, (_StandIn,), {"__module__": module})


def tune_goal(experiment_dir: str | Path) -> tuple[str, str] | None:
    """``(metric, mode)`` of the ``TuneConfig`` the experiment in ``experiment_dir`` (a local directory) was run
    with; None when it set no metric or mode there (they may be the searcher's own), or when the file is
    missing or not what ``tune.Tuner`` writes."""
    path = Path(experiment_dir) / TUNER_FILE
    try:
        if path.stat().st_size > _MAX_BYTES:
            return None
        state = _InertUnpickler(io.BytesIO(path.read_bytes())).load()
    except (OSError, pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError, IndexError, KeyError):
        return None
    config = state.get("_tune_config") if isinstance(state, dict) else None
    fields = getattr(config, "state", None)
    if type(config).__name__ != "TuneConfig" or not isinstance(fields, dict):
        return None
    metric, mode = fields.get("metric"), fields.get("mode")
    if isinstance(metric, str) and mode in ("max", "min"):
        return metric, mode
    return None
