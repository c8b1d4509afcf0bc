"""MLflow SQL stores read directly (:mod:`boontrack_mlflow._sql`): the same run frame and RunTable as the
MlflowClient path on the same store, read-only, guarded by the schema revision, and the switch to the client.

The expectation of every parity test is the client path (MLflow's own reading of the store), an independent
implementation; a few values are also written down by hand.
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
import uuid
import warnings
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from mlflow import MlflowClient
from mlflow.entities import Metric, Param, RunTag

from boontrack.backends import MetricRequest, load_backend
from boontrack.exceptions import BoontrackWarning, InputError
from boontrack.runtable import RunTable
from boontrack.spec import Spec
from boontrack_mlflow import MlflowSource, _read, _sql

pytestmark = pytest.mark.mlflow

STAMP = 1_700_000_000_000
#: How MLflow's SQL store keeps ±inf (its columns cannot hold infinities), and so how both paths return it.
FLOAT_MAX = 1.7976931348623157e308


class Store:
    """A store written through MlflowClient with every case the two paths must agree on (sqlite in ``root``
    unless ``uri`` names another database)."""

    def __init__(self, root: Path, uri: str | None = None) -> None:
        self.path = root / "mlflow.db"
        self.uri = uri or f"sqlite:///{self.path}"
        with contextlib.chdir(root):  # the default experiment keeps artifacts in ./mlruns
            self.client = MlflowClient(self.uri)
            self.experiment_id = self.client.create_experiment(f"sql-{uuid.uuid4().hex[:8]}")
        self.parent = self.run(name="sweep")
        self.runs: dict[str, str] = {}  # name -> run id
        self._log_sweep()

    def run(self, *, name: str, parent: str | None = None, tags: dict | None = None, experiment: str | None = None):
        tags = {**(tags or {}), **({"mlflow.parentRunId": parent} if parent else {})}
        return self.client.create_run(experiment or self.experiment_id, run_name=name, tags=tags).info.run_id

    def child(
        self,
        name: str,
        *,
        val=(),
        test=(),
        status: str | None = "FINISHED",
        parent: str | None = None,
        params: dict | None = None,
        tags: dict | None = None,
        metrics: list[Metric] = (),
    ) -> str:
        """A trial: ``val``/``test`` are per-step values (step = position); status None leaves it RUNNING."""
        run_id = self.run(name=name, parent=parent or self.parent, tags=tags)
        points = [Metric("val_acc", v, STAMP + i, i) for i, v in enumerate(val)]
        points += [Metric("test_acc", t, STAMP + i, i) for i, t in enumerate(test)]
        params = {"model": name.split("-")[0], **(params or {})}
        self.client.log_batch(run_id, metrics=[*points, *metrics], params=[Param(k, str(v)) for k, v in params.items()])
        if status is not None:
            self.client.set_terminated(run_id, status)
        self.runs[name] = run_id
        return run_id

    def _log_sweep(self) -> None:
        inf, nan = math.inf, math.nan
        self.child("cnn-rising", val=[0.5, 0.7, 0.9, 0.6], test=[0.4, 0.6, 0.8, 0.65], params={"seed": 0})
        self.child("cnn-tie", val=[0.8, 0.7, 0.8], test=[0.71, 0.72, 0.73], params={"seed": 1})
        self.child("cnn-single", val=[0.55], test=[0.44], params={"seed": 2})
        once = self.child("cnn-testonce", val=[0.3, 0.9, 0.4], params={"seed": 3})
        self.client.log_metric(once, "test_acc", 0.77, timestamp=STAMP + 9, step=2)  # once, after training
        self.child("mlp-nanlast", val=[0.62, 0.65, nan], test=[0.60, 0.63, 0.64], params={"seed": 0})
        self.child("mlp-inf", val=[0.3, inf], test=[0.2, -inf], params={"seed": 1})
        self.child("mlp-neginf", val=[-inf], test=[inf], params={"seed": 2})
        self.child("mlp-nanonly", val=[nan], test=[nan], params={"seed": 3})
        # a step logged again later (a resumed run): its last value counts, and it is the latest point
        self.child(
            "mlp-resumed",
            val=[0.5, 0.6],
            test=[0.5, 0.6],
            params={"seed": 4},
            metrics=[Metric("val_acc", 0.95, STAMP + 50, 1), Metric("test_acc", 0.9, STAMP + 50, 1)],
        )
        # validation and test logged at different steps: no test of the best-validation model
        self.child(
            "mlp-gap",
            val=[0.61],
            params={"seed": 5},
            metrics=[
                Metric("test_acc", 0.59, STAMP + 1, 1),
                Metric("val_acc", 0.67, STAMP + 2, 2),
                Metric("test_acc", 0.6, STAMP + 3, 3),
            ],
        )
        self.child("mlp-nometric", params={"seed": 6}, metrics=[Metric("loss", 1.5, STAMP, 0)])
        self.child(
            "mlp-tagged",
            val=[0.7],
            test=[0.69],
            params={"seed": 7},
            tags={"note": "a string, with ' quotes", "test_as_tag": "0.81", "empty": ""},
        )
        self.child("cnn-failed", val=[0.99], test=[0.99], status="FAILED", params={"seed": 8})
        self.child("cnn-killed", val=[0.98], test=[0.98], status="KILLED", params={"seed": 9})
        self.child("cnn-running", val=[0.97, 0.96], test=[0.96, 0.95], status=None, params={"seed": 10})
        deleted = self.child("cnn-deleted", val=[0.999], test=[0.999], params={"seed": 11})
        self.client.delete_run(deleted)
        # a nested sweep: a trial that is itself the parent of a sweep
        nested = self.child("rnn-nested", val=[0.4, 0.5], test=[0.3, 0.45], params={"seed": 12})
        self.child("rnn-inner1", val=[0.81, 0.83], test=[0.8, 0.82], parent=nested, params={"seed": 0})
        self.child("rnn-inner2", val=[0.84], test=[0.79], parent=nested, params={"seed": 1})
        gone = self.child("rnn-innergone", val=[0.5], parent=nested, params={"seed": 2})
        self.client.delete_run(gone)
        # a parent whose only child is deleted has no active child: it is a run like any other
        lonely = self.child("rnn-lonely", val=[0.41], test=[0.4], params={"seed": 13})
        self.client.delete_run(self.child("rnn-lonelychild", val=[0.1], parent=lonely))
        # boontrack's own runs: a summary under the parent, its per-group curve runs under it
        summary = self.run(name="summary", parent=self.parent, tags={"boontrack.role": "summary"})
        self.client.log_batch(summary, metrics=[Metric("val_acc", 0.5, STAMP, 0), Metric("boon/x", 1.0, STAMP, 0)])
        curve = self.run(name="curve", parent=summary, tags={"boontrack.role": "group-curve"})
        self.client.log_metric(curve, "boon/curve", 0.5, step=3)
        # runs outside the sweep: a lone run in the experiment, a run of another experiment
        self.runs["lone"] = self.run(name="lone")
        self.client.log_batch(self.runs["lone"], metrics=[Metric("val_acc", 0.3, STAMP, 0)])
        other = self.client.create_experiment(f"other-{uuid.uuid4().hex[:8]}")
        self.client.log_batch(self.run(name="other", experiment=other), metrics=[Metric("val_acc", 0.2, STAMP, 0)])
        self.client.set_tag(self.parent, "sweep.kind", "parent")
        self.client.log_batch(self.parent, tags=[RunTag("sweep.note", "x")], params=[Param("sweep", "demo")])
        self.client.set_terminated(self.parent)


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Store:
    return Store(tmp_path_factory.mktemp("sql-store"))


@pytest.fixture(scope="module")
def postgres_store() -> Iterator[Store]:
    """The same sweep in a throw-away PostgreSQL server (skipped without the server binaries or psycopg2), read
    with a role that may only SELECT. The server listens on a Unix socket in its own directory and on no TCP
    port, so no port has to be found free first."""
    pytest.importorskip("psycopg2")
    if not (shutil.which("initdb") and shutil.which("pg_ctl")):
        pytest.skip("PostgreSQL server binaries (initdb, pg_ctl) not found")
    # the server runs as the postgres user when the tests run as root: a directory it can reach (pytest's own
    # temporary root is private to the user)
    root = Path(tempfile.mkdtemp(prefix="boontrack-postgres-"))
    root.chmod(0o777)
    as_server = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    data = root / "data"
    try:
        subprocess.run(
            [*as_server, "initdb", "-D", str(data), "-U", "postgres", "-A", "trust"], check=True, capture_output=True
        )
        options = f"-c listen_addresses='' -k {root} -c fsync=off"
        subprocess.run(
            [*as_server, "pg_ctl", "-D", str(data), "-o", options, "-l", str(root / "log"), "-w", "start"],
            check=True,
            capture_output=True,
        )
        import psycopg2

        with contextlib.closing(psycopg2.connect(host=str(root), user="postgres")) as admin:
            admin.autocommit = True
            admin.cursor().execute("CREATE DATABASE mlflow")
        store = Store(root, f"postgresql+psycopg2://postgres@/mlflow?host={root}")
        with contextlib.closing(psycopg2.connect(host=str(root), user="postgres", dbname="mlflow")) as db:
            db.autocommit = True
            db.cursor().execute("CREATE ROLE reader LOGIN; GRANT SELECT ON ALL TABLES IN SCHEMA public TO reader")
        store.uri = f"postgresql+psycopg2://reader@/mlflow?host={root}"
        yield store
    finally:
        with _sql._engines_lock:  # the pooled connections go before the server
            for uri in [u for u in _sql._engines if f"host={root}" in u]:
                _sql._engines.pop(uri).dispose()
        subprocess.run([*as_server, "pg_ctl", "-D", str(data), "-m", "immediate", "-w", "stop"], capture_output=True)
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(autouse=True)
def _fresh_warnings(monkeypatch):
    monkeypatch.setattr(_sql, "_warned", set())
    monkeypatch.delenv(_sql.READ_PATH_VARIABLE, raising=False)


def read(store: Store, where: dict, request: MetricRequest, read_path: str) -> pd.DataFrame:
    return MlflowSource(tracking_uri=store.uri, read_path=read_path, **where).read(request)


def selections(store: Store) -> dict[str, dict]:
    return {
        "experiment": {"experiment": store.experiment_id},
        "sweep": {"parent": store.parent},
        "nested sweep": {"experiment": store.experiment_id, "parent": store.runs["rnn-nested"]},
    }


def table(frame: pd.DataFrame, pick: str, *, test: str | None = "test_acc") -> RunTable:
    return RunTable.from_frame(frame, Spec(val="val_acc", test=test, pick=pick, seed_column="seed", n=(1,)))


@pytest.mark.parametrize("pick", ["last", "best_val_step"])
@pytest.mark.parametrize("where", ["experiment", "sweep", "nested sweep"])
def test_both_paths_give_the_same_frame_and_run_table(store, where, pick, monkeypatch):
    check_both_paths(store, where, pick, monkeypatch)


@pytest.mark.slow
@pytest.mark.parametrize("pick", ["last", "best_val_step"])
@pytest.mark.parametrize("where", ["experiment", "sweep", "nested sweep"])
def test_both_paths_give_the_same_frame_and_run_table_on_postgresql(postgres_store, where, pick, monkeypatch):
    check_both_paths(postgres_store, where, pick, monkeypatch)


@pytest.mark.slow
def test_postgresql_refuses_a_write_through_the_connection(postgres_store):
    """The owner's rights, and still no write: the transaction is read-only."""
    from sqlalchemy import text
    from sqlalchemy.exc import InternalError

    owner = postgres_store.uri.replace("reader@", "postgres@")
    with _sql._engine(owner).connect() as connection:
        with pytest.raises(InternalError, match="read-only transaction"):
            connection.execute(text("UPDATE runs SET status = 'FAILED'"))


def check_both_paths(store: Store, where: str, pick: str, monkeypatch) -> None:
    selection = selections(store)[where]
    request = MetricRequest("val_acc", "test_acc", pick=pick)
    client_frame = read(store, selection, request, "client")
    calls = []
    monkeypatch.setattr(_read, "read_run_frame", lambda *a: calls.append(a))  # the SQL path never uses it
    sql_frame = read(store, selection, request, "auto")
    assert not calls
    pd.testing.assert_frame_equal(sql_frame, client_frame)
    sql_table, client_table = table(sql_frame, pick), table(client_frame, pick)
    pd.testing.assert_frame_equal(sql_table.runs, client_table.runs)
    assert sql_table.dropped == client_table.dropped


def test_what_is_read_written_down_by_hand(store):
    """The SQL path's frame of the sweep, checked against the values logged (not against the client path)."""
    frame = read(store, {"parent": store.parent}, MetricRequest("val_acc", "test_acc"), "auto").set_index("run_id")
    ids = {run_id: name for name, run_id in store.runs.items()}
    # deleted runs, the summary and its curve run, the nested sweep's children and runs elsewhere are left out;
    # the nested sweep's parent is a trial of this sweep
    assert sorted(ids[r] for r in frame.index) == sorted(
        name for name in store.runs if name not in {"cnn-deleted", "lone", "rnn-lonelychild"} and "inner" not in name
    )
    values = frame.rename(index=ids)
    assert values.loc["mlp-inf", ["metrics.val_acc", "metrics.test_acc"]].tolist() == [FLOAT_MAX, -FLOAT_MAX]
    assert values.loc["mlp-neginf", ["metrics.val_acc", "metrics.test_acc"]].tolist() == [-FLOAT_MAX, FLOAT_MAX]
    assert (
        np.isnan(values.loc["mlp-nanlast", "metrics.val_acc"]) and values.loc["mlp-nanlast", "metrics.test_acc"] == 0.64
    )
    assert values.loc["mlp-resumed", ["metrics.val_acc", "metrics.test_acc"]].tolist() == [0.95, 0.9]
    assert np.isnan(values.loc["mlp-nometric", "metrics.val_acc"]) and values.loc["mlp-nometric", "metrics.loss"] == 1.5
    assert values.loc["mlp-tagged", ["tags.note", "tags.test_as_tag", "tags.empty"]].tolist() == [
        "a string, with ' quotes",
        "0.81",
        "",
    ]
    assert values.loc["cnn-running", "status"] == "running" and np.isnan(values.loc["cnn-running", "duration_s"])
    assert values.loc["cnn-killed", "status"] == "killed"
    assert values.loc["cnn-rising", "params.seed"] == "0" and "params.sweep" not in values.columns
    run = store.client.get_run(store.runs["cnn-rising"]).info
    assert values.loc["cnn-rising", "created_at"] == pd.Timestamp(run.start_time, unit="ms", tz="UTC")
    assert values.loc["cnn-rising", "duration_s"] == (run.end_time - run.start_time) / 1000
    # newest start first, as MLflow's search orders runs
    assert frame["created_at"].is_monotonic_decreasing

    best = read(store, {"parent": store.parent}, MetricRequest("val_acc", "test_acc", pick="best_val_step"), "auto")
    best = best.set_index("run_id").rename(index=ids)
    expected = {
        "cnn-rising": (0.9, 0.8),
        "cnn-tie": (0.8, 0.71),
        "cnn-single": (0.55, 0.44),
        "cnn-testonce": (0.9, 0.77),
        "mlp-nanlast": (0.65, 0.63),
        "mlp-resumed": (0.95, 0.9),
        "mlp-inf": (FLOAT_MAX, -FLOAT_MAX),
    }
    for name, values in expected.items():
        assert best.loc[name, ["metrics.val_acc", "metrics.test_acc"]].tolist() == list(values), name
    assert best.loc["mlp-gap", "metrics.val_acc"] == 0.67 and np.isnan(best.loc["mlp-gap", "metrics.test_acc"])


@pytest.mark.parametrize(
    "request_",
    [
        MetricRequest("val_acc"),
        MetricRequest("loss", "val_acc", pick="best_val_step"),
        MetricRequest("nowhere", "test_acc", pick="best_val_step"),
        MetricRequest("val_acc", "nowhere", pick="best_val_step"),
    ],
)
def test_both_paths_agree_on_other_metrics_and_missing_ones(store, request_):
    where = {"parent": store.parent}
    pd.testing.assert_frame_equal(read(store, where, request_, "auto"), read(store, where, request_, "client"))


def test_an_empty_selection_gives_the_same_empty_frame(store):
    childless = store.runs["cnn-single"]
    request = MetricRequest("val_acc", "test_acc", pick="best_val_step")
    sql = read(store, {"parent": childless}, request, "auto")
    assert sql.empty
    pd.testing.assert_frame_equal(sql, read(store, {"parent": childless}, request, "client"))


# -- one snapshot per read ------------------------------------------------------------------------------------
def _commit_between_the_queries(monkeypatch, commit) -> list[str]:
    """Has ``commit()`` run once, between two queries of a read: right before its first query of a history (after
    the runs and their latest values). Returns the list that records that it ran."""
    fetch, ran = _sql._fetch, []

    def fetch_after_the_commit(snapshot, sql, *args, **kwargs):
        if sql is _sql._HISTORY_SQL and not ran:
            commit()
            ran.append("committed")
        return fetch(snapshot, sql, *args, **kwargs)

    monkeypatch.setattr(_sql, "_fetch", fetch_after_the_commit)
    return ran


@pytest.mark.parametrize("connected", [True, False], ids=["own client connected", "no connection open"])
def test_a_run_deleted_between_the_queries_of_a_wal_store_is_never_a_finished_run_without_metrics(
    store, tmp_path, monkeypatch, connected
):
    """The runs, their latest values and their histories are read in one snapshot. The reading process has its own
    MlflowClient on the store (the end of a sweep script), which deletes a run between the queries of a read; read
    in two snapshots, the run was a finished run without its metrics (dropped as such). Connected, its client keeps
    the WAL open: the read sees the store as it was before the delete. Without a connection open, the store is read
    as immutable: the read sees the writer and is read again, after the delete."""
    path = tmp_path / "wal" / "mlflow.db"
    path.parent.mkdir()
    shutil.copy2(store.path, path)
    with contextlib.closing(sqlite3.connect(path)) as db:
        assert db.execute("PRAGMA journal_mode = WAL").fetchone() == ("wal",)
    uri, rising = f"sqlite:///{path}", store.runs["cnn-rising"]
    request = MetricRequest("val_acc", "test_acc", pick="best_val_step")
    own = MlflowClient(uri)
    if connected:
        own.search_experiments()  # its pooled connection holds the WAL open
    else:
        own._tracking_client.store.engine.dispose()
    before = MlflowSource(parent=store.parent, tracking_uri=uri).read(request)
    delete = (
        own.delete_run if connected else lambda run: (own.delete_run(run), own._tracking_client.store.engine.dispose())
    )
    ran = _commit_between_the_queries(monkeypatch, lambda: delete(rising))
    frame = MlflowSource(parent=store.parent, tracking_uri=uri).read(request)
    assert ran == ["committed"]
    expected = before if connected else before.loc[before["run_id"] != rising].reset_index(drop=True)
    pd.testing.assert_frame_equal(frame, expected)
    if connected:
        assert table(frame, "best_val_step").runs.set_index("run_id").loc[rising, ["val", "test"]].tolist() == [
            0.9,
            0.8,
        ]


@pytest.mark.slow
def test_a_run_deleted_between_the_queries_of_a_postgresql_read_is_seen_by_none(postgres_store, monkeypatch):
    """The same on PostgreSQL: one repeatable-read transaction for the runs, their values and their histories."""
    request, rising = MetricRequest("val_acc", "test_acc", pick="best_val_step"), postgres_store.runs["cnn-rising"]
    before = read(postgres_store, {"parent": postgres_store.parent}, request, "auto")
    ran = _commit_between_the_queries(monkeypatch, lambda: postgres_store.client.delete_run(rising))
    try:
        frame = read(postgres_store, {"parent": postgres_store.parent}, request, "auto")
    finally:
        postgres_store.client.restore_run(rising)
    assert ran == ["committed"]
    pd.testing.assert_frame_equal(frame, before)


# -- read-only ------------------------------------------------------------------------------------------------
def fingerprint(directory: Path) -> dict[str, tuple[str, int]]:
    """Every file of the store's directory: content hash and modification time (ns)."""
    return {
        p.name: (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
        for p in sorted(directory.iterdir())
        if p.is_file()
    }


def test_reading_leaves_the_store_untouched(store, tmp_path):
    shutil.copy2(store.path, tmp_path / "mlflow.db")
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    before = fingerprint(tmp_path)
    reader = _sql.reader_for(uri)
    for pick in ("last", "best_val_step"):
        read_ = reader.read(store.experiment_id, store.parent, ["val_acc", "test_acc"])
        read_.histories(list(read_.frame["run_id"]), "val_acc")
        assert len(read_.frame) > 10
        MlflowSource(parent=store.parent, tracking_uri=uri).read(MetricRequest("val_acc", "test_acc", pick=pick))
    assert fingerprint(tmp_path) == before  # same bytes, same mtime, no journal or other file left


def test_a_write_through_the_connection_fails(store):
    with _sql._snapshot(store.uri) as snapshot:
        with pytest.raises(sqlite3.OperationalError, match="readonly database"):
            snapshot.rows("UPDATE runs SET status = 'FAILED'", {})
        with pytest.raises(sqlite3.OperationalError, match="readonly database"):
            snapshot.rows("CREATE TABLE boontrack_probe (x INTEGER)", {})
    assert store.client.get_run(store.runs["cnn-rising"]).info.status == "FINISHED"


def test_a_read_of_an_sqlite_store_loads_no_sqlalchemy(store):
    """Python's sqlite3 reads the file: SQLAlchemy (0.14-0.2 s of CPU to import) is not loaded for it."""
    code = textwrap.dedent(
        f"""
        import sys
        from boontrack_mlflow import _sql

        read = _sql.reader_for({store.uri!r}).read({store.experiment_id!r}, {store.parent!r}, ["val_acc"])
        assert len(read.frame) > 10
        print(sorted(m for m in sys.modules if m.partition(".")[0] in ("sqlalchemy", "mlflow")))
        """
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_other_databases_are_read_in_a_read_only_transaction(monkeypatch):
    """postgresql/mysql engines issue ``SET TRANSACTION READ ONLY`` first in every transaction (the benchmark
    checks it on a real PostgreSQL server)."""
    import sqlalchemy

    sent = []
    engine = _sql._create_engine("sqlite://")  # any engine takes the same listener; sqlite:// needs no server
    monkeypatch.setattr(sqlalchemy.engine.Connection, "exec_driver_sql", lambda self, sql, *a: sent.append(sql))
    with engine.connect() as connection:
        connection.execute(sqlalchemy.text("SELECT 1"))
    assert sent == ["SET TRANSACTION READ ONLY"]


def test_no_store_is_created_for_a_missing_file(tmp_path):
    from boontrack.exceptions import InputError as Refused

    with pytest.raises(Refused, match="does not exist"):
        MlflowSource(parent="x", tracking_uri=f"sqlite:///{tmp_path / 'none.db'}")
    assert not list(tmp_path.iterdir())


# -- the schema guard ---------------------------------------------------------------------------------------------
def test_an_unknown_revision_warns_once_and_reads_through_the_client(store, monkeypatch):
    request = MetricRequest("val_acc", "test_acc", pick="best_val_step")
    expected = read(store, {"parent": store.parent}, request, "client")
    monkeypatch.setattr(_sql, "KNOWN_REVISIONS", frozenset({"0123456789ab"}))
    client_reads = []
    original = _read.read_run_frame
    monkeypatch.setattr(_read, "read_run_frame", lambda *a: client_reads.append(a) or original(*a))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        frames = [read(store, {"parent": store.parent}, request, "auto") for _ in range(2)]
    guard = [w for w in caught if issubclass(w.category, BoontrackWarning)]
    assert len(guard) == 1 and len(client_reads) == 2
    revision = (
        store.client._tracking_client.store.engine.connect()
        .exec_driver_sql("SELECT version_num FROM alembic_version")
        .scalar()
    )
    assert f"schema revision {revision}" in str(guard[0].message) and "through the MLflow client" in str(
        guard[0].message
    )
    for frame in frames:
        pd.testing.assert_frame_equal(frame, expected)


def test_the_revision_is_read_from_the_store(store, tmp_path, monkeypatch):
    """A copy of the store with another revision in ``alembic_version`` is not read by SQL."""
    import sqlite3

    shutil.copy2(store.path, tmp_path / "mlflow.db")
    with contextlib.closing(sqlite3.connect(tmp_path / "mlflow.db")) as db:
        db.execute("UPDATE alembic_version SET version_num = 'ffffffffffff'")
        db.commit()
    reader = _sql.reader_for(f"sqlite:///{tmp_path / 'mlflow.db'}")
    with pytest.warns(BoontrackWarning, match="schema revision ffffffffffff"):
        assert reader.read(store.experiment_id, store.parent, ["val_acc"]) is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no second warning
        assert reader.read(store.experiment_id, store.parent, ["val_acc"]) is None


def test_the_known_revisions_include_the_installed_mlflow_schema():
    from mlflow.store.db.utils import _get_latest_schema_revision

    assert _get_latest_schema_revision() in _sql.KNOWN_REVISIONS


# -- the switch ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("uri", "read_path", "variable", "by_sql"),
    [
        ("sqlite:///{db}", None, None, True),
        ("sqlite:///{db}", "auto", "client", True),  # the option wins over the variable
        ("sqlite:///{db}", None, "client", False),
        ("sqlite:///{db}", "client", None, False),
        ("sqlite:///{db}", "client", "auto", False),
    ],
)
def test_the_switch_chooses_the_read_path(store, monkeypatch, uri, read_path, variable, by_sql):
    if variable is not None:
        monkeypatch.setenv(_sql.READ_PATH_VARIABLE, variable)
    used = []
    for name, module in (("sql", _sql.SqlStore), ("client", _read)):
        attr = "read" if name == "sql" else "read_run_frame"
        original = getattr(module, attr)
        monkeypatch.setattr(module, attr, lambda *a, _n=name, _o=original: used.append(_n) or _o(*a))
    options = {"read_path": read_path} if read_path else {}
    source = load_backend("mlflow").open_source(
        "", parent=store.parent, tracking_uri=uri.format(db=store.path), **options
    )
    source.read(MetricRequest("val_acc"))
    assert used == (["sql"] if by_sql else ["client"])


def test_the_option_is_declared_and_checked(store, monkeypatch):
    backend = load_backend("mlflow")
    assert "read-path" in backend.options
    with pytest.raises(InputError, match="option read_path must be one of auto, client; got 'sql'"):
        backend.open_source("", parent=store.parent, tracking_uri=store.uri, **{"read-path": "sql"})
    monkeypatch.setenv(_sql.READ_PATH_VARIABLE, "fast")
    with pytest.raises(InputError, match=f"{_sql.READ_PATH_VARIABLE} must be one of auto, client; got 'fast'"):
        backend.open_source("", parent=store.parent, tracking_uri=store.uri)


@pytest.mark.parametrize(
    ("uri", "by_sql"),
    [
        ("sqlite:////tmp/x/mlflow.db", True),
        ("sqlite:///relative.db", True),
        ("postgresql://reader:secret@db.internal:5432/mlflow", True),
        ("postgresql+psycopg2://reader@db/mlflow", True),
        ("mysql+pymysql://reader@db/mlflow", True),
        ("mssql+pyodbc://reader@db/mlflow", False),
        ("sqlite://", False),
        ("sqlite:///:memory:", False),
        ("http://127.0.0.1:5000", False),
        ("file:///tmp/mlruns", False),
        ("databricks", False),
    ],
)
def test_which_uris_are_read_by_sql(uri, by_sql):
    assert isinstance(_sql.reader_for(uri), _sql.SqlStore) is by_sql  # no connection is made


def test_a_file_that_is_not_a_database_is_one_line(tmp_path):
    broken = tmp_path / "broken.db"
    broken.write_bytes(b"not a database" * 100)
    with pytest.raises(InputError, match="is not an SQLite database, so not an MLflow store") as info:
        _sql.reader_for(f"sqlite:///{broken}").read("1", None, [])
    assert "\n" not in str(info.value)


def test_a_missing_database_driver_is_an_input_error(monkeypatch):
    import sqlalchemy

    def no_driver(*args, **kwargs):
        raise ModuleNotFoundError("No module named 'psycopg'")

    monkeypatch.setattr(sqlalchemy, "create_engine", no_driver)
    with pytest.raises(InputError, match="needs its database driver: No module named 'psycopg'"):
        _sql.reader_for("postgresql://reader:s3cret@127.0.0.1:1/nodriver").read("1", None, [])


def test_a_server_that_cannot_be_reached_is_named_without_the_password():
    from boontrack.exceptions import BackendError

    pytest.importorskip("psycopg2")
    with pytest.raises(BackendError, match=r"store at postgresql\+psycopg2://\*\*\*@127.0.0.1:1/mlflow failed") as info:
        _sql.reader_for("postgresql+psycopg2://reader:s3cret@127.0.0.1:1/mlflow").read("1", None, [])
    assert "s3cret" not in str(info.value) and "\n" not in str(info.value)


# -- drivers ------------------------------------------------------------------------------------------------------
@pytest.fixture
def installed(monkeypatch):
    """Pretend that these database drivers, and no other, are installed: ``installed(*modules)`` (a driver pretended
    is not imported: only asked for)."""
    import importlib.util

    real = importlib.util.find_spec
    drivers = {"psycopg", "psycopg2", "MySQLdb", "pymysql"}

    def only(*present: str) -> None:
        def find_spec(name, *args):
            if name in drivers:
                return real(name, *args) or name if name in present else None
            return real(name, *args)

        monkeypatch.setattr(importlib.util, "find_spec", find_spec)

    return only


def test_a_uri_without_a_driver_uses_the_one_installed(installed):
    installed("psycopg2", "pymysql")
    assert _sql.with_driver("postgresql://reader@db/mlflow") == "postgresql+psycopg2://reader@db/mlflow"
    assert _sql.with_driver("mysql://reader@db/mlflow") == "mysql+pymysql://reader@db/mlflow"
    assert _sql.with_driver("postgresql+psycopg://reader@db/mlflow") == "postgresql+psycopg://reader@db/mlflow"
    installed("psycopg", "psycopg2")
    assert _sql.with_driver("postgresql://reader@db/mlflow") == "postgresql+psycopg://reader@db/mlflow"


def test_a_missing_driver_is_exit_2_naming_what_to_install(installed):
    from click.testing import CliRunner

    from boontrack.cli import main

    installed()
    uri = "postgresql://reader:s3cret@127.0.0.1:1/mlflow"
    result = CliRunner().invoke(main, ["summarize", "mlflow:1", "--tracking-uri", uri, "--val", "val_acc"])
    assert result.exit_code == 2, result.output
    assert result.stderr == (
        "Error: reading the MLflow store at postgresql://***@127.0.0.1:1/mlflow needs a postgresql driver: "
        'pip install "psycopg[binary]" or "psycopg2-binary"\n'
    )


@pytest.mark.slow
def test_a_postgresql_uri_without_a_driver_reads_with_psycopg2(postgres_store, installed):
    installed("psycopg2")
    request = MetricRequest("val_acc", "test_acc")
    plain = postgres_store.uri.replace("postgresql+psycopg2://", "postgresql://")
    frame = MlflowSource(parent=postgres_store.parent, tracking_uri=plain).read(request)
    pd.testing.assert_frame_equal(
        frame, MlflowSource(parent=postgres_store.parent, tracking_uri=postgres_store.uri).read(request)
    )
