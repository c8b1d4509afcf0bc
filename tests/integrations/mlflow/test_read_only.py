"""A read never writes: stores that are not MLflow's, damaged, locked, half-written or in WAL mode are read (or
refused) with every file of their directory left byte for byte as it was, and no file added, after a
``summarize`` and after a ``reaggregate`` pass, by SQL and through the client."""

from __future__ import annotations

import contextlib
import hashlib
import shutil
import signal
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


#: A writer of its own process: commits through MLflow's client into the WAL (left there: the client's connection
#: stays open), then starts a transaction it does not commit, with pages of it spilled into the WAL, says "mid-write"
#: and waits for its standard input, holding the store open.
_WAL_WRITER = """
import sqlite3, sys
from mlflow import MlflowClient
from mlflow.entities import Metric
path, experiment, parent = sys.argv[1:]
client = MlflowClient(f"sqlite:///{path}")
run = client.create_run(experiment, tags={"mlflow.parentRunId": parent}).info.run_id
client.log_batch(run, metrics=[Metric("val_acc", 0.99, 1, 0)])
client.set_terminated(run, "FINISHED")
writer = sqlite3.connect(path, isolation_level=None)
writer.execute("PRAGMA cache_size = 1")  # the uncommitted pages go to the WAL before any commit
writer.execute("BEGIN IMMEDIATE")
writer.execute("UPDATE latest_metrics SET value = -1")
print("mid-write", flush=True)
sys.stdin.readline()
"""


@contextlib.contextmanager
def _writer_in_the_middle_of_a_write(path: Path, experiment: str, parent: str):
    """A writer process of :data:`_WAL_WRITER` on the store at ``path`` (in WAL mode), yielded once it is mid-write;
    it ends normally (its transaction rolled back, its WAL checkpointed) at the end of the block unless killed."""
    with contextlib.closing(sqlite3.connect(path)) as db:
        assert db.execute("PRAGMA journal_mode = WAL").fetchone() == ("wal",)
    writer = subprocess.Popen(
        [sys.executable, "-c", _WAL_WRITER, str(path), experiment, parent],
        cwd=path.parent.parent,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert writer.stdout.readline() == "mid-write\n"
        yield writer
    finally:
        writer.communicate(timeout=120)


def _read_runs(path: Path, experiment: str, parent: str) -> list[float]:
    frame = MlflowSource(experiment, parent=parent, tracking_uri=f"sqlite:///{path}").read(MetricRequest("val_acc"))
    return sorted(frame["metrics.val_acc"])


#: The template's runs, and the run the writer committed (its uncommitted change of every value is not seen).
_COMMITTED = sorted([0.5 + i / 20 for i in range(6)] + [0.99])


def _killed_mid_write(path: Path, experiment: str, parent: str) -> None:
    """Leave the store at ``path`` as a writer killed with ``kill -9`` mid-write leaves it: its ``-wal`` file (with
    committed and uncommitted pages) and its ``-shm`` file, which no process has open."""
    with _writer_in_the_middle_of_a_write(path, experiment, parent) as writer:
        writer.send_signal(signal.SIGKILL)
        writer.wait(120)
    assert sorted(p.name for p in path.parent.iterdir()) == ["mlflow.db", "mlflow.db-shm", "mlflow.db-wal"]


def test_a_store_left_by_a_writer_killed_mid_write_is_read_by_sql_without_a_byte_changed(store, tmp_path):
    """The read sees the killed writer's committed run through its ``-wal`` file and writes none of the three files:
    its ``-shm`` is opened read-only and SQLite builds the WAL index in the reader's memory. Before, a read-only
    connection opened ``-shm`` read-write and rebuilt the index there (every read rewrote ``-shm``)."""
    path, experiment, parent = store
    _killed_mid_write(path, experiment, parent)
    before = _files(path.parent)

    assert _read_runs(path, experiment, parent) == pytest.approx(_COMMITTED)
    assert _files(path.parent) == before
    result = _summarize(path, experiment, parent)
    assert result.exit_code == 0, result.output
    assert _files(path.parent) == before
    result = _reaggregate(path, experiment, parent, tmp_path / "out" / "summary", "auto")
    assert result.exit_code == 0 and result.stdout.startswith("sweep: updated"), result.output
    assert _files(path.parent) == before


def test_a_wal_file_without_its_shm_file_is_refused_in_one_line_and_nothing_created(store, monkeypatch):
    """A ``-wal`` file without its ``-shm`` file (a copy that left it out) cannot be read without creating ``-shm``:
    refused once no writer created it within the lock timeout. Before, the read created it."""
    path, experiment, parent = store
    _killed_mid_write(path, experiment, parent)
    (path.parent / "mlflow.db-shm").unlink()
    monkeypatch.setattr(_sql, "SQLITE_BUSY_TIMEOUT_S", 0.5)
    before = _files(path.parent)
    result = _summarize(path, experiment, parent)
    assert result.exit_code == 1, result.output
    assert result.stderr == (
        f"Error: the MLflow store at sqlite:///{path} has a -wal file without its -shm file, which a read would "
        "create; a read never writes: open the store once with MLflow or the sqlite3 shell, then retry\n"
    )
    assert _files(path.parent) == before


@pytest.mark.parametrize("left", ["by a writer killed mid-write", "closed cleanly"])
def test_a_store_in_wal_mode_is_refused_by_the_client_path_in_one_line_and_left_as_it_was(store, tmp_path, left):
    """MLflow's client opens an SQLite file read-write: in WAL mode it rebuilds ``-shm``, creates ``-wal`` and
    ``-shm`` when they are missing, and at its close checkpoints the WAL into the database and deletes both. So a
    store in WAL mode is never read through it: ``read_path=client`` (and a schema the SQL path does not know) is
    refused in one line, before MLflow opens the file. Before, the client read it and rewrote the files."""
    path, experiment, parent = store
    if left == "closed cleanly":
        with contextlib.closing(sqlite3.connect(path)) as db:
            assert db.execute("PRAGMA journal_mode = WAL").fetchone() == ("wal",)
    else:
        _killed_mid_write(path, experiment, parent)
    before = _files(path.parent)

    refused = _summarize(path, experiment, parent, "--option", "read_path=client")
    assert refused.exit_code == 2, refused.output
    assert refused.stderr == (
        f"Error: the MLflow store at sqlite:///{path} cannot be read through the MLflow client without changing it: "
        "it is in WAL mode, and the client would checkpoint its -wal file into the database and delete -wal and "
        f"-shm; boontrack reads never write (read it by SQL: read_path=auto, on a schema revision boontrack knows: "
        f"{', '.join(sorted(_sql.KNOWN_REVISIONS))})\n"
    )
    assert _files(path.parent) == before
    result = _reaggregate(path, experiment, parent, tmp_path / "out" / "summary", "client")
    assert result.exit_code == 1 and "cannot be read through the MLflow client" in result.stdout, result.output
    assert _files(path.parent) == before


def test_a_store_in_wal_mode_with_a_writer_is_read_through_its_wal(store):
    """A writer of another process has the store open: the read sees what it committed, through its WAL index,
    and leaves every byte of the three files as it was."""
    path, experiment, parent = store
    with _writer_in_the_middle_of_a_write(path, experiment, parent):
        before = _files(path.parent)
        assert _read_runs(path, experiment, parent) == pytest.approx(_COMMITTED)
        assert _files(path.parent) == before


#: Says "held" when another process holds a lock on SQLite's shared lock bytes of the file (a reader), else "free".
_PROBE_SHARED_LOCK = """
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
try:
    fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 510, 0x40000002)
    print("free")
except OSError:
    print("held")
"""


def _shared_lock(path: Path) -> str:
    probe = [sys.executable, "-c", _PROBE_SHARED_LOCK, str(path)]
    return subprocess.run(probe, capture_output=True, text=True, check=True, timeout=120).stdout.strip()


@pytest.mark.parametrize("mode", ["wal", "delete"])
def test_a_read_keeps_the_locks_of_the_processs_own_connection_to_the_store(store, mode):
    """SQLite's locks are POSIX locks, which a process loses on a file when it closes any descriptor of that file.
    A read in a process that has its own connection to the store (an MLflow callback beside the training's
    client) leaves that connection's shared lock held: in WAL mode it is what keeps another process from
    checkpointing and deleting ``-wal`` and ``-shm`` under the connection, in rollback mode what keeps writers out
    of its transaction. Before, the read's look at the file's header released it."""
    path, experiment, parent = store
    with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as own:
        assert own.execute(f"PRAGMA journal_mode = {mode}").fetchone() == (mode,)
        own.execute("BEGIN")
        own.execute("SELECT count(*) FROM runs").fetchall()
        assert _shared_lock(path) == "held"
        assert len(_read_runs(path, experiment, parent)) == 6
        assert _shared_lock(path) == "held"
        own.execute("COMMIT")


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
