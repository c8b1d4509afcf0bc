"""A small sweep for the example workflow: 20 runs of a logistic regression trained by gradient descent on a fixed
synthetic task, each with its own seed and a learning rate drawn from it. Writes one row per run.

    python sweep.py runs.csv

In a real project this is your own sweep (any tracker or file boontrack reads); the workflow runs it once on the
pull request's code and once on main's, and compares the two.
"""

from __future__ import annotations

import csv
import sys

import numpy as np

RUNS = 20
EPOCHS = 40  # a change to the training code is what a pull request would bring: try EPOCHS = 2
FEATURES, TRAIN, HELD_OUT = 10, 400, 200


def task() -> tuple[np.ndarray, ...]:
    """The same data for every run and both branches: a noisy linear rule, split into train, val and test."""
    rng = np.random.default_rng(2024)
    x = rng.normal(size=(TRAIN + 2 * HELD_OUT, FEATURES))
    y = (x @ rng.normal(size=FEATURES) + rng.normal(scale=1.5, size=len(x)) > 0).astype(float)
    return x[:TRAIN], y[:TRAIN], x[TRAIN:-HELD_OUT], y[TRAIN:-HELD_OUT], x[-HELD_OUT:], y[-HELD_OUT:]


def train(seed: int, data: tuple[np.ndarray, ...]) -> dict[str, float]:
    """One run: a learning rate drawn from the seed, weights started at random, EPOCHS full-batch steps."""
    x, y, x_val, y_val, x_test, y_test = data
    rng = np.random.default_rng(seed)
    learning_rate = 10 ** rng.uniform(-3, 0)
    weights = rng.normal(scale=0.5, size=FEATURES)
    for _ in range(EPOCHS):
        weights -= learning_rate * x.T @ (1 / (1 + np.exp(-x @ weights)) - y) / len(y)
    return {
        "seed": seed,
        "learning_rate": learning_rate,
        "val_acc": float(np.mean((x_val @ weights > 0) == y_val)),
        "test_acc": float(np.mean((x_test @ weights > 0) == y_test)),
    }


def main(path: str) -> None:
    data = task()
    rows = [train(seed, data) for seed in range(RUNS)]
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


if __name__ == "__main__":
    main(sys.argv[1])
