"""One real Ray Tune experiment for the whole session (:mod:`tune_sweep`), summarized by several callbacks at
once. Ray itself is the session fixture ``ray_local`` of ``tests/conftest.py`` (started once)."""

from __future__ import annotations

import shutil
import tempfile
import uuid
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

from tune_sweep import REPORTS, RESAMPLES, TEST, VAL, N, TuneSweep, make_trainable

pytest.importorskip("ray", reason='needs the [ray] extra: pip install ".[ray]"')


#: A directory in memory, where the host has one: Ray's MLflowLoggerCallback commits each metric of each result
#: on its own, and creating the store commits each schema migration; on tmpfs no commit waits for the disk (on
#: a loaded 2-core machine: a new store 7 s instead of 17 s, 200 metrics 4 s instead of 9 s).
MEMORY_DIR = Path("/dev/shm")


@pytest.fixture(scope="session")
def _fast_store_dir(tmp_path_factory) -> Iterator[Path]:
    """A directory for the sweep's MLflow sqlite store, removed at the end of the session."""
    if not MEMORY_DIR.is_dir():
        yield tmp_path_factory.mktemp("mlflow-store")
        return
    path = Path(tempfile.mkdtemp(prefix="boontrack-tune-", dir=MEMORY_DIR))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="session")
def tune_sweep(ray_local, tmp_path_factory, _fast_store_dir) -> TuneSweep:
    """2 models x 5 seeds run by Tune for real (one trial errors), with these callbacks:

    ``last`` (defaults: the summary and its plots in the experiment directory), ``best`` (pick="best_val_step", into a
    directory of its own), ``broken`` (a metric no trial reports: must warn, not raise), ``contradicts`` (a
    direction opposite to the experiment's ``mode="max"`` of ``val_acc``: must warn, not raise) and, with mlflow
    installed, Ray's ``MLflowLoggerCallback`` logging every trial to a sqlite store plus ``mlflow`` (the summary
    written to that experiment too).
    """
    from ray import tune

    from boontrack.ray import BoonCallback

    root = tmp_path_factory.mktemp("tune")
    spec = {"val": VAL, "test": TEST, "n": N, "n_resamples": RESAMPLES}
    callbacks = {
        "last": BoonCallback(**spec),
        # the others test a pick, a warning, a tracker: no PNGs (rendering them is most of a summary's time)
        "best": BoonCallback(**spec, pick="best_val_step", out=root / "best", plots=False),
        "broken": BoonCallback(val="no_such_metric", out=root / "broken"),
        "contradicts": BoonCallback(**spec, maximize=False, out=root / "contradicts", plots=False),
    }
    tune_callbacks = list(callbacks.values())
    mlflow_info: dict[str, str] = {}
    with pytest.MonkeyPatch.context() as mp:
        # Tune refuses a result without TuneConfig's metric; one trial reports its test score on its own.
        mp.setenv("TUNE_DISABLE_STRICT_METRIC_CHECKING", "1")
        if _has_mlflow():
            mlflow_info = _mlflow_store(root, _fast_store_dir, mp)
            from ray.air.integrations.mlflow import MLflowLoggerCallback

            callbacks["mlflow"] = BoonCallback(
                **spec,
                out=root / "mlflow-dir",
                plots=False,
                mlflow_experiment=mlflow_info["experiment"],
                tracking_uri=mlflow_info["uri"],
            )
            logger = MLflowLoggerCallback(tracking_uri=mlflow_info["uri"], experiment_name=mlflow_info["experiment"])
            tune_callbacks = [logger, *callbacks.values()]
        tuner = tune.Tuner(
            make_trainable(REPORTS),
            param_space={"model": tune.grid_search(["a", "b"]), "seed": tune.grid_search(list(range(5)))},
            tune_config=tune.TuneConfig(reuse_actors=True, metric=VAL, mode="max"),
            run_config=tune.RunConfig(
                name="sweep", storage_path=str(root / "ray_results"), callbacks=tune_callbacks, verbose=0
            ),
        )
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            grid = tuner.fit()
    return TuneSweep(
        path=root / "ray_results" / "sweep",
        callbacks=callbacks,
        warnings=list(caught),
        trial_ids={(r.config["model"], r.config["seed"]): r.metrics["trial_id"] for r in grid},
        mlflow=mlflow_info,
    )


def _has_mlflow() -> bool:
    try:
        import mlflow  # noqa: F401
    except ImportError:
        return False
    return True


def _mlflow_store(root: Path, store_dir: Path, mp: pytest.MonkeyPatch) -> dict[str, str]:
    """A sqlite MLflow store in ``store_dir`` with an experiment whose artifacts stay under ``root``; MLflow's
    process-wide tracking and registry URIs (which ``MLflowLoggerCallback`` sets) are restored when ``mp`` is undone."""
    import mlflow.tracking._model_registry.utils as registry_utils
    import mlflow.tracking._tracking_service.utils as tracking_utils
    from mlflow import MlflowClient

    mp.setattr(tracking_utils, "_tracking_uri", tracking_utils._tracking_uri)
    mp.setattr(registry_utils, "_registry_uri", registry_utils._registry_uri)
    mp.chdir(root)  # the store's default experiment keeps artifacts in ./mlruns
    uri = f"sqlite:///{store_dir / 'mlflow.db'}"
    experiment = f"tune-{uuid.uuid4().hex[:8]}"
    MlflowClient(uri).create_experiment(experiment, artifact_location=(root / "artifacts").as_uri())
    return {"uri": uri, "experiment": experiment}
