"""Benchmark: ``boontrack.analyze`` of groups whose runs are paired by seed, and the part its comparisons take.

Run by hand (not collected by pytest)::

    python tests/benchmarks/bench_paired_summary.py [--runs 10000] [--groups 10] [--resamples 10000] [--threads 1]

Prints the CPU time (user + system of this process) and the wall time of one ``analyze`` with the default budgets
(1, 5, 10), every group against the first, and of its comparisons alone (the groups' summaries are left out by
timing ``analyze`` once more on the same table without the seed column: the same groups, compared unpaired from
their own resamples, which costs next to nothing). The runs are synthetic: every seed has an effect shared by the
runs of all groups (a pair's correlation 0.5), validation and test scores correlated 0.5, accuracies rounded to 4
decimals (ties as in real sweeps).
"""

from __future__ import annotations

import argparse
import os

import numpy as np
import pandas as pd
from bench_group_cost import timed  # this directory is the script's

import boontrack
from boontrack.analysis import analyze
from boontrack.runtable import RunTable
from boontrack.spec import Spec


def paired_frame(runs: int, groups: int, seed: int = 0) -> pd.DataFrame:
    """``runs`` runs per group, one per seed 0..runs-1, in ``groups`` groups."""
    rng = np.random.default_rng(seed)
    shared = rng.multivariate_normal([0.0, 0.0], [[1.0, 0.5], [0.5, 1.0]], size=runs)
    frames = []
    for g in range(groups):
        own = rng.multivariate_normal([0.0, 0.0], [[1.0, 0.5], [0.5, 1.0]], size=runs)
        scores = (shared + own) / np.sqrt(2.0)
        frames.append(
            pd.DataFrame(
                {
                    "group": f"g{g}",
                    "seed": np.arange(runs),
                    "val_acc": np.round(0.7 + 0.01 * scores[:, 0], 4),
                    "test_acc": np.round(0.7 + 0.01 * scores[:, 1], 4),
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--groups", type=int, default=10)
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--threads", type=int, default=None)
    options = parser.parse_args()
    print(f"boontrack {boontrack.__version__} from {os.path.dirname(boontrack.__file__)}; load {os.getloadavg()}")
    frame = paired_frame(options.runs, options.groups)
    common = dict(val="val_acc", test="test_acc", group_by=["group"], n_resamples=options.resamples)
    paired_spec, unpaired_spec = Spec(seed_column="seed", **common), Spec(**common)
    paired_table = RunTable.from_frame(frame, paired_spec)
    unpaired_table = RunTable.from_frame(frame.drop(columns="seed"), unpaired_spec)
    paired = timed(lambda: analyze(paired_table, paired_spec, threads=options.threads))
    unpaired = timed(lambda: analyze(unpaired_table, unpaired_spec, threads=options.threads))
    print(f"{options.groups} groups x {options.runs:,} paired runs, {options.resamples:,} resamples")
    print("| | CPU (s) | wall (s) |")
    print("|---|---|---|")
    print(f"| analyze, paired | {paired[0]:.1f} | {paired[1]:.1f} |")
    print(f"| analyze, unpaired | {unpaired[0]:.1f} | {unpaired[1]:.1f} |")
    print(f"| paired comparisons (difference) | {paired[0] - unpaired[0]:.1f} | {paired[1] - unpaired[1]:.1f} |")


if __name__ == "__main__":
    main()
