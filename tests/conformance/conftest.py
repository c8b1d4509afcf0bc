"""One fixture per source of runs: each logs :data:`sweep.SWEEP` for real and returns ``open(pick) -> Source``.

A new integration joins the conformance suite by adding one session fixture here that logs the sweep to it and
returns such an ``open`` function, and its name to :data:`SOURCES`. The tracker fixtures (a real ``mlflow
server``, the isolated wandb settings) are the session fixtures of ``tests/conftest.py``, shared with the
integration tests.
"""

from __future__ import annotations

import contextlib
import csv
import math
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from boontrack.backends import Source, open_source

from conformance.sweep import EXPECTED, SWEEP, TEST, VAL
from offline_files import cut_before_last_record, finish_offline_runs

#: Source fixtures the suite runs against, each named ``source_<name>``.
SOURCES = ("csv", "mlflow_sqlite", "mlflow_sqlite_client", "mlflow_server", "wandb_offline", "wandb_double")

Opener = Callable[[str], Source]


@pytest.fixture(params=SOURCES)
def open_sweep(request) -> Opener:
    """``open(pick) -> Source`` of the sweep as one source logged it (the suite runs once per source)."""
    return request.getfixturevalue(f"source_{request.param}")


# -- CSV export ----------------------------------------------------------------------------------------------
@pytest.fixture(scope="session")
def source_csv(tmp_path_factory) -> Opener:
    """The sweep as a CSV export holds it: one row per run with the picked values, written from the expectation
    (a file has no histories, so each pick is its own export)."""
    directory = tmp_path_factory.mktemp("csv")
    for pick, (kept, dropped) in EXPECTED.items():
        with open(directory / f"{pick}.csv", "w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(["run_id", "status", "params.model", "params.seed", f"metrics.{VAL}", f"metrics.{TEST}"])
            for run in SWEEP:
                val, test = kept[run.key] if run.key in kept else _values_of_dropped(dropped[run.key])
                writer.writerow([f"{run.model}-{run.seed}", run.status, run.model, run.seed, _cell(val), _cell(test)])
    return lambda pick: open_source(str(directory / f"{pick}.csv"))


def _values_of_dropped(reason: str) -> tuple[float, float]:
    """What a dropped run shows in an export: a missing value for the metric it is dropped for, else any."""
    return (math.nan, 0.5) if VAL in reason else (0.5, math.nan) if TEST in reason else (0.5, 0.5)


def _cell(value: float) -> str:
    return "" if math.isnan(value) else repr(value)


# -- MLflow --------------------------------------------------------------------------------------------------
@pytest.fixture(scope="session")
def _mlflow_sqlite_path(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("conformance-sqlite") / "mlflow.db"


@pytest.fixture(scope="session")
def _mlflow_sqlite_sweep(_mlflow_sqlite_path, _mlflow_quiet) -> Opener:
    return _log_to_mlflow(f"sqlite:///{_mlflow_sqlite_path}")


@pytest.fixture(scope="session")
def source_mlflow_sqlite(_mlflow_sqlite_sweep, _mlflow_sqlite_path) -> Opener:
    """The sqlite store read by SQL: the default for a database URI whose schema revision is known."""
    import sqlite3

    from boontrack_mlflow._sql import KNOWN_REVISIONS

    with contextlib.closing(sqlite3.connect(_mlflow_sqlite_path)) as store:
        assert store.execute("SELECT version_num FROM alembic_version").fetchone()[0] in KNOWN_REVISIONS
    return _mlflow_sqlite_sweep


@pytest.fixture(scope="session")
def source_mlflow_sqlite_client(_mlflow_sqlite_sweep) -> Opener:
    """The same store read through MlflowClient."""
    return lambda pick: _mlflow_sqlite_sweep(pick, read_path="client")


@pytest.fixture(scope="session")
def source_mlflow_server(mlflow_server, _mlflow_quiet) -> Opener:
    return _log_to_mlflow(mlflow_server)


@pytest.fixture(scope="session")
def _mlflow_quiet(tmp_path_factory):
    pytest.importorskip("mlflow")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MLFLOW_SUPPRESS_PRINTING_URL_TO_STDOUT", "true")
        mp.chdir(tmp_path_factory.mktemp("mlflow-cwd"))  # MLflow's ./mlruns never lands in the checkout
        yield


def _log_to_mlflow(uri: str) -> Opener:
    from mlflow import MlflowClient
    from mlflow.entities import Metric, Param

    client = MlflowClient(uri)
    experiment_id = client.create_experiment(f"conformance-{uuid.uuid4().hex[:8]}")
    parent = client.create_run(experiment_id, run_name="sweep").info.run_id
    for run in SWEEP:
        run_id = client.create_run(experiment_id, tags={"mlflow.parentRunId": parent}).info.run_id
        metrics = [
            Metric(key, value, 1_700_000_000_000 + step, step)
            for step, row in enumerate(run.rows)
            for key, value in row.items()
        ]
        params = [Param("model", run.model), Param("seed", str(run.seed))]
        client.log_batch(run_id, metrics=metrics, params=params)
        if run.status != "running":
            client.set_terminated(run_id, run.status.upper())
    summary = client.create_run(experiment_id, tags={"mlflow.parentRunId": parent, "boontrack.role": "summary"})
    client.log_metric(summary.info.run_id, VAL, 0.99)  # boontrack's own run: never an input
    client.set_terminated(summary.info.run_id, "FINISHED")
    return lambda pick, **options: open_source("mlflow:", parent=parent, tracking_uri=uri, **options)


# -- W&B -----------------------------------------------------------------------------------------------------
ENTITY, PROJECT = "team", "conformance"


@pytest.fixture(scope="session")
def wandb_sweep_dir(wandb_env: Path) -> Path:
    """The sweep written by the real wandb library in offline mode; the running run's file ends before its exit
    record, as a live run's file does between two writes."""
    import wandb

    directory = wandb_env / "conformance"
    directory.mkdir()

    def write(config: dict, rows, *, exit_code: int = 0, job_type: str = "train") -> Path:
        run = wandb.init(
            entity=ENTITY,
            project=PROJECT,
            mode="offline",
            dir=str(directory),
            config=config,
            job_type=job_type,
            reinit="create_new",
            settings=wandb.Settings(console="off", x_disable_stats=True),
        )
        for row in rows:
            run.log(dict(row))
        run.finish(exit_code=exit_code)
        return next(directory.glob(f"wandb/offline-run-*-{run.id}/run-{run.id}.wandb"))

    paths = [
        write({"model": run.model, "seed": run.seed}, run.rows, exit_code=int(run.status == "failed")) for run in SWEEP
    ]
    paths.append(write({"boontrack.role": "summary"}, [{VAL: 0.99}], job_type="boontrack"))
    finish_offline_runs(paths)
    for run, path in zip(SWEEP, paths):
        if run.status == "running":
            cut_before_last_record(path)  # the exit record gone: the file as a live run's is between two writes
    return directory


@pytest.fixture(scope="session")
def source_wandb_offline(wandb_sweep_dir: Path) -> Opener:
    return lambda pick: open_source(f"wandb-offline:{wandb_sweep_dir}")


@pytest.fixture(scope="session")
def source_wandb_double(wandb_sweep_dir: Path) -> Opener:
    """The W&B public API path, against the wire-protocol double seeded from the offline files."""
    from boontrack_wandb._offline import find_run_files
    from boontrack_wandb._records import read_offline_run

    from wandb_double import FakeRun, WandbDouble

    server = WandbDouble(ENTITY).start()
    for i, path in enumerate(find_run_files(wandb_sweep_dir)):
        rec = read_offline_run(path, with_history=True)
        server.add_run(
            FakeRun(
                name=rec.run_id,
                entity=ENTITY,
                project=PROJECT,
                state=rec.state,
                job_type=rec.job_type or None,
                config={k: v for k, v in rec.config.items() if k != "_wandb"},
                summary=rec.summary,
                history=rec.history,
                created_at=f"2026-01-01T00:00:{i:02d}",
            )
        )
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("WANDB_BASE_URL", server.url)
        yield lambda pick: open_source(f"wandb:{ENTITY}/{PROJECT}")
        import wandb

        wandb.teardown()  # before the server goes: the sidecar would otherwise retry it at exit
        server.stop()
