"""Reading MLflow runs into the run frame, and per-epoch histories for ``pick="best_val_step"``."""

from __future__ import annotations

import contextvars
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import pandas as pd

from boontrack.backends import SUMMARY_ROLE_TAG, MetricRequest

#: The largest page MLflow accepts: the fewest requests (the search cost grows with every page's offset).
SEARCH_PAGE_SIZE = 50_000
#: Read timeout of one search request against a server. A 10,000-run page took over 10 s on a busy machine,
#: so the interactive request timeout (which still bounds the quick calls made before, e.g. resolving the
#: experiment, so a hung server is found out fast) would fail large sweeps. A search that timed out is not
#: retried unless the job's retry budget (``BOONTRACK_MLFLOW_MAX_WAIT``) still covers another attempt, so a
#: server hanging on the search holds a job for about this long, not three times as long.
SEARCH_TIMEOUT_S = 120
SEARCH_ENDPOINT = "/api/2.0/mlflow/runs/search"
#: The server's get-history-bulk route takes at most 100 run ids and returns at most 25,000 points.
HISTORY_RUNS_PER_REQUEST = 100
HISTORY_POINTS_PER_REQUEST = 25_000
#: get-history-bulk requests in flight at once: a server with several workers answers them in parallel, and
#: a small number keeps one job from occupying all of a shared server's workers.
HISTORY_CONCURRENCY = 4
#: Run ids per query against an SQL store (well below SQLite's bound-parameter limit).
HISTORY_RUNS_PER_QUERY = 500

HISTORY_COLUMNS = ["run_id", "step", "timestamp", "value"]
PARENT_RUN_TAG = "mlflow.parentRunId"


def read_run_frame(
    client: Any, experiment_id: str, parent_run_id: str | None
) -> tuple[pd.DataFrame, dict[str, dict[str, int]]]:
    """The run frame of the experiment's active runs (children of ``parent_run_id`` only, when given), and the
    step of each run's latest point of each metric (run id -> metric -> step; a run missing from it may have
    any history).

    Against a server, the search's JSON goes straight into the frame through MLflow's own request helper (its
    auth, TLS and retries), skipping MLflow's entity objects: 10,000 runs read in about half the time. Against
    an SQL store, ``MlflowClient.search_runs``.
    """
    filter_string = f"tags.mlflow.parentRunId = '{parent_run_id}'" if parent_run_id else ""
    if _is_rest(client):
        rows = [_from_json(run) for run in _rest_search(client, experiment_id, filter_string)]
    else:
        rows = [_from_entity(run) for run in _client_search(client, experiment_id, filter_string)]
    steps = {row[0]: row[7] for row in rows if row[7] is not None}
    return _frame([row[:7] for row in rows]), steps


def _client_search(client: Any, experiment_id: str, filter_string: str) -> list[Any]:
    from mlflow.entities import ViewType

    runs: list[Any] = []
    token = None
    while True:
        page = client.search_runs(
            [experiment_id],
            filter_string=filter_string,
            run_view_type=ViewType.ACTIVE_ONLY,
            max_results=SEARCH_PAGE_SIZE,
            page_token=token,
        )
        runs.extend(page)
        token = page.token
        if not token:
            return runs


def _rest_search(client: Any, experiment_id: str, filter_string: str) -> list[dict]:
    from mlflow.utils.rest_utils import http_request, verify_rest_response

    store = client._tracking_client.store
    body: dict[str, Any] = {
        "experiment_ids": [experiment_id],
        "filter": filter_string,
        "run_view_type": "ACTIVE_ONLY",
        "max_results": SEARCH_PAGE_SIZE,
    }
    runs: list[dict] = []
    while True:
        response = http_request(store.get_host_creds(), SEARCH_ENDPOINT, "POST", json=body, timeout=SEARCH_TIMEOUT_S)
        page = verify_rest_response(response, SEARCH_ENDPOINT).json()
        runs.extend(page.get("runs", ()))
        body["page_token"] = page.get("next_page_token")
        if not body["page_token"]:
            return runs


#: One run as plain values: run_id, status, start_ms, end_ms, params, metrics, tags (the frame's part), and
#: the step of each metric's latest point (None when unknown).
_Row = tuple[str, str, Any, Any, dict, dict, dict, "dict | None"]


def _from_entity(run: Any) -> _Row:
    info, data = run.info, run.data
    metric_objects = getattr(data, "_metric_objs", None)  # MLflow's Metric objects carry the latest step
    steps = None if metric_objects is None else {m.key: int(m.step) for m in metric_objects}
    return info.run_id, info.status, info.start_time, info.end_time, data.params, data.metrics, data.tags, steps


def _from_json(run: dict) -> _Row:
    info, data = run["info"], run.get("data", {})
    metrics = data.get("metrics", ())
    return (
        info["run_id"],
        info["status"],
        info.get("start_time"),
        info.get("end_time"),
        {p["key"]: p["value"] for p in data.get("params", ())},
        {m["key"]: float(m["value"]) for m in metrics},  # NaN and inf arrive as strings
        {t["key"]: t["value"] for t in data.get("tags", ())},
        {m["key"]: int(m.get("step", 0)) for m in metrics},
    )


def _frame(rows: Sequence[_Row]) -> pd.DataFrame:
    """The run frame of ``boontrack.backends`` from plain rows, without boontrack's own runs (any
    ``boontrack.role``) and without runs that are the parent of another run read."""
    # A run with child runs is a sweep's parent (a container, not a trial): left out, so that reading a whole
    # experiment does not count it as a dropped run. Removed before the frame is built, as boontrack's own
    # runs are, so that their metrics do not leave empty columns behind.
    parents = {row[6].get(PARENT_RUN_TAG) for row in rows}
    rows = [row for row in rows if SUMMARY_ROLE_TAG not in row[6] and row[0] not in parents]
    run_ids, statuses, starts, ends, params, metrics, tags = zip(*rows) if rows else ((),) * 7
    start_ms = np.array([np.nan if t is None else float(t) for t in starts], dtype=float)
    end_ms = np.array([np.nan if t is None else float(t) for t in ends], dtype=float)
    base = pd.DataFrame(
        {
            "run_id": pd.Series(run_ids, dtype="str"),
            "status": pd.Series(statuses, dtype="str").str.lower(),
            "created_at": pd.to_datetime(start_ms, unit="ms", utc=True).as_unit("ns"),
            # a running run has no end time yet: its duration is unknown, not "so far"
            "duration_s": (end_ms - start_ms) / 1000.0,
        }
    )
    parts = [base]
    for prefix, records in (("params.", params), ("metrics.", metrics), ("tags.", tags)):
        if any(records):
            parts.append(pd.DataFrame.from_records(list(records), index=base.index).add_prefix(prefix))
    return pd.concat(parts, axis=1)


def metric_histories(client: Any, run_ids: Sequence[str], key: str) -> pd.DataFrame:
    """Every logged point of metric ``key`` for ``run_ids``: columns run_id, step, timestamp, value.

    One request per 100 runs against a server (the UI's get-history-bulk route), one query per 500 runs
    against an SQL store; per-run ``get_metric_history`` (about 7 ms a run) only for stores without either.
    """
    if not run_ids:
        return pd.DataFrame({c: [] for c in HISTORY_COLUMNS})
    store = client._tracking_client.store
    if _is_rest(client):
        rows = _rest_histories(client, store, list(run_ids), key)
    elif hasattr(store, "get_metric_history_bulk"):
        rows = []
        for start in range(0, len(run_ids), HISTORY_RUNS_PER_QUERY):
            chunk = list(run_ids[start : start + HISTORY_RUNS_PER_QUERY])
            points = store.get_metric_history_bulk(chunk, key, max_results=None)
            rows.extend((p.run_id, p.step, p.timestamp, p.value) for p in points)
    else:
        rows = [
            (run_id, m.step, m.timestamp, m.value)
            for run_id in run_ids
            for m in client.get_metric_history(run_id, key)
        ]
    frame = pd.DataFrame.from_records(rows, columns=HISTORY_COLUMNS)
    return frame.astype({"run_id": "str", "step": "int64", "timestamp": "int64", "value": "float64"})


def _is_rest(client: Any) -> bool:
    """Whether the client talks to a tracking server (REST) rather than to a store in-process."""
    return hasattr(client._tracking_client.store, "get_host_creds")


def _rest_histories(client: Any, store: Any, run_ids: list[str], key: str) -> list[tuple]:
    """get-history-bulk for ``run_ids`` in chunks of 100, :data:`HISTORY_CONCURRENCY` requests at a time."""
    pending = [run_ids[i : i + HISTORY_RUNS_PER_REQUEST] for i in range(0, len(run_ids), HISTORY_RUNS_PER_REQUEST)]
    rows: list[tuple] = []
    with ThreadPoolExecutor(max_workers=HISTORY_CONCURRENCY) as pool:
        while pending:
            # Each request runs in a copy of the caller's context, taken here: the job's retry budget goes along.
            futures = [pool.submit(contextvars.copy_context().run, _history_chunk, store, c, key) for c in pending]
            answers = [future.result() for future in futures]
            pending = []
            for chunk, points in answers:
                if len(points) < HISTORY_POINTS_PER_REQUEST:
                    rows.extend(
                        (p["run_id"], int(p.get("step", 0)), int(p["timestamp"]), float(p["value"])) for p in points
                    )
                elif len(chunk) > 1:  # truncated: split the chunk until each answer is complete
                    half = len(chunk) // 2
                    pending.extend([chunk[:half], chunk[half:]])
                else:  # one run with a very long history: the paged per-run call
                    rows.extend(
                        (chunk[0], m.step, m.timestamp, m.value) for m in client.get_metric_history(chunk[0], key)
                    )
    return rows


def _history_chunk(store: Any, chunk: list[str], key: str) -> tuple[list[str], list[dict]]:
    from mlflow.utils.rest_utils import http_request, verify_rest_response

    endpoint = "/ajax-api/2.0/mlflow/metrics/get-history-bulk"
    response = http_request(
        store.get_host_creds(), endpoint, "GET",
        params={"run_id": chunk, "metric_key": key, "max_results": HISTORY_POINTS_PER_REQUEST},
    )  # fmt: skip
    return chunk, verify_rest_response(response, endpoint).json().get("metrics", [])


def pick_best_val_step(
    frame: pd.DataFrame, request: MetricRequest, val_history: pd.DataFrame, test_history: pd.DataFrame | None
) -> pd.DataFrame:
    """Replace ``metrics.<val>`` by its best value over each run's history and ``metrics.<test>`` by the test
    value logged at that step (the pairing of the Boo_n paper).

    The best step is the earliest one reaching the best value. A test metric logged once (e.g. evaluated after
    restoring the best checkpoint) is taken as is; a test history without a point at the best step gives NaN,
    so the run is dropped, with its reason, as missing the test metric. NaN points in a history are ignored.
    """
    val_history = val_history.dropna(subset=["value"])
    order = val_history.sort_values(
        ["run_id", "value", "step", "timestamp"], ascending=[True, not request.maximize, True, True]
    )
    best = order.drop_duplicates("run_id", keep="first").set_index("run_id")
    out = frame.copy()
    val_col = f"metrics.{request.val}"
    out[val_col] = out["run_id"].map(best["value"]).astype("float64")
    if request.test is None or test_history is None:
        return out

    test_history = test_history.dropna(subset=["value"])
    latest = test_history.sort_values(["run_id", "step", "timestamp"]).drop_duplicates(["run_id", "step"], keep="last")
    points_per_run = latest.groupby("run_id").size()
    single = latest[latest["run_id"].map(points_per_run).eq(1).to_numpy()].set_index("run_id")["value"]
    at_step = latest.merge(best["step"].rename("best_step"), left_on="run_id", right_index=True)
    at_step = at_step[at_step["step"].eq(at_step["best_step"]).to_numpy()].set_index("run_id")["value"]
    paired = out["run_id"].map(at_step).astype("float64")
    fallback = out["run_id"].map(single).astype("float64")
    out[f"metrics.{request.test}"] = paired.where(paired.notna(), fallback)
    return out
