"""Benchmark of the W&B backend (a script, run by hand: ``python tests/benchmarks/bench_wandb.py``).

1. Listing 10,000 runs into a run frame through the real ``wandb.Api`` against the local wire-protocol double
   (``tests/integrations/wandb/wandb_double.py``, a contract double, not W&B): requests made and time, for
   boontrack's eager listing (pages of 500) and for the default lazy ``api.runs`` iteration that reads
   ``config`` and ``summary_metrics`` of each run.
2. Reading 1,000 offline run files (``wandb-offline:DIR``), last values and best-validation-step values.

Localhost times: against W&B cloud every request adds a network round trip, which is what the request counts
are about.
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "integrations" / "wandb"))


def isolate(root: Path) -> None:
    for name in ("WANDB_DIR", "WANDB_CONFIG_DIR", "WANDB_CACHE_DIR", "WANDB_DATA_DIR", "WANDB_ARTIFACT_DIR"):
        os.environ[name] = str(root / name.lower())
        Path(os.environ[name]).mkdir(parents=True, exist_ok=True)
    os.environ.update(WANDB_SILENT="true", NETRC=str(root / "no-netrc"))
    for name in ("WANDB_MODE", "WANDB_SWEEP_ID", "WANDB_RUN_ID"):
        os.environ.pop(name, None)


def bench_listing(n_runs: int) -> None:
    import wandb

    from boontrack.backends import MetricRequest, open_source
    from boontrack_wandb._online import PAGE_SIZE

    from wandb_double import API_KEY, FakeRun, WandbDouble

    os.environ["WANDB_API_KEY"] = API_KEY
    double = WandbDouble("bench").start()
    os.environ["WANDB_BASE_URL"] = double.url
    try:
        for i in range(n_runs):
            double.add_run(
                FakeRun(
                    name=f"r{i:07d}",
                    entity="bench",
                    project="big",
                    sweep="sw",
                    config={"model": f"m{i % 4}", "seed": i, "optim": {"lr": 10.0 ** -(i % 5)}},
                    summary={
                        "val_acc": (i * 7919 % 1000) / 1000,
                        "test_acc": (i * 104729 % 1000) / 1000,
                        "_runtime": 60.0,
                    },
                    created_at=f"2026-01-01T00:{i // 3600 % 60:02d}:{i % 60:02d}",
                )
            )
        wandb.Api(overrides={"entity": "bench"}, timeout=60)  # start wandb's service process outside the timings
        double.reset_log()
        started = time.perf_counter()
        frame = open_source("wandb:bench/big", sweep="sw").read(MetricRequest("val_acc", "test_acc"))
        eager_s = time.perf_counter() - started
        eager_ops = double.operations()
        assert len(frame) == n_runs
        print(
            f"eager  (boontrack, per_page={PAGE_SIZE}, lazy=False): {len(frame)} runs in {eager_s:.2f} s, "
            f"{eager_ops.count('Runs')} Runs requests (ceil(N/{PAGE_SIZE}) = {math.ceil(n_runs / PAGE_SIZE)}), "
            f"{len(eager_ops)} GraphQL requests in all: {sorted(set(eager_ops))}"
        )

        double.reset_log()
        started = time.perf_counter()
        api = wandb.Api(overrides={"entity": "bench"}, timeout=60)
        rows = [(r.id, r.config, r.summary_metrics) for r in api.runs("bench/big", filters={"sweep": "sw"})]
        lazy_s = time.perf_counter() - started
        lazy_ops = double.operations()
        assert len(rows) == n_runs
        print(
            f"lazy   (api.runs default, per_page=50):  {len(rows)} runs in {lazy_s:.2f} s, "
            f"{lazy_ops.count('Runs')} Runs + {lazy_ops.count('Run')} Run requests, {len(lazy_ops)} in all"
        )
    finally:
        wandb.teardown()
        double.stop()


def bench_offline(n_files: int, root: Path, distinct: int) -> None:
    import wandb

    from boontrack.backends import MetricRequest, open_source

    written = root / "written"
    started = time.perf_counter()
    for i in range(distinct):
        run = wandb.init(
            project="bench",
            mode="offline",
            dir=str(written),
            config={"model": f"m{i % 4}", "seed": i},
            reinit="create_new",
            settings=wandb.Settings(console="off", x_disable_stats=True),
        )
        for epoch in range(20):
            run.log({"val_acc": (i + epoch) % 17 / 17, "test_acc": (i * epoch) % 13 / 13})
        run.finish()
    wandb.teardown()
    write_s = time.perf_counter() - started
    files = sorted(written.glob("wandb/offline-run-*/run-*.wandb"))
    # Copies of real files fill the directory up to n_files (the reader's cost per file is what is measured).
    corpus = root / "corpus"
    for i in range(n_files):
        source = files[i % len(files)]
        target = corpus / f"offline-run-20260101_000000-{i:08d}" / source.name
        target.parent.mkdir(parents=True)
        shutil.copyfile(source, target)
    size_mb = sum(p.stat().st_size for p in corpus.glob("*/*.wandb")) / 1e6
    print(
        f"offline: wrote {distinct} runs with wandb in {write_s:.1f} s ({write_s / distinct * 1000:.0f} ms a run); "
        f"{n_files} files, {size_mb:.1f} MB, 20 history rows each"
    )
    for pick in ("last", "best_val_step"):
        started = time.perf_counter()
        frame = open_source(f"wandb-offline:{corpus}").read(MetricRequest("val_acc", "test_acc", pick=pick))
        elapsed = time.perf_counter() - started
        assert len(frame) == n_files
        per_file_ms = elapsed / n_files * 1000
        print(f"offline read, pick={pick}: {n_files} files in {elapsed:.2f} s ({per_file_ms:.2f} ms a file)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--files", type=int, default=1_000)
    parser.add_argument("--distinct", type=int, default=20, help="offline runs actually written with wandb")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        isolate(Path(tmp))
        bench_listing(args.runs)
        bench_offline(args.files, Path(tmp), args.distinct)


if __name__ == "__main__":
    main()
