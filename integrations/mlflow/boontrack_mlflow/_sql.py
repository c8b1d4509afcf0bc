"""Reading runs straight from an MLflow SQL store: a few set-based queries, read-only, guarded by the schema.

A tracking URI that names a database (``sqlite:///…``, ``postgresql://…``, ``mysql://…``, with or without a
``+driver``) is read here instead of through ``MlflowClient``, which goes through MLflow's ORM one entity at a
time (10-20x slower for a 10,000-run sweep: ``tests/benchmarks/bench_mlflow_sql.py``). The same run frame, value
for value: the active runs of the experiment (children of the parent run only, when there is one), their latest
metrics (NaN where MLflow's ``is_nan`` column says so, ±inf as MLflow stores it: ±1.7976931348623157e308),
params and tags, in the order of MLflow's search (newest start first); runs with active child runs and
boontrack's own runs are left out, as on the client path; ``pick="best_val_step"`` reads the histories of the
val and test metrics in one query each.

Read-only, and never a write by anything else: a read opens the store read-only, nothing is ever created,
migrated or repaired, and no byte of an SQLite file changes, nor of its ``-wal`` and ``-shm`` files. Every read
of one job is one transaction (one snapshot of the store: a run deleted between two statements, the runs and
their histories included, is seen by neither). SQLite files are opened with ``mode=ro`` (a write fails in
SQLite itself; a hot journal, left by a writer that stopped mid-transaction, is refused rather than rolled
back) and, in WAL mode, ``readonly_shm=1`` (after a writer was killed, SQLite builds the WAL index in the
reader's memory instead of rebuilding ``-shm``); a database in WAL mode that no writer has open is read as
``immutable`` (``mode=ro`` would leave ``-wal`` and ``-shm`` files behind) and read again if a writer changed it
meanwhile. Other databases are read in a read-only, repeatable-read transaction. A database without MLflow's
``runs`` table is refused. The queries rely on MLflow's internal schema, so they run only on the schema
revisions of :data:`KNOWN_REVISIONS` (the store's ``alembic_version``); any other revision is read through the
client, with one warning, and only when the client would write nothing (all of MLflow's tables there, the
installed MLflow's revision, its default experiment present, and not an SQLite file in WAL mode, which the
client would checkpoint: otherwise it would create, migrate, repair or rewrite). The client path is forced with
the source option ``read_path=client`` or the environment variable :data:`READ_PATH_VARIABLE`, under the same
condition.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import importlib.util
import json
import os
import sqlite3
import struct
import sys
import threading
import time
import urllib.parse
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Protocol, TypeVar

import numpy as np
import pandas as pd

from boontrack.exceptions import BackendError, BoontrackWarning, InputError
from boontrack.integration import SUMMARY_ROLE_TAG, build_run_frame_long, redact
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
#: The drivers tried, in order, for a URI that names none (``postgresql://``): SQLAlchemy's own default first,
#: then the other common one; the pip package that provides each.
DEFAULT_DRIVERS = {
    "postgresql": (("psycopg", "psycopg", "psycopg[binary]"), ("psycopg2", "psycopg2", "psycopg2-binary")),
    "mysql": (("mysqldb", "MySQLdb", "mysqlclient"), ("pymysql", "pymysql", "pymysql")),
}
#: Seconds a read waits for a writer's lock on an SQLite file before it says so (MLflow's own client waits 20).
SQLITE_BUSY_TIMEOUT_S = 5.0
#: Reads of a WAL-mode SQLite file made again when a writer changed it during the read.
SNAPSHOT_ATTEMPTS = 3

PARENT_RUN_TAG = "mlflow.parentRunId"
#: Statuses of a run that has ended: the runs a change token counts (a running run enters no number).
ENDED_STATUSES = ("FINISHED", "FAILED", "KILLED")

T = TypeVar("T")


def read_path_setting(option: str | None) -> str:
    """The read path asked for: the option, else :data:`READ_PATH_VARIABLE`, else ``auto``; InputError when
    it is none of :data:`READ_PATHS`."""
    value = option if option is not None else os.environ.get(READ_PATH_VARIABLE, "").strip() or "auto"
    if value not in READ_PATHS:
        where = "option read_path" if option is not None else READ_PATH_VARIABLE
        raise InputError(f"{where} must be one of {', '.join(READ_PATHS)}; got {value!r}")
    return value


def store_for(uri: str) -> SqlStore | None:
    """The SQL store behind ``uri``, or None when ``uri`` names no database file or server (a tracking server, an
    in-memory sqlite database). No connection is made here."""
    scheme = uri.split(":", 1)[0].split("+", 1)[0].lower()
    if scheme not in SQL_SCHEMES or (scheme == "sqlite" and sqlite_path(uri) in (None, ":memory:")):
        return None
    return SqlStore(uri)


def reader_for(uri: str, read_path: str | None = None) -> SqlStore | None:
    """The SQL reader of ``uri``, or None when the client path reads it (not a database URI, an in-memory
    sqlite database, or the client path asked for). No connection is made here."""
    return None if read_path_setting(read_path) == "client" else store_for(uri)


def with_driver(uri: str) -> str:
    """``uri`` with a database driver that is installed named in it (``postgresql://`` becomes
    ``postgresql+psycopg2://`` where only psycopg2 is installed); InputError naming the package to install when
    none is. A URI that names its driver, or whose database needs none, is returned as it is."""
    scheme, sep, rest = uri.partition("://")
    candidates = DEFAULT_DRIVERS.get(scheme.lower())
    if not sep or candidates is None:
        return uri
    for driver, module, _ in candidates:
        if importlib.util.find_spec(module) is not None:
            return f"{scheme}+{driver}://{rest}"
    packages = " or ".join(f'"{package}"' for _, _, package in candidates)
    raise InputError(f"reading the MLflow store at {redact(uri)} needs a {scheme} driver: pip install {packages}")


@dataclass(frozen=True)
class SweepRead:
    """What one read gives the source: the run frame, the step of each run's latest val/test point (run id ->
    metric -> step, as :func:`boontrack_mlflow._read.read_run_frame` gives them) and ``histories(run_ids, key)``
    (the points of one metric, columns run_id, step, timestamp and value, in the order they were logged)."""

    frame: pd.DataFrame
    steps: dict[str, Mapping[str, int]]
    histories: Callable[[Sequence[str], str], pd.DataFrame]


@dataclass(frozen=True)
class Experiment:
    """An experiment as the SQL path sees it."""

    experiment_id: str
    name: str
    lifecycle_stage: str
    tags: Mapping[str, str]
    creation_time: int | None = None
    last_update_time: int | None = None


@dataclass(frozen=True)
class Sweep:
    """A parent run with ended or running children, and the change token of its children."""

    experiment_id: str
    run_id: str
    name: str | None
    token: str


@dataclass(frozen=True)
class StoredRunInfo:
    run_id: str
    status: str
    start_time: int | None
    artifact_uri: str | None


@dataclass(frozen=True)
class StoredRunData:
    tags: Mapping[str, str]


@dataclass(frozen=True)
class StoredRun:
    """A run as the SQL path sees it, shaped as MLflow's ``Run`` where a sink looks (``info.run_id``,
    ``info.status``, ``info.start_time``, ``info.artifact_uri``, ``data.tags``), so that one rule reads both."""

    info: StoredRunInfo
    data: StoredRunData


class SqlStore:
    """One MLflow SQL store, read by SQL. Engines are shared per URI within the process."""

    def __init__(self, uri: str) -> None:
        self.uri = uri
        self._revision: str | None = None
        self._checked = False

    # -- what the store is ---------------------------------------------------------------------------------
    def revision_known(self) -> bool:
        """Whether the store's schema revision is one the queries were checked on; warns once when not.
        InputError when the database is not an MLflow store."""
        self._check()
        if self._revision in KNOWN_REVISIONS:
            return True
        _warn_once(self.uri, self._revision)
        return False

    def refuse_writing_client(self) -> None:
        """InputError when MLflow's client, opening this store, would write to it: it creates the tables that
        are missing, migrates an older schema (or fails on a newer one), recreates a missing default experiment,
        and opens an SQLite file in WAL mode read-write (it rewrites the ``-shm`` file, and when it closes it
        checkpoints the ``-wal`` file into the database and deletes both). Asked before the client reads a
        database."""
        self._check()
        path = sqlite_path(self.uri)
        if path is not None and _in_wal_mode(os.path.abspath(path)):
            raise InputError(
                f"the MLflow store at {redact(self.uri)} cannot be read through the MLflow client without changing "
                "it: it is in WAL mode, and the client would checkpoint its -wal file into the database and delete "
                "-wal and -shm; boontrack reads never write (read it by SQL: read_path=auto, on a schema revision "
                f"boontrack knows: {', '.join(sorted(KNOWN_REVISIONS))})"
            )
        from mlflow.store.db import utils as mlflow_db  # registers every table of MLflow's ORM with its Base
        from mlflow.store.tracking import sqlalchemy_store  # noqa: F401 - the tables MLflow's store expects

        installed = mlflow_db._get_latest_schema_revision()

        def missing(snapshot: _Snapshot) -> str | None:
            # MLflow's own test (``_all_tables_exist``): every table of its ORM is there, others may be too
            if not set(mlflow_db.Base.metadata.tables) <= snapshot.tables():
                return "some of MLflow's tables are missing"
            if self._revision != installed:
                return f"its schema revision {self._revision} is not the installed MLflow's ({installed})"
            found = snapshot.rows("SELECT 1 FROM experiments WHERE experiment_id = 0", {})
            return None if found else "its default experiment (id 0) is missing"

        reason = self._in_snapshot("checking the schema", missing)
        if reason is not None:
            raise InputError(
                f"the MLflow store at {redact(self.uri)} cannot be read through the MLflow client without changing "
                f"it: {reason}; boontrack reads never write (read it with the MLflow version that wrote it)"
            )

    def _check(self) -> None:
        if self._checked:
            return

        def revision(snapshot: _Snapshot) -> str | None:
            tables = snapshot.tables()
            if "runs" not in tables:
                raise InputError(f"{redact(self.uri)} is not an MLflow database (no table `runs`)")
            if "alembic_version" not in tables:
                return None
            found = snapshot.rows("SELECT version_num FROM alembic_version", {})
            return str(found[0][0]) if len(found) == 1 else None

        self._revision = self._in_snapshot("checking the schema", revision, checked=False)
        self._checked = True

    # -- reads -------------------------------------------------------------------------------------------------
    def read(self, experiment_id: str, parent: str | None, metrics: Sequence[str]) -> SweepRead | None:
        """The runs of the experiment (the children of ``parent`` only, when given), or None when the store's
        schema revision is not one of :data:`KNOWN_REVISIONS` (then warned about once; the caller reads through
        the client). ``metrics`` are the val and test keys: :attr:`SweepRead.steps` holds their latest steps."""
        if not self.revision_known():
            return None
        selection = _Selection(int(experiment_id), parent, metrics)
        # the histories too, in the same snapshot: read later, they could lack a run deleted meanwhile, which would
        # then be a finished run without its metrics
        runs, values, histories = self._in_snapshot(
            "reading runs",
            lambda c: (
                _fetch(c, _RUNS_SQL, selection),
                _fetch(c, _VALUES_SQL, selection),
                _fetch_histories(c, selection, metrics),
            ),
        )
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
        return SweepRead(frame, _latest_steps(runs["run_id"], latest, metrics), histories)

    def find_run(self, run_id: str) -> tuple[str, str] | None:
        """The experiment id and lifecycle stage of run ``run_id``, None when there is no such run."""
        rows = self._in_snapshot(
            f"looking up run {run_id}",
            lambda snapshot: snapshot.rows(_RUN_SQL, {"run_id": run_id}),
        )
        return (str(rows[0][0]), str(rows[0][1])) if rows else None

    def find_experiment(self, ref: str) -> Experiment | None:
        """The experiment with id ``ref`` (when all digits), else with name ``ref``; None when there is none."""

        def find(snapshot: _Snapshot) -> Experiment | None:
            if ref.isdigit():
                found = _experiments(snapshot, "e.experiment_id = :id", {"id": int(ref)})
                if found:
                    return found[0]
            found = _experiments(snapshot, "e.name = :name", {"name": ref})
            return found[0] if found else None

        return self._in_snapshot("resolving the experiment", find)

    def experiments(self) -> list[Experiment]:
        """Every active experiment, by id."""
        return self._in_snapshot("listing experiments", lambda c: _experiments(c, "e.lifecycle_stage = 'active'", {}))

    def change_token(self, experiment_id: str, parent: str) -> str:
        """The children's change token (:func:`children_token`), in one query."""
        rows = self._in_snapshot(
            f"asking run {parent} for changes",
            lambda snapshot: snapshot.rows(
                _CHILDREN_SQL, {"experiment_id": int(experiment_id), "parent": parent, **_OWN_PARAMS}
            ),
        )
        return children_token(rows)

    def tagged_runs(self, experiment_id: str, key: str, value: str) -> tuple[Mapping[str, str], list[StoredRun]]:
        """The experiment's tags and its active runs tagged ``key = value`` with all their tags, in one snapshot
        (what ``get_experiment`` and ``search_runs(filter_string="tags.`key` = 'value'")`` give the client)."""

        def tagged(snapshot: _Snapshot) -> tuple[Mapping[str, str], list[StoredRun]]:
            found = _experiments(snapshot, "e.experiment_id = :id", {"id": int(experiment_id)})
            rows = snapshot.rows(_TAGGED_RUNS_SQL, {"experiment_id": int(experiment_id), "key": key, "value": value})
            runs: dict[str, tuple[str, int | None, str | None, dict[str, str]]] = {}
            for run_id, status, started, artifact_uri, tag, tag_value in rows:
                runs.setdefault(run_id, (status, started, artifact_uri, {}))[3][tag] = tag_value
            return (found[0].tags if found else {}), [
                StoredRun(StoredRunInfo(run_id, status, started, artifact_uri), StoredRunData(MappingProxyType(tags)))
                for run_id, (status, started, artifact_uri, tags) in runs.items()
            ]

        return self._in_snapshot("looking for an earlier summary", tagged)

    def sweeps(self, experiment_ids: Sequence[str]) -> list[Sweep]:
        """Every top-level active parent run with active children in the experiments, with its children's token,
        in the order of the experiments and then of the parents' start times: one query."""
        if not experiment_ids:
            return []
        ids = {f"experiment{i}": int(e) for i, e in enumerate(experiment_ids)}
        sql = _SWEEPS_SQL.format(experiments=", ".join(f":{name}" for name in ids))
        rows = self._in_snapshot("discovering sweeps", lambda snapshot: snapshot.rows(sql, {**ids, **_OWN_PARAMS}))
        children: dict[tuple[str, str], list[tuple]] = {}
        parents: dict[tuple[str, str], tuple[str | None, int | None]] = {}
        for experiment_id, parent, name, started, *child in rows:
            key = (str(experiment_id), str(parent))
            parents[key] = (name, started)
            children.setdefault(key, []).append(tuple(child))
        rank = {str(e): i for i, e in enumerate(experiment_ids)}
        order = sorted(parents, key=lambda k: (rank[k[0]], parents[k][1] is None, parents[k][1] or 0, k[1]))
        return [Sweep(e, run_id, parents[(e, run_id)][0], children_token(children[(e, run_id)])) for e, run_id in order]

    def every_history(
        self, experiment_id: str, parent: str | None, metrics: Sequence[str]
    ) -> Callable[[Sequence[str], str], pd.DataFrame]:
        """``histories(run_ids, key)`` of ``metrics`` over every selected run, whatever the step of its latest point
        (training curves: a run that logged once, at step 0, has a point there): one query per metric, all in one
        snapshot."""
        selection = _Selection(int(experiment_id), parent, (), every_run=True)
        return self._in_snapshot("reading histories", lambda c: _fetch_histories(c, selection, metrics))

    def _in_snapshot(self, action: str, work: Callable[[_Snapshot], T], *, checked: bool = True) -> T:
        """``work(snapshot)`` in one read-only transaction: every statement sees the same state of the store.
        The store is first checked to be MLflow's (``checked``). An SQLite file read as immutable (a WAL database
        no writer had open) is read again when a writer changed it meanwhile, whether the read ended or failed (it
        may have read pages of two states); database errors become one line (:func:`_sql_errors`)."""
        if checked:
            self._check()
        for _ in range(SNAPSHOT_ATTEMPTS):
            with _sql_errors(action, self.uri), _snapshot(self.uri) as snapshot:
                try:
                    result = work(snapshot)
                except Exception:
                    if snapshot.unchanged_since_opened():
                        raise
                    continue
                if snapshot.unchanged_since_opened():
                    return result
        raise BackendError(
            f"the MLflow store at {redact(self.uri)} changed during each of {SNAPSHOT_ATTEMPTS} reads (a writer "
            "checkpointing its WAL); try again"
        )


def children_token(children: Iterable[Sequence[Any]]) -> str:
    """A sweep's change token from its children (run id, status, start and end time, in any order): how many
    have ended and a digest of those (ids, statuses, times), as JSON.

    It changes when a child ends (or is added having ended), is deleted or restored, or changes status or
    times, whatever the clocks of the hosts that logged them say: runs are identified, not compared by time.
    A child still running is not counted (it enters no number until it ends).
    """
    ended = sorted("\t".join(map(str, child[:4])) for child in children if child[1] in ENDED_STATUSES)
    return json.dumps([len(ended), hashlib.sha256("\n".join(ended).encode()).hexdigest()[:32]])


class _Selection:
    """The runs a read selects, as a SQL condition on ``runs r``, and its bound parameters."""

    def __init__(
        self, experiment_id: int, parent: str | None, metrics: Sequence[str], *, every_run: bool = False
    ) -> None:
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
        #: runs whose latest val or test point is past step 0: the only ones that may need a history (every
        #: run with ``every_run``)
        self.with_history = (
            "1 = 1"
            if every_run
            else (
                f"EXISTS (SELECT 1 FROM latest_metrics lm WHERE lm.run_uuid = r.run_uuid"
                f" AND lm.key IN ({', '.join(keys)}) AND lm.step <> 0)"
            )
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
_RUN_SQL = "SELECT experiment_id, lifecycle_stage FROM runs WHERE run_uuid = :run_id"
_OWN_PARAMS = {"own_tag": SUMMARY_ROLE_TAG, "parent_tag": PARENT_RUN_TAG}
_NOT_OWN = "NOT EXISTS (SELECT 1 FROM tags o WHERE o.run_uuid = {run}.run_uuid AND o.key = :own_tag)"
# A sweep's children as the change token counts them: active, not boontrack's own.
_CHILDREN_SQL = (
    "SELECT c.run_uuid, c.status, c.start_time, c.end_time FROM runs c "
    "JOIN tags t ON t.run_uuid = c.run_uuid AND t.key = :parent_tag AND t.value = :parent "
    f"WHERE c.experiment_id = :experiment_id AND c.lifecycle_stage = 'active' AND {_NOT_OWN.format(run='c')}"
)
# The active runs of an experiment tagged key = value, one row per tag of theirs.
_TAGGED_RUNS_SQL = (
    "SELECT r.run_uuid, r.status, r.start_time, r.artifact_uri, t.key, t.value FROM runs r "
    "JOIN tags k ON k.run_uuid = r.run_uuid AND k.key = :key AND k.value = :value "
    "JOIN tags t ON t.run_uuid = r.run_uuid "
    "WHERE r.experiment_id = :experiment_id AND r.lifecycle_stage = 'active'"
)
# Every (top-level parent, child) pair of the experiments, found from the children's parent tags: the cost is
# that of the children, never of the runs that have none.
_SWEEPS_SQL = (
    "SELECT p.experiment_id, p.run_uuid, p.name, p.start_time, c.run_uuid, c.status, c.start_time, c.end_time "
    "FROM tags t JOIN runs c ON c.run_uuid = t.run_uuid "
    "JOIN runs p ON p.run_uuid = t.value AND p.experiment_id = c.experiment_id "
    "WHERE t.key = :parent_tag AND c.experiment_id IN ({experiments}) "
    "AND c.lifecycle_stage = 'active' AND p.lifecycle_stage = 'active' "
    f"AND {_NOT_OWN.format(run='c')} AND {_NOT_OWN.format(run='p')} "
    "AND NOT EXISTS (SELECT 1 FROM tags g WHERE g.run_uuid = p.run_uuid AND g.key = :parent_tag)"
)


def _experiments(snapshot: _Snapshot, where: str, params: Mapping[str, Any]) -> list[Experiment]:
    rows = snapshot.rows(
        "SELECT e.experiment_id, e.name, e.lifecycle_stage, e.creation_time, e.last_update_time "
        f"FROM experiments e WHERE {where} ORDER BY e.experiment_id",
        params,
    )
    if not rows:
        return []
    tags: dict[int, dict[str, str]] = {}
    for experiment_id, key, value in snapshot.rows(
        f"SELECT t.experiment_id, t.key, t.value FROM experiment_tags t JOIN experiments e "
        f"ON e.experiment_id = t.experiment_id WHERE {where}",
        params,
    ):
        tags.setdefault(experiment_id, {})[key] = value
    return [
        Experiment(str(i), name, stage, MappingProxyType(tags.get(i, {})), created, updated)
        for i, name, stage, created, updated in rows
    ]


def _fetch(snapshot: _Snapshot, sql: str, selection: _Selection, **params: Any) -> pd.DataFrame:
    """The rows of one query over the selected runs, as a frame with the query's column names."""
    joined = _RUNS_THEN_METRICS.get(snapshot.dialect, _RUNS_THEN_METRICS["default"])
    query = sql.format(where=selection.where, with_history=selection.with_history, runs_then_metrics=joined)
    with _cyclic_gc_paused():
        names, rows = snapshot.columns(query, {**selection.params, **params})
        columns = list(zip(*rows)) or [()] * len(names)
    # object columns: no string dtype inferred (lookups on it are several times slower)
    return pd.DataFrame({name: pd.Series(column, dtype=object) for name, column in zip(names, columns)})


def _fetch_histories(
    snapshot: _Snapshot, selection: _Selection, metrics: Sequence[str]
) -> Callable[[Sequence[str], str], pd.DataFrame]:
    """``histories(run_ids, key)`` of each of ``metrics``: every point logged by the runs of the selection that may
    need one (:attr:`_Selection.with_history`), read now, one query per metric, and kept to ``run_ids``."""
    points = {key: _fetch(snapshot, _HISTORY_SQL, selection, key=key) for key in metrics}

    def histories(run_ids: Sequence[str], key: str) -> pd.DataFrame:
        kept = points[key].loc[points[key]["run_id"].isin(run_ids)]
        timestamp = kept["timestamp"].to_numpy(dtype=np.int64)
        # In the client path's order: MLflow sorts by (run, timestamp, step, value), the source then sorts stably
        # by (run, timestamp); the order within one run and step is what counts.
        order = np.lexsort((_is_nan(kept), kept["stored"].to_numpy(dtype=np.float64), timestamp))
        return pd.DataFrame(
            {
                "run_id": pd.Series(kept["run_id"].to_numpy()[order], dtype="str"),
                "step": kept["step"].to_numpy(dtype=np.int64)[order],
                "timestamp": timestamp[order],
                "value": _metric_values(kept)[order],
            }
        )

    return histories


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


class _Snapshot(Protocol):
    """One read-only transaction on a store: its statements see one state of it."""

    #: The database's kind, as SQLAlchemy names it: ``sqlite``, ``postgresql``, ``mysql``.
    dialect: str

    def columns(self, sql: str, params: Mapping[str, Any]) -> tuple[list[str], list[tuple[Any, ...]]]:
        """The column names and rows of a query (``:name`` parameters)."""
        ...

    def rows(self, sql: str, params: Mapping[str, Any]) -> list[tuple[Any, ...]]:
        """The rows of a query (``:name`` parameters)."""
        ...

    def tables(self) -> set[str]:
        """The names of the database's tables."""
        ...

    def unchanged_since_opened(self) -> bool:
        """False when what was read may mix two states of the store (:func:`_unchanged_since_opened`)."""
        ...


class _SqliteSnapshot:
    """A transaction on an SQLite file through Python's ``sqlite3`` alone: SQLAlchemy, whose import costs
    0.14-0.2 s of CPU (a tenth of a summary of 60 runs from sqlite), adds nothing to a read of one file."""

    dialect = "sqlite"

    def __init__(self, connection: _SqliteReader) -> None:
        self._connection = connection

    def columns(self, sql: str, params: Mapping[str, Any]) -> tuple[list[str], list[tuple[Any, ...]]]:
        cursor = self._connection.execute(sql, dict(params))
        return [column[0] for column in cursor.description or ()], cursor.fetchall()

    def rows(self, sql: str, params: Mapping[str, Any]) -> list[tuple[Any, ...]]:
        return self.columns(sql, params)[1]

    def tables(self) -> set[str]:
        return {name for (name,) in self.rows("SELECT name FROM sqlite_master WHERE type = 'table'", {})}

    def unchanged_since_opened(self) -> bool:
        return _unchanged_since_opened(self._connection)


class _EngineSnapshot:
    """A transaction on a database server through a SQLAlchemy connection (:func:`_engine`)."""

    def __init__(self, connection: Any) -> None:
        self._connection = connection
        self.dialect = str(connection.dialect.name)

    def columns(self, sql: str, params: Mapping[str, Any]) -> tuple[list[str], list[tuple[Any, ...]]]:
        from sqlalchemy import text

        result = self._connection.execute(text(sql), dict(params))
        names = list(result.keys())
        # the driver's own tuples: SQLAlchemy's row objects cost more than the query (a text query has no types
        # to convert)
        rows = result.cursor.fetchall() if result.cursor is not None else []
        result.close()
        return names, rows

    def rows(self, sql: str, params: Mapping[str, Any]) -> list[tuple[Any, ...]]:
        return self.columns(sql, params)[1]

    def tables(self) -> set[str]:
        from sqlalchemy import inspect

        return set(inspect(self._connection).get_table_names())

    def unchanged_since_opened(self) -> bool:
        return True  # a server's transaction sees one state


@contextlib.contextmanager
def _snapshot(uri: str) -> Iterator[_Snapshot]:
    """A read-only transaction on the store at ``uri``: an SQLite file opened for it alone (in the mode its state
    asks for, :func:`_open_sqlite`) and closed after, or a connection of the URI's engine."""
    path = sqlite_path(uri)
    if path is not None:
        path = os.path.abspath(path)
        with _checkpoints_held_off(path), contextlib.closing(_open_sqlite(path)) as connection:
            _begin_snapshot(connection)
            try:
                yield _SqliteSnapshot(connection)
            finally:
                connection.rollback()  # a read has nothing to commit
        return
    with _engine(uri).connect() as connection, connection.begin():
        yield _EngineSnapshot(connection)


def _begin_snapshot(connection: sqlite3.Connection) -> None:
    """Begin the read transaction of ``connection`` and take its snapshot of the file now.

    Python's sqlite3 sends no ``BEGIN`` before a ``SELECT``: two statements would see two states of the file. A
    reader that may not write the ``-shm`` file cannot rebuild a WAL index that a writer opening the file has not
    built yet (``SQLITE_READONLY_RECOVERY``): it waits for the writer, as SQLite's readers wait for locks, up to
    :data:`SQLITE_BUSY_TIMEOUT_S`."""
    deadline = time.monotonic() + SQLITE_BUSY_TIMEOUT_S
    while True:
        connection.execute("BEGIN")
        try:
            connection.execute("SELECT count(*) FROM sqlite_master").fetchall()
            return
        except sqlite3.OperationalError as exc:
            connection.rollback()
            if getattr(exc, "sqlite_errorname", "") != "SQLITE_READONLY_RECOVERY" or time.monotonic() >= deadline:
                raise
        time.sleep(LOCK_RETRY_S)


_engines: dict[str, Any] = {}
_engines_lock = threading.Lock()


def _engine(uri: str) -> Any:
    """A read-only SQLAlchemy engine for the database server at ``uri``, one per URI and process."""
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

    engine = sqlalchemy.create_engine(with_driver(uri), pool_pre_ping=True)
    if engine.dialect.name == "postgresql":
        # one snapshot for the whole transaction, in which the database refuses any write
        return engine.execution_options(isolation_level="REPEATABLE READ", postgresql_readonly=True)

    @sqlalchemy.event.listens_for(engine, "begin")
    def _read_only(connection: Any) -> None:
        # the first statement of every transaction: the database refuses any write within it
        connection.exec_driver_sql("SET TRANSACTION READ ONLY")

    return engine


class _SqliteReader(sqlite3.Connection):
    """An SQLite connection that remembers its file and, when it reads it as immutable, the file's state when
    opened."""

    path = ""
    opened_as: tuple[int, int, int] | None = None


def _open_sqlite(path: str) -> _SqliteReader:
    """A read-only connection to ``path`` in manual transaction mode (:func:`_snapshot` sends ``BEGIN``), which
    writes no byte of the database or of its ``-wal``, ``-shm`` and journal files, and creates none.

    ``mode=ro`` takes SQLite's locks, so a read sees committed data only; it refuses a hot journal instead of
    rolling it back. In WAL mode it reads the ``-wal`` file through the ``-shm`` file (the WAL index), which
    SQLite opens read-write and rebuilds when no connection has it open (after a writer was killed):
    ``readonly_shm=1`` has it opened read-only instead, and SQLite then builds the index in the reader's own
    memory (SQLite's ``SQLITE_READONLY_CANTINIT``; its read-only WAL support since 3.22). A WAL-mode file without
    its ``-wal`` file (no writer has it open) would get ``-wal`` and ``-shm`` files created and left behind: it is
    read as ``immutable`` instead, as SQLite documents for a file that does not change, which
    :func:`_checkpoints_held_off` and the check afterwards (:func:`_unchanged_since_opened`) make sure of. A
    ``-wal`` file without its ``-shm`` file cannot be read without creating one: it is waited for (a writer
    opening the file creates one, then the other), and refused when it stays missing (a copy without it).
    """
    wal = os.path.exists(path + "-wal")
    immutable = _in_wal_mode(path) and not wal
    if wal:
        _wait_for_the_wal_index(path)
    state = _file_state(path) if immutable else None
    query = "immutable=1" if immutable else "mode=ro&readonly_shm=1"
    connection = sqlite3.connect(
        f"file:{urllib.parse.quote(path)}?{query}",
        uri=True,
        timeout=SQLITE_BUSY_TIMEOUT_S,
        isolation_level=None,
        check_same_thread=False,
        factory=_SqliteReader,
    )
    connection.path, connection.opened_as = path, state
    return connection


def _wait_for_the_wal_index(path: str) -> None:
    """Return once the ``-shm`` file of a file whose ``-wal`` file exists is there too (at once, but for a writer
    that is opening the file); BackendError when it is still missing after :data:`SQLITE_BUSY_TIMEOUT_S`."""
    deadline = time.monotonic() + SQLITE_BUSY_TIMEOUT_S
    while not os.path.exists(path + "-shm"):
        if time.monotonic() >= deadline:
            raise BackendError(
                f"the MLflow store at sqlite:///{path} has a -wal file without its -shm file, which a read would "
                "create; a read never writes: open the store once with MLflow or the sqlite3 shell, then retry"
            )
        time.sleep(LOCK_RETRY_S)


#: SQLite's lock bytes in a database file on Unix (``os_unix.c``): every connection reading the file holds a read
#: lock on some of the 510 bytes from ``SHARED_FIRST``; a writer needs all of them write-locked to checkpoint its
#: WAL into the file when it closes (then deleting ``-wal`` and ``-shm``) or to leave WAL mode.
SQLITE_SHARED_FIRST = 0x40000000 + 2
SQLITE_SHARED_SIZE = 510
#: Seconds between two looks at what a writer holds (a lock, a file it is creating).
LOCK_RETRY_S = 0.01


@contextlib.contextmanager
def _checkpoints_held_off(path: str) -> Iterator[None]:
    """For the duration of a read of a WAL-mode file, a read lock on its shared bytes, as each of SQLite's readers
    holds one: no writer can then checkpoint its WAL into the file at its close, delete the ``-wal`` and ``-shm``
    files or leave WAL mode meanwhile. A ``-wal`` file present when the read begins stays, and one absent stays
    absent unless a writer starts meanwhile, which it shows: the test of an ``immutable`` read
    (:func:`_unchanged_since_opened`) then cannot miss a writer. Waits for a writer that holds the file (a
    checkpoint under way) up to :data:`SQLITE_BUSY_TIMEOUT_S`. (A file in rollback mode needs nothing: SQLite's
    own read lock keeps its writers out, and a lock of ours could hold a committing writer between the two.)

    Linux's open-file-description locks, on the descriptor the process keeps (:func:`_kept_descriptor`): SQLite's
    own locks, held by this process's other connections to the file (the user's MlflowClient), stay as they are.
    The reads of the process's threads share the one lock, taken by the first and released by the last. Where
    there are none (macOS, Windows), nothing is held and an immutable read is checked by the file's size and time
    alone.
    """
    fcntl = _ofd_locks()
    descriptor = _kept_descriptor(path) if fcntl is not None else None
    if descriptor is None or not _in_wal_mode(path):
        yield
        return
    deadline = time.monotonic() + SQLITE_BUSY_TIMEOUT_S
    while not _share_read_lock(fcntl, descriptor):
        if time.monotonic() >= deadline:
            raise _LockedByWriter("database is locked")
        time.sleep(LOCK_RETRY_S)
    try:
        yield
    finally:
        _release_read_lock(fcntl, descriptor)


#: Descriptor -> how many reads of this process hold its open-file-description lock.
_read_lock_holders: dict[int, int] = {}


def _share_read_lock(fcntl: Any, descriptor: int) -> bool:
    """Hold the read lock of :func:`_checkpoints_held_off` on ``descriptor``, with the reads that already hold it;
    False while a writer holds the bytes."""
    with _descriptors_lock:
        if not _read_lock_holders.get(descriptor):
            try:
                fcntl.fcntl(descriptor, fcntl.F_OFD_SETLK, _flock(fcntl.F_RDLCK))
            except (BlockingIOError, PermissionError):
                return False
        _read_lock_holders[descriptor] = _read_lock_holders.get(descriptor, 0) + 1
        return True


def _release_read_lock(fcntl: Any, descriptor: int) -> None:
    with _descriptors_lock:
        _read_lock_holders[descriptor] -= 1
        if not _read_lock_holders[descriptor]:
            fcntl.fcntl(descriptor, fcntl.F_OFD_SETLK, _flock(fcntl.F_UNLCK))


def _flock(kind: int) -> bytes:
    """A ``struct flock`` on SQLite's shared bytes: type, whence, start, length, pid (0 for an open-file-description
    lock), padding."""
    return struct.pack("hhqqi4x", kind, os.SEEK_SET, SQLITE_SHARED_FIRST, SQLITE_SHARED_SIZE, 0)


#: Path -> the descriptor of the file kept open for the life of the process (:func:`_kept_descriptor`); the
#: descriptors of files since replaced at the same path stay open too.
_descriptors: dict[str, int] = {}
_replaced_descriptors: list[int] = []
_descriptors_lock = threading.Lock()


def _kept_descriptor(path: str) -> int | None:
    """A read-only descriptor of the file at ``path`` that this process never closes; None when it cannot be opened.

    Closing any descriptor of a file releases every POSIX lock the process holds on it, SQLite's included
    (SQLite's "How To Corrupt" page, 2.2): the locks of the process's other connections to the store (an MLflow
    callback's client beside the read) would be gone, and another process could checkpoint and delete the WAL
    under them, or write into their transaction. So the header is read, and the lock of
    :func:`_checkpoints_held_off` taken, through one descriptor per file that stays open, as SQLite keeps its own.
    """
    with _descriptors_lock:
        try:
            found = os.stat(path)
        except OSError:
            return None
        kept = _descriptors.get(path)
        if kept is not None:
            held = os.fstat(kept)
            if (held.st_dev, held.st_ino) == (found.st_dev, found.st_ino):
                return kept
            _replaced_descriptors.append(kept)  # not closed: SQLite may hold locks on that file still
        try:
            _descriptors[path] = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            _descriptors.pop(path, None)
            return None
        return _descriptors[path]


class _LockedByWriter(sqlite3.OperationalError):
    """A writer held the file longer than a read waits: said as SQLite's own ``SQLITE_BUSY`` (:data:`_SQLITE_ERRORS`)."""

    sqlite_errorname = "SQLITE_BUSY"


def _ofd_locks() -> Any:
    """The ``fcntl`` module where it has open-file-description locks (Linux), else None."""
    try:
        import fcntl
    except ImportError:
        return None
    return fcntl if hasattr(fcntl, "F_OFD_SETLK") else None


def _in_wal_mode(path: str) -> bool:
    """Whether the SQLite file's header says WAL mode (its read and write versions are 2). Read through the
    descriptor the process keeps (:func:`_kept_descriptor`) where it has POSIX locks; on Windows a file's locks
    belong to its handle, so a handle of its own is opened and closed."""
    try:
        if hasattr(os, "pread"):
            descriptor = _kept_descriptor(path)
            header = b"" if descriptor is None else os.pread(descriptor, 20, 0)
        else:
            with open(path, "rb") as handle:
                header = handle.read(20)
    except OSError:
        return False
    return len(header) == 20 and header[18] == 2


def _file_state(path: str) -> tuple[int, int, int] | None:
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return (stat.st_ino, stat.st_size, stat.st_mtime_ns)


def _unchanged_since_opened(connection: _SqliteReader) -> bool:
    """False when an SQLite file read as immutable was written meanwhile (a writer opened it: its ``-wal``
    file exists, or it checkpointed into the file): that read may mix two states."""
    if connection.opened_as is None:
        return True
    return _file_state(connection.path) == connection.opened_as and not os.path.exists(connection.path + "-wal")


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


#: SQLite's error codes, and the one line said for each: (exception class, what it is and what to do).
_SQLITE_ERRORS = {
    "SQLITE_READONLY_ROLLBACK": (
        BackendError,
        "holds an unfinished transaction (a hot journal, {path}-journal, left by a writer that stopped "
        "mid-write); a read never rolls it back: open the store once with MLflow or the sqlite3 shell, which "
        "does, then retry",
    ),
    "SQLITE_BUSY": (
        BackendError,
        "stayed locked by another process for {timeout:g} s (a writer in a long transaction); retry later",
    ),
    "SQLITE_READONLY_RECOVERY": (
        BackendError,
        "has a WAL index ({path}-shm) that no writer rebuilt within {timeout:g} s, and a read never writes it: "
        "retry later, or open the store once with MLflow or the sqlite3 shell, which rebuilds it",
    ),
    "SQLITE_NOTADB": (InputError, "is not an SQLite database, so not an MLflow store: check the tracking URI"),
    "SQLITE_CORRUPT": (
        BackendError,
        "is damaged (database disk image is malformed): restore it from a backup; "
        "`sqlite3 {path} 'PRAGMA integrity_check'` shows where",
    ),
    "SQLITE_CANTOPEN": (InputError, "cannot be opened (a directory, or not readable)"),
}


@contextlib.contextmanager
def _sql_errors(action: str, uri: str) -> Iterator[None]:
    """Database failures as one line naming the action and the (redacted) URI: what is wrong and what to do
    where it is known (:data:`_SQLITE_ERRORS`), else the database's own first line (:class:`BackendError`)."""
    try:
        yield
    except Exception as exc:
        original = _database_error(exc)
        if original is None:
            raise
        name = getattr(original, "sqlite_errorname", "") or ""
        known = _SQLITE_ERRORS.get(name) or _SQLITE_ERRORS.get("_".join(name.split("_")[:2]))
        if known is not None:
            kind, text = known
            detail = text.format(path=sqlite_path(uri), timeout=SQLITE_BUSY_TIMEOUT_S)
            raise kind(f"the MLflow store at {redact(uri)} {detail}") from None
        detail = redact(str(original).strip().splitlines()[0])
        raise BackendError(f"the MLflow store at {redact(uri)} failed while {action}: {detail}") from None


def _database_error(exc: BaseException) -> BaseException | None:
    """The driver's error behind ``exc`` when it is a database failure: an error of Python's ``sqlite3``, or one of
    SQLAlchemy's (whose original error it carries); None for any other exception. SQLAlchemy is not imported for
    it: its errors come only from an SQLAlchemy already loaded."""
    if isinstance(exc, sqlite3.Error):
        return exc
    alchemy = sys.modules.get("sqlalchemy.exc")
    if alchemy is not None and isinstance(exc, alchemy.SQLAlchemyError):
        return getattr(exc, "orig", None) or exc
    return None
