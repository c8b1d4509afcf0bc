"""Benchmark: how soon SIGINT or SIGTERM ends ``boontrack summarize`` of many runs, and how many batches of the
bootstrap start after the signal.

For each signal and repetition, ``boontrack summarize FILE --val val_acc --test test_acc --group-by model --out
DIR`` on ``--runs`` runs in ``--groups`` groups (``bench_summarize.py``'s table; 2 by default: both run on threads
of their own, which a signal does not interrupt, through all their batches) starts with a batch log
(``BOONTRACK_BATCH_LOG``), is signalled ``--after`` seconds after its first batch, and is reaped; printed: the
wall time from the signal to the end of the process, its exit status, its last line on stderr, the batches
started before and after the signal, and whether the output directory exists.

Run:  python tests/benchmarks/bench_stop.py [--runs 200000] [--groups 2] [--after 15] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_summarize import make_table

from boontrack._signals import BATCH_LOG_VARIABLE

#: ``boontrack`` with Python's own handling of SIGINT and SIGTERM, whatever this process inherited (a shell runs a
#: background job with SIGINT ignored, and the command leaves an ignored signal ignored).
COMMAND = (
    "import signal; signal.signal(signal.SIGINT, signal.default_int_handler); "
    "signal.signal(signal.SIGTERM, signal.SIG_DFL); from boontrack.cli import main; main()"
)


def stop_once(table: Path, directory: Path, signum: int, after: float) -> str:
    log, out = directory / "batches.log", directory / "out"
    command = [sys.executable, "-c", COMMAND, "summarize", str(table), "--val", "val_acc"]
    command += ["--test", "test_acc", "--group-by", "model", "--out", str(out)]
    with tempfile.TemporaryFile("w+") as stderr:
        process = subprocess.Popen(
            command, stdout=subprocess.DEVNULL, stderr=stderr, env={**os.environ, BATCH_LOG_VARIABLE: str(log)}
        )
        while not (log.exists() and log.stat().st_size) and process.poll() is None:
            time.sleep(0.01)
        time.sleep(after)
        signalled = time.perf_counter()
        process.send_signal(signum)
        code = process.wait()
        gone = time.perf_counter() - signalled
        stderr.seek(0)
        last = stderr.read().strip().splitlines()[-1:]
    lines = log.read_text().splitlines()
    after_signal = lines.count("started after the signal")
    return (
        f"| {signal.Signals(signum).name} | {gone:.2f} s | {code} | {' '.join(last)} | {len(lines) - after_signal} "
        f"| {after_signal} | {out.exists()} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200_000)
    parser.add_argument("--groups", type=int, default=2)
    parser.add_argument("--after", type=float, default=15.0, help="seconds from the first batch to the signal")
    parser.add_argument("--repeat", type=int, default=3)
    options = parser.parse_args()
    print(
        f"{options.runs:,} runs in {options.groups} groups, signalled {options.after:g} s after the first batch, load {os.getloadavg()}\n"
    )
    print("| signal | gone after | exit | last line | batches before | after | output written |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        table = Path(tmp) / "runs.csv"
        make_table(options.runs, options.groups).to_csv(table, index=False)
        for _ in range(options.repeat):
            for signum in (signal.SIGINT, signal.SIGTERM):
                with tempfile.TemporaryDirectory(dir=tmp) as directory:
                    print(stop_once(table, Path(directory), signum, options.after), flush=True)


if __name__ == "__main__":
    main()
