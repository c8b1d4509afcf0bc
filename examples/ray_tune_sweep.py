"""Two approaches searched with Ray Tune over seeds, summarized by boontrack when the experiment ends.

Each trial trains a linear model (SGD, logistic loss) or a small MLP on scikit-learn's digits data for a few
epochs and reports its validation and test accuracy after every epoch. ``BoonCallback`` summarizes the trials
in ``on_experiment_end``, taking each trial's test accuracy at its best validation epoch, and writes the
summary into the experiment directory (``ray-example/digits/boontrack``). The same experiment directory is then
read back with the ``ray-tune:`` source, as the command line does.

    pip install ".[ray,plots]" scikit-learn
    python examples/ray_tune_sweep.py [SEEDS]    # at least 4 (Boo_4); default 8, the fewest for a firm Boo_4

The same from the shell: ``boontrack summarize ray-tune:ray-example/digits --val val_acc --test test_acc
--seed-column seed --pick best-val-step``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import ray
from ray import tune

import boontrack as bt
from boontrack.ray import BoonCallback

from digits import split_digits

STORAGE = Path("ray-example").absolute()
EPOCHS = 12
#: Budgets of Boo_n: 8 seeds support n <= 4 (a budget above half the runs is doubtful, and marked *).
BUDGETS = (1, 4)


def train(config: dict, data: tuple[np.ndarray, ...]) -> None:
    """One trial: one pass over the training data per epoch, then val_acc and test_acc reported."""
    from sklearn.linear_model import SGDClassifier
    from sklearn.neural_network import MLPClassifier

    x_train, x_val, x_test, y_train, y_val, y_test = data
    seed = config["seed"]
    if config["model"] == "linear":
        model = SGDClassifier(loss="log_loss", alpha=1e-3, random_state=seed)
    else:
        model = MLPClassifier(hidden_layer_sizes=(32,), learning_rate_init=1e-2, random_state=seed)
    classes = np.unique(y_train)
    for _ in range(EPOCHS):
        model.partial_fit(x_train, y_train, classes=classes)
        tune.report({"val_acc": model.score(x_val, y_val), "test_acc": model.score(x_test, y_test)})


def main(seeds: int) -> int:
    if not ray.is_initialized():
        ray.init(num_cpus=2, include_dashboard=False, configure_logging=False, log_to_driver=False)
    callback = BoonCallback(val="val_acc", test="test_acc", n=BUDGETS, pick="best_val_step", n_resamples=2000)
    tuner = tune.Tuner(
        tune.with_parameters(train, data=split_digits()),
        param_space={"model": tune.grid_search(["linear", "mlp"]), "seed": tune.grid_search(list(range(seeds)))},
        tune_config=tune.TuneConfig(reuse_actors=True),
        run_config=tune.RunConfig(name="digits", storage_path=str(STORAGE), callbacks=[callback], verbose=0),
    )
    tuner.fit()
    result = callback.result
    print(f"summary: {result.status}, {result.location}")
    print(bt.format_table(result.summary))
    print_when_more_runs_do_not_help(result.summary)

    # Later, or on another machine: the finished experiment directory, read with the ray-tune: source.
    spec = bt.Spec(
        val="val_acc", test="test_acc", n=BUDGETS, seed_column="seed", pick="best_val_step", n_resamples=2000
    )
    again = bt.run_job(bt.open_source(f"ray-tune:{STORAGE / 'digits'}"), spec)
    largest = BUDGETS[-1]
    same = [g.boo_n[largest].estimate for g in again.summary.groups] == [
        g.boo_n[largest].estimate for g in result.summary.groups
    ]
    print(f"read back from the experiment directory: {len(again.summary.groups)} groups, same Boo_{largest}: {same}")
    return 0


def print_when_more_runs_do_not_help(summary: bt.Summary) -> None:
    """Say so where Boo_n falls below Boo_1: the run best on validation is then no better on test."""
    largest = BUDGETS[-1]
    lower = [g.label for g in summary.groups if g.boo_n[largest].estimate < g.boo_n[1].estimate]
    if lower:
        print(
            f"Boo_{largest} below Boo_1 ({', '.join(lower)}): the best of {largest} runs by validation scores lower on"
            " test than one run on average; the seeds differ by noise that validation does not share with test,"
            " so training more runs and keeping the best does not pay here."
        )


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 8))
