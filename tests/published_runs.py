"""The published run tables of ``../shared/data`` as (validation, test) score arrays, selected as its README says.

Shared by the tests and the benchmarks (``tests/benchmarks`` puts this folder on its path). Every score is
higher-better (accuracy, F1, NPMI). A table without test scores gives its validation scores as both: its
Boo_n is then the expected-validation curve's.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

#: Where the tables are: beside the repository checkout.
SHARED_DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"


@dataclass(frozen=True)
class PaperRuns:
    val: np.ndarray
    test: np.ndarray


def _runs(val, test=None) -> PaperRuns:
    val = np.asarray(val, dtype=np.float64)
    return PaperRuns(val, val if test is None else np.asarray(test, dtype=np.float64))


def load_cbt_fixed(folder: Path) -> PaperRuns:
    frame = pd.read_csv(folder / "cbt_fixed_hyppar.csv")
    frame = frame[frame["log_path"].str.contains("/cbt-dist/", regex=False) & (frame["epoch"] > 0)]
    return _runs(frame["valid.accuracy"], frame["accuracy"])


def load_resnet(folder: Path) -> PaperRuns:
    frame = pd.read_csv(folder / "cifar100-resnet-oct17.csv", index_col=0)
    frame = frame[frame.index >= 35000]
    return _runs(frame["Best Precision_valid"], frame["Best Precision_test"])


def load_cbt_random_search(folder: Path) -> PaperRuns:
    frame = pd.read_csv(folder / "cbtrs_results.csv", index_col=0).reset_index(drop=True)
    # Per log, the first evaluation reaching the best validation accuracy (later rows repeat the best so far).
    best = frame.loc[frame.groupby("log")["best_valid_accuracy"].idxmax()]
    best = best[best["iterations_done"] > 0]
    return _runs(best["best_valid_accuracy"], best["cbtest_CN_test_2500ex.txt_accuracy"])


def _grouped(frame: pd.DataFrame, key: str, val: str, test: str | None, label: str) -> dict[str, PaperRuns]:
    """One table per value of ``key``; test scores where every run of the group has one."""
    tables = {}
    for name, group in frame.groupby(frame[key].fillna("unnamed"), sort=True):
        has_test = test is not None and group[test].notna().all()
        tables[f"{label} {name}"] = _runs(group[val], group[test] if has_test else None)
    return tables


def load_all(data: Path = SHARED_DATA) -> dict[str, PaperRuns]:
    """Every published table by label, one per model where a table holds several."""
    paper, syw = data / "boon-paper", data / "show-your-work"
    tables = {
        "CBT, fixed hyperparameters": load_cbt_fixed(paper),
        "CIFAR-100 ResNet": load_resnet(paper),
        "CBT, random search": load_cbt_random_search(paper),
    }
    sst5 = pd.read_csv(syw / "sst5_cnn_lr_search.tsv", sep="\t")
    tables |= _grouped(sst5, "model.encoder.architecture.type", "best_validation_accuracy", "accuracy", "SST-5")
    full = pd.read_csv(syw / "sst5_classifier_full_search.tsv", sep="\t")
    tables |= _grouped(full, "model.encoder.architecture.type", "best_validation_accuracy", None, "SST-5 full")
    scitail = pd.read_csv(syw / "scitail_search.tsv", sep="\t")
    tables |= _grouped(scitail, "model.type", "best_validation_accuracy", "test_accuracy", "SciTail")
    sst2 = pd.read_csv(syw / "sst2_biattentive_classifier_search.tsv", sep="\t")
    tables |= _grouped(sst2, "embedding", "best_validation_accuracy", None, "SST-2")
    bidaf = pd.read_csv(syw / "bidaf_search.tsv", sep="\t")
    tables["BiDAF F1"] = _runs(bidaf["best_validation_f1"])
    hedwig = pd.read_csv(data / "meanmax" / "hedwig.tsv", sep="\t")
    tables |= _grouped(hedwig, "model_name", "f1", None, "Reuters")
    vampire = pd.read_json(data / "allentune" / "vampire_imdb_search.jsonl", lines=True)
    tables["VAMPIRE NPMI"] = _runs(vampire["best_validation_npmi"])
    return tables
