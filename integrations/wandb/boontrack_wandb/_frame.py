"""Shared by the API and offline sources: W&B runs (config, summary, history) translated for :mod:`boontrack.runframe`."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from boontrack.integration import (
    POINT_COLUMNS,
    SUMMARY_ROLE,
    MetricRequest,
    RunRecord,
    build_run_frame,
    is_summary_run,
    pick_values,
)

if TYPE_CHECKING:
    import pandas as pd

#: ``job_type`` of the aggregate runs boontrack writes; such runs are never read as input.
AGGREGATE_JOB_TYPE = "boontrack"
__all__ = ["AGGREGATE_JOB_TYPE", "SUMMARY_ROLE", "build_frame", "is_aggregate_run", "metric_points", "run_record"]


def is_aggregate_run(job_type: str | None, config: Mapping[str, Any]) -> bool:
    """True for a run boontrack wrote (its job type, or the summary marker in its config)."""
    return job_type == AGGREGATE_JOB_TYPE or is_summary_run(flatten(config))


def flatten(mapping: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested dicts -> ``a.b.c`` keys; wandb's own keys (leading ``_``) left out."""
    flat: dict[str, Any] = {}
    for key, value in mapping.items():
        if not prefix and str(key).startswith("_"):
            continue
        name = f"{prefix}{key}"
        if isinstance(value, Mapping) and "_type" not in value:
            flat.update(flatten(value, f"{name}."))
        else:
            flat[name] = value
    return flat


def _param_value(value: Any) -> Any:
    # Lists and media descriptions are kept as JSON text so that every cell is a hashable scalar.
    return json.dumps(value, sort_keys=True) if isinstance(value, (list, dict)) else value


#: Non-finite numbers as JSON text carries them (history served as JSON has no literal for them).
_NON_FINITE_TEXT = {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}


def _as_metric(value: Any) -> float | None:
    if isinstance(value, str):
        return _NON_FINITE_TEXT.get(value)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def metric_points(run_id: str, history: Iterable[Mapping[str, Any]], key: str) -> list[tuple[str, int, float]]:
    """The (run_id, step, value) points of ``key`` in a run's history rows (``_step``, else the row position)."""
    points = []
    for position, row in enumerate(history):
        value = _as_metric(row.get(key))
        if value is not None:
            step = row.get("_step")
            points.append((run_id, int(step) if isinstance(step, (int, float)) else position, value))
    return points


def run_record(
    *,
    run_id: str,
    status: str,
    created_at: Any,
    duration_s: float | None,
    config: Mapping[str, Any],
    summary: Mapping[str, Any],
    tags: Mapping[str, str],
) -> RunRecord:
    """One run as the shared layer takes it: config as ``params``, numeric summary values as ``metrics``."""
    metrics = {key: metric for key, value in flatten(summary).items() if (metric := _as_metric(value)) is not None}
    return RunRecord(
        run_id=run_id,
        status=status,
        created_at=created_at,
        duration_s=duration_s,
        params={k: _param_value(v) for k, v in flatten(config).items()},
        metrics=metrics,
        tags={k: str(v) for k, v in tags.items() if v not in (None, "")},
    )


def wandb_tags(*, group: str | None, job_type: str | None, sweep: str | None, tags: Iterable[str]) -> dict[str, str]:
    """W&B's grouping fields as ``tags.*`` columns; the run's tag list as one comma-separated ``tags.tags``."""
    return {"group": group or "", "job_type": job_type or "", "sweep": sweep or "", "tags": ",".join(sorted(tags))}


def build_frame(
    records: list[RunRecord],
    request: MetricRequest,
    histories: Callable[[], Mapping[str, list[tuple[str, int, float]]]],
) -> pd.DataFrame:
    """The run frame, with the values ``request.pick`` asks for (:func:`boontrack.integration.pick_values`);
    ``histories()`` gives each metric's points (:func:`metric_points`), read only when the pick needs them."""
    import pandas as pd

    def points() -> dict[str, pd.DataFrame]:
        return {key: pd.DataFrame(rows, columns=list(POINT_COLUMNS)) for key, rows in histories().items()}

    return pick_values(build_run_frame(records), request, points)
