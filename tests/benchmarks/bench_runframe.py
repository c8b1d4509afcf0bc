"""Benchmark of the shared run-frame layer (a script, run by hand: ``python tests/benchmarks/bench_runframe.py``).

1. :func:`boontrack.runframe.pick_best_val_step` on a sweep of RUNS runs with EPOCHS validation and test points
   each (long format, every run at once).
2. :func:`boontrack.runframe.build_run_frame` on RUNS runs with 5 params, 5 metrics and 5 tags each.

Best of three timings each, on this machine's CPU.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from boontrack.runframe import RunRecord, build_run_frame, pick_best_val_step


def best_of_three(fn) -> float:
    times = []
    for _ in range(3):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--epochs", type=int, default=100)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    ids = np.repeat([f"{i:032x}" for i in range(args.runs)], args.epochs)
    steps = np.tile(np.arange(args.epochs), args.runs)
    val = pd.DataFrame({"run_id": ids, "step": steps, "value": rng.uniform(size=ids.size)})
    test = pd.DataFrame({"run_id": ids, "step": steps, "value": rng.uniform(size=ids.size)})
    seconds = best_of_three(lambda: pick_best_val_step(val, test))
    print(f"pick_best_val_step: {args.runs} runs x {args.epochs} steps ({2 * ids.size:,} points): {seconds:.2f} s")

    records = [
        RunRecord(
            f"{i:032x}",
            "FINISHED",
            pd.Timestamp(1_700_000_000_000 + i, unit="ms", tz="UTC"),
            10.0,
            {f"p{j}": str(j) for j in range(5)},
            {f"m{j}": 0.1 * j for j in range(5)},
            {f"t{j}": "x" for j in range(5)},
        )
        for i in range(args.runs)
    ]
    seconds = best_of_three(lambda: build_run_frame(records))
    print(f"build_run_frame: {args.runs} runs, 15 columns: {seconds:.2f} s")


if __name__ == "__main__":
    main()
