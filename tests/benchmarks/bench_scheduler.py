"""Benchmark: the CPU the ``reaggregate`` driver spends scheduling jobs, apart from the jobs themselves.

10,000 jobs of one tracking server go through :func:`boontrack.reaggregate.run_jobs` with an engine that runs
nothing (each job "finishes" at the next wait, the oldest first), once with ``--workers 32 --per-server 4`` (most
jobs wait behind their server) and once with ``--per-server 32``. The driver's look at each job's change token is
left out (it opens the job's source: the job's cost, not the scheduler's). Figures: CPU seconds of the process
(``time.process_time``), best of ``--repeat``: the whole pass, and the pass with its log lines' redaction left out
(a scan of the environment per line, most of the rest).

Run:  python tests/benchmarks/bench_scheduler.py [--jobs 10000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Iterator
from contextlib import contextmanager

from boontrack import reaggregate
from boontrack.reaggregate import Job, run_jobs
from boontrack.spec import Spec


class NullEngine:
    """Runs nothing: a job is done at the next wait, the oldest first."""

    def __init__(self, slots: int) -> None:
        self.slots, self.running = slots, []

    def submit(self, job, *, force, lock_timeout):
        self.running.append(job.name)
        return job.name

    def wait(self, handles, timeout=None):
        return [(self.running.pop(0), ("updated", None))]

    def close(self):
        pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    options = parser.parse_args()
    if hasattr(reaggregate, "_unchanged"):
        reaggregate._unchanged = lambda job: None  # the scheduler only
    spec = Spec(val="val_acc", n=(1,), maximize=True)
    jobs = [
        Job(
            name=f"job-{i}",
            source="mlflow:1",
            spec=spec,
            write_back=True,
            source_options={"tracking_uri": "http://mlflow.internal:5000", "parent": f"{i:032x}"},
        )
        for i in range(options.jobs)
    ]
    print(f"{options.jobs:,} jobs of one tracking server, 32 slots; driver CPU, best of {options.repeat}\n")
    print("| per server | driver CPU (s) | without redaction (s) |")
    print("|---|---|---|")
    for per_server in (4, 32):
        whole = _best_cpu(jobs, per_server, options.repeat)
        with _redaction_left_out():
            scheduling = _best_cpu(jobs, per_server, options.repeat)
        print(f"| {per_server} | {whole:.2f} | {scheduling:.2f} |")


def _best_cpu(jobs: list[Job], per_server: int, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.process_time()
        assert run_jobs(jobs, engine=NullEngine(32), per_server=per_server, log=lambda line: None) == 0
        best = min(best, time.process_time() - started)
    return best


@contextmanager
def _redaction_left_out() -> Iterator[None]:
    kept = getattr(reaggregate, "redact", None)
    if kept is None:  # a version that did not redact its lines
        yield
        return
    reaggregate.redact = lambda text: text
    try:
        yield
    finally:
        reaggregate.redact = kept


if __name__ == "__main__":
    main()
