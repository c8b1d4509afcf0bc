"""Benchmark: ``boontrack summarize FILE --out DIR`` run again on unchanged runs (10,000 runs in 10 groups).

Run by hand (not collected by pytest), from the checkout whose code is measured::

    python tests/benchmarks/bench_summarize_unchanged.py [--runs 10000] [--groups 10] [--resamples 9999]

Prints Markdown rows: CPU seconds (user + system) and wall time of the whole ``boontrack`` process for

- the first ``summarize --out`` (read, analyze, render, write the directory);
- the same command again on the unchanged runs: it reads the runs, finds the directory up to date and prints
  the summary stored in its ``summary.json`` (before this was possible, it analyzed the runs again to print);
- ``summarize`` without a destination, which analyzes to print: what an unchanged rerun cost when it
  recomputed the summary to print it.

The reruns must print exactly what the first run printed (checked). The table is the one of
``bench_summarize.py``; budgets 1, 5, 10, 20, 50, 100.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from bench_summarize import BUDGETS, boontrack, make_table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--groups", type=int, default=10)
    parser.add_argument("--resamples", type=int, default=9999)
    options = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        table = Path(tmp) / "runs.csv"
        make_table(options.runs, options.groups).to_csv(table, index=False)
        command = [
            "summarize",
            str(table),
            "--val",
            "val_acc",
            "--test",
            "test_acc",
            "--group-by",
            "model",
            "--n",
            BUDGETS,
            "--resamples",
            str(options.resamples),
        ]
        out = ["--out", str(Path(tmp) / "summary")]
        rows = []
        for label, args in [
            ("first `summarize --out` (analyze, write)", [*command, *out]),
            ("`summarize --out` again, runs unchanged", [*command, *out]),
            ("`summarize` without destination (analyzes to print)", command),
        ]:
            wall, _, process, cpu = boontrack(*args)
            rows.append((label, cpu, wall, process.stdout))
        if not all(row[3] == rows[0][3] for row in rows):
            raise SystemExit("the reruns printed another table than the first run")

    print("| command | runs | groups | resamples | CPU (s) | wall (s) |")
    print("|---|---|---|---|---|---|")
    for label, cpu, wall, _ in rows:
        print(f"| {label} | {options.runs:,} | {options.groups} | {options.resamples:,} | {cpu:.2f} | {wall:.2f} |")


if __name__ == "__main__":
    sys.exit(main())
