"""A sweep of 3 models x 5 seeds x 20 epochs as a training script logs it (one row of metrics per epoch), and the
check of the training curves boontrack writes for it: each step's mean and run count against a numpy computation
made here from the logged values, the bands' order, and the bands against those of the logged histories.

The tests that log it for real (MLflow's embedded store and a server, W&B offline runs, an Optuna study, a Ray
Tune experiment) share it, so that every destination is held to the same numbers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

#: Each model's plateau of validation accuracy.
MODELS = {"linear": 0.80, "mlp": 0.86, "cnn": 0.90}
SEEDS = range(5)
EPOCHS = np.arange(1, 21)
#: The curves asked for: a loss as logged, the running best validation accuracy and the test accuracy at it.
CURVES = ("val_loss", "best-so-far:val_acc", "best-so-far:test_acc")
#: The bootstrap of the summaries (few resamples: the statistics are tested elsewhere, the plumbing here).
N_RESAMPLES = 199
#: Written series of each curve and group, as ``training_curves.csv`` names them.
SERIES = ("runs", "mean", "ci_low", "ci_high", "simultaneous_low", "simultaneous_high")


def epoch_metrics(model: str, seed: int) -> list[dict[str, float]]:
    """The metrics one run logs at each epoch: a noisy rising validation accuracy (its best is seldom the last
    epoch), a test accuracy near it and a validation loss."""
    rng = np.random.default_rng([list(MODELS).index(model), seed])
    rising = MODELS[model] * (1 - np.exp(-EPOCHS / 4))
    val_acc = np.clip(rising + rng.normal(0, 0.03, EPOCHS.size), 0.01, 0.99)
    test_acc = np.clip(val_acc - 0.01 + rng.normal(0, 0.01, EPOCHS.size), 0.01, 0.99)
    val_loss = -np.log(val_acc) + 0.003 * EPOCHS
    return [
        {"val_acc": float(v), "test_acc": float(t), "val_loss": float(loss)}
        for v, t, loss in zip(val_acc, test_acc, val_loss)
    ]


def _logged(metric: str, model: str) -> np.ndarray:
    """``metric`` as the model's runs logged it: one row per seed, one column per epoch."""
    return np.array([[row[metric] for row in epoch_metrics(model, seed)] for seed in SEEDS])


def expected_means(entry: str, model: str) -> np.ndarray:
    """The mean over the model's runs at each epoch of what ``entry`` averages, walked epoch by epoch: the value
    logged, the best validation accuracy so far, or the test accuracy at the epoch of that best."""
    if not entry.startswith("best-so-far:"):
        return _logged(entry, model).mean(axis=0)
    val, test = _logged("val_acc", model), _logged("test_acc", model)
    best, at_best = val[:, 0].copy(), test[:, 0].copy()
    per_epoch = [at_best if entry.endswith("test_acc") else best]
    for epoch in range(1, EPOCHS.size):
        better = val[:, epoch] > best
        best = np.where(better, val[:, epoch], best)
        at_best = np.where(better, test[:, epoch], at_best)
        per_epoch.append(at_best if entry.endswith("test_acc") else best)
    return np.mean(per_epoch, axis=1)


def logged_histories(run_ids: Mapping[str, tuple[str, int]]) -> pd.DataFrame:
    """The sweep's histories in long form (run_id, model, step, and a column per metric), the runs named by their
    ids in a destination: run id -> (model, seed)."""
    rows = [
        {"run_id": run_id, "model": model, "step": int(epoch), **metrics}
        for run_id, (model, seed) in run_ids.items()
        for epoch, metrics in zip(EPOCHS, epoch_metrics(model, seed))
    ]
    return pd.DataFrame(rows)


def _bands_of_histories(entry: str, run_ids: Mapping[str, tuple[str, int]]):
    """The curves of the logged histories, computed on them directly (the bootstrap draws runs in the order of
    their ids, which differ from one destination to the next)."""
    from boontrack.training import training_curves

    data = logged_histories(run_ids)
    options = dict(group_by="model", n_resamples=N_RESAMPLES, rng=0)
    if not entry.startswith("best-so-far:"):
        return training_curves(data, value=entry, **options)
    test = "test_acc" if entry.endswith("test_acc") else None
    return training_curves(data, value="val_acc", test=test, curve="best-so-far", maximize=True, **options)


def csv_curves(path: Path) -> dict[tuple[str, str], pd.DataFrame]:
    """A ``training_curves.csv`` as :func:`check_written` takes it: (entry, group) -> its rows."""
    written = pd.read_csv(path)
    return {key: frame for key, frame in written.groupby(["metric", "group"])}


def check_written(
    written: Mapping[tuple[str, str], pd.DataFrame],
    run_ids: Mapping[str, tuple[str, int]],
    curves: Sequence[str] = CURVES,
) -> None:
    """Check the curves a destination holds: (entry, model) -> a frame with a ``step`` column and the columns of
    :data:`SERIES`, one row per step, for each entry of ``curves`` (a source that holds fewer histories than a
    tracker asks for fewer; a value curve of any logged metric, a best-so-far curve of ``val_acc`` or
    ``test_acc``)."""
    assert sorted(written) == sorted((entry, model) for entry in curves for model in MODELS)
    for (entry, model), frame in written.items():
        frame = frame.sort_values("step")
        assert frame["step"].tolist() == EPOCHS.tolist(), (entry, model)
        assert frame["runs"].tolist() == [len(SEEDS)] * EPOCHS.size, (entry, model)
        np.testing.assert_allclose(frame["mean"], expected_means(entry, model), rtol=1e-12, err_msg=f"{entry} {model}")
        ordered = [frame[name].to_numpy() for name in ("simultaneous_low", "ci_low", "mean", "ci_high")]
        ordered.append(frame["simultaneous_high"].to_numpy())
        for lower, upper in zip(ordered, ordered[1:]):
            assert (lower <= upper).all(), (entry, model)
        if entry != "val_loss":
            assert (frame["simultaneous_low"] >= 0).all() and (frame["simultaneous_high"] <= 1).all()
        group = _bands_of_histories(entry, run_ids).of(model)
        for name, attribute in zip(SERIES[2:], ("low", "high", "simultaneous_low", "simultaneous_high")):
            np.testing.assert_allclose(frame[name], getattr(group, attribute), rtol=1e-12, err_msg=f"{entry} {name}")
