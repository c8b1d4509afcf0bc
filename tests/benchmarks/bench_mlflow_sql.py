"""Benchmark: reading an MLflow SQL store by SQL (:mod:`boontrack_mlflow._sql`) against the client path and one
hand-written query, on sqlite and, when it can run here, PostgreSQL.

For each store and sweep size (child runs of one parent; params seed/lr/model, metrics val_acc/test_acc, 5 %
FAILED, 10 % with 12-epoch histories of both metrics) it times, in one process on the same data:

- ``boontrack (SQL)``: ``MlflowSource(...).read(request)``, the default for a database URI;
- ``boontrack (client)``: the same with ``read_path="client"`` (MlflowClient paging);
- ``hand query``: one hand-written statement (runs, params, latest metrics and tags of the sweep as long rows,
  UNION ALL) through the bare DB-API driver, pivoted into a wide frame: the same information as the run frame,
  with nothing boontrack does besides; for ``best-val-step`` one more statement reads the val/test histories of
  the sweep (the reading floor; no pick computed).

How the stores are made: MLflow creates the schema (``MlflowClient(uri)``), the experiment and the parent run;
the child runs are then inserted by SQL into MLflow's own tables (``mlflow_tools.insert_children``: MLflow has no
bulk create-runs API, and one run costs 20-60 ms through the client). The largest sqlite store is generated
once and copied for nothing else; PostgreSQL gets the same rows through the same function.

PostgreSQL: a throw-away server is started with ``initdb``/``pg_ctl`` in a temporary directory, on 127.0.0.1
and a free port, as the ``postgres`` user when run as root, and stopped at the end; boontrack reads it with a
role that has only SELECT rights (the setup the docs recommend for a scheduled job beside the database).
Needs ``psycopg2`` (``pip install psycopg2-binary``) and the server binaries (Debian: ``apt-get install
postgresql``); without them that part is skipped with the reason.

Run:  python tests/benchmarks/bench_mlflow_sql.py [--sizes 10000 100000] [--repeat 5] [--client-max 10000]
      [--no-postgres]
Prints Markdown tables of min / median seconds.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

os.environ.setdefault("MLFLOW_SUPPRESS_PRINTING_URL_TO_STDOUT", "true")

import mlflow  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from mlflow import MlflowClient  # noqa: E402
from mlflow_tools import insert_children  # noqa: E402

from boontrack.backends import MetricRequest  # noqa: E402
from boontrack_mlflow import MlflowSource  # noqa: E402

HISTORIES = 0.1
LAST = MetricRequest("val_acc", "test_acc")
BEST = MetricRequest("val_acc", "test_acc", pick="best_val_step")

# The hand-written query: every value of the sweep's runs as long rows (kind, key, text or number).
HAND_SQL = """
WITH sweep AS (
  SELECT r.run_uuid, r.status, r.start_time, r.end_time FROM runs r
  JOIN tags p ON p.run_uuid = r.run_uuid AND p.key = 'mlflow.parentRunId' AND p.value = {parent}
  WHERE r.experiment_id = {experiment} AND r.lifecycle_stage = 'active')
SELECT s.run_uuid, 'run', s.status, NULL, s.start_time, s.end_time FROM sweep s
UNION ALL SELECT p.run_uuid, 'param', p.key, p.value, NULL, NULL FROM params p JOIN sweep s ON s.run_uuid = p.run_uuid
UNION ALL SELECT t.run_uuid, 'tag', t.key, t.value, NULL, NULL FROM tags t JOIN sweep s ON s.run_uuid = t.run_uuid
UNION ALL SELECT m.run_uuid, 'metric', m.key, NULL, CASE WHEN m.is_nan THEN NULL ELSE m.value END, NULL
  FROM latest_metrics m JOIN sweep s ON s.run_uuid = m.run_uuid
"""
HAND_HISTORY_SQL = """
SELECT m.run_uuid, m.key, m.step, m.timestamp, m.value, m.is_nan FROM metrics m
JOIN runs r ON r.run_uuid = m.run_uuid
JOIN tags p ON p.run_uuid = r.run_uuid AND p.key = 'mlflow.parentRunId' AND p.value = {parent}
WHERE r.experiment_id = {experiment} AND r.lifecycle_stage = 'active' AND m.key IN ('val_acc', 'test_acc')
"""


def hand_read(connect: Callable[[], object], placeholder: str, experiment_id: str, parent: str, *, best: bool) -> int:
    """The hand-written query through the bare driver, pivoted into one wide row per run."""
    with contextlib.closing(connect()) as connection:
        cursor = connection.cursor()
        cursor.execute(HAND_SQL.format(parent=placeholder, experiment=int(experiment_id)), (parent,))
        rows = pd.DataFrame(cursor.fetchall(), columns=["run_id", "kind", "key", "text", "number", "end"])
        if best:
            cursor.execute(HAND_HISTORY_SQL.format(parent=placeholder, experiment=int(experiment_id)), (parent,))
            history = pd.DataFrame(cursor.fetchall())
            assert len(history) > 0
    runs = rows[rows["kind"] == "run"].set_index("run_id")
    values = rows[rows["kind"] != "run"]
    wide = pd.concat(
        [
            values[values["kind"] == "param"].pivot(index="run_id", columns="key", values="text").add_prefix("params."),
            values[values["kind"] == "metric"]
            .pivot(index="run_id", columns="key", values="number")
            .add_prefix("metrics."),
            values[values["kind"] == "tag"].pivot(index="run_id", columns="key", values="text").add_prefix("tags."),
        ],
        axis=1,
    ).reindex(runs.index)
    return len(wide)


def interleaved(functions: dict[str, Callable[[], int]], *, repeat: dict[str, int], expected: int) -> dict:
    """name -> (min, median) seconds of ``repeat[name]`` calls after one warm-up call each. The calls take turns
    (one of each per round), so that a change in the machine's load hits all of them alike."""
    seconds: dict[str, list[float]] = {name: [] for name in functions}
    for round_ in range(-1, max(repeat.values())):
        for name, function in functions.items():
            if round_ >= repeat[name]:
                continue
            started = time.perf_counter()
            got = function()
            if round_ >= 0:
                seconds[name].append(time.perf_counter() - started)
            if got != expected:
                raise AssertionError(f"{name} read {got} runs, expected {expected}")
    return {name: (min(values), statistics.median(values)) for name, values in seconds.items()}


def make_sweep(uri: str, size: int, seed: int) -> tuple[str, str]:
    """An experiment with a parent run and ``size`` children inserted by SQL; (experiment id, parent id)."""
    client = MlflowClient(uri)
    experiment_id = client.create_experiment(f"bench-{size}")
    parent = client.create_run(experiment_id, run_name=f"sweep-{size}").info.run_id
    client.set_terminated(parent)
    started = time.perf_counter()
    insert_children(uri, experiment_id, parent, size, np.random.default_rng(seed), histories=HISTORIES)
    print(f"  inserted {size:,} child runs in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return experiment_id, parent


def measure(
    label: str,
    uri: str,
    sweeps: dict[int, tuple[str, str]],
    hand: Callable[..., int],
    *,
    repeat: int,
    client_max: int,
) -> list[str]:
    rows = []
    for size, (experiment_id, parent) in sweeps.items():
        for name, request in (("last", LAST), ("best-val-step", BEST)):

            def boontrack(read_path: str, request=request, experiment_id=experiment_id, parent=parent) -> int:
                source = MlflowSource(experiment_id, parent=parent, tracking_uri=uri, read_path=read_path)
                return len(source.read(request))

            functions = {
                "sql": lambda: boontrack("auto"),
                "hand": lambda: hand(experiment_id, parent, best=request is BEST),
            }
            counts = {"sql": repeat, "hand": repeat}
            if size <= client_max:
                functions["client"] = lambda: boontrack("client")
                counts["client"] = max(1, repeat // 2)
                sql_frame = MlflowSource(experiment_id, parent=parent, tracking_uri=uri).read(request)
                client_frame = MlflowSource(experiment_id, parent=parent, tracking_uri=uri, read_path="client").read(
                    request
                )
                pd.testing.assert_frame_equal(sql_frame, client_frame)  # the same frame, or no figure
            got = interleaved(functions, repeat=counts, expected=size)
            sql, floor = got["sql"], got["hand"]
            client_cell = f"{got['client'][0]:.2f} / {got['client'][1]:.2f}" if "client" in got else "not run"
            rows.append(
                f"| {size:,} | {label} | {name} | {sql[0]:.2f} / {sql[1]:.2f} | {floor[0]:.2f} / {floor[1]:.2f} "
                f"| {sql[0] / floor[0]:.2f} / {sql[1] / floor[1]:.2f} | {client_cell} |"
            )
            print(rows[-1], file=sys.stderr)
    return rows


# -- PostgreSQL ----------------------------------------------------------------------------------------------------
def postgres_missing() -> str | None:
    """Why PostgreSQL cannot run here, or None."""
    try:
        import psycopg2  # noqa: F401
    except ImportError:
        return "psycopg2 is not installed (pip install psycopg2-binary)"
    for binary in ("initdb", "pg_ctl"):
        if shutil.which(binary) is None:
            return f"{binary} not found (Debian: apt-get install postgresql)"
    return None


def _as_server_user(command: list[str]) -> list[str]:
    """PostgreSQL refuses to run as root: run its binaries as ``postgres`` then."""
    return ["runuser", "-u", "postgres", "--", *command] if os.geteuid() == 0 else command


@contextlib.contextmanager
def postgres_server(root: Path) -> Iterator[int]:
    """A PostgreSQL server on 127.0.0.1 (port yielded), data and socket in ``root``; stopped on exit."""
    data = root / "pgdata"
    root.chmod(0o777)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    subprocess.run(
        _as_server_user(["initdb", "-D", str(data), "-U", "postgres", "-A", "trust"]),
        check=True,
        stdout=subprocess.DEVNULL,
    )
    options = f"-h 127.0.0.1 -p {port} -k {root} -c fsync=off"
    subprocess.run(
        _as_server_user(["pg_ctl", "-D", str(data), "-o", options, "-l", str(root / "pg.log"), "-w", "start"]),
        check=True,
        stdout=subprocess.DEVNULL,
    )
    try:
        yield port
    finally:
        subprocess.run(
            _as_server_user(["pg_ctl", "-D", str(data), "-m", "fast", "-w", "stop"]),
            check=False,
            stdout=subprocess.DEVNULL,
        )


def postgres_rows(root: Path, sizes: list[int], *, repeat: int, client_max: int) -> list[str]:
    import psycopg2
    from psycopg2.extensions import AsIs, register_adapter

    register_adapter(np.float64, AsIs)  # insert_children's values are numpy floats
    with postgres_server(root) as port:
        admin = psycopg2.connect(host="127.0.0.1", port=port, user="postgres", dbname="postgres")
        admin.autocommit = True
        admin.cursor().execute("CREATE DATABASE mlflow")
        admin.close()
        owner_uri = f"postgresql+psycopg2://postgres@127.0.0.1:{port}/mlflow"
        started = time.perf_counter()
        MlflowClient(owner_uri).search_experiments()  # MLflow creates its schema (all migrations)
        print(f"  MLflow created its PostgreSQL schema in {time.perf_counter() - started:.0f} s", file=sys.stderr)
        sweeps = {size: make_sweep(owner_uri, size, seed=size) for size in sizes}
        with contextlib.closing(psycopg2.connect(host="127.0.0.1", port=port, user="postgres", dbname="mlflow")) as db:
            db.autocommit = True
            cursor = db.cursor()
            cursor.execute("VACUUM ANALYZE")
            # the scheduled job's role: it can read MLflow's tables and nothing else
            cursor.execute("CREATE ROLE reader LOGIN")
            cursor.execute("GRANT SELECT ON ALL TABLES IN SCHEMA public TO reader")
        check_postgres_read_only(owner_uri, sweeps)
        reader_uri = f"postgresql+psycopg2://reader@127.0.0.1:{port}/mlflow"

        def connect() -> object:
            return psycopg2.connect(host="127.0.0.1", port=port, user="reader", dbname="mlflow")

        def hand(experiment_id: str, parent: str, *, best: bool) -> int:
            return hand_read(connect, "%s", experiment_id, parent, best=best)

        return measure("PostgreSQL", reader_uri, sweeps, hand, repeat=repeat, client_max=client_max)


def check_postgres_read_only(owner_uri: str, sweeps: dict[int, tuple[str, str]]) -> None:
    """With the owner's rights, a write through boontrack's connection fails: the transaction is read-only."""
    from sqlalchemy import text
    from sqlalchemy.exc import InternalError, OperationalError, ProgrammingError

    from boontrack_mlflow import _sql

    with _sql._engine(owner_uri).connect() as connection:
        try:
            connection.execute(text("UPDATE runs SET status = 'FAILED'"))
        except (InternalError, OperationalError, ProgrammingError) as exc:
            print(f"  PostgreSQL write through the reader's connection refused: {exc.orig}".strip(), file=sys.stderr)
        else:
            raise AssertionError("a write went through boontrack's PostgreSQL connection")


# -- main ----------------------------------------------------------------------------------------------------------
def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--client-max", type=int, default=10_000, help="Largest sweep also read by the client.")
    parser.add_argument("--no-postgres", action="store_true")
    args = parser.parse_args()
    header = [
        f"min / median seconds of {args.repeat} reads after a warm-up, taking turns (client path: "
        f"{max(1, args.repeat // 2)}); "
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at the start; mlflow {mlflow.__version__}",
        "",
        "| child runs | store | pick | boontrack (SQL) | hand query | SQL / hand | boontrack (client) |",
        "|---:|---|---|---:|---:|---:|---:|",
    ]
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-mlflow-sql-") as tmp:
        root = Path(tmp)
        db = root / "mlflow.db"
        uri = f"sqlite:///{db}"
        os.chdir(root)  # MLflow's default artifact root ./mlruns stays in the temporary directory
        MlflowClient(uri).search_experiments()  # MLflow creates the store
        sweeps = {size: make_sweep(uri, size, seed=size) for size in args.sizes}

        def hand_sqlite(experiment_id: str, parent: str, *, best: bool) -> int:
            connect = lambda: sqlite3.connect(f"file:{db}?mode=ro", uri=True)  # noqa: E731
            return hand_read(connect, "?", experiment_id, parent, best=best)

        rows += measure("sqlite", uri, sweeps, hand_sqlite, repeat=args.repeat, client_max=args.client_max)
        if not args.no_postgres:
            missing = postgres_missing()
            if missing:
                rows.append(f"| – | PostgreSQL | – | not run: {missing} | | | |")
            else:
                rows += postgres_rows(root, args.sizes, repeat=args.repeat, client_max=args.client_max)
    print("\n".join(header + rows))


if __name__ == "__main__":
    main()
