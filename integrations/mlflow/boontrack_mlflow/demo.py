"""``boontrack demo``: a real small sweep in a local MLflow store, summarized and written back.

Two approaches on scikit-learn's bundled digits data (no download): logistic regression with a random
regularization strength, and a small MLP with random width, learning rate and weight decay trained epoch by
epoch (each epoch's ``val_acc`` and ``test_acc`` are logged, so the summary pairs the test score with the epoch
of best validation). Each trial is a child run of one parent run in an embedded sqlite store (no server). The
sweep is then summarized with write-back: a summary child run (named like ``boon test_acc V n=1,5,10``) with the
``boon/...`` metrics, the report, and one curve run per approach under it.

Running the demo again reuses the finished sweep in the store (the summary is then already up to date and
nothing is written); ``--new-sweep`` trains and logs a fresh sweep beside it.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    import numpy as np

    from boontrack.integration import JobResult

__all__ = ["DEFAULT_STORE", "EXPERIMENT", "demo_command", "run_demo"]

DEFAULT_STORE = Path("boontrack-demo") / "mlflow.db"
EXPERIMENT = "boontrack-demo"
#: Tag marking the demo's parent runs, so a rerun finds the finished sweep instead of training another.
DEMO_TAG = "boontrack.demo"
MLP_EPOCHS = 12
MODELS = ("logistic-regression", "mlp")


def run_demo(
    store: str | Path = DEFAULT_STORE,
    *,
    trials: int = 30,
    new_sweep: bool = False,
    echo: Callable[[str], Any] = print,
) -> JobResult:
    """Run (or reuse) the demo sweep in the sqlite store ``store`` and summarize it with write-back.

    Parameters
    ----------
    store
        Path of the sqlite file (created with its directory); artifacts go to ``artifacts/`` beside it.
    trials
        Trials per approach (seeds / hyperparameter draws).
    new_sweep
        Train a new sweep even when the store holds a finished one.
    echo
        Where progress lines and the summary table go.

    Returns
    -------
    JobResult
        ``"updated"`` after a new sweep, ``"unchanged"`` when a reused sweep's summary was already written.
    """
    from boontrack.integration import Spec, format_table, open_sinks, run_job
    from boontrack_mlflow import MlflowSource
    from boontrack_mlflow._client import bounded_http, connect

    if isinstance(trials, bool) or not isinstance(trials, int) or trials < 2:
        raise ValueError(f"`trials` must be an integer >= 2, got {trials!r}")
    path = Path(store).expanduser().resolve()
    path.parent.mkdir(parents=True, exist_ok=True)
    uri = f"sqlite:///{path}"
    with bounded_http():
        client = connect(uri)
        experiment_id = _experiment(client, path.parent / "artifacts")
        parent_id = None if new_sweep else _finished_sweep(client, experiment_id)
        if parent_id is None:
            started = time.perf_counter()
            parent_id = _train_sweep(client, experiment_id, trials)
            echo(f"Trained and logged {2 * trials} runs in {time.perf_counter() - started:.1f} s.")
            echo(f"The sweep's parent run: {parent_id}")
        else:
            echo(f"Reusing the finished demo sweep {parent_id} (--new-sweep trains another).")

    # The default budgets, as `boontrack summarize` uses them: each of 1, 5, 10 that the groups have runs for.
    spec = Spec(val="val_acc", test="test_acc", group_by=("model",), seed_column="seed", pick="best_val_step")
    source = MlflowSource(EXPERIMENT, parent=parent_id, tracking_uri=uri)
    result = run_job(source, spec, sink=open_sinks(source, spec, write_back=True), summarize_unchanged=True)
    shown = result.summary if result.summary is not None else result.stored_summary
    assert shown is not None  # run_job computes the summary where the sink cannot give it back
    echo("")
    echo(format_table(shown, report_written=result.error is None))
    echo("")
    done = "already up to date" if result.status == "unchanged" else "written"
    echo(f"Summary run {done}: {result.location}")
    echo(f"Look at it: mlflow ui --backend-store-uri {uri}")
    return result


def _experiment(client: Any, artifacts: Path) -> str:
    experiment = client.get_experiment_by_name(EXPERIMENT)
    if experiment is not None:
        return experiment.experiment_id
    # An explicit artifact root: MLflow's default is ./mlruns in whatever directory the user is in.
    return client.create_experiment(EXPERIMENT, artifact_location=artifacts.as_uri())


def _finished_sweep(client: Any, experiment_id: str) -> str | None:
    runs = client.search_runs(
        [experiment_id],
        filter_string=f"tags.`{DEMO_TAG}` = 'parent' and attributes.status = 'FINISHED'",
        order_by=["attributes.start_time DESC"],
        max_results=1,
    )
    return runs[0].info.run_id if runs else None


def _train_sweep(client: Any, experiment_id: str, trials: int) -> str:
    """Train ``trials`` runs of each approach, logging each as a child run; the parent id.

    One BLAS thread: the models are tiny, and on a small shared machine thread contention made each fit up to
    100 times slower.
    """
    from threadpoolctl import threadpool_limits

    data = _digits_split()
    parent = client.create_run(experiment_id, tags={DEMO_TAG: "parent"}, run_name="demo sweep")
    parent_id = parent.info.run_id
    try:
        with threadpool_limits(1):
            for model in MODELS:
                for seed in range(trials):
                    _log_trial(client, experiment_id, parent_id, model, seed, data)
    except BaseException:
        client.set_terminated(parent_id, "FAILED")
        raise
    client.set_terminated(parent_id, "FINISHED")
    return parent_id


def _log_trial(client: Any, experiment_id: str, parent_id: str, model: str, seed: int, data: dict) -> None:
    """Train one trial and log it as a finished child run: params, and per-epoch scores with step = epoch."""
    import numpy as np
    from mlflow.entities import Metric, Param

    rng = np.random.default_rng([seed, MODELS.index(model)])
    params, history = (_logistic_regression if model == "logistic-regression" else _mlp)(data, rng, seed)
    run = client.create_run(experiment_id, tags={"mlflow.parentRunId": parent_id}, run_name=f"{model}-{seed}")
    stamp = int(time.time() * 1000)
    metrics = [
        Metric(name, float(value), stamp, step) for step, scores in enumerate(history) for name, value in scores.items()
    ]
    params = {"model": model, "seed": seed, **params}
    client.log_batch(run.info.run_id, metrics=metrics, params=[Param(k, str(v)) for k, v in params.items()])
    client.set_terminated(run.info.run_id, "FINISHED")


def _digits_split() -> dict[str, np.ndarray]:
    """Digits (1,797 images of 8x8 pixels, bundled with scikit-learn), split 60/20/20 once, standardized."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    x, y = load_digits(return_X_y=True)
    x_train, x_rest, y_train, y_rest = train_test_split(x, y, test_size=0.4, random_state=0, stratify=y)
    x_val, x_test, y_val, y_test = train_test_split(x_rest, y_rest, test_size=0.5, random_state=0, stratify=y_rest)
    scaler = StandardScaler().fit(x_train)
    return {
        "x_train": scaler.transform(x_train),
        "y_train": y_train,
        "x_val": scaler.transform(x_val),
        "y_val": y_val,
        "x_test": scaler.transform(x_test),
        "y_test": y_test,
    }


def _scores(model: Any, data: dict[str, np.ndarray]) -> dict[str, float]:
    return {
        "val_acc": model.score(data["x_val"], data["y_val"]),
        "test_acc": model.score(data["x_test"], data["y_test"]),
    }


def _logistic_regression(data: dict[str, np.ndarray], rng: np.random.Generator, seed: int) -> tuple[dict, list]:
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression

    c = float(10 ** rng.uniform(-3.5, 1))
    model = LogisticRegression(C=c, max_iter=200)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # an under-fitted draw is part of the search
        model.fit(data["x_train"], data["y_train"])
    return {"C": round(c, 6)}, [_scores(model, data)]


def _mlp(data: dict[str, np.ndarray], rng: np.random.Generator, seed: int) -> tuple[dict, list]:
    import numpy as np
    from sklearn.neural_network import MLPClassifier

    params = {
        "hidden": int(rng.choice([16, 32, 64])),
        "learning_rate": round(float(10 ** rng.uniform(-3.5, -1.5)), 6),
        "alpha": round(float(10 ** rng.uniform(-5, -1)), 6),
    }
    model = MLPClassifier(
        hidden_layer_sizes=(params["hidden"],),
        learning_rate_init=params["learning_rate"],
        alpha=params["alpha"],
        batch_size=64,
        random_state=seed,
    )
    classes = np.unique(data["y_train"])
    history = []
    for _ in range(MLP_EPOCHS):
        model.partial_fit(data["x_train"], data["y_train"], classes=classes)
        history.append(_scores(model, data))
    return params, history


@click.command("demo")
@click.option(
    "--store",
    type=click.Path(dir_okay=False),
    default=str(DEFAULT_STORE),
    show_default=True,
    help="sqlite file of the local MLflow store (created if missing).",
)
@click.option("--trials", type=click.IntRange(min=2), default=30, show_default=True, help="Runs per approach.")
@click.option("--new-sweep", is_flag=True, help="Train a new sweep even if the store holds a finished one.")
def demo_command(store: str, trials: int, new_sweep: bool) -> None:
    """Run a real small sweep (logistic regression vs an MLP on digits) into a local MLflow store and
    summarize it: Boo_n, expected-validation curves and a comparison, written back as a summary run.
    """
    import os

    from boontrack.exceptions import BackendError

    # MLflow logs the creation of the sqlite schema at INFO; the demo's own lines say what happens. Read when
    # mlflow is first imported, which is below; a level the user set is kept.
    os.environ.setdefault("MLFLOW_LOGGING_LEVEL", "WARNING")
    result = run_demo(store, trials=trials, new_sweep=new_sweep, echo=click.echo)
    if result.error:
        raise BackendError(result.error)
