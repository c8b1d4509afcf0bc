"""Benchmark: how often the 95 % intervals of :func:`boontrack.across.across_tasks` cover on the published run
tables of ``../shared/data`` taken as the tasks of a benchmark (finite populations, ties and all).

Run by hand (not collected by pytest)::

    python tests/benchmarks/bench_across_tables.py [--replications 400] [--resamples 999] [--seed 0]
        [--runs 3,5,10] [--n 2]

Each table (``tests/published_runs.py``: CBT, CIFAR-100, SST-5, SciTail, SST-2, BiDAF, Reuters, VAMPIRE) is one
task's population; a replication draws m runs per task with replacement, for two groups A and B alike, and
computes ``across_tasks``. Two benchmarks: five tables of five kinds of task (CBT with fixed hyperparameters,
CIFAR-100 ResNet, SST-5 CNN, SciTail decomposable attention, BiDAF F1), and all 20 tables as 20 tasks. The truths,
exact for draws with replacement from the tables (ties broken at random, as boontrack's tie rule assumes):

- mean: the mean over tasks of each table's mean test score; the optimality gap: of ``max(1 - x, 0)``;
- IQM: twice the integral of the quantile function over [0.25, 0.75] of the equal mixture of the tasks'
  tables (each run of task t weighing ``1 / (T N_t)``);
- Boo_n: the mean over tasks of the V estimate of the whole table (``boontrack.boo_n``), the expected test
  score of the best by validation of n draws;
- A against B (drawn alike): Δmean, ΔIQM and ΔBoo_n 0, P(A > B) 0.5 (ties counted half).

Columns as ``bench_across_coverage.py``'s (:func:`bench_across_coverage.cell_text`).
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from bench_across_coverage import cell, print_row  # this folder is on sys.path when run as a script

import boontrack as bt
from boontrack.across import across_tasks
from boontrack.exceptions import ExtrapolationWarning, FewRunsWarning

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the published tables' loaders
from published_runs import SHARED_DATA, load_all  # noqa: E402

FIVE = ("CBT, fixed hyperparameters", "CIFAR-100 ResNet", "SST-5 CNN", "SciTail decomposable_attention", "BiDAF F1")
NAMES = ["mean", "iqm", "boo_n", "gap", "Δmean", "ΔIQM", "ΔBoo_n", "P(A > B)"]


def interquartile_mean(tables: list) -> float:
    """Twice the integral over [0.25, 0.75] of the quantile function of the tables' equal mixture."""
    scores = np.concatenate([t.test for t in tables])
    weights = np.concatenate([np.full(t.test.size, 1.0 / (len(tables) * t.test.size)) for t in tables])
    order = np.argsort(scores, kind="stable")
    scores, weights = scores[order], weights[order]
    upper = np.cumsum(weights)
    lower = upper - weights
    inside = np.clip(np.minimum(upper, 0.75) - np.maximum(lower, 0.25), 0.0, None)
    return float(2.0 * np.sum(inside * scores))


def truths(tables: list, n: int) -> dict[str, float]:
    return {
        "mean": float(np.mean([t.test.mean() for t in tables])),
        "iqm": interquartile_mean(tables),
        "boo_n": float(np.mean([bt.boo_n(t.val, t.test, n=n) for t in tables])),
        "gap": float(np.mean([np.maximum(1.0 - t.test, 0.0).mean() for t in tables])),
        "Δmean": 0.0,
        "ΔIQM": 0.0,
        "ΔBoo_n": 0.0,
        "P(A > B)": 0.5,
    }


def draw(tables: list, m: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """m runs per task, with replacement: test scores, validation scores, task labels."""
    picked = [rng.integers(0, t.test.size, m) for t in tables]
    test = np.concatenate([t.test[i] for t, i in zip(tables, picked)])
    val = np.concatenate([t.val[i] for t, i in zip(tables, picked)])
    return test, val, np.repeat(np.arange(len(tables)), m)


def measure(tables: list, m: int, args, rng: np.random.Generator) -> dict[str, tuple[list[float], str]]:
    truth = truths(tables, args.n)
    hits, refused = dict.fromkeys(NAMES, 0), dict.fromkeys(NAMES, 0)
    widths: dict[str, list[float]] = {name: [] for name in NAMES}
    estimates: dict[str, list[float]] = {name: [] for name in NAMES}
    methods: dict[str, str] = {}
    for _ in range(args.replications):
        (test_a, val_a, task), (test_b, val_b, _) = draw(tables, m, rng), draw(tables, m, rng)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ExtrapolationWarning)
            warnings.simplefilter("ignore", FewRunsWarning)
            res = across_tasks(
                np.r_[test_a, test_b],
                task=np.r_[task, task],
                group=np.repeat(["A", "B"], task.size),
                validation=np.r_[val_a, val_b],
                maximize=True,
                n=args.n,
                tau=[0.5],
                n_resamples=args.resamples,
                rng=rng,
            )
        a, pair = res.aggregates["A"], res.compare("A", "B")
        results = {
            "mean": a.mean,
            "iqm": a.iqm,
            "boo_n": a.boo_n[args.n],
            "gap": a.optimality_gap,
            "Δmean": pair.mean_difference,
            "ΔIQM": pair.iqm_difference,
            "ΔBoo_n": pair.boo_n_difference[args.n],
            "P(A > B)": pair.prob_improvement,
        }
        for name, result in results.items():
            methods[name] = result.method
            low, high = result.confidence_interval.low, result.confidence_interval.high
            if np.isnan(low):
                refused[name] += 1
                continue
            hits[name] += low <= truth[name] <= high
            widths[name].append(high - low)
            estimates[name].append(result.estimate)
    return {
        name: (cell(hits[name], args.replications - refused[name], widths[name], estimates[name], truth[name]),
               methods.get(name, ""))
        for name in NAMES
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--replications", type=int, default=400)
    parser.add_argument("--resamples", type=int, default=999)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--runs", default="3,5,10")
    parser.add_argument("--n", type=int, default=2)
    args = parser.parse_args()
    if not SHARED_DATA.is_dir():
        raise SystemExit(f"the published tables are not at {SHARED_DATA}")
    every = load_all()
    benchmarks = {"5 kinds of task": [every[name] for name in FIVE], "all 20 tables": list(every.values())}
    rng = np.random.default_rng(args.seed)
    print(
        f"95 % intervals of across_tasks on the published tables as tasks, {args.replications} replications per "
        f"cell, {args.resamples} resamples, Boo_{args.n}, seed {args.seed}; coverage ± its Monte Carlo standard "
        "error, mean width, bias / s.d. of the estimates; the method under each name\n"
    )
    started = time.perf_counter()
    first = True
    for label, tables in benchmarks.items():
        for m in (int(r) for r in args.runs.split(",")):
            print_row({"benchmark": label, "runs per task": m}, measure(tables, m, args, rng), args.replications, first)
            first = False
    print(f"\n{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
