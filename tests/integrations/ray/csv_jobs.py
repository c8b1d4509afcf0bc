"""Three reaggregate jobs over three small CSV files, which the Ray engine's tests run (in this process and as a
user runs the command): their names, and the config and files written into a directory."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

NAMES = ("alpha", "beta", "gamma")
JOB = """
[[jobs]]
name = "{name}"
source = "{name}.csv"
val = "acc"
test = "test_acc"
n = [1, 3]
n_resamples = 99
plots = false
out = "summaries/{name}"
"""


def write_csv_jobs(directory: Path) -> Path:
    """Write ``NAME.csv`` (8 runs each) and ``boontrack.toml`` (a job per file, summarized into ``summaries/NAME``)
    into ``directory``; returns the config's path."""
    rng = np.random.default_rng(1)
    for name in NAMES:
        runs = {"run_id": [f"r{i}" for i in range(8)], "acc": rng.uniform(0.5, 0.9, 8)}
        pd.DataFrame({**runs, "test_acc": rng.uniform(0.5, 0.9, 8)}).to_csv(directory / f"{name}.csv", index=False)
    config = directory / "boontrack.toml"
    config.write_text("".join(JOB.format(name=name) for name in NAMES))
    return config
