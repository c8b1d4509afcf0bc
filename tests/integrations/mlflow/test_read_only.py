"""A read never writes: stores that are not MLflow's, damaged, locked, half-written or in WAL mode are read (or
refused) with every file of their directory left byte for byte as it was, and no file added, after a
``summarize`` and after a ``reaggregate`` pass, by SQL and through the client."""

from __future__ import annotations

import contextlib
import hashlib
import shutil
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner
from mlflow import MlflowClient
from mlflow.entities import Metric

from boontrack import cli
from boontrack.backends import MetricRequest
from boontrack.runtable import RunTable
from boontrack.spec import Spec
from boontrack_mlflow import MlflowSource, _sql

pytestmark = pytest.mark.mlflow

STAMP = 1_700_000_000_000


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> tuple[Path, str, str]:
    """An MLflow store with one sweep of 6 finished children: (file, experiment id, parent run id)."""
    root = tmp_path_factory.mktemp("read-only-template")
    with contextlib.chdir(root):
        client = MlflowClient(f"sqlite:///{root / 'mlflow.db'}")
        experiment = client.create_experiment("sweeps", artifact_location=(root / "artifacts").as_uri())
        parent = client.create_run(experiment, run_name="parent").info.run_id
        for i in range(6):
            run = client.create_run(experiment, tags={"mlflow.parentRunId": parent}).info.run_id
            client.log_batch(run, metrics=[Metric("val_acc", 0.5 + i / 20, STAMP, 0)])
            client.set_terminated(run, "FINISHED")
        client.set_terminated(parent, "FINISHED")
        client._tracking_client.store.engine.dispose()
    return root / "mlflow.db", experiment, parent


@pytest.fixture
def store(template, tmp_path) -> tuple[Path, str, str]:
    """A copy of the template in a directory of its own."""
    (tmp_path / "store").mkdir()
    path = tmp_path / "store" / "mlflow.db"
    shutil.copy2(template[0], path)
    return path, template[1], template[2]


def _files(directory: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(directory.iterdir())}


def _summarize(path: Path, experiment: str, parent: str, *options: str):
    command = ["summarize", f"mlflow:{experiment}", "--parent", parent, "--tracking-uri", f"sqlite:///{path}"]
    return CliRunner().invoke(cli.main, [*command, "--val", "val_acc", "--n", "1", "--resamples", "99", *options])


def _reaggregate(path: Path, experiment: str, parent: str, out: Path, read_path: str):
    out.parent.mkdir(parents=True, exist_ok=True)
    config = out.parent / "boontrack.toml"
    config.write_text(
        f'[[jobs]]\nname = "sweep"\nsource = "mlflow:{experiment}"\nparent = "{parent}"\n'
        f'tracking_uri = "sqlite:///{path}"\nval = "val_acc"\nn = [1]\nn_resamples = 99\nplots = false\n'
        f'out = "{out}"\noptions = {{ read_path = "{read_path}" }}\n'
    )
    return CliRunner().invoke(cli.main, ["reaggregate", "--config", str(config)])


READ_PATHS = [[], ["--option", "read_path=client"]]


@pytest.mark.parametrize("content", [b"", "foreign"], ids=["empty file", "another application's database"])
@pytest.mark.parametrize("read_path", READ_PATHS, ids=["sql", "client"])
def test_a_file_that_is_not_an_mlflow_store_is_refused_and_left_as_it_was(tmp_path, content, read_path):
    path = tmp_path / "other.db"
    if content == "foreign":
        with contextlib.closing(sqlite3.connect(path)) as db:
            db.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)")
            db.execute("INSERT INTO notes (text) VALUES ('mine')")
            db.commit()
    else:
        path.write_bytes(content)
    before = _files(tmp_path)
    result = _summarize(path, "1", "0" * 32, *read_path)
    assert result.exit_code == 2, result.output
    assert result.stderr == f"Error: sqlite:///{path} is not an MLflow database (no table `runs`)\n"
    assert _files(tmp_path) == before

    out = tmp_path.parent / f"{tmp_path.name}-out"
    result = _reaggregate(path, "1", "0" * 32, out / "summary", "client" if read_path else "auto")
    assert result.exit_code == 1 and "is not an MLflow database (no table `runs`)" in result.stdout
    assert _files(tmp_path) == before


def test_a_store_whose_default_experiment_is_gone_is_read_by_sql_and_never_repaired(store, tmp_path):
    path, experiment, parent = store
    with contextlib.closing(sqlite3.connect(path)) as db:
        db.execute("DELETE FROM experiments WHERE experiment_id = 0")
        db.commit()
    before = _files(path.parent)
    result = _summarize(path, experiment, parent)
    assert result.exit_code == 0, result.output
    assert _files(path.parent) == before

    # The client would create the default experiment again: it is not used
    refused = _summarize(path, experiment, parent, "--option", "read_path=client")
    assert refused.exit_code == 2, refused.output
    assert "cannot be read through the MLflow client without changing it: its default experiment" in refused.stderr
    assert _files(path.parent) == before

    result = _reaggregate(path, experiment, parent, tmp_path / "out" / "summary", "auto")
    assert result.exit_code == 0 and result.stdout.startswith("sweep: updated"), result.output
    assert _files(path.parent) == before


@pytest.mark.parametrize("read_path", READ_PATHS, ids=["sql", "client"])
def test_a_complete_store_is_read_by_either_path_without_a_byte_changed(store, tmp_path, read_path):
    path, experiment, parent = store
    before = _files(path.parent)
    result = _summarize(path, experiment, parent, *read_path)
    assert result.exit_code == 0, result.output
    result = _reaggregate(path, experiment, parent, tmp_path / "out" / "summary", "client" if read_path else "auto")
    assert result.exit_code == 0, result.output
    assert _files(path.parent) == before


_HOT_JOURNAL = """
import os, sqlite3, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("PRAGMA cache_size = 1")  # pages go to the file before the commit: the journal is needed to undo them
db.execute("BEGIN")
db.execute("UPDATE runs SET status = 'FAILED'")
db.execute("UPDATE latest_metrics SET value = -1")
os._exit(0)  # dies mid-transaction: the journal stays, hot
"""


@pytest.mark.parametrize("read_path", READ_PATHS, ids=["sql", "client"])
def test_a_hot_journal_is_refused_in_one_line_and_never_rolled_back(store, read_path):
    path, experiment, parent = store
    subprocess.run([sys.executable, "-c", _HOT_JOURNAL, str(path)], check=True, timeout=120)
    assert (path.parent / "mlflow.db-journal").stat().st_size > 0
    before = _files(path.parent)
    result = _summarize(path, experiment, parent, *read_path)
    assert result.exit_code == 1, result.output
    assert "holds an unfinished transaction (a hot journal" in result.stderr and result.stderr.count("\n") == 1
    assert _files(path.parent) == before


def test_a_store_in_wal_mode_is_read_without_leaving_wal_files(store, tmp_path):
    path, experiment, parent = store
    with contextlib.closing(sqlite3.connect(path)) as db:
        assert db.execute("PRAGMA journal_mode = WAL").fetchone() == ("wal",)
    before = _files(path.parent)
    assert sorted(before) == ["mlflow.db"]  # closed cleanly: no -wal or -shm
    result = _summarize(path, experiment, parent)
    assert result.exit_code == 0, result.output
    result = _reaggregate(path, experiment, parent, tmp_path / "out" / "summary", "auto")
    assert result.exit_code == 0, result.output
    assert _files(path.parent) == before


def test_a_store_in_wal_mode_with_a_writer_is_read_through_its_wal(store):
    path, experiment, parent = store
    with contextlib.closing(sqlite3.connect(path)) as writer:
        writer.execute("PRAGMA journal_mode = WAL")
        writer.execute("UPDATE latest_metrics SET value = value + 0.25")
        writer.commit()  # in the -wal file only, until a checkpoint
        before = _files(path.parent)
        frame = MlflowSource(experiment, parent=parent, tracking_uri=f"sqlite:///{path}").read(MetricRequest("val_acc"))
        assert sorted(frame["metrics.val_acc"]) == pytest.approx([0.75 + i / 20 for i in range(6)])
        # -shm is the index through which the readers of a WAL database take turns: each of them writes there
        after = _files(path.parent)
        assert sorted(after) == sorted(before) == ["mlflow.db", "mlflow.db-shm", "mlflow.db-wal"]
        assert {k: v for k, v in after.items() if k != "mlflow.db-shm"} == {
            k: v for k, v in before.items() if k != "mlflow.db-shm"
        }


def test_a_locked_store_is_said_in_one_line_within_the_bound(store, monkeypatch):
    path, experiment, parent = store
    monkeypatch.setattr(_sql, "SQLITE_BUSY_TIMEOUT_S", 0.5)
    with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as writer:
        writer.execute("BEGIN EXCLUSIVE")
        result = _summarize(path, experiment, parent)
        writer.execute("ROLLBACK")
    assert result.exit_code == 1, result.output
    assert result.stderr == (
        f"Error: the MLflow store at sqlite:///{path} stayed locked by another process for 0.5 s (a writer in a "
        "long transaction); retry later\n"
    )


def test_a_damaged_store_is_said_in_one_line(store):
    path, experiment, parent = store
    data = bytearray(path.read_bytes())
    data[120:900] = b"\xff" * 780  # the schema's records on the first page
    path.write_bytes(bytes(data))
    result = _summarize(path, experiment, parent)
    assert result.exit_code == 1, result.output
    assert "is damaged (database disk image is malformed): restore it from a backup" in result.stderr
    assert result.stderr.count("\n") == 1 and "sqlalche.me" not in result.stderr


def test_a_run_deleted_between_the_statements_of_a_read_is_seen_by_neither(store, monkeypatch):
    """The runs and their values are read in one transaction: a writer that deletes a run in between cannot
    commit until the read ends, so the read never lists a run without its values (a spurious dropped run)."""
    path, experiment, parent = store
    fetch, attempts = _sql._fetch, []

    def delete_in_between(connection, sql, *args, **kwargs):
        rows = fetch(connection, sql, *args, **kwargs)
        if sql is _sql._RUNS_SQL:
            with contextlib.closing(sqlite3.connect(path, timeout=0)) as writer:
                try:
                    writer.execute("UPDATE runs SET lifecycle_stage = 'deleted' WHERE run_uuid = ?", (rows.iloc[0, 0],))
                    writer.commit()
                    attempts.append("deleted")
                except sqlite3.OperationalError as exc:
                    attempts.append(str(exc))
        return rows

    monkeypatch.setattr(_sql, "_fetch", delete_in_between)
    frame = MlflowSource(experiment, parent=parent, tracking_uri=f"sqlite:///{path}").read(MetricRequest("val_acc"))
    assert attempts == ["database is locked"]
    table = RunTable.from_frame(frame, Spec(val="val_acc", n=(1,)))
    assert len(table.runs) == 6 and not table.dropped


def test_a_reader_and_a_writer_at_once_never_wait_for_each_other_forever(store):
    """A writer that commits while reads run: each read sees all of one state or all of the other."""
    path, experiment, parent = store
    stop = threading.Event()

    def write() -> None:
        with contextlib.closing(sqlite3.connect(path, timeout=30)) as writer:
            while not stop.wait(0.01):  # a busy writer, with the pauses of a real one between its commits
                writer.execute("UPDATE latest_metrics SET value = value + 1")
                writer.commit()

    thread = threading.Thread(target=write)
    thread.start()
    try:
        for _ in range(10):
            frame = MlflowSource(experiment, parent=parent, tracking_uri=f"sqlite:///{path}").read(
                MetricRequest("val_acc")
            )
            values = sorted(frame["metrics.val_acc"])
            # the same number of writes added to every run: one state of the store
            assert len({round(v - (0.5 + i / 20), 6) for i, v in enumerate(values)}) == 1, values
    finally:
        stop.set()
        thread.join(60)
