"""Writes show_your_work_tasks.csv: the hyperparameter searches of Dodge et al. (2019), "Show your work", as a
benchmark of four tasks, a simpler and a richer model on each, for ``boontrack summarize --task-column task``.

From the published tables in ``../shared/data/show-your-work`` beside the checkout, or in DATA_DIR::

    python examples/show_your_work_tasks.py [DATA_DIR] > show_your_work.csv

(The tables are read where they are, not copied here.) One row per trial: the task, the
approach (``simpler`` or ``richer``), the model it is on that task, the trial's number in its table, its best
validation accuracy and its training time in seconds. The pairs, the models the paper compares on each task:

| task | table | simpler | richer |
|---|---|---|---|
| sst5 | ``sst5_cnn_lr_search.tsv`` | LR (logistic regression) | CNN |
| sst5-full | ``sst5_classifier_full_search.tsv`` | linear | LSTM |
| scitail | ``scitail_search.tsv`` | simple_overlap | ESIM |
| sst2 | ``sst2_biattentive_classifier_search.tsv`` | GloVe embeddings | ELMo, fine-tuned |

Only validation accuracies are in every table, so the scores are those: Boo_n is then the expected validation
performance of the paper, the best validation accuracy of n trials drawn at random.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

DEFAULT_DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"
#: task -> (table, column naming the model, the simpler model's name, the richer's)
TASKS = {
    "sst5": ("sst5_cnn_lr_search.tsv", "model.encoder.architecture.type", "LR", "CNN"),
    "sst5-full": ("sst5_classifier_full_search.tsv", "model.encoder.architecture.type", "linear", "lstm"),
    "scitail": ("scitail_search.tsv", "model.type", "simple_overlap", "esim"),
    "sst2": ("sst2_biattentive_classifier_search.tsv", "embedding", "glove", "elmo fine-tuned"),
}


def rows(data: Path = DEFAULT_DATA) -> pd.DataFrame:
    """The trials of every task's two models, one row each."""
    parts = []
    for task, (table, column, simpler, richer) in TASKS.items():
        frame = pd.read_csv(data / "show-your-work" / table, sep="\t")
        for approach, model in (("simpler", simpler), ("richer", richer)):
            trials = frame[frame[column] == model]
            parts.append(
                pd.DataFrame(
                    {
                        "task": task,
                        "approach": approach,
                        "model": model,
                        "trial": range(len(trials)),
                        "val_acc": trials["best_validation_accuracy"].round(6).to_numpy(),
                        "duration_s": trials["training_duration"].round(1).to_numpy(),
                    }
                )
            )
    return pd.concat(parts, ignore_index=True)


if __name__ == "__main__":
    rows(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_DATA).to_csv(sys.stdout, index=False, lineterminator="\n")
