"""A small real study whose trials end in every state, and the values each trial logged, kept as logged."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import optuna

STUDY = "digits-like"
#: Trials, by number, that end pruned and failed (the objective decides it from the trial number).
PRUNED, FAILED = 3, 5


@dataclass
class Logged:
    """What the objective logged, per trial number."""

    value: dict[int, float] = field(default_factory=dict)
    test: dict[int, float] = field(default_factory=dict)
    history: dict[int, list[tuple[int, float]]] = field(default_factory=dict)

    def completed(self) -> list[int]:
        return sorted(self.value)


def make_objective(logged: Logged, *, epochs: int = 4):
    """An objective with a per-epoch validation history whose best epoch is not always the last, a test score
    set once as a user attribute, a text attribute, one pruned and one failed trial."""

    def objective(trial: optuna.Trial) -> float:
        lr = trial.suggest_float("lr", 1e-3, 1.0, log=True)
        model = trial.suggest_categorical("model", ["cnn", "mlp"])
        peak = 0.5 + 0.4 * math.exp(-((math.log10(lr) + 1.5) ** 2)) + (0.03 if model == "cnn" else 0.0)
        history = [(epoch, round(peak - 0.05 * abs(epoch - 1 - trial.number % 3), 6)) for epoch in range(epochs)]
        logged.history[trial.number] = history
        for epoch, value in history:
            trial.report(value, epoch)
        trial.set_user_attr("note", f"run {trial.number}")
        if trial.number == PRUNED:
            raise optuna.TrialPruned()
        if trial.number == FAILED:
            raise RuntimeError("diverged")
        test = round(history[-1][1] - 0.02, 6)
        trial.set_user_attr("test_acc", test)
        logged.value[trial.number], logged.test[trial.number] = history[-1][1], test
        return history[-1][1]

    return objective


def run_study(storage: str | None, n_trials: int, *, callbacks=(), sampler=None) -> tuple[optuna.Study, Logged]:
    """The study, optimized for ``n_trials`` (the failed trial's error caught), and what its trials logged;
    ``storage`` None: in memory."""
    study = optuna.create_study(
        study_name=STUDY,
        storage=storage,
        direction="maximize",
        sampler=sampler or optuna.samplers.RandomSampler(seed=0),
    )
    logged = Logged()
    study.optimize(make_objective(logged), n_trials=n_trials, callbacks=list(callbacks), catch=(RuntimeError,))
    return study, logged
