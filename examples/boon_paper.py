"""Boo_n on the Boo_n paper's own runs (Bajgar et al., ICML 2018).

Reads the three published run tables (370 AS Reader runs with fixed hyperparameters, 74 ResNet-32 runs, 197 AS
Reader runs from a random hyperparameter search), selects the runs as the paper did, and prints what each
approach should report instead of its best single run: Boo_5 with a 95 % bootstrap interval (estimators V, U
and W), the Gaussian estimate with its normality check, the mean, and the best single run for contrast.

    python examples/boon_paper.py [DATA_DIR]

DATA_DIR defaults to ``../shared/data`` beside the checkout.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

import boontrack as bt

DEFAULT_DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"


def load_runs(data: Path) -> dict[str, pd.DataFrame]:
    """(validation, test) accuracies in percent, selected as in the data README."""
    folder = data / "boon-paper"
    cbt = pd.read_csv(folder / "cbt_fixed_hyppar.csv")
    cbt = cbt[cbt["log_path"].str.contains("/cbt-dist/") & (cbt["epoch"] > 0)]
    resnet = pd.read_csv(folder / "cifar100-resnet-oct17.csv", index_col=0)
    resnet = resnet[resnet.index >= 35000]
    search = pd.read_csv(folder / "cbtrs_results.csv", index_col=0).reset_index(drop=True)
    # Per training log, the first evaluation that reached its best validation accuracy.
    search = search.loc[search.groupby("log")["best_valid_accuracy"].idxmax()]
    search = search[search["iterations_done"] > 0]
    return {
        "AS Reader, fixed hyperparameters": pd.DataFrame(
            {"val": cbt["valid.accuracy"] * 100, "test": cbt["accuracy"] * 100}
        ),
        "ResNet-32 on CIFAR-100": pd.DataFrame(
            {"val": resnet["Best Precision_valid"] * 100, "test": resnet["Best Precision_test"] * 100}
        ),
        "AS Reader, random search": pd.DataFrame(
            {"val": search["best_valid_accuracy"] * 100, "test": search["cbtest_CN_test_2500ex.txt_accuracy"] * 100}
        ),
    }


def report(name: str, runs: pd.DataFrame, *, n: int = 5) -> None:
    val, test = runs["val"].to_numpy(), runs["test"].to_numpy()
    diag = bt.diagnose(val, test, n=n)
    print(
        f"\n{name}: {diag.runs} runs, {diag.ties} tied validation scores, val-test Spearman {diag.spearman_val_test:.2f}"
    )
    print(f"  best single run (by validation): test {test[val.argmax()]:.2f}   <- a lucky draw, not a result")
    mean = bt.mean_ci(test, rng=0)
    print(
        f"  mean test                      : {mean.estimate:.2f}  [{mean.confidence_interval.low:.2f}, {mean.confidence_interval.high:.2f}]"
    )
    for estimator in ("V", "U", "W"):
        ci = bt.boo_n_ci(val, test, n=n, estimator=estimator, rng=0)
        low, high = ci.confidence_interval.low, ci.confidence_interval.high
        print(f"  Boo_{n} ({estimator})                     : {ci.estimate:.2f}  [{low:.2f}, {high:.2f}]")
    verdict = "Gaussian looks plausible" if diag.normal else "not Gaussian: prefer the non-parametric estimate"
    print(f"  Boo_{n} (Gaussian, eq. 6)         : {bt.boo_n_gaussian(val, test, n=n):.2f}  ({verdict})")


def main() -> int:
    data = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_DATA
    if not (data / "boon-paper").is_dir():
        print(f"no boon-paper/ folder under {data}; pass the data directory as the first argument", file=sys.stderr)
        return 2
    for name, runs in load_runs(data).items():
        report(name, runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
