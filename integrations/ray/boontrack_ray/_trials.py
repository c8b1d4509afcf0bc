"""Ray Tune trials translated for :mod:`boontrack.runframe`: the one translation the callback and the source share.

A trial is read through the attributes that both a live trial (in a callback) and a trial restored by
``tune.ExperimentAnalysis`` have: ``trial_id``, ``status``, ``config``, ``last_result`` and ``get_error()``. Its
per-iteration results are a table with one row per reported iteration (``training_iteration``), nested keys
joined with ``/`` as Ray's own result tables and ``MLflowLoggerCallback`` join them.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from boontrack.integration import RunRecord, build_run_frame, import_optional, pick_values

if TYPE_CHECKING:
    import pandas as pd

    from boontrack.integration import MetricRequest

#: Tune's trial statuses as the run frame names them; the others (``RUNNING``, ``PENDING``, ``PAUSED``) are
#: lower-cased. ``TERMINATED`` is a trial that ended without error, also when a scheduler stopped it early.
STATUSES = {"TERMINATED": "finished", "ERROR": "failed"}
#: Tune's iteration counter: the step of a result.
ITERATION = "training_iteration"
#: Separator of nested keys, as in Ray's result tables (``config/lr``) and ``MLflowLoggerCallback``'s params.
DELIMITER = "/"
_MISSING = object()

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
    reported = {key: value for key, value in (last_reported or {}).items() if not math.isnan(value)}
    metrics = {**reported, **metrics}
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
    """What a per-iteration result contributes to the history: its iteration and the values of ``keys``
    (``a/b`` looks into nested results), read without copying the result."""
    row = {}
    for key in (ITERATION, *keys):
        value: Any = result.get(key, _MISSING)  # a key reported with a "/" in its name
        if value is _MISSING:
            value = result
            for part in key.split(DELIMITER):
                value = value.get(part, _MISSING) if isinstance(value, Mapping) else _MISSING
        if value is not _MISSING:
            row[key] = value
    return row


def long_history(histories: Mapping[str, pd.DataFrame], keys: Sequence[str]) -> pd.DataFrame:
    """Every trial's per-iteration table as one frame: ``run_id``, ``step`` (the iteration; the row's position
    in its table where there is none) and one float column per key (NaN where that iteration did not report it:
    a result table cannot tell a value reported as NaN from a key not reported)."""
    import numpy as np
    import pandas as pd

    tables = {trial: table.reindex(columns=[ITERATION, *keys]) for trial, table in histories.items() if len(table)}
    if not tables:
        return pd.DataFrame(
            {"run_id": pd.Series(dtype=str), "step": pd.Series(dtype=np.int64), **dict.fromkeys(keys, np.nan)}
        )
    long = pd.concat(tables, names=["run_id", None]).reset_index(level="run_id")
    position = long.groupby("run_id").cumcount() + 1
    step = pd.to_numeric(long[ITERATION], errors="coerce").fillna(position)
    out = pd.DataFrame({"run_id": long["run_id"].astype(str).to_numpy(), "step": step.to_numpy(dtype=np.int64)})
    for key in keys:
        out[key] = pd.to_numeric(long[key], errors="coerce").to_numpy(dtype=np.float64)
    return out


def build_frame(
    trials: Iterable[Any], request: MetricRequest, load_histories: Callable[[], Mapping[str, pd.DataFrame]]
) -> pd.DataFrame:
    """The run frame of ``trials``; ``load_histories()`` gives each trial's per-iteration table by trial id.

    Each metric's last reported value, as trackers keep it (a trial whose last result lacks ``val`` or
    ``test``, e.g. a test score reported on its own after the last epoch, takes the metric's last value from its
    history; histories are read only when some trial, or the pick, needs them), then the values ``request.pick``
    asks for (:func:`boontrack.integration.pick_values`; step = the iteration).
    """
    trials = list(trials)
    keys = list(request.metrics)
    incomplete = any(trial.last_result and not set(keys) <= set(flat_result(trial.last_result)) for trial in trials)
    if not (incomplete or request.needs_history):
        return build_run_frame([trial_record(trial) for trial in trials])
    history = long_history(load_histories(), keys)
    last = history.groupby("run_id")[keys].last().to_dict("index")  # last() skips NaN: the last reported value
    frame = build_run_frame([trial_record(t, last.get(str(t.trial_id))) for t in trials])

    return pick_values(frame, request, lambda: metric_points(history, keys))


def metric_points(history: pd.DataFrame, keys: Sequence[str]) -> dict[str, pd.DataFrame]:
    """Each key's points (:data:`~boontrack.integration.POINT_COLUMNS`) in a :func:`long_history`: the
    iterations that reported it."""
    return {
        key: history.loc[history[key].notna(), ["run_id", "step", key]].rename(columns={key: "value"}) for key in keys
    }


def trial_histories(
    histories: Mapping[str, pd.DataFrame], metrics: Sequence[str], run_ids: Sequence[str]
) -> dict[str, pd.DataFrame]:
    """What a Tune source's ``read_histories`` gives: each of ``metrics`` in the per-iteration tables
    ``histories`` (by trial id) of the trials ``run_ids``, step = the iteration (:func:`long_history`)."""
    wanted = set(run_ids)
    kept = {trial: table for trial, table in histories.items() if str(trial) in wanted}
    return metric_points(long_history(kept, list(metrics)), metrics)
