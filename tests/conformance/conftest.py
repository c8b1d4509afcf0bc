"""One fixture per source of runs: each logs :data:`boontrack.testing.SWEEP` for real and returns a :class:`Logged`.

A new integration joins the conformance suite by adding one session fixture here, ``source_<name>``, that logs the
sweep to it and returns ``Logged(open, profile)`` (``open() -> Source``; the profile says, by hand, what the
source cannot hold), and its name to :data:`SOURCES`. The tracker fixtures (a real ``mlflow server``, the isolated
wandb settings, a local Ray) are the session fixtures of ``tests/conftest.py``, shared with the integration tests.
"""

from __future__ import annotations

import contextlib
import csv
import json
import math
import os
import subprocess
import sys
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from boontrack.backends import Source, open_source
from boontrack.testing import ENDED, FULL, SWEEP, TEST, VAL, Profile

from conformance.sweep import HYDRA, OPTUNA, STEP_FILE
from offline_files import cut_before_last_record, finish_offline_runs

#: Source fixtures the suite runs against, each named ``source_<name>``: every built-in backend. A third party's,
#: written against boontrack.integration alone (``examples/third_party_backend``), runs the same checks from its
#: own tests, installed on its own: ``tests/test_third_party_backend.py``.
SOURCES = (
    "csv",
    "mlflow_sqlite",
    "mlflow_sqlite_client",
    "mlflow_server",
    "wandb_offline",
    "wandb_double",
    "optuna",
    "ray_tune",
    "hydra",
)

Opener = Callable[[], Source]
TESTS = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Logged:
    """The sweep as one source holds it: ``open()`` gives the source, ``profile`` what it must give back."""

    open: Opener
    profile: Profile


@pytest.fixture(params=SOURCES)
def logged(request) -> Logged:
    """The sweep as one source logged it (the suite runs once per source)."""
    return request.getfixturevalue(f"source_{request.param}")


# -- A file: one row per run and step, as a tracker's history is exported ---------------------------------------
@pytest.fixture(scope="session")
def source_csv(tmp_path_factory) -> Logged:
    """Each logged row of each run as a row of a CSV file (``run_id``, ``step``, the status and params repeated);
    a metric not logged at a step, or logged as NaN, is an empty cell."""
    path = tmp_path_factory.mktemp("csv") / "sweep.csv"
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(
            ["run_id", "step", "status", "params.model", "params.seed", f"metrics.{VAL}", f"metrics.{TEST}"]
        )
        for run in SWEEP:
            for step, row in enumerate(run.rows):
                cells = [_cell(row.get(VAL)), _cell(row.get(TEST))]
                writer.writerow([f"{run.model}-{run.seed}", step, run.status, run.model, run.seed, *cells])
    return Logged(lambda: open_source(str(path)), STEP_FILE)


def _cell(value: float | None) -> str:
    return "" if value is None or math.isnan(value) else repr(value)


# -- MLflow --------------------------------------------------------------------------------------------------
@pytest.fixture(scope="session")
def _mlflow_sqlite_path(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("conformance-sqlite") / "mlflow.db"


@pytest.fixture(scope="session")
def _mlflow_sqlite_sweep(_mlflow_sqlite_path, _mlflow_quiet) -> Callable[..., Source]:
    return _log_to_mlflow(f"sqlite:///{_mlflow_sqlite_path}")


@pytest.fixture(scope="session")
def source_mlflow_sqlite(_mlflow_sqlite_sweep, _mlflow_sqlite_path) -> Logged:
    """The sqlite store read by SQL: the default for a database URI whose schema revision is known."""
    import sqlite3

    from boontrack_mlflow._sql import KNOWN_REVISIONS

    with contextlib.closing(sqlite3.connect(_mlflow_sqlite_path)) as store:
        assert store.execute("SELECT version_num FROM alembic_version").fetchone()[0] in KNOWN_REVISIONS
    return Logged(_mlflow_sqlite_sweep, FULL)


@pytest.fixture(scope="session")
def source_mlflow_sqlite_client(_mlflow_sqlite_sweep) -> Logged:
    """The same store read through MlflowClient."""
    return Logged(lambda: _mlflow_sqlite_sweep(read_path="client"), FULL)


@pytest.fixture(scope="session")
def source_mlflow_server(mlflow_server, _mlflow_quiet) -> Logged:
    return Logged(_log_to_mlflow(mlflow_server), FULL)


@pytest.fixture(scope="session")
def _mlflow_quiet(tmp_path_factory):
    pytest.importorskip("mlflow")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MLFLOW_SUPPRESS_PRINTING_URL_TO_STDOUT", "true")
        mp.chdir(tmp_path_factory.mktemp("mlflow-cwd"))  # MLflow's ./mlruns never lands in the checkout
        yield


def _log_to_mlflow(uri: str) -> Callable[..., Source]:
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
    return lambda **options: open_source("mlflow:", parent=parent, tracking_uri=uri, **options)


# -- W&B -----------------------------------------------------------------------------------------------------
ENTITY, PROJECT, SWEEP_ID = "team", "conformance", "confsweep"


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
def source_wandb_offline(wandb_sweep_dir: Path) -> Logged:
    return Logged(lambda: open_source(f"wandb-offline:{wandb_sweep_dir}"), FULL)


@pytest.fixture(scope="session")
def source_wandb_double(wandb_sweep_dir: Path) -> Logged:
    """The W&B public API path, against the wire-protocol double seeded from the offline files: the runs of a
    sweep whose configuration maximizes val_acc."""
    from boontrack_wandb._offline import find_run_files
    from boontrack_wandb._records import read_offline_run

    from wandb_double import FakeRun, WandbDouble

    server = WandbDouble(ENTITY).start()
    server.add_sweep(ENTITY, PROJECT, SWEEP_ID, config=f"method: grid\nmetric:\n  name: {VAL}\n  goal: maximize\n")
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
                sweep=SWEEP_ID,
                created_at=f"2026-01-01T00:00:{i:02d}",
            )
        )
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("WANDB_BASE_URL", server.url)
        yield Logged(lambda: open_source(f"wandb:{ENTITY}/{PROJECT}", sweep=SWEEP_ID), Profile(FULL.expected, True))
        import wandb

        wandb.teardown()  # before the server goes: the sidecar would otherwise retry it at exit
        server.stop()


# -- Optuna --------------------------------------------------------------------------------------------------
@pytest.fixture(scope="session")
def source_optuna(tmp_path_factory) -> Logged:
    """The sweep through Optuna's ask-and-tell interface, in a study that maximizes val_acc: the validation score
    reported at every step and told as the objective, the last test score as a user attribute, the running run
    never told."""
    optuna = pytest.importorskip("optuna")
    import warnings

    storage = f"sqlite:///{tmp_path_factory.mktemp('conformance-optuna') / 'optuna.db'}"
    study = optuna.create_study(study_name="conformance", storage=storage, direction="maximize")
    with pytest.warns(optuna.exceptions.ExperimentalWarning):
        study.set_metric_names([VAL])
    space = {
        "model": optuna.distributions.CategoricalDistribution(["cnn", "mlp"]),
        "seed": optuna.distributions.IntDistribution(0, 3),
    }
    for run in SWEEP:
        study.enqueue_trial({"model": run.model, "seed": run.seed})
        trial = study.ask(space)
        vals = [(step, row[VAL]) for step, row in enumerate(run.rows) if VAL in row]
        for step, value in vals:
            trial.report(value, step)
        tests = [row[TEST] for row in run.rows if TEST in row]
        if tests:
            trial.set_user_attr(TEST, tests[-1])
        if run.status == "failed":
            study.tell(trial, state=optuna.trial.TrialState.FAIL)
        elif run.status == "finished":
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)  # "The value nan is not acceptable": Optuna fails it
                study.tell(trial, vals[-1][1])
    return Logged(lambda: open_source(f"optuna:{storage}"), OPTUNA)


# -- Ray Tune ------------------------------------------------------------------------------------------------
@pytest.fixture(scope="session")
def source_ray_tune(ray_local, tmp_path_factory) -> Logged:
    """The sweep run by Tune for real, a grid over model x seed whose trials report their rows (the failed run
    raises after them), with ``TuneConfig(metric=val_acc, mode="max")``; read back from the experiment directory."""
    from ray import tune

    rows = {(run.model, run.seed): (run.rows, run.status) for run in SWEEP}

    def trainable(config: dict) -> None:
        from ray import tune

        reported, status = rows[(config["model"], config["seed"])]
        for row in reported:
            tune.report(dict(row))
        if status == "failed":
            raise RuntimeError("diverged")

    storage = tmp_path_factory.mktemp("conformance-ray")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TUNE_DISABLE_STRICT_METRIC_CHECKING", "1")  # some rows hold the test score only
        tune.Tuner(
            trainable,
            param_space={"model": tune.grid_search(["cnn", "mlp"]), "seed": tune.grid_search([0, 1, 2, 3])},
            # one trial actor per slot, reused: a new actor per trial costs a worker start-up each (8 trials:
            # 45 s instead of 11 s on a loaded 2-core machine); the experiment directory is the same
            tune_config=tune.TuneConfig(metric=VAL, mode="max", reuse_actors=True),
            run_config=tune.RunConfig(name="conformance", storage_path=str(storage), verbose=0),
        ).fit()
    return Logged(lambda: open_source(f"ray-tune:{storage / 'conformance'}"), Profile(ENDED.expected, True))


# -- Hydra ---------------------------------------------------------------------------------------------------
@pytest.fixture(scope="session")
def source_hydra(tmp_path_factory) -> Logged:
    """The sweep as a Hydra multirun of a small app (model x seed, the boontrack callback configured), each job
    returning its last values; the failed run raises. Read back from the sweep directory's job records."""
    pytest.importorskip("hydra")
    root = tmp_path_factory.mktemp("conformance-hydra")
    scores = {f"{run.model}/0.1/{run.seed}": "fail" if run.status == "failed" else run.last_values() for run in SWEEP}
    (root / "scores.json").write_text(json.dumps(scores))  # NaN as JSON's NaN, which json reads back
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WANDB_", "MLFLOW_", "HYDRA_"))}
    env["SWEEP_SCORES"] = str(root / "scores.json")
    done = subprocess.run(
        [
            sys.executable,
            str(TESTS / "integrations" / "hydra" / "sweep_app" / "app.py"),
            "--multirun",
            "model=cnn,mlp",
            "seed=0,1,2,3",
            f"hydra.sweep.dir={root / 'sweep'}",
        ],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert "RuntimeError: diverged at seed 3" in done.stderr, done.stderr  # Hydra raises the failed job's error
    return Logged(lambda: open_source(f"hydra:{root / 'sweep'}"), HYDRA)
