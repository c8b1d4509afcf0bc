"""Benchmark: ``boontrack summarize`` on 100,000 runs in 10 groups, n up to 100, 10,000 resamples.

Run by hand (not collected by pytest)::

    python tests/benchmarks/bench_summarize.py [--runs 100000] [--groups 10] [--resamples 10000]
    python tests/benchmarks/bench_summarize.py --threads-only [--runs 1000000]

Prints Markdown rows: CPU time (user + system), wall time and peak memory (max RSS of the command's process) of

- ``boontrack summarize FILE ... --out DIR`` (read, analyze, render plots and reports, write the directory),
  once as a user runs it (the environment as given, BLAS free to start its threads, the bootstrap on every
  CPU) and once on one thread: ``--threads 1`` and every native thread pool limited to one by environment
  variables (``OPENBLAS_NUM_THREADS=1`` etc.). The goal: the CPU time of the first at most 1.3x that of the
  second (the kernels limit BLAS themselves; the bootstrap's threads share its work);
- ``boontrack reaggregate`` on the same job once it is up to date (read, fingerprint, nothing written);
- ``boontrack --help`` (start-up), median of 5.

``--threads-only`` runs just the two ``summarize`` rows. The load average of the machine before and after is
printed too: on a shared machine CPU time is the figure to compare, wall time depends on the load.

The table is synthetic: per group, validation and test scores from a bivariate normal (correlation 0.5),
rounded to 4 decimals so that validation ties occur as in real sweeps.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

BUDGETS = "1,5,10,20,50,100"
#: Environment variables that limit the native thread pools (OpenBLAS, MKL, OpenMP, BLIS, Accelerate).
ONE_THREAD = {
    name: "1"
    for name in (
        "OPENBLAS_NUM_THREADS",
        "MKL_NUM_THREADS",
        "OMP_NUM_THREADS",
        "BLIS_NUM_THREADS",
        "VECLIB_MAXIMUM_THREADS",
    )
}


def boontrack(
    *args: str, env: dict[str, str] | None = None, program: Sequence[str] = ()
) -> tuple[float, float, subprocess.CompletedProcess, float]:
    """Run the installed command (or ``program``, e.g. a Python script calling the command line); see
    :func:`measured`."""
    return measured([*(program or [shutil.which("boontrack") or "boontrack"]), *args], env=env)


def measured(
    command: list[str], env: dict[str, str] | None = None
) -> tuple[float, float, subprocess.CompletedProcess, float]:
    """Run ``command`` to its end; wall seconds, peak RSS of its process in MiB, the finished process, and the CPU
    seconds (user + system) of its process."""
    with tempfile.TemporaryFile("w+") as stdout, tempfile.TemporaryFile("w+") as stderr:
        start = time.perf_counter()
        process = subprocess.Popen(command, stdout=stdout, stderr=stderr, text=True, env=env)
        _, status, usage = os.wait4(process.pid, 0)  # reaped here, so that its own rusage is returned
        wall = time.perf_counter() - start
        stdout.seek(0)
        stderr.seek(0)
        result = subprocess.CompletedProcess(command, os.waitstatus_to_exitcode(status), stdout.read(), stderr.read())
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({result.returncode}):\n{result.stderr}")
    return wall, usage.ru_maxrss / 1024, result, usage.ru_utime + usage.ru_stime  # ru_maxrss: KiB on Linux


def make_table(runs: int, groups: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    group = np.repeat(np.arange(groups), runs // groups)
    scores = rng.multivariate_normal([0.0, 0.0], [[1.0, 0.5], [0.5, 1.0]], size=len(group))
    return pd.DataFrame(
        {
            "run_id": [f"run-{i:06d}" for i in range(len(group))],
            "model": [f"model-{g}" for g in group],
            "val_acc": np.round(0.7 + 0.02 * group / groups + 0.01 * scores[:, 0], 4),
            "test_acc": np.round(0.69 + 0.02 * group / groups + 0.01 * scores[:, 1], 4),
        }
    )


def environments() -> dict[str, tuple[list[str], dict[str, str]]]:
    """Per row: extra options and environment. The environment as given, less any thread limit, with the
    default threads; and one thread, by option and by every thread pool's environment variable."""
    default = {name: value for name, value in os.environ.items() if name not in ONE_THREAD}
    return {
        f"default ({os.cpu_count()} CPUs)": ([], default),
        "one thread (`--threads 1`, environment)": (["--threads", "1"], {**default, **ONE_THREAD}),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100_000)
    parser.add_argument("--groups", type=int, default=10)
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--threads-only", action="store_true", help="only the two summarize rows")
    options = parser.parse_args()

    load_before = os.getloadavg()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        table = tmp_path / "runs.csv"
        make_table(options.runs, options.groups).to_csv(table, index=False)
        spec = ["--val", "val_acc", "--test", "test_acc", "--group-by", "model", "--n", BUDGETS]
        out = tmp_path / "summary"
        size = f"{options.runs:,} | {options.groups} | {BUDGETS} | {options.resamples:,}"
        for name, (threads, env) in environments().items():
            shutil.rmtree(out, ignore_errors=True)
            wall, peak, _, cpu = boontrack(
                "summarize",
                str(table),
                *spec,
                "--resamples",
                str(options.resamples),
                "--out",
                str(out),
                "--format",
                "json",
                *threads,
                env=env,
            )
            rows.append(f"| `boontrack summarize --out`, {name} | {size} | {cpu:.1f} | {wall:.1f} | {peak:.0f} |")
        if not options.threads_only:
            config = tmp_path / "boontrack.toml"
            config.write_text(
                f'[[jobs]]\nname = "bench"\nsource = "{table}"\nval = "val_acc"\ntest = "test_acc"\n'
                f'group_by = ["model"]\nn = [{BUDGETS}]\nn_resamples = {options.resamples}\nout = "{out}"\n'
            )
            wall, peak, unchanged, cpu = boontrack("reaggregate", "--config", str(config))
            assert unchanged.stdout.strip() == "bench: unchanged", unchanged.stdout
            rows.append(f"| `boontrack reaggregate` (unchanged) | {size} | {cpu:.1f} | {wall:.1f} | {peak:.0f} |")
            help_walls = [boontrack("--help")[0] for _ in range(5)]
            rows.append(f"| `boontrack --help` (median of 5) | | | | | | {statistics.median(help_walls):.3f} | |")

    print("| command | runs | groups | n | resamples | CPU (s) | wall (s) | peak RSS (MiB) |")
    print("|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    load_after = os.getloadavg()
    print(f"\nload average (1, 5, 15 min) before: {load_before}, after: {load_after}; {os.cpu_count()} CPUs")


if __name__ == "__main__":
    sys.exit(main())
