"""wandb-offline: runs written by the real wandb library in offline mode, read back from their files."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from boontrack.backends import MetricRequest, open_source
from boontrack.exceptions import InputError

from wandb_sweep import BIG_TEXT, SWEEP

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


def test_a_run_cut_off_mid_record_is_read_up_to_the_cut(offline_runs, tmp_path):
    # a training run (the directory also holds boontrack's aggregate run, which readers leave out)
    run_id = next(run_id for run_id, run in offline_runs[1].items() if run.job_type == "train")
    source_file = next(offline_runs[0].glob(f"wandb/offline-run-*/run-{run_id}.wandb"))
    target = tmp_path / "offline-run-x" / source_file.name
    target.parent.mkdir()
    target.write_bytes(source_file.read_bytes()[:-5])  # the exit record is incomplete, as in a live run
    frame = _read(tmp_path)
    assert list(frame["status"]) == ["running"]


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
    with pytest.raises(InputError, match="^sweep_path must be"):
        summarize_sweep("only/two", val="val_acc")
