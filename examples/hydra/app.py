"""A Hydra sweep summarized by boontrack's callback when the multirun ends.

Each job trains one model on scikit-learn's digits data (bundled, no download): the model family comes from the
config group ``model``, and the seed draws its hyperparameter (a random search) and seeds its training. The job
returns its validation and test accuracy; ``hydra.callbacks.boontrack`` in ``conf/config.yaml`` collects them
and, at the end of the multirun, writes Boo_n with intervals, the expected-validation curves and a comparison
of the two families to ``<sweep dir>/boontrack/`` and prints the table. The budgets are 1 and 5, which the 10
seeds below support (a budget above half the jobs is doubtful: the table marks it ``*`` and says why).

    pip install ".[hydra,plots]" scikit-learn
    python examples/hydra/app.py --multirun model=logreg,forest seed=0,1,2,3,4,5,6,7,8,9

The sweep goes to ``./multirun/DATE/TIME/`` (Hydra's default ``hydra.sweep.dir``).
"""

from __future__ import annotations

import warnings

import hydra
import numpy as np
from omegaconf import DictConfig
from sklearn.datasets import load_digits
from sklearn.ensemble import RandomForestClassifier
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split


def split_digits() -> tuple[np.ndarray, ...]:
    """``x_train, x_val, x_test, y_train, y_val, y_test``: the digits split 60/20/20, the same in every job."""
    x, y = load_digits(return_X_y=True)
    x_train, x_rest, y_train, y_rest = train_test_split(x / 16.0, y, test_size=0.4, random_state=0, stratify=y)
    x_val, x_test, y_val, y_test = train_test_split(x_rest, y_rest, test_size=0.5, random_state=0, stratify=y_rest)
    return x_train, x_val, x_test, y_train, y_val, y_test


def build(model: DictConfig, seed: int):
    """The model of the config group ``model``, its hyperparameter drawn with ``seed`` from the group's range."""
    rng = np.random.default_rng(seed)
    low, high = model.search
    if model.name == "logreg":
        return LogisticRegression(C=float(10 ** rng.uniform(low, high)), max_iter=200)
    return RandomForestClassifier(
        n_estimators=model.trees, max_depth=int(rng.integers(low, high + 1)), random_state=seed, n_jobs=1
    )


@hydra.main(version_base=None, config_path="conf", config_name="config")
def train(cfg: DictConfig) -> dict[str, float]:
    x_train, x_val, x_test, y_train, y_val, y_test = split_digits()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = build(cfg.model, cfg.seed).fit(x_train, y_train)
    return {"val_acc": model.score(x_val, y_val), "test_acc": model.score(x_test, y_test)}


if __name__ == "__main__":
    train()
