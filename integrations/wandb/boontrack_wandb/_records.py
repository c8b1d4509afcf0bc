"""A reader for the ``run-<id>.wandb`` files that ``wandb`` writes in offline mode, with no network.

The file is a 7-byte header (``:W&B``, the magic number 0xBEE1 little-endian, a format version byte) followed
by a LevelDB-style record log: 32 KiB blocks of chunks, each ``crc32 (u32 LE) | length (u16 LE) | type (u8) |
data``, where FULL/FIRST/MIDDLE/LAST chunks are joined into one record and the CRC covers the type byte and the
data. Every record is a ``wandb.proto.wandb_internal_pb2.Record`` protobuf.

Both the framing and the protobuf schema are internal to wandb (checked against wandb 0.31.0), so the reader
checks the format version and the ``min_consumer`` version in the header record and refuses files it does not
know instead of guessing. Only wandb's generated protobuf module is imported, on first use.
"""

from __future__ import annotations

import json
import struct
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_MAGIC = b":W&B" + struct.pack("<H", 0xBEE1)
_FORMAT_VERSION = 0
_BLOCK = 32 * 1024
_CHUNK_HEADER = struct.Struct("<IHB")
_FULL, _FIRST, _MIDDLE, _LAST = 1, 2, 3, 4
#: Highest ``min_consumer`` this reader understands: files that demand a newer reader are refused.
_MAX_MIN_CONSUMER = (0, 70, 0)


#: ``OfflineRun.problem`` values: why a run file could not be read whole. They are the run's status in the run
#: frame, and the run table drops such runs with their reason (:data:`boontrack.runtable.UNREADABLE_STATUSES`).
INCOMPLETE, CORRUPT, UNSUPPORTED = "incomplete", "corrupt", "unsupported"


class RunFileProblem(Exception):
    """A run file that cannot be read whole: ``kind`` is one of the ``OfflineRun.problem`` values."""

    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(detail)
        self.kind = kind


@dataclass
class OfflineRun:
    """What one offline run file says about its run (values decoded from JSON)."""

    path: Path
    run_id: str = ""
    entity: str = ""
    project: str = ""
    group: str = ""
    job_type: str = ""
    display_name: str = ""
    sweep_id: str = ""
    tags: tuple[str, ...] = ()
    start_time: float | None = None  #: seconds since the epoch
    config: dict[str, Any] = field(default_factory=dict)
    summary: dict[str, Any] = field(default_factory=dict)
    history: list[dict[str, Any]] = field(default_factory=list)
    exit_code: int | None = None  #: None when the file has no exit record (still running, or killed hard)
    runtime_s: float | None = None
    #: Why the file could not be read whole (``incomplete``, ``corrupt``, ``unsupported``), else None.
    problem: str | None = None
    #: What was wrong, for messages (the byte where a checksum failed, the format version, ...).
    detail: str = ""

    @property
    def state(self) -> str:
        """The problem when there is one; else ``running`` without an exit record (a live run between two
        writes, or one killed hard), ``finished`` for exit code 0, ``failed`` for any other."""
        if self.problem is not None:
            return self.problem
        if self.exit_code is None:
            return "running"
        return "finished" if self.exit_code == 0 else "failed"

    @property
    def complete(self) -> bool:
        """Readable whole, up to its exit record: nothing more will be written to it."""
        return self.problem is None and self.exit_code is not None


def _version_tuple(text: str) -> tuple[int, ...]:
    core = text.split("+", 1)[0].split("-", 1)[0]
    try:
        return tuple(int(part) for part in core.split("."))
    except ValueError:
        return (10**9,)  # unparseable: treat as newer than anything we know


def split_records(data: bytes) -> tuple[list[bytes], bool]:
    """The raw bytes of every record in a run file's contents, checking the header and every chunk's CRC, and
    whether the data ends inside a record (a file still being written, or cut short).

    Raises :class:`RunFileProblem`: ``incomplete`` for data shorter than the header, ``unsupported`` for
    another format version, ``corrupt`` for anything a writer cannot have produced.
    """
    if len(data) < len(_MAGIC) + 1 and _MAGIC.startswith(data[: len(_MAGIC)]):
        raise RunFileProblem(INCOMPLETE, f"{len(data)} bytes, shorter than the header")
    if data[:6] != _MAGIC:
        raise RunFileProblem(CORRUPT, f"not a wandb run file (bad header {data[:6]!r})")
    if data[6] != _FORMAT_VERSION:
        raise RunFileProblem(
            UNSUPPORTED,
            f"wandb file format version {data[6]}; boontrack reads version {_FORMAT_VERSION} (written by wandb "
            "0.31); upgrade boontrack or read the run through the W&B API instead",
        )
    records: list[bytes] = []
    pos, pending = 7, bytearray()
    while pos + _CHUNK_HEADER.size <= len(data):
        room = _BLOCK - pos % _BLOCK
        if room < _CHUNK_HEADER.size:  # the rest of the block is padding
            pos += room
            continue
        crc, length, kind = _CHUNK_HEADER.unpack_from(data, pos)
        if kind == 0 and length == 0:  # zero padding at the end of a block or of a file being written
            pos += room
            continue
        if length > room - _CHUNK_HEADER.size:  # chunks never cross a block boundary
            raise RunFileProblem(CORRUPT, f"chunk at byte {pos} overruns its block")
        start = pos + _CHUNK_HEADER.size
        chunk = data[start : start + length]
        if len(chunk) < length:
            return records, True
        if zlib.crc32(chunk, zlib.crc32(bytes([kind]))) != crc:
            raise RunFileProblem(CORRUPT, f"checksum mismatch at byte {pos}")
        pos = start + length
        if kind == _FULL:
            records.append(bytes(chunk))
        elif kind == _FIRST:
            pending = bytearray(chunk)
        elif kind in (_MIDDLE, _LAST):
            pending += chunk
            if kind == _LAST:
                records.append(bytes(pending))
                pending = bytearray()
        else:
            raise RunFileProblem(CORRUPT, f"unknown chunk type {kind} at byte {pos}")
    tail = data[pos:]
    padded_to_block_end = len(data) % _BLOCK == 0 and not any(tail)
    return records, bool(pending) or (bool(tail) and not padded_to_block_end)


def _item_path(item: Any) -> list[str]:
    return [item.key] if item.key else list(item.nested_key)


def _item_value(item: Any) -> Any:
    # wandb 0.31 added a typed oneof to HistoryItem; older writers (and 0.31 itself, so far) fill value_json.
    kind = item.WhichOneof("value") if "value" in item.DESCRIPTOR.oneofs_by_name else None
    if kind == "none":
        return None
    if kind in ("boolean", "integer", "number", "text"):
        return getattr(item, kind)
    if kind == "json":
        return json.loads(item.json)
    return json.loads(item.value_json) if item.value_json else None


def _set_path(target: dict[str, Any], path: list[str], value: Any) -> None:
    for part in path[:-1]:
        nxt = target.get(part)
        if not isinstance(nxt, dict):
            nxt = target[part] = {}
        target = nxt
    target[path[-1]] = value


def _remove_path(target: dict[str, Any], path: list[str]) -> None:
    for part in path[:-1]:
        inner = target.get(part)
        if not isinstance(inner, dict):
            return
        target = inner
    target.pop(path[-1], None)


def _apply_updates(target: dict[str, Any], record: Any) -> None:
    for item in record.update:
        _set_path(target, _item_path(item), _item_value(item))
    for item in record.remove:
        _remove_path(target, _item_path(item))


def _check_header(header: Any) -> None:
    needed = header.version_info.min_consumer
    if needed and _version_tuple(needed) > _MAX_MIN_CONSUMER:
        raise RunFileProblem(
            UNSUPPORTED,
            f"needs a reader of version {needed} (written by wandb {header.version_info.producer}); "
            "boontrack reads files written by wandb 0.31; read the run through the W&B API instead",
        )


def run_id_of(path: Path) -> str:
    """The run id in a run file's name (``run-<id>.wandb``): the id of a file too damaged to say it itself."""
    return path.stem.removeprefix("run-")


def read_offline_run(path: Path, *, with_history: bool = False) -> OfflineRun:
    """Decode one ``run-<id>.wandb`` file. ``with_history`` keeps every history row (memory grows with it).

    Never raises for the file's contents: a file that cannot be read whole comes back with ``problem`` set (and
    the run id of its name when it has no run record), so that one damaged file never stops a read.
    """
    run = OfflineRun(path=path)
    try:
        _decode(run, path.read_bytes(), with_history)
    except RunFileProblem as problem:
        run.problem, run.detail = problem.kind, str(problem)
    if run.problem is None and not run.run_id:
        run.problem, run.detail = INCOMPLETE, "no run record"
    run.run_id = run.run_id or run_id_of(path)
    return run


def _decode(run: OfflineRun, data: bytes, with_history: bool) -> None:
    from google.protobuf.message import DecodeError
    from wandb.proto import wandb_internal_pb2 as pb

    raws, cut_short = split_records(data)
    record = pb.Record()
    for raw in raws:
        try:
            record.ParseFromString(raw)
            _read_record(run, record, with_history)
        except (DecodeError, ValueError):  # ValueError: a value that is not JSON
            raise RunFileProblem(CORRUPT, "a record that does not decode") from None
    if cut_short and run.exit_code is None:
        raise RunFileProblem(INCOMPLETE, "ends inside a record")


def _read_record(run: OfflineRun, record: Any, with_history: bool) -> None:
    kind = record.WhichOneof("record_type")
    if kind == "header":
        _check_header(record.header)
    elif kind == "run":
        _read_run_record(run, record.run)
    elif kind == "config":
        _apply_updates(run.config, record.config)
    elif kind == "summary":
        _apply_updates(run.summary, record.summary)
    elif kind == "history":
        _read_history_record(run, record.history, with_history)
    elif kind == "exit":
        run.exit_code = record.exit.exit_code
        if record.exit.runtime:  # whole seconds; the history's _runtime is finer when the exit says 0
            run.runtime_s = float(record.exit.runtime)


def _read_history_record(run: OfflineRun, history: Any, keep: bool) -> None:
    row: dict[str, Any] = {}
    for item in history.item:
        path = _item_path(item)
        if keep or path == ["_runtime"]:
            _set_path(row, path, _item_value(item))
    if keep:
        run.history.append(row)
    runtime = row.get("_runtime")
    if isinstance(runtime, (int, float)) and run.exit_code is None:
        run.runtime_s = float(runtime)


def _read_run_record(run: OfflineRun, rec: Any) -> None:
    run.run_id, run.entity, run.project = rec.run_id, rec.entity, rec.project
    run.group, run.job_type, run.display_name = rec.run_group, rec.job_type, rec.display_name
    run.sweep_id = rec.sweep_id
    run.tags = tuple(rec.tags)
    if rec.HasField("start_time"):
        run.start_time = rec.start_time.seconds + rec.start_time.nanos / 1e9
    _apply_updates(run.config, rec.config)
    _apply_updates(run.summary, rec.summary)
