"""Waiting for wandb's offline run files: wandb's service may still be writing a file after ``run.finish()``
returns, so a test never reads one before it is complete; and the complete files handed to the wire-protocol
double as the runs W&B would hold once they are synced."""

from __future__ import annotations

import time
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from wandb_double import WandbDouble

#: Seconds a test waits for wandb's service to complete the files it writes, on a loaded machine.
COMPLETION_BOUND_S = 120.0


def finish_offline_runs(paths: Iterable[Path], *, bound_s: float = COMPLETION_BOUND_S) -> None:
    """Shut wandb's service down (it closes every file it writes), then wait until each file holds its exit
    record; AssertionError naming the file and its state after ``bound_s`` seconds."""
    import wandb

    from boontrack_wandb._records import read_offline_run

    wandb.teardown()
    deadline = time.monotonic() + bound_s
    for path in paths:
        while not (run := read_offline_run(path)).complete:
            if time.monotonic() > deadline:
                raise AssertionError(f"{path} still {run.state} ({run.detail}) {bound_s:g} s after wandb.teardown()")
            time.sleep(0.1)


def add_offline_runs(server: WandbDouble, directory: Path) -> None:
    """Every run of the complete offline run files under ``directory`` into ``server``, as W&B holds it once
    synced: its project, state, group, job type, tags, sweep, config (without ``_wandb``), summary and history."""
    from boontrack_wandb._offline import find_run_files
    from boontrack_wandb._records import read_offline_run

    from wandb_double import FakeRun

    for path in find_run_files(directory):
        rec = read_offline_run(path, with_history=True)
        server.add_run(
            FakeRun(
                name=rec.run_id,
                entity=server.entity,
                project=rec.project,
                state=rec.state,
                group=rec.group or None,
                job_type=rec.job_type or None,
                tags=list(rec.tags),
                sweep=rec.sweep_id or None,
                config={k: v for k, v in rec.config.items() if k != "_wandb"},
                summary=rec.summary,
                history=rec.history,
                created_at=f"2026-01-01T00:00:{len(server.runs):02d}",
            )
        )


def record_starts(data: bytes) -> list[int]:
    """Byte offsets where each record of a run file begins, read from the chunk headers alone (LevelDB framing:
    32 KiB blocks of ``crc32 u32 | length u16 | type u8 | data`` chunks; type 1 = a whole record, 2 = its first
    chunk); independent of boontrack's reader."""
    block, header = 32 * 1024, 7
    starts, pos = [], 7
    while pos + header <= len(data):
        room = block - pos % block
        length, kind = int.from_bytes(data[pos + 4 : pos + 6], "little"), data[pos + 6]
        if room < header or (kind == 0 and length == 0):
            pos += room  # padding to the end of the block
            continue
        if kind in (1, 2):
            starts.append(pos)
        pos += header + length
    return starts


def cut_before_last_record(path: Path) -> None:
    """Cut ``path`` where its last record begins."""
    data = path.read_bytes()
    path.write_bytes(data[: record_starts(data)[-1]])
