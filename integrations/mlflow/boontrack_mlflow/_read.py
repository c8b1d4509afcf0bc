"""Reading MLflow runs into the run frame, and per-epoch histories for ``pick="best_val_step"``."""

from __future__ import annotations

import contextvars
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, NamedTuple

import pandas as pd

from boontrack.integration import RunRecord, build_run_frame

#: The largest page MLflow accepts: the fewest requests (the search cost grows with every page's offset).
SEARCH_PAGE_SIZE = 50_000
#: Read timeout of one search request against a server. A 10,000-run page took over 10 s on a busy machine,
#: so the interactive request timeout (which still bounds the quick calls made before, e.g. resolving the
#: experiment, so a hung server is found out fast) would fail large sweeps. A search that timed out is not
#: retried: a second attempt would exceed the job's retry budget (``BOONTRACK_MLFLOW_MAX_WAIT``, 60 s by
#: default), so a server hanging on the search fails the job after this long.
SEARCH_TIMEOUT_S = 60
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

    A run with child runs is a sweep's parent (a container, not a trial): it is left out, so that reading a
    whole experiment does not count it as a dropped run; boontrack's own runs are left out by
    :func:`boontrack.runframe.build_run_frame`. Against a server, the search's JSON goes straight into the
    frame through MLflow's own request helper (its auth, TLS and retries), skipping MLflow's entity objects:
    10,000 runs read in about half the time. Against an SQL store, ``MlflowClient.search_runs``.
    """
    filter_string = f"tags.mlflow.parentRunId = '{parent_run_id}'" if parent_run_id else ""
    read: list[tuple[RunRecord, dict[str, int] | None]]
    if _is_rest(client):
        read = [_from_json(run) for run in _rest_search(client, [experiment_id], filter_string)]
    else:
        read = [_from_entity(run) for run in _client_search(client, [experiment_id], filter_string)]
    parents = {record.tags.get(PARENT_RUN_TAG) for record, _ in read}
    steps: dict[str, dict[str, int]] = {record.run_id: latest for record, latest in read if latest is not None}
    return build_run_frame([record for record, _ in read if record.run_id not in parents]), steps


class SearchedRun(NamedTuple):
    """What a search says of a run besides its data: enough to find sweeps and build change tokens."""

    run_id: str
    experiment_id: str
    run_name: str | None
    status: str
    start_time: int | None
    end_time: int | None
    tags: dict[str, str]


def search_runs(client: Any, experiment_ids: Sequence[str], filter_string: str) -> list[SearchedRun]:
    """The active runs of the experiments that ``filter_string`` selects, in pages of :data:`SEARCH_PAGE_SIZE`
    (the search's own timeout, :data:`SEARCH_TIMEOUT_S`, against a server)."""
    if _is_rest(client):
        return [
            SearchedRun(
                run["info"]["run_id"],
                str(run["info"]["experiment_id"]),
                run["info"].get("run_name"),
                run["info"]["status"],
                _millis(run["info"].get("start_time")),
                _millis(run["info"].get("end_time")),
                {t["key"]: t["value"] for t in run.get("data", {}).get("tags", ())},
            )
            for run in _rest_search(client, experiment_ids, filter_string)
        ]
    return [
        SearchedRun(
            run.info.run_id,
            str(run.info.experiment_id),
            run.info.run_name,
            run.info.status,
            _millis(run.info.start_time),
            _millis(run.info.end_time),
            dict(run.data.tags),
        )
        for run in _client_search(client, experiment_ids, filter_string)
    ]


def _millis(value: Any) -> int | None:
    """A time in milliseconds as an int (the REST search sends it as a string), None when absent."""
    return None if value is None else int(value)


def _client_search(client: Any, experiment_ids: Sequence[str], filter_string: str) -> list[Any]:
    from mlflow.entities import ViewType

    runs: list[Any] = []
    token = None
    while True:
        page = client.search_runs(
            list(experiment_ids),
            filter_string=filter_string,
            run_view_type=ViewType.ACTIVE_ONLY,
            max_results=SEARCH_PAGE_SIZE,
            page_token=token,
        )
        runs.extend(page)
        token = page.token
        if not token:
            return runs


def _rest_search(client: Any, experiment_ids: Sequence[str], filter_string: str) -> list[dict]:
    from mlflow.utils.rest_utils import http_request, verify_rest_response

    store = client._tracking_client.store
    body: dict[str, Any] = {
        "experiment_ids": list(experiment_ids),
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


def _from_entity(run: Any) -> tuple[RunRecord, dict[str, int] | None]:
    """The run, and the step of each metric's latest point (MLflow's Metric objects carry it)."""
    info, data = run.info, run.data
    metric_objects = getattr(data, "_metric_objs", None)
    steps = None if metric_objects is None else {m.key: int(m.step) for m in metric_objects}
    record = _record(info.run_id, info.status, info.start_time, info.end_time, data.params, data.metrics, data.tags)
    return record, steps


def _from_json(run: dict) -> tuple[RunRecord, dict[str, int]]:
    """The run, and the step of each metric's latest point, from the search's JSON."""
    info, data = run["info"], run.get("data", {})
    metrics = data.get("metrics", ())
    record = _record(
        info["run_id"],
        info["status"],
        info.get("start_time"),
        info.get("end_time"),
        {p["key"]: p["value"] for p in data.get("params", ())},
        {m["key"]: float(m["value"]) for m in metrics},  # NaN and inf arrive as strings
        {t["key"]: t["value"] for t in data.get("tags", ())},
    )
    return record, {m["key"]: int(m.get("step", 0)) for m in metrics}


def _record(run_id: str, status: str, start_ms: Any, end_ms: Any, params: dict, metrics: dict, tags: dict) -> RunRecord:
    created_at = None if start_ms is None else pd.Timestamp(int(start_ms), unit="ms", tz="UTC")
    # a running run has no end time yet: its duration is unknown, not "so far"
    duration_s = None if start_ms is None or end_ms is None else (float(end_ms) - float(start_ms)) / 1000.0
    return RunRecord(run_id, status, created_at, duration_s, params, metrics, tags)


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
            (run_id, m.step, m.timestamp, m.value) for run_id in run_ids for m in client.get_metric_history(run_id, key)
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
        store.get_host_creds(),
        endpoint,
        "GET",
        params={"run_id": chunk, "metric_key": key, "max_results": HISTORY_POINTS_PER_REQUEST},
    )
    return chunk, verify_rest_response(response, endpoint).json().get("metrics", [])
