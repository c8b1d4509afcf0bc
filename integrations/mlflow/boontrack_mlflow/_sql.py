"""Reading runs straight from an MLflow SQL store: a few set-based queries, read-only, guarded by the schema.

A tracking URI that names a database (``sqlite:///…``, ``postgresql://…``, ``mysql://…``, with or without a
``+driver``) is read here instead of through ``MlflowClient``, which goes through MLflow's ORM one entity at a
time (10-20x slower for a 10,000-run sweep: ``tests/benchmarks/bench_mlflow_sql.py``). The same run frame, value
for value: the active runs of the experiment (children of the parent run only, when there is one), their latest
metrics (NaN where MLflow's ``is_nan`` column says so, ±inf as MLflow stores it: ±1.7976931348623157e308),
params and tags, in the order of MLflow's search (newest start first); runs with active child runs and
boontrack's own runs are left out, as on the client path; ``pick="best_val_step"`` reads the histories of the
val and test metrics in one query each.

Read-only: sqlite files are opened with ``mode=ro`` (a write fails in SQLite itself), other databases in a
read-only transaction (``SET TRANSACTION READ ONLY``), and every transaction is rolled back. Nothing is ever
created or migrated. The queries rely on MLflow's internal schema, so they run only on the schema revisions
of :data:`KNOWN_REVISIONS` (the store's ``alembic_version``); any other revision is read through the client,
with one warning. The client path is forced with the source option ``read_path=client`` or the environment
variable :data:`READ_PATH_VARIABLE`.
"""

from __future__ import annotations

import contextlib
import gc
import os
import threading
import urllib.parse
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np
import pandas as pd

from boontrack.exceptions import BackendError, BoontrackWarning, InputError
from boontrack.integration import redact
from boontrack.runframe import build_run_frame_long
from boontrack_mlflow._client import sqlite_path

#: Alembic revisions of MLflow's schema (the store's ``alembic_version.version_num``) on which the queries
#: below were checked against the client path. To add one: install the MLflow version whose store has that
#: revision, run ``tests/integrations/mlflow/test_sql.py`` and the conformance suite (they compare both paths
#: on stores that MLflow creates), read the new head with
#: ``python -c "from mlflow.store.db.utils import _get_latest_schema_revision as r; print(r())"``, and add it
#: here with the MLflow version in a comment.
KNOWN_REVISIONS = frozenset(
    {
        "dc11669786a5",  # MLflow 3.17
    }
)

#: Environment variable choosing how a database URI is read: ``auto`` (the default: by SQL where the store's
#: revision is known) or ``client`` (always through ``MlflowClient``). The source option ``read_path`` wins.
READ_PATH_VARIABLE = "BOONTRACK_MLFLOW_READ_PATH"
READ_PATHS = ("auto", "client")
#: URI schemes (before any ``+driver``) read by SQL; other databases MLflow supports (mssql) use the client.
SQL_SCHEMES = ("sqlite", "postgresql", "mysql")

PARENT_RUN_TAG = "mlflow.parentRunId"


def read_path_setting(option: str | None) -> str:
    """The read path asked for: the option, else :data:`READ_PATH_VARIABLE`, else ``auto``; InputError when
    it is none of :data:`READ_PATHS`."""
    value = option if option is not None else os.environ.get(READ_PATH_VARIABLE, "").strip() or "auto"
    if value not in READ_PATHS:
        where = "option read_path" if option is not None else READ_PATH_VARIABLE
        raise InputError(f"{where} must be one of {', '.join(READ_PATHS)}; got {value!r}")
    return value


def reader_for(uri: str, read_path: str | None = None) -> SqlStore | None:
    """The SQL reader of ``uri``, or None when the client path reads it (not a database URI, an in-memory
    sqlite database, or the client path asked for). No connection is made here."""
    if read_path_setting(read_path) == "client":
        return None
    scheme = uri.split(":", 1)[0].split("+", 1)[0].lower()
    if scheme not in SQL_SCHEMES or (scheme == "sqlite" and sqlite_path(uri) in (None, ":memory:")):
        return None
    return SqlStore(uri)


@dataclass(frozen=True)
class SweepRead:
    """What one read gives the source: the run frame, the step of each run's latest val/test point (run id ->
    metric -> step, as :func:`boontrack_mlflow._read.read_run_frame` gives them) and ``histories(run_ids, key)``
    (the points of one metric, columns run_id, step, timestamp and value, in the order they were logged)."""

    frame: pd.DataFrame
    steps: dict[str, Mapping[str, int]]
    histories: Callable[[Sequence[str], str], pd.DataFrame]


class SqlStore:
    """One MLflow SQL store, read by SQL. Engines are shared per URI within the process."""

    def __init__(self, uri: str) -> None:
        self.uri = uri
        self._revision_checked = False

    def read(self, experiment_id: str, parent: str | None, metrics: Sequence[str]) -> SweepRead | None:
        """The runs of the experiment (the children of ``parent`` only, when given), or None when the store's
        schema revision is not one of :data:`KNOWN_REVISIONS` (then warned about once; the caller reads through
        the client). ``metrics`` are the val and test keys: :attr:`SweepRead.steps` holds their latest steps."""
        selection = _Selection(int(experiment_id), parent, metrics)
        with _sql_errors("reading runs", self.uri), _engine(self.uri).connect() as connection:
            if not self._known_revision(connection):
                return None
            runs = _fetch(connection, _RUNS_SQL, selection)
            values = _fetch(connection, _VALUES_SQL, selection)
        kind = values["kind"].to_numpy()
        params, tags, latest = (values.loc[kind == k].reset_index(drop=True) for k in ("param", "tag", "metric"))
        tags = tags.rename(columns={"text": "value"})
        # a run with active child runs among those read is a sweep's parent, not a trial (as on the client path)
        runs = runs.loc[~runs["run_id"].isin(tags.loc[tags["key"] == PARENT_RUN_TAG, "value"])]
        start, end = (pd.Series(runs[column].to_numpy(), dtype="Int64") for column in ("start_time", "end_time"))
        frame = build_run_frame_long(
            pd.DataFrame(
                {
                    "run_id": runs["run_id"].to_numpy(),
                    "status": runs["status"].to_numpy(),
                    "created_at": pd.to_datetime(start, unit="ms", utc=True),
                    "duration_s": (end - start).to_numpy(dtype=np.float64, na_value=np.nan) / 1000.0,
                }
            ),
            params=params.rename(columns={"text": "value"}),
            metrics=latest.assign(value=_metric_values(latest)),
            tags=tags,
        )
        return SweepRead(frame, _latest_steps(runs["run_id"], latest, metrics), self._histories(selection))

    def _histories(self, selection: _Selection) -> Callable[[Sequence[str], str], pd.DataFrame]:
        def histories(run_ids: Sequence[str], key: str) -> pd.DataFrame:
            """Every point of ``key`` logged by ``run_ids``: one query over the runs read that logged a val or
            test point past step 0 (the only runs asked for), kept to ``run_ids``."""
            with _sql_errors(f"reading the history of {key!r}", self.uri), _engine(self.uri).connect() as connection:
                points = _fetch(connection, _HISTORY_SQL, selection, key=key)
            points = points.loc[points["run_id"].isin(run_ids)]
            timestamp = points["timestamp"].to_numpy(dtype=np.int64)
            # In the client path's order: MLflow sorts by (run, timestamp, step, value), the source then sorts
            # stably by (run, timestamp); the order within one run and step is what counts.
            order = np.lexsort((_is_nan(points), points["stored"].to_numpy(dtype=np.float64), timestamp))
            return pd.DataFrame(
                {
                    "run_id": pd.Series(points["run_id"].to_numpy()[order], dtype="str"),
                    "step": points["step"].to_numpy(dtype=np.int64)[order],
                    "timestamp": timestamp[order],
                    "value": _metric_values(points)[order],
                }
            )

        return histories

    def _known_revision(self, connection: Any) -> bool:
        """Whether the store's schema revision is one the queries were checked on; warns once when not."""
        if self._revision_checked:
            return True
        from sqlalchemy import text

        found = connection.execute(text("SELECT version_num FROM alembic_version")).scalars().all()
        revision = str(found[0]) if len(found) == 1 else None
        if revision not in KNOWN_REVISIONS:
            _warn_once(self.uri, revision)
            return False
        self._revision_checked = True
        return True


class _Selection:
    """The runs a read selects, as a SQL condition on ``runs r``, and its bound parameters."""

    def __init__(self, experiment_id: int, parent: str | None, metrics: Sequence[str]) -> None:
        self.params: dict[str, Any] = {"experiment_id": experiment_id, "parent_tag": PARENT_RUN_TAG}
        self.where = "r.experiment_id = :experiment_id AND r.lifecycle_stage = 'active'"
        if parent is not None:
            self.params["parent"] = parent
            self.where += (
                " AND EXISTS (SELECT 1 FROM tags pt WHERE pt.run_uuid = r.run_uuid"
                " AND pt.key = :parent_tag AND pt.value = :parent)"
            )
        keys = [f":metric{i}" for i in range(len(metrics))] or ["NULL"]
        self.params.update({f"metric{i}": key for i, key in enumerate(metrics)})
        #: runs whose latest val or test point is past step 0: the only ones that may need a history
        self.with_history = (
            f"EXISTS (SELECT 1 FROM latest_metrics lm WHERE lm.run_uuid = r.run_uuid"
            f" AND lm.key IN ({', '.join(keys)}) AND lm.step <> 0)"
        )


# MLflow's search orders runs by start time (newest first), then run id: the frame keeps that order.
_RUNS_SQL = (
    "SELECT r.run_uuid AS run_id, r.status AS status, r.start_time AS start_time, r.end_time AS end_time "
    "FROM runs r WHERE {where} ORDER BY r.start_time DESC, r.run_uuid"
)
# The latest metrics, params and tags of the selected runs as long rows, in one statement (the selection is
# evaluated once: MLflow's tables have no index on the experiment). The metrics come first: PostgreSQL types a
# column of the first two branches that is NULL in both as text.
_VALUES_SQL = (
    "WITH selected AS (SELECT r.run_uuid FROM runs r WHERE {where}) "
    "SELECT m.run_uuid AS run_id, 'metric' AS kind, m.key AS key, NULL AS text, m.value AS stored, "
    "m.is_nan AS is_nan, m.step AS step FROM latest_metrics m JOIN selected s ON s.run_uuid = m.run_uuid "
    "UNION ALL SELECT p.run_uuid, 'param', p.key, p.value, NULL, NULL, NULL "
    "FROM params p JOIN selected s ON s.run_uuid = p.run_uuid "
    "UNION ALL SELECT t.run_uuid, 'tag', t.key, t.value, NULL, NULL, NULL "
    "FROM tags t JOIN selected s ON s.run_uuid = t.run_uuid"
)
# Driven by the selected runs, each looked up in MLflow's metrics index on (run_uuid, key, step). Without table
# statistics (MLflow keeps none) SQLite's planner scans every point of the metric in the store instead, once or
# once per run: it is told the order (a CROSS JOIN keeps it, its documented way) and the index.
_HISTORY_SQL = (
    "SELECT m.run_uuid AS run_id, m.step AS step, m.timestamp AS timestamp, m.value AS stored, m.is_nan AS is_nan "
    "FROM {runs_then_metrics} ON m.run_uuid = r.run_uuid AND m.key = :key WHERE {where} AND {with_history}"
)
_RUNS_THEN_METRICS = {
    "sqlite": "runs r CROSS JOIN metrics m INDEXED BY index_metrics_run_uuid_key_step",
    "default": "runs r JOIN metrics m",
}


def _fetch(connection: Any, sql: str, selection: _Selection, **params: Any) -> pd.DataFrame:
    """The rows of one query over the selected runs, as a frame with the query's column names."""
    from sqlalchemy import text

    joined = _RUNS_THEN_METRICS.get(connection.dialect.name, _RUNS_THEN_METRICS["default"])
    query = sql.format(where=selection.where, with_history=selection.with_history, runs_then_metrics=joined)
    with _cyclic_gc_paused():
        result = connection.execute(text(query), {**selection.params, **params})
        names = list(result.keys())
        # the driver's own tuples: SQLAlchemy's row objects cost more than the query (a text query has no
        # types to convert)
        columns = list(zip(*result.cursor.fetchall())) or [()] * len(names)
        result.close()
    # object columns: no string dtype inferred (lookups on it are several times slower)
    return pd.DataFrame({name: pd.Series(column, dtype=object) for name, column in zip(names, columns)})


@contextlib.contextmanager
def _cyclic_gc_paused() -> Iterator[None]:
    """Python's cycle collector paused while rows are fetched: the hundreds of thousands of tuples, strings and
    floats made then (none of them in a cycle) otherwise trigger full collections that traverse every object
    of the process (MLflow's included), a third of the read's time."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _is_nan(points: pd.DataFrame) -> np.ndarray:
    return points["is_nan"].to_numpy(dtype=bool)


def _metric_values(points: pd.DataFrame) -> np.ndarray:
    """The metric values as the client returns them: NaN where ``is_nan`` is set (MLflow stores 0 there)."""
    return np.where(_is_nan(points), np.nan, points["stored"].to_numpy(dtype=np.float64))


def _latest_steps(run_ids: pd.Series, latest: pd.DataFrame, metrics: Sequence[str]) -> dict[str, Mapping[str, int]]:
    """Run id -> metric -> step of its latest point, for ``metrics`` (a metric a run lacks is left out)."""
    nothing: Mapping[str, int] = MappingProxyType({})
    steps: dict[str, Mapping[str, int]] = dict.fromkeys(run_ids, nothing)
    wanted = latest.loc[latest["key"].isin(list(metrics)) & latest["run_id"].isin(run_ids)]
    for run_id, key, step in zip(wanted["run_id"], wanted["key"], wanted["step"]):
        steps[run_id] = {**steps[run_id], key: int(step)}
    return steps


_engines: dict[str, Any] = {}
_engines_lock = threading.Lock()


def _engine(uri: str) -> Any:
    """A read-only SQLAlchemy engine for ``uri``, one per URI and process."""
    with _engines_lock:
        if uri not in _engines:
            try:
                _engines[uri] = _create_engine(uri)
            except ImportError as exc:
                raise InputError(
                    f"reading the MLflow store at {redact(uri)} needs its database driver: {exc}"
                ) from None
        return _engines[uri]


def _create_engine(uri: str) -> Any:
    import sqlalchemy

    path = sqlite_path(uri)
    if path is not None:
        # SQLite's own read-only mode: the file is never written, not even a journal (a missing file fails
        # instead of being created; the source refuses it before this)
        url = sqlalchemy.engine.URL.create(
            "sqlite", database="file:" + urllib.parse.quote(os.path.abspath(path)), query={"mode": "ro", "uri": "true"}
        )
        return sqlalchemy.create_engine(url)
    engine = sqlalchemy.create_engine(uri, pool_pre_ping=True)

    @sqlalchemy.event.listens_for(engine, "begin")
    def _read_only(connection: Any) -> None:
        # the first statement of every transaction: the database refuses any write within it
        connection.exec_driver_sql("SET TRANSACTION READ ONLY")

    return engine


_warned: set[tuple[str, str | None]] = set()


def _warn_once(uri: str, revision: str | None) -> None:
    if (uri, revision) in _warned:
        return
    _warned.add((uri, revision))
    found = f"schema revision {revision}" if revision else "no schema revision"
    warnings.warn(
        f"the MLflow store at {redact(uri)} has {found}, which boontrack's SQL reading was not checked on "
        f"(known: {', '.join(sorted(KNOWN_REVISIONS))}); reading it through the MLflow client instead (slower)",
        BoontrackWarning,
        stacklevel=4,
    )


@contextlib.contextmanager
def _sql_errors(action: str, uri: str) -> Iterator[None]:
    """Database failures as :class:`BackendError`: one line naming the action and the (redacted) URI."""
    from sqlalchemy.exc import SQLAlchemyError

    try:
        yield
    except SQLAlchemyError as exc:
        detail = redact(str(getattr(exc, "orig", None) or exc).strip().splitlines()[0])
        raise BackendError(f"the MLflow store at {redact(uri)} failed while {action}: {detail}") from None
