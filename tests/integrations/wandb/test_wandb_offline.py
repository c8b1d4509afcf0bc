"""wandb-offline: runs written by the real wandb library in offline mode, read back from their files."""

from __future__ import annotations

import json
import os
import signal
import struct
import subprocess
import sys
import threading
import time
import zlib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from boontrack.backends import MetricRequest, open_source
from boontrack.exceptions import InputError
from boontrack_wandb._offline import WAIT_VARIABLE

from offline_files import record_starts
from wandb_sweep import BIG_TEXT, SWEEP

pytestmark = pytest.mark.wandb

REQUEST = MetricRequest(val="val_acc", test="test_acc")


def _read(directory: Path, request: MetricRequest = REQUEST, **options):
    return open_source(f"wandb-offline:{directory}", **options).read(request).set_index("run_id")


def test_values_config_tags_and_states_match_what_was_logged(offline_runs):
    directory, logged = offline_runs
    frame = _read(directory)
    inputs = {rid: run for rid, run in logged.items() if run.job_type != "boontrack"}
    assert set(frame.index) == set(inputs)  # every input run, the aggregate run left out
    for rid, run in inputs.items():
        row = frame.loc[rid]
        assert row["metrics.val_acc"] == run.last["val_acc"]
        assert row["metrics.test_acc"] == run.last["test_acc"]
        assert row["params.model"] == run.config["model"]
        assert row["status"] == ("finished" if run.exit_code == 0 else "failed")
        assert row["tags.group"] == run.group and row["tags.sweep"] == SWEEP and row["tags.job_type"] == "train"
        assert row["duration_s"] > 0
        if "optim" in run.config:  # nested config flattened with dots
            assert row["params.optim.lr"] == run.config["optim"]["lr"]
        for key, value in run.extra_summary.items():
            assert row[f"metrics.{key}"] == value
    assert frame["created_at"].dtype == "datetime64[ns, UTC]"
    now = pd.Timestamp.now(tz="UTC")
    assert frame["created_at"].between(now - pd.Timedelta(minutes=10), now).all()


def test_a_config_value_split_over_several_blocks_is_read_whole(offline_runs):
    frame = _read(offline_runs[0])
    assert (frame["params.note"] == BIG_TEXT).sum() == 1


def test_best_val_step_pairs_the_best_validation_epoch_with_its_test_score(offline_runs):
    directory, logged = offline_runs
    frame = _read(directory, MetricRequest(val="val_acc", test="test_acc", pick="best_val_step"))
    for rid in frame.index:
        history = logged[rid].history
        best = int(np.argmax([r["val_acc"] for r in history]))  # first maximum, as early stopping keeps it
        assert frame.loc[rid, "metrics.val_acc"] == history[best]["val_acc"]
        assert frame.loc[rid, "metrics.test_acc"] == history[best]["test_acc"]


def test_best_val_step_for_a_minimized_metric(offline_runs):
    directory, logged = offline_runs
    frame = _read(directory, MetricRequest(val="val_acc", test="test_acc", maximize=False, pick="best_val_step"))
    rid = frame.index[0]
    history = logged[rid].history
    worst = int(np.argmin([r["val_acc"] for r in history]))
    assert frame.loc[rid, "metrics.test_acc"] == history[worst]["test_acc"]


def test_group_and_sweep_options_select_runs(offline_runs):
    directory, logged = offline_runs
    cnn = _read(directory, group="cnn-sweep")
    assert set(cnn.index) == {rid for rid, r in logged.items() if r.group == "cnn-sweep"}
    assert _read(directory, sweep="other").empty


def _frame_records(records: list[bytes], version: int = 0) -> bytes:
    """An independent writer of the record-log framing (7-byte chunk headers in 32 KiB blocks)."""
    out = bytearray(b":W&B" + struct.pack("<HB", 0xBEE1, version))
    for record in records:
        rest, first = record, True
        while True:
            room = 32768 - len(out) % 32768
            if room < 7:
                out += b"\0" * room
                continue
            piece, rest = rest[: room - 7], rest[room - 7 :]
            kind = (1 if first else 4) if not rest else (2 if first else 3)
            out += struct.pack("<IHB", zlib.crc32(piece, zlib.crc32(bytes([kind]))), len(piece), kind) + piece
            first = False
            if not rest:
                break
    return bytes(out)


def _run_file(tmp_path: Path, records: list, version: int = 0) -> Path:
    run_dir = tmp_path / "wandb" / "offline-run-20260101_000000-abc"
    run_dir.mkdir(parents=True)
    path = run_dir / "run-abc.wandb"
    path.write_bytes(_frame_records([r.SerializeToString() for r in records], version))
    return path


def _records(min_consumer: str = "0.70.0", exit_code: int | None = 0):
    from wandb.proto import wandb_internal_pb2 as pb

    version = pb.VersionInfo(producer="0.31.0", min_consumer=min_consumer)
    header = pb.Record(header=pb.HeaderRecord(version_info=version))
    run = pb.Record(run=pb.RunRecord(run_id="abc", project="p"))
    history = pb.Record(history=pb.HistoryRecord(item=[pb.HistoryItem(key="val_acc", number=0.5)]))  # typed value
    summary = pb.Record(summary=pb.SummaryRecord(update=[pb.SummaryItem(key="val_acc", value_json="0.5")]))
    records = [header, run, history, summary]
    if exit_code is not None:
        records.append(pb.Record(exit=pb.RunExitRecord(exit_code=exit_code)))
    return records


def test_a_file_written_by_an_independent_framer_is_read(tmp_path):
    _run_file(tmp_path, _records())
    frame = _read(tmp_path, MetricRequest(val="val_acc", pick="best_val_step"))
    assert frame.loc["abc", "metrics.val_acc"] == 0.5 and frame.loc["abc", "status"] == "finished"


def test_a_run_without_exit_record_is_running(tmp_path):
    _run_file(tmp_path, _records(exit_code=None))
    assert _read(tmp_path).loc["abc", "status"] == "running"


def _copy_training_runs(offline_runs, target: Path) -> list[Path]:
    """The complete files of the sweep's training runs copied into ``target``, modified long ago (so that no
    read waits for them)."""
    directory, logged = offline_runs
    copies = []
    for run_id, run in logged.items():
        if run.job_type == "train":
            source = next(directory.glob(f"wandb/offline-run-*/run-{run_id}.wandb"))
            copy = target / source.parent.name / source.name
            copy.parent.mkdir(parents=True)
            copy.write_bytes(source.read_bytes())
            copies.append(copy)
    _age(*copies)
    return copies


def _age(*paths: Path) -> None:
    for path in paths:
        os.utime(path, (1_700_000_000, 1_700_000_000))


def _statuses(directory: Path) -> dict[str, str]:
    return _read(directory)["status"].to_dict()


def _run_record_end(data: bytes) -> int:
    """Where the run record ends, by wandb's own protobuf (the records are whole chunks in a small file)."""
    from wandb.proto import wandb_internal_pb2 as pb

    starts = record_starts(data) + [len(data)]
    for start, end in zip(starts, starts[1:]):
        if pb.Record.FromString(data[start + 7 : end]).WhichOneof("record_type") == "run":
            return end
    raise AssertionError("no run record")


@pytest.fixture(autouse=True)
def no_wait(monkeypatch):
    """Reads here never wait for files still being written (the tests of the wait set it themselves)."""
    monkeypatch.setenv(WAIT_VARIABLE, "0")


def test_a_file_cut_at_any_byte_is_dropped_with_its_reason_and_the_others_are_read(offline_runs, tmp_path):
    copies = _copy_training_runs(offline_runs, tmp_path)
    victim, data = copies[0], copies[0].read_bytes()
    run_id = victim.stem.removeprefix("run-")
    expected = dict.fromkeys(_statuses(tmp_path), "finished") | {
        rid: "failed" for rid, r in offline_runs[1].items() if r.exit_code
    }
    starts, run_end, exit_start = set(record_starts(data)), _run_record_end(data), record_starts(data)[-1]
    for cut in sorted({*range(0, 40), *range(40, len(data), 23), *starts, len(data) - 1, len(data)}):
        victim.write_bytes(data[:cut])
        _age(victim)
        if cut == len(data):
            status = "finished"
        elif cut in starts and run_end <= cut <= exit_start:
            status = "running"  # ends between two records, before its exit record: as a live run's file does
        else:
            status = "incomplete"
        assert _statuses(tmp_path) == expected | {run_id: status}, f"cut at byte {cut} of {len(data)}"


def test_a_zero_byte_file_and_a_flipped_byte_are_dropped_with_their_reasons(offline_runs, tmp_path):
    copies = _copy_training_runs(offline_runs, tmp_path)
    victim, data = copies[0], copies[0].read_bytes()
    run_id = victim.stem.removeprefix("run-")
    victim.write_bytes(b"")
    _age(victim)
    assert _statuses(tmp_path)[run_id] == "incomplete"
    unreadable = {"corrupt", "incomplete", "unsupported"}
    for position in sorted({*range(0, 24), *range(24, len(data), 29)}):
        flipped = bytearray(data)
        flipped[position] ^= 0xFF
        victim.write_bytes(bytes(flipped))
        _age(victim)
        statuses = _statuses(tmp_path)
        assert statuses.pop(run_id, "corrupt") in unreadable, f"byte {position} flipped"
        assert set(statuses.values()) <= {"finished", "failed"}, f"byte {position} flipped"
    flipped = bytearray(data)
    flipped[record_starts(data)[1] + 7] ^= 0xFF  # inside the data of the record after the header
    victim.write_bytes(bytes(flipped))
    _age(victim)
    assert _statuses(tmp_path)[run_id] == "corrupt"


def test_the_summary_of_ten_good_files_and_a_cut_one_lists_the_cut_one_as_dropped(offline_runs, tmp_path):
    from click.testing import CliRunner

    from boontrack.cli import main

    copies = _copy_training_runs(offline_runs, tmp_path)
    victim = copies[0]
    victim.write_bytes(victim.read_bytes()[:100])
    _age(victim)
    result = CliRunner().invoke(
        main, ["summarize", f"wandb-offline:{tmp_path}", "--val", "val_acc", "--n", "1", "--format", "json"]
    )
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    dropped = {d["run_id"]: d["reason"] for d in summary["dropped"]}
    assert dropped[victim.stem.removeprefix("run-")] == "incomplete run file"
    assert summary["runs"] == len(copies) - 2  # the failed run is dropped too


def test_a_file_still_being_written_is_waited_for(offline_runs, tmp_path, monkeypatch):
    monkeypatch.setenv(WAIT_VARIABLE, "120")  # far more than the writer below needs, on any machine
    copies = _copy_training_runs(offline_runs, tmp_path)
    victim, data = copies[0], copies[0].read_bytes()
    victim.write_bytes(data[: len(data) // 2])  # just modified: a writer is at work
    writer = threading.Timer(0.5, lambda: victim.write_bytes(data))
    writer.start()
    try:
        statuses = _statuses(tmp_path)
    finally:
        writer.join()
    assert statuses[victim.stem.removeprefix("run-")] == "finished"


def test_the_wait_ends_at_its_bound_and_skips_files_that_stopped_changing(offline_runs, tmp_path, monkeypatch):
    copies = _copy_training_runs(offline_runs, tmp_path)
    victim = copies[0]
    victim.write_bytes(victim.read_bytes()[:100])
    monkeypatch.setenv(WAIT_VARIABLE, "0.3")
    assert _statuses(tmp_path)[victim.stem.removeprefix("run-")] == "incomplete"  # just written: waited for, then
    _age(victim)
    monkeypatch.setenv(WAIT_VARIABLE, "3600")

    def no_sleep(seconds):
        raise AssertionError("a file unchanged for longer than the bound was waited for")

    with monkeypatch.context() as patched:
        patched.setattr(time, "sleep", no_sleep)
        assert _statuses(tmp_path)[victim.stem.removeprefix("run-")] == "incomplete"


@pytest.mark.parametrize("value", ["-1", "soon", "nan"])
def test_a_bad_wait_is_refused_naming_the_variable(offline_runs, tmp_path, monkeypatch, value):
    _copy_training_runs(offline_runs, tmp_path)
    monkeypatch.setenv(WAIT_VARIABLE, value)
    with pytest.raises(InputError, match=WAIT_VARIABLE):
        _read(tmp_path)


def test_a_run_killed_right_after_init_is_dropped_as_incomplete(offline_runs, tmp_path):
    """A real process killed with SIGKILL (wandb's service, in its process group, with it) right after
    ``wandb.init``: its file holds the header alone."""
    code = (
        "import sys, wandb\n"
        "run = wandb.init(project='p', mode='offline', dir=sys.argv[1],"
        " settings=wandb.Settings(console='off', x_disable_stats=True))\n"
        "print(run.settings.sync_file, flush=True)\n"
        "sys.stdin.read()\n"
    )
    killed = tmp_path / "killed"
    killed.mkdir()
    process = subprocess.Popen(
        [sys.executable, "-c", code, str(killed)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        path = Path(process.stdout.readline().strip())
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(60)
    _wait_for_group_to_end(process.pid)
    copies = _copy_training_runs(offline_runs, tmp_path / "runs")
    target = tmp_path / "runs" / path.parent.name / path.name
    target.parent.mkdir()
    target.write_bytes(path.read_bytes())
    _age(target)
    statuses = _statuses(tmp_path / "runs")
    assert statuses.pop(path.stem.removeprefix("run-")) == "incomplete"
    assert len(statuses) == len(copies) and set(statuses.values()) <= {"finished", "failed"}


def _wait_for_group_to_end(group: int, bound_s: float = 60.0) -> None:
    """Until no process of ``group`` is left (wandb's service writes the file): killed processes end at once,
    but their parent may reap them later."""
    deadline = time.monotonic() + bound_s
    while True:
        alive = subprocess.run(["pgrep", "-g", str(group)], capture_output=True, text=True).stdout.split()
        zombies = [pid for pid in alive if _is_zombie(pid)]
        if len(alive) == len(zombies):
            return
        assert time.monotonic() < deadline, f"processes {alive} of group {group} still alive"
        time.sleep(0.1)


def _is_zombie(pid: str) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except (FileNotFoundError, IndexError):
        return True


@pytest.mark.parametrize(
    ("version", "min_consumer", "message"),
    [(1, "0.70.0", "format version 1"), (0, "0.99.0", "needs a reader of version 0.99.0")],
)
def test_unknown_file_versions_are_refused_clearly(tmp_path, version, min_consumer, message):
    _run_file(tmp_path, _records(min_consumer=min_consumer), version=version)
    with pytest.raises(InputError, match=message):
        _read(tmp_path)


def test_a_corrupt_file_is_refused(tmp_path):
    path = _run_file(tmp_path, _records())
    data = bytearray(path.read_bytes())
    data[-3] ^= 0xFF  # inside the last record's data
    path.write_bytes(bytes(data))
    with pytest.raises(InputError, match="checksum mismatch"):
        _read(tmp_path)


def test_not_a_run_file(tmp_path):
    run_dir = tmp_path / "offline-run-1"
    run_dir.mkdir()
    (run_dir / "run-1.wandb").write_bytes(b"hello world")
    with pytest.raises(InputError, match="not a wandb run file"):
        _read(tmp_path)


def test_bad_locations_and_options(tmp_path):
    with pytest.raises(InputError, match="not a directory"):
        _read(tmp_path / "missing")
    with pytest.raises(InputError, match="no offline runs"):
        _read(tmp_path)
    with pytest.raises(InputError, match="unknown option"):
        open_source(f"wandb-offline:{tmp_path}", colour="red")


def test_a_metric_no_run_logged_is_an_error_listing_the_metrics_there_are(offline_runs):
    from boontrack.analysis import Spec
    from boontrack.pipeline import run_job

    with pytest.raises(InputError, match="no column 'val_accuracy'") as excinfo:
        run_job(open_source(f"wandb-offline:{offline_runs[0]}"), Spec(val="val_accuracy"))
    assert "metrics.val_acc" in str(excinfo.value) and "metrics.test_acc" in str(excinfo.value)


def test_a_run_missing_the_metric_is_dropped_with_its_reason(offline_runs):
    frame = _read(offline_runs[0], MetricRequest(val="best_val_acc"))  # logged by the sweep's runs only
    assert frame["metrics.best_val_acc"].notna().sum() == 10 and frame["metrics.best_val_acc"].isna().any()


def _overview(summary) -> str:
    from boontrack.reports import to_markdown

    return next(part for part in to_markdown(summary).split("\n\n") if " runs kept, " in part)


def test_the_report_names_config_keys_as_the_user_wrote_them(offline_runs):
    from boontrack.analysis import Spec, analyze
    from boontrack.pipeline import run_job
    from boontrack.runtable import RunTable

    spec = Spec(val="val_acc", n=(1, 2), n_resamples=99, group_by=("model",))
    overview = _overview(run_job(open_source(f"wandb-offline:{offline_runs[0]}", sweep=SWEEP), spec).summary)
    assert "grouped by model." in overview, overview
    # The default grouping (every config key but the seed) of a W&B run frame: the config keys, unprefixed.
    frame = pd.DataFrame(
        {
            "run_id": [f"r{i}" for i in range(6)],
            "params.model": ["a", "b"] * 3,
            "params.seed": [0, 0, 1, 1, 2, 2],
            "metrics.val_acc": np.linspace(0.5, 0.9, 6),
        }
    )
    spec = Spec(val="val_acc", n=(1, 2), n_resamples=99, seed_column="seed")
    overview = _overview(analyze(RunTable.from_frame(frame, spec), spec))
    assert "grouped by model." in overview, overview


def test_option_errors_name_the_python_parameters(offline_runs):
    from boontrack.wandb import summarize_sweep

    with pytest.raises(InputError, match="^wandb: `filters` must be a JSON object"):
        open_source("wandb:team/proj", filters="{state")
    with pytest.raises(InputError, match="^`sweep_path` must be"):
        summarize_sweep("only/two", val="val_acc")
