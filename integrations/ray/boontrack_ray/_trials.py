"""Ray Tune trials translated for :mod:`boontrack.runframe`: the one translation the callback and the source share.

A trial is read through the attributes that both a live trial (in a callback) and a trial restored by
``tune.ExperimentAnalysis`` have: ``trial_id``, ``status``, ``config``, ``last_result`` and ``get_error()``. Its
per-iteration results are a table with one row per reported iteration (``training_iteration``), nested keys
joined with ``/`` as Ray's own result tables and ``MLflowLoggerCallback`` join them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from boontrack._optional import import_optional
from boontrack.runframe import (
    POINT_COLUMNS,
    RunRecord,
    apply_best_val_step,
    build_run_frame,
    pick_best_val_step,
)

if TYPE_CHECKING:
    import pandas as pd

    from boontrack.backends import MetricRequest

#: Tune's trial statuses as the run frame names them; the others (``RUNNING``, ``PENDING``, ``PAUSED``) are
#: lower-cased. ``TERMINATED`` is a trial that ended without error, also when a scheduler stopped it early.
STATUSES = {"TERMINATED": "finished", "ERROR": "failed"}
#: Tune's iteration counter: the step of a result.
ITERATION = "training_iteration"
#: Separator of nested keys, as in Ray's result tables (``config/lr``) and ``MLflowLoggerCallback``'s params.
DELIMITER = "/"

_tune_utils = import_optional("ray.tune.utils", extra="ray", needed_for="reading Ray Tune trials")


def flatten(mapping: Mapping[str, Any]) -> dict[str, Any]:
    """Nested dicts -> ``a/b`` keys, as Ray flattens them."""
    return _tune_utils.flatten_dict(dict(mapping), delimiter=DELIMITER)


def _number(value: Any) -> float | None:
    """A reported value as a metric: numbers only (booleans such as ``done`` are not metrics)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def _param(value: Any) -> Any:
    """A config value as one hashable cell: scalars as they are, lists as JSON, anything else as its text."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, (list, tuple)):
        return json.dumps(list(value), default=str)
    return str(value)


def error_line(trial: Any) -> str | None:
    """The last line of an errored trial's error (``RuntimeError: diverged``), None for other trials."""
    if trial.status != "ERROR":
        return None
    lines = [line.strip() for line in str(trial.get_error() or "").splitlines() if line.strip()]
    return lines[-1] if lines else "the trial raised an error (no error file)"


def flat_result(result: Mapping[str, Any] | None) -> dict[str, Any]:
    """A reported result, flattened, without the config Tune adds to it."""
    return flatten({key: value for key, value in (result or {}).items() if key != "config"})


def trial_record(trial: Any, last_reported: Mapping[str, float] | None = None) -> RunRecord:
    """One trial as the shared layer takes it: config as ``params.*``, the last result's numbers as
    ``metrics.*`` (completed by ``last_reported``, the last value of a metric the last result lacks), its error's
    last line as ``tags.error``."""
    result = flat_result(trial.last_result)
    metrics = {key: number for key, value in result.items() if (number := _number(value)) is not None}
    metrics = {**(last_reported or {}), **metrics}
    duration = _number(result.get("time_total_s"))
    finished_at = _number(result.get("timestamp"))
    created_at = None
    if finished_at is not None:  # the last report's time less the training time: when training started
        created_at = datetime.fromtimestamp(finished_at - (duration or 0.0), timezone.utc)
    error = error_line(trial)
    return RunRecord(
        run_id=str(trial.trial_id),
        status=STATUSES.get(trial.status, str(trial.status).lower()),
        created_at=created_at,
        duration_s=duration,
        params={key: _param(value) for key, value in flatten(trial.config or {}).items()},
        metrics=metrics,
        tags={"trial_name": str(trial), **({"error": error} if error else {})},
    )


def history_row(result: Mapping[str, Any], keys: Iterable[str]) -> dict[str, Any]:
    """What a per-iteration result contributes to the history: its iteration and the values of ``keys``."""
    flat = flat_result(result)
    return {key: flat[key] for key in (ITERATION, *keys) if key in flat}


def history_points(trial_id: str, history: pd.DataFrame, key: str) -> pd.DataFrame:
    """The (run_id, step, value) points of ``key`` in a trial's per-iteration table, step = the iteration.

    Rows where ``key`` is NaN are not points: a result table cannot tell a value reported as NaN from a key
    not reported in that iteration (a test score reported once, after the last epoch, is NaN in the others).
    """
    import numpy as np
    import pandas as pd

    if key not in history.columns:
        return pd.DataFrame(columns=list(POINT_COLUMNS))
    values = pd.to_numeric(history[key], errors="coerce").to_numpy(dtype=np.float64)
    if ITERATION in history.columns:
        steps = pd.to_numeric(history[ITERATION], errors="coerce").fillna(-1).to_numpy(dtype=np.int64)
    else:
        steps = np.arange(1, len(history) + 1, dtype=np.int64)
    reported = ~np.isnan(values)
    return pd.DataFrame({"run_id": trial_id, "step": steps[reported], "value": values[reported]})


def last_reported(history: pd.DataFrame | None, keys: Iterable[str]) -> dict[str, float]:
    """The last value of each of ``keys`` that the per-iteration table holds (NaN cells are not values)."""
    import pandas as pd

    found = {}
    for key in keys:
        if history is not None and key in history.columns:
            values = pd.to_numeric(history[key], errors="coerce").dropna()
            if len(values):
                found[key] = float(values.iloc[-1])
    return found


def build_frame(
    trials: Iterable[Any], request: MetricRequest, load_histories: Callable[[], Mapping[str, pd.DataFrame]]
) -> pd.DataFrame:
    """The run frame of ``trials``; ``load_histories()`` gives each trial's per-iteration table by trial id.

    ``pick="last"``: each metric's last reported value, as trackers keep it (a trial whose last result lacks
    ``val`` or ``test``, e.g. a test score reported on its own after the last epoch, takes the metric's last
    value from its history; histories are read only when some trial needs them). ``pick="best_val_step"``: the
    values at each trial's best validation iteration (:func:`boontrack.runframe.pick_best_val_step`).
    """
    import pandas as pd

    trials = list(trials)
    keys = [key for key in (request.val, request.test) if key is not None]
    incomplete = any(trial.last_result and not set(keys) <= set(flat_result(trial.last_result)) for trial in trials)
    histories = load_histories() if request.pick == "best_val_step" or incomplete else {}
    frame = build_run_frame([trial_record(t, last_reported(histories.get(t.trial_id), keys)) for t in trials])
    if request.pick != "best_val_step":
        return frame

    def points(key: str) -> pd.DataFrame:
        parts = [history_points(str(t.trial_id), histories[t.trial_id], key) for t in trials if t.trial_id in histories]
        return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=list(POINT_COLUMNS))

    picked = pick_best_val_step(
        points(request.val), points(request.test) if request.test else None, maximize=request.maximize
    )
    return apply_best_val_step(frame, picked, request)
