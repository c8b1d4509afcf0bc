"""Shared by the API and offline sources: one W&B run (config, summary, history) -> one run-frame row."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from boontrack.backends import SUMMARY_ROLE_TAG, MetricRequest

if TYPE_CHECKING:
    import pandas as pd

#: ``job_type`` of the aggregate runs boontrack writes; such runs are never read as input.
AGGREGATE_JOB_TYPE = "boontrack"
SUMMARY_ROLE = "summary"


def is_aggregate_run(job_type: str | None, config: Mapping[str, Any]) -> bool:
    """True for a run boontrack wrote (its job type, or the role tag in its config)."""
    role = config.get(SUMMARY_ROLE_TAG)
    if role is None and isinstance(config.get("boontrack"), Mapping):  # the dotted key, nested by wandb
        role = config["boontrack"].get("role")
    return job_type == AGGREGATE_JOB_TYPE or role == SUMMARY_ROLE


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


def _as_metric(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def best_val_step(history: Iterable[Mapping[str, Any]], request: MetricRequest) -> tuple[float, float] | None:
    """(best val over the history, test at that same row), or None when no row has a numeric val.

    The first row reaching the best value wins (the checkpoint early stopping would keep).
    """
    best: tuple[float, float] | None = None
    for row in history:
        val = _as_metric(row.get(request.val))
        if val is None or math.isnan(val):
            continue
        if best is None or (val > best[0] if request.maximize else val < best[0]):
            test = _as_metric(row.get(request.test)) if request.test else val
            best = (val, math.nan if test is None else test)
    return best


def run_row(
    *,
    run_id: str,
    status: str,
    created_at: Any,
    duration_s: float | None,
    config: Mapping[str, Any],
    summary: Mapping[str, Any],
    tags: Mapping[str, str],
    request: MetricRequest,
    picked: tuple[float, float] | None = None,
) -> dict[str, Any]:
    """One row of the run frame. ``picked`` (val, test) from a history replaces the last-logged values."""
    row: dict[str, Any] = {
        "run_id": run_id,
        "status": (status or "unknown").lower(),
        "created_at": created_at,
        "duration_s": math.nan if duration_s is None else float(duration_s),
    }
    row.update({f"params.{k}": _param_value(v) for k, v in flatten(config).items()})
    for key, value in flatten(summary).items():
        metric = _as_metric(value)
        if metric is not None:
            row[f"metrics.{key}"] = metric
    # A metric no run has stays absent from the frame, so that the error lists the metrics there are.
    if picked is not None:
        row[f"metrics.{request.val}"] = picked[0]
        if request.test:
            row[f"metrics.{request.test}"] = picked[1]
    row.update({f"tags.{k}": str(v) for k, v in tags.items() if v not in (None, "")})
    return row


def wandb_tags(*, group: str | None, job_type: str | None, sweep: str | None, tags: Iterable[str]) -> dict[str, str]:
    """W&B's grouping fields as ``tags.*`` columns; the run's tag list as one comma-separated ``tags.tags``."""
    return {"group": group or "", "job_type": job_type or "", "sweep": sweep or "", "tags": ",".join(sorted(tags))}


def build_frame(rows: list[dict[str, Any]], request: MetricRequest) -> pd.DataFrame:
    """The run frame: contract columns first, then params, metrics and tags, with the contract's dtypes."""
    import pandas as pd

    base = ["run_id", "status", "created_at", "duration_s"]
    wanted = [f"metrics.{name}" for name in (request.val, request.test) if name]
    frame = pd.DataFrame.from_records(rows) if rows else pd.DataFrame(columns=base + wanted)
    extra = sorted(c for c in frame.columns if c not in base)
    frame = frame.reindex(columns=base + extra)
    frame["run_id"] = frame["run_id"].astype("string")
    frame["status"] = frame["status"].astype("string")
    frame["created_at"] = pd.to_datetime(frame["created_at"], utc=True, errors="coerce").astype("datetime64[ns, UTC]")
    frame["duration_s"] = frame["duration_s"].astype("float64")
    for column in extra:
        if column.startswith("metrics."):
            frame[column] = frame[column].astype("float64")
        elif column.startswith("tags."):
            frame[column] = frame[column].astype("string")
    return frame
