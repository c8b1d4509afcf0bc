"""An Optuna study on scikit-learn's digits, summarized by boontrack every 10 trials and once at the end.

Each trial trains a linear classifier (SGD) epoch by epoch with its own regularization and learning rate,
reports the validation accuracy after every epoch (a percentile pruner stops the worst quarter early), and keeps
the test accuracy of its best epoch's model as a user attribute. ``boontrack.optuna.BoonCallback`` writes a
summary into ``./optuna-example/boon`` every 10 finished trials, and ``boon.summarize(study)`` once more at
the end (Optuna has no end-of-study hook). With ``pick="best_val_step"`` each trial counts with its best
epoch's validation accuracy and the test accuracy of that epoch's model. A number the summary finds doubtful
(fewer than 8 trials, a budget above half of them) is printed with ``*`` and the reason.

    pip install ".[optuna,plots]" scikit-learn
    python examples/optuna_sweep.py [TRIALS]

The study is kept in ``./optuna-example/optuna.db`` (started afresh on each run); the command line reads it the
same way: ``boontrack summarize optuna:sqlite:///optuna-example/optuna.db --study digits-sgd --val value
--test test_acc --pick best-val-step``.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
import optuna
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import SGDClassifier

import boontrack.optuna

from digits import split_digits

STORE = Path("optuna-example")
EPOCHS = 8
CLASSES = np.arange(10)


def objective(trial: optuna.Trial, data: tuple[np.ndarray, ...]) -> float:
    """One trial: validation accuracy after each epoch, the test accuracy of the best epoch's model."""
    x_train, x_val, x_test, y_train, y_val, y_test = data
    alpha = trial.suggest_float("alpha", 1e-6, 1e-1, log=True)
    eta0 = trial.suggest_float("eta0", 1e-3, 1.0, log=True)
    model = SGDClassifier(alpha=alpha, learning_rate="constant", eta0=eta0, random_state=trial.number)
    best = -1.0
    for epoch in range(EPOCHS):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            model.partial_fit(x_train, y_train, classes=CLASSES)
        val = model.score(x_val, y_val)
        trial.report(val, epoch)
        if val > best:  # the checkpoint a training loop keeps: the first epoch with the best validation score
            best = val
            trial.set_user_attr("test_acc", model.score(x_test, y_test))
        if trial.should_prune():
            raise optuna.TrialPruned()
    return val


def main(trials: int) -> int:
    STORE.mkdir(exist_ok=True)
    (STORE / "optuna.db").unlink(missing_ok=True)
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(
        study_name="digits-sgd",
        storage=f"sqlite:///{STORE / 'optuna.db'}",
        direction="maximize",
        sampler=optuna.samplers.TPESampler(seed=0),
        # Prunes the worst quarter only, after 4 epochs: a pruned trial has no final score and Boo_10 needs 20
        # completed ones (a median pruner kept 7 of 30, too few for a Boo_5).
        pruner=optuna.pruners.PercentilePruner(75.0, n_startup_trials=10, n_warmup_steps=4),
    )
    data = split_digits()
    boon = boontrack.optuna.BoonCallback(test="test_acc", every=10, out=STORE / "boon", pick="best_val_step")
    study.optimize(lambda trial: objective(trial, data), n_trials=trials, callbacks=[boon])
    result = boon.summarize(study)
    if result.summary is None:
        print(f"summary: {result.status} {result.error or ''}")
        return 0 if result.ok else 1
    group = result.summary.groups[0]
    print(f"{len(study.trials)} trials: {group.runs} completed, {len(result.summary.dropped)} pruned or failed")
    for n, interval in group.boo_n.items():
        mark = "" if group.trustworthy(n) else " *"
        print(f"Boo_{n} = {interval.estimate:.4f}  [{interval.ci_low:.4f}, {interval.ci_high:.4f}]{mark}")
    doubts = sorted({doubt for n in group.boo_n for doubt in group.doubts.get(n, ())})
    if doubts:
        print(f"* doubtful: {'; '.join(doubts)} (more trials make it firm)")
    print(f"source: {result.summary.source}")
    print(f"summary: {result.status}, {result.location}")
    return 0 if result.ok else 1


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 30))
