"""Benchmark: ``boontrack summarize FILE --out DIR`` run again on unchanged runs (10,000 runs in 10 groups), or
with ``--mlflow`` ``summarize --write-back`` of one sweep in an MLflow sqlite store run again.

Run by hand (not collected by pytest), from the checkout whose code is measured::

    python tests/benchmarks/bench_summarize_unchanged.py [--runs 10000] [--groups 10] [--resamples auto]
    python tests/benchmarks/bench_summarize_unchanged.py --mlflow [--runs 10000] [--repeat 3]

Prints Markdown rows: CPU seconds (user + system) and wall time of the whole ``boontrack`` process for

- the first ``summarize --out`` (read, analyze, render, write the directory);
- the same command again on the unchanged runs: it reads the runs, finds the directory up to date and prints
  the summary stored in its ``summary.json`` (before this was possible, it analyzed the runs again to print);
- ``summarize`` without a destination, which analyzes to print: what an unchanged rerun cost when it
  recomputed the summary to print it.

With ``--mlflow`` the runs are one sweep of ``--runs`` children in an MLflow sqlite store (params seed/lr/model,
5 % FAILED, inserted in bulk as ``bench_summarize_sqlite.py`` does), grouped by their 3 models, and the destination
is ``--write-back``: the first write analyzes, draws the plots and writes the summary run through MLflow's client;
the rerun decides "up to date" by SQL and prints the ``summary.json`` of the summary run. Each row also says
whether its process imported MLflow. ``--repeat`` runs the unchanged rerun that many times (median CPU).

The reruns must print what the first run printed, its warnings aside (checked). The table is the one of
``bench_summarize.py``; budgets 1, 5, 10, 20, 50, 100 (``--n``).
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from pathlib import Path

from bench_summarize import BUDGETS, boontrack, make_table

WARNING_LINE = re.compile(r"^(Warning, |\d+ warning\(s\); )")

#: The command line in this process's child, then on stderr whether it imported MLflow.
_COMMAND_LINE = """
import sys
from boontrack.cli import main
main(sys.argv[1:], standalone_mode=False)
print("mlflow imported:", "mlflow" in sys.modules, file=sys.stderr)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--groups", type=int, default=10, help="groups of the file (--mlflow: the 3 models)")
    parser.add_argument("--resamples", default="auto", help="a number, or auto (the default's)")
    parser.add_argument("--n", default=BUDGETS)
    parser.add_argument("--mlflow", action="store_true", help="--write-back to an MLflow sqlite store")
    parser.add_argument("--repeat", type=int, default=1, help="unchanged reruns (median CPU)")
    options = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        if options.mlflow:
            from bench_summarize_sqlite import make_store

            uri, _, parent = make_store(Path(tmp), options.runs)
            source = ["mlflow:bench", "--tracking-uri", uri, "--parent", parent]
            destination = ["--write-back"]
        else:
            table = Path(tmp) / "runs.csv"
            make_table(options.runs, options.groups).to_csv(table, index=False)
            source, destination = [str(table)], ["--out", str(Path(tmp) / "summary")]
        command = ["summarize", *source, "--val", "val_acc", "--test", "test_acc", "--group-by", "model"]
        command += ["--n", options.n, "--resamples", str(options.resamples)]
        written = "--write-back" if options.mlflow else "--out"
        rows = [_measured(f"first `summarize {written}` (analyze, write)", [*command, *destination])]
        reruns = [_measured(f"`summarize {written}` again, runs unchanged", [*command, *destination])]
        reruns += [_measured(reruns[0][0], [*command, *destination]) for _ in range(options.repeat - 1)]
        rows.append(sorted(reruns, key=lambda row: row[1])[len(reruns) // 2])
        rows.append(_measured("`summarize` without destination (analyzes to print)", command))
        if not all(_table(row[3]) == _table(rows[0][3]) for row in rows):
            raise SystemExit("the reruns printed another table than the first run")

    groups = 3 if options.mlflow else options.groups
    print("| command | runs | groups | resamples | CPU (s) | wall (s) | MLflow imported |")
    print("|---|---|---|---|---|---|---|")
    for label, cpu, wall, _, imported in rows:
        print(f"| {label} | {options.runs:,} | {groups} | {options.resamples} | {cpu:.2f} | {wall:.2f} | {imported} |")
    cpus = sorted(row[1] for row in reruns)
    print(f"\nunchanged / first CPU: {rows[1][1] / rows[0][1]:.2f}x (reruns: {', '.join(f'{c:.2f}' for c in cpus)} s)")


def _table(printed: str) -> list[str]:
    """What a summary printed, but for its warnings: a run that writes a report counts them and points to it, one
    without a destination prints each in full."""
    return [line for line in printed.splitlines() if not WARNING_LINE.match(line)]


def _measured(label: str, args: list[str]) -> tuple[str, float, float, str, str]:
    """One process of the command line: (label, CPU, wall, what it printed, whether it imported MLflow)."""
    wall, _, process, cpu = boontrack(*args, program=[sys.executable, "-c", _COMMAND_LINE])
    imported = process.stderr.strip().splitlines()[-1].removeprefix("mlflow imported: ")
    return label, cpu, wall, process.stdout, {"True": "yes", "False": "no"}[imported]


if __name__ == "__main__":
    sys.exit(main())
