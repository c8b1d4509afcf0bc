"""Two approaches tracked with Weights & Biases in offline mode, compared by boontrack without any network.

Each trial trains a logistic regression or a small MLP on scikit-learn's digits data and logs it as an offline
W&B run (``wandb/offline-run-*``). boontrack then reads those run files directly (``wandb-offline:``) and
reports Boo_n with intervals for each approach and their comparison. With a W&B account, the same sweep run
online is summarized by one line after ``wandb.agent(...)``:
``boontrack.wandb.summarize_sweep("entity/project/sweep_id", val="val_acc", test="test_acc")``.

    pip install ".[wandb]" scikit-learn
    python examples/wandb_offline_sweep.py [TRIALS]

The same from the shell: ``boontrack summarize wandb-offline:wandb-example/wandb --val val_acc --test test_acc
--group-by model``.
"""

from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path

import numpy as np
import wandb
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.neural_network import MLPClassifier

import boontrack as bt

from digits import split_digits

ROOT = Path("wandb-example")


def train(model_name: str, seed: int, data: tuple[np.ndarray, ...]) -> dict[str, float]:
    x_train, x_val, x_test, y_train, y_val, y_test = data
    if model_name == "logistic-regression":
        model = LogisticRegression(C=float(10 ** np.random.default_rng(seed).uniform(-3, 0)), max_iter=100)
    else:
        model = MLPClassifier(hidden_layer_sizes=(32,), max_iter=30, random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(x_train, y_train)
    return {"val_acc": model.score(x_val, y_val), "test_acc": model.score(x_test, y_test)}


def main(trials: int) -> int:
    os.environ.setdefault("WANDB_SILENT", "true")
    data = split_digits()
    for model_name in ("logistic-regression", "mlp"):
        for seed in range(trials):
            run = wandb.init(
                project="digits",
                mode="offline",
                dir=ROOT,
                config={"model": model_name, "seed": seed},
                settings=wandb.Settings(console="off"),
            )
            run.log(train(model_name, seed, data))
            run.finish()
    source = bt.open_source(f"wandb-offline:{ROOT / 'wandb'}")
    spec = bt.Spec(val="val_acc", test="test_acc", n=(1, 5), group_by=("model",), n_resamples=2000)
    result = bt.run_job(source, spec)
    print(bt.format_table(result.summary))
    return 0


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 15))
