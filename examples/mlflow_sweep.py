"""A seed sweep tracked in MLflow, summarized by boontrack as its last step.

Each trial trains a logistic regression on scikit-learn's digits data with its own seed and regularization
draw, and is logged as a nested MLflow run. ``boontrack.mlflow.sweep`` opens the sweep's parent run and, when
the block ends, writes a summary run beside the trials: Boo_n with intervals, the expected-validation curve as
a line chart over n, the report and the plots.

    pip install ".[mlflow,plots]"
    python examples/mlflow_sweep.py [TRIALS]

The runs go to a local sqlite store, ``./mlflow-example/mlflow.db``; look at them with
``mlflow ui --backend-store-uri sqlite:///mlflow-example/mlflow.db``.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import mlflow
import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression

import boontrack.mlflow

from digits import split_digits

STORE = Path("mlflow-example")


def train(seed: int, data: tuple[np.ndarray, ...]) -> tuple[dict, dict]:
    """One trial: its hyperparameters and its validation and test accuracy."""
    x_train, x_val, x_test, y_train, y_val, y_test = data
    c = float(10 ** np.random.default_rng(seed).uniform(-3, 0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = LogisticRegression(C=c, max_iter=100).fit(x_train, y_train)
    return {"seed": seed, "C": round(c, 5)}, {
        "val_acc": model.score(x_val, y_val),
        "test_acc": model.score(x_test, y_test),
    }


def main(trials: int) -> int:
    STORE.mkdir(exist_ok=True)
    mlflow.set_tracking_uri(f"sqlite:///{STORE / 'mlflow.db'}")
    if mlflow.get_experiment_by_name("digits-seeds") is None:  # artifacts beside the store, not in ./mlruns
        mlflow.create_experiment("digits-seeds", artifact_location=(STORE / "artifacts").resolve().as_uri())
    data = split_digits()
    with boontrack.mlflow.sweep(val="val_acc", test="test_acc", n=(1, 5), experiment="digits-seeds") as handle:
        for seed in range(trials):
            with mlflow.start_run(nested=True, run_name=f"seed-{seed}"):
                params, metrics = train(seed, data)
                mlflow.log_params(params)
                mlflow.log_metrics(metrics)
    result = handle.result
    group = result.summary.groups[0]
    d = group.diagnostics
    print(f"{group.runs} trials; test accuracy from {d.min:.4f} to {d.max:.4f} (the top one is a lucky draw)")
    for n, interval in group.boo_n.items():
        print(f"Boo_{n} = {interval.estimate:.4f}  [{interval.ci_low:.4f}, {interval.ci_high:.4f}]")
    print(f"summary: {result.status}, {result.location}")
    return 0 if result.ok else 1


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 20))
