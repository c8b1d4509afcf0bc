"""The pipeline: fingerprint, summary key, the directory sink and run_job's idempotent write sequence."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import warnings

import numpy as np
import pandas as pd
import pytest

from boontrack.backends import CurveSeries, Sink, Source, SummaryOutputs
from boontrack.exceptions import InputError, WriteBackWarning
from boontrack.pipeline import (
    DirectorySink,
    _SinkGroup,
    fingerprint,
    make_spec,
    open_sink,
    run_job,
    source_options,
    summary_key,
)
from boontrack.runtable import RunTable

SPEC = make_spec(val="val", test="test", n=[1, 3], group_by=["model"], resamples=50)


def _frame(**changes) -> pd.DataFrame:
    frame = pd.DataFrame(
        {
            "run_id": [f"r{i}" for i in range(8)],
            "model": ["a"] * 4 + ["b"] * 4,
            "val": [0.1, 0.4, 0.3, 0.2, 0.5, 0.7, 0.6, np.nan],
            "test": [0.15, 0.35, 0.3, 0.25, 0.45, 0.75, 0.65, 0.5],
        }
    )
    for column, (row, value) in changes.items():
        frame.loc[row, column] = value
    return frame


def _fp(frame: pd.DataFrame, spec=SPEC, *, source="file:/runs.csv", prefix="boon/") -> str:
    return fingerprint(RunTable.from_frame(frame, spec), spec, source_identity=source, prefix=prefix)


class FrameSource(Source):
    """A source over an in-memory DataFrame, counting reads."""

    def __init__(self, frame: pd.DataFrame, identity: str = "memory:runs") -> None:
        self.frame, self._identity, self.reads = frame, identity, 0

    def describe(self) -> str:
        return "in-memory runs"

    def identity(self) -> str:
        return self._identity

    def read(self, request):
        self.reads += 1
        return self.frame


class MemorySink(Sink):
    """Records every call; ``fail`` names a method that raises once."""

    def __init__(self, location: str = "memory://sink", fail: str | None = None) -> None:
        self.stored: str | None = None
        self.calls: list[str] = []
        self.outputs: SummaryOutputs | None = None
        self._location, self.fail = location, fail

    def _maybe_fail(self, method: str) -> None:
        self.calls.append(method)
        if self.fail == method:
            self.fail = None
            raise ConnectionError(f"server at {self._location} said no")

    def read_fingerprint(self):
        self._maybe_fail("read_fingerprint")
        return self.stored

    def write(self, outputs):
        self._maybe_fail("write")
        self.outputs = outputs

    def write_fingerprint(self, fp):
        self._maybe_fail("write_fingerprint")
        self.stored = fp

    def location(self) -> str:
        return self._location


# --- fingerprint and summary key ---------------------------------------------------------------------------


def test_fingerprint_ignores_row_and_column_order():
    frame = _frame()
    shuffled = frame.sample(frac=1.0, random_state=3)[["test", "model", "run_id", "val"]]
    assert _fp(frame) == _fp(shuffled)
    assert len(_fp(frame)) == 64


@pytest.mark.parametrize(
    "change",
    [
        {"val": (2, np.nextafter(0.3, 1.0))},  # one ulp
        {"test": (0, 0.150000001)},
        {"model": (3, "b")},  # regrouped
        {"run_id": (1, "renamed")},
        {"val": (7, 0.9)},  # a dropped run comes back
        {"val": (0, np.nan)},  # a kept run is dropped
    ],
)
def test_fingerprint_changes_with_any_input_value(change):
    assert _fp(_frame(**change)) != _fp(_frame())


def test_fingerprint_covers_spec_prefix_and_source():
    frame = _frame()
    other_spec = make_spec(val="val", test="test", n=[1, 3], group_by=["model"], resamples=51)
    base = _fp(frame)
    assert _fp(frame, other_spec) != base
    assert _fp(frame, prefix="sweep/") != base
    assert _fp(frame, source="file:/other.csv") != base


def test_fingerprint_covers_dropped_reasons():
    running = _frame().assign(status=["finished"] * 7 + ["running"])
    failed = _frame().assign(status=["finished"] * 7 + ["failed"])
    failed.loc[7, "val"] = 0.9  # same kept runs; only the reason of the dropped run differs
    running.loc[7, "val"] = 0.9
    assert _fp(running) != _fp(failed)


def test_summary_key_names_source_and_spec_not_the_runs():
    key = summary_key("mlflow:exp/parent", SPEC)
    assert len(key) == 32 and int(key, 16) >= 0
    assert summary_key("mlflow:exp/parent", SPEC) == key
    assert summary_key("mlflow:exp/other", SPEC) != key
    assert summary_key("mlflow:exp/parent", make_spec(val="val", n=[1, 3], group_by=["model"])) != key


# --- make_spec and source options --------------------------------------------------------------------------


def test_make_spec_maps_user_options_to_the_spec():
    spec = make_spec(val="v", minimize=True, seed_column="s", resamples=10, seed=4, pick="best-val-step", n=[2])
    assert (spec.maximize, spec.seed_column, spec.n_resamples, spec.seed, spec.pick, spec.n) == (
        False, "s", 10, 4, "best_val_step", (2,)
    )  # fmt: skip


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"val": 3}, "val must be a non-empty name, got 3"),
        ({"val": "v", "seed_column": 7}, "seed_column must be a non-empty name, got 7"),
        ({"val": "v", "n": [0, 5]}, "n must be a list of integers >= 1"),
        ({"val": "v", "n": "5"}, "n must be a list"),
        ({"val": "v", "estimator": "X"}, "estimator must be one of V, U, W"),
        ({"val": "v", "minimize": "yes"}, "minimize must be true or false, got 'yes'"),
        ({"val": "v", "group_by": "model"}, "group_by must be a list"),
        ({"val": "v", "confidence": 95}, "confidence must be a number between 0 and 1"),
        ({"val": "v", "resamples": 0}, "resamples must be an integer >= 1"),
        ({"val": "v", "seed": -1}, "seed must be an integer >= 0"),
        ({"val": "v", "pick": "best"}, "pick must be one of"),
    ],
)
def test_make_spec_names_the_bad_option(options, message):
    with pytest.raises(InputError, match=message):
        make_spec(**options)


def test_source_options_pass_only_what_was_given():
    assert source_options() == {}
    assert source_options(parent="p", options={"api-key-file": "k"}) == {"parent": "p", "api_key_file": "k"}
    with pytest.raises(InputError, match="'parent' is given twice"):
        source_options(parent="p", options={"parent": "q"})


# --- DirectorySink ------------------------------------------------------------------------------------------


def _outputs(value: float = 0.5, artifacts=None) -> SummaryOutputs:
    return SummaryOutputs(
        metrics={"boon/acc/boo_5": value, "boon/acc/spearman": float("nan")},
        curves=[CurveSeries("boon/acc/curve", np.array([1, 2, 3]), np.array([0.1, 0.2, value]))],
        artifacts=artifacts if artifacts is not None else {"summary.json": b"{}", "plots/curves.png": b"\x89PNG"},
        description="Boo_5 is 0.5",
    )


def test_directory_sink_publishes_everything_with_its_fingerprint(tmp_path):
    sink = DirectorySink(tmp_path / "out")
    assert sink.read_fingerprint() is None
    sink.write(_outputs())
    out = tmp_path / "out"
    assert not out.exists()  # staged only: the content appears together with its fingerprint
    sink.write_fingerprint("abc")
    assert json.loads((out / "metrics.json").read_text()) == {"boon/acc/boo_5": 0.5, "boon/acc/spearman": None}
    assert json.loads((out / "curves.json").read_text()) == [
        {"key": "boon/acc/curve", "n": [1, 2, 3], "values": [0.1, 0.2, 0.5]}
    ]
    assert (out / "plots" / "curves.png").read_bytes() == b"\x89PNG"
    assert (out / "description.md").read_text() == "Boo_5 is 0.5"
    assert DirectorySink(out).read_fingerprint() == "abc"
    assert sink.location() == str(out)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # no staging directory left behind


def test_directory_sink_replaces_its_own_files_and_keeps_others(tmp_path):
    (tmp_path / "neighbour.txt").write_text("mine")
    sink = DirectorySink(tmp_path / "out")
    sink.write(_outputs(artifacts={"summary.json": b"1", "old.csv": b"x"}))
    sink.write_fingerprint("one")
    second = DirectorySink(tmp_path / "out")
    second.write(_outputs(value=0.75, artifacts={"summary.json": b"2"}))
    out = tmp_path / "out"
    assert (out / "summary.json").read_bytes() == b"1"  # the old summary stays whole until the new one is stamped
    assert second.read_fingerprint() == "one"
    second.write_fingerprint("two")
    assert not (out / "old.csv").exists()  # no stale artifact from the previous summary
    assert (out / "summary.json").read_bytes() == b"2"
    assert second.read_fingerprint() == "two"
    assert (tmp_path / "neighbour.txt").read_text() == "mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["neighbour.txt", "out"]


def test_directory_sink_refuses_a_directory_with_foreign_files(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.md").write_text("keep me")
    with pytest.raises(InputError, match=r"holds files boontrack did not write \(notes.md\)"):
        DirectorySink(out)
    (tmp_path / "file").write_text("x")
    with pytest.raises(InputError, match="not a directory"):
        DirectorySink(tmp_path / "file")
    assert (out / "notes.md").read_text() == "keep me"


def test_directory_sink_accepts_an_empty_directory(tmp_path):
    (tmp_path / "out").mkdir()
    sink = DirectorySink(tmp_path / "out")
    sink.write(_outputs())
    sink.write_fingerprint("fp")
    assert sink.read_fingerprint() == "fp"


def test_interleaved_writers_each_publish_a_complete_summary_and_the_last_stays(tmp_path):
    first, second = DirectorySink(tmp_path / "out"), DirectorySink(tmp_path / "out")
    first.write(_outputs(value=0.1))
    second.write(_outputs(value=0.9))
    first.write_fingerprint("fingerprint of 0.1")
    assert json.loads((tmp_path / "out" / "metrics.json").read_text())["boon/acc/boo_5"] == 0.1
    second.write_fingerprint("fingerprint of 0.9")
    assert json.loads((tmp_path / "out" / "metrics.json").read_text())["boon/acc/boo_5"] == 0.9
    assert DirectorySink(tmp_path / "out").read_fingerprint() == "fingerprint of 0.9"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_write_fingerprint_needs_a_write_first(tmp_path):
    with pytest.raises(RuntimeError, match="before write"):
        DirectorySink(tmp_path / "out").write_fingerprint("fp")


@pytest.mark.parametrize("name", ["../escape.txt", "/abs.txt", "metrics.json", ".boontrack-fingerprint"])
def test_directory_sink_refuses_artifact_paths_outside_or_reserved(tmp_path, name):
    with pytest.raises(ValueError, match="cannot be written"):
        DirectorySink(tmp_path / "out").write(_outputs(artifacts={name: b"x"}))
    assert not (tmp_path / "out").exists()
    assert not (tmp_path / "escape.txt").exists()


# --- DirectorySink under crashes and concurrent writers ------------------------------------------------------

#: A writer in its own process: publishes VALUE into OUT, killing itself with SIGKILL just before its
#: KILL_AT-th file-system step (mkdir, file sync, rename, exchange, unlink, rmdir); prints the steps it took.
_WRITER = r"""
import errno, json, os, signal, sys
from pathlib import Path
from boontrack import pipeline
from boontrack.backends import SummaryOutputs

out, value, kill_at, exchange, repeat = Path(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]), sys.argv[4], int(sys.argv[5])
steps = 0

def step(function):
    def counted(*args, **kwargs):
        global steps
        if steps == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)
        steps += 1
        return function(*args, **kwargs)
    return counted

if exchange == "no":  # a file system without an atomic exchange, such as NFS
    def no_exchange(first, second):
        raise OSError(errno.EINVAL, "not supported")
    pipeline._exchange = no_exchange
for name in ("mkdir", "rename", "rmdir", "unlink", "fsync"):
    setattr(os, name, step(getattr(os, name)))
pipeline._exchange = step(pipeline._exchange)
for attempt in range(repeat):
    v = value + attempt
    artifacts = {"summary.json": json.dumps(v).encode(), "plots/curves.png": b"png"}
    if v < 0.5:
        artifacts["old-only.csv"] = b"stale if mixed in"
    sink = pipeline.DirectorySink(out)
    sink.write(SummaryOutputs(metrics={"boon/acc/boo_5": v}, curves=[], artifacts=artifacts, description=f"Boo_5 = {v}"))
    sink.write_fingerprint(f"fp {v}")
print(steps)
"""


def _run_writer(out, value, *, kill_at=-1, exchange=True, repeat=1, wait=True):
    command = [sys.executable, "-c", _WRITER, str(out), repr(value), str(kill_at), "yes" if exchange else "no", str(repeat)]
    if not wait:
        return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return subprocess.run(command, capture_output=True, text=True, timeout=60)


def _published_value(out):
    """The value of the summary in ``out`` after checking that it is one whole summary with its own fingerprint;
    None when there is no ``out``."""
    if not out.exists():
        return None
    value = json.loads((out / "metrics.json").read_text())["boon/acc/boo_5"]
    expected = {"metrics.json", "curves.json", "description.md", "summary.json", "plots/curves.png"}
    expected |= {"old-only.csv"} if value < 0.5 else set()
    files = {str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()}
    assert files == expected | {".boontrack-fingerprint", ".boontrack-manifest.json"}
    assert (out / ".boontrack-fingerprint").read_text() == f"fp {value}\n"
    assert json.loads((out / "summary.json").read_text()) == value
    assert (out / "description.md").read_text() == f"Boo_5 = {value}"
    return value


def _steps_of_one_write(tmp_path, exchange):
    scratch = tmp_path / "count"
    scratch.mkdir()
    assert _run_writer(scratch / "out", 0.1, exchange=exchange).returncode == 0
    counted = _run_writer(scratch / "out", 0.9, exchange=exchange)
    assert counted.returncode == 0, counted.stderr
    return int(counted.stdout)


@pytest.mark.slow
@pytest.mark.parametrize("exchange", [True, False], ids=["atomic-exchange", "two-renames"])
def test_a_writer_killed_at_any_step_leaves_the_old_or_the_new_summary_and_the_next_run_cleans_up(
    tmp_path, exchange
):
    steps = _steps_of_one_write(tmp_path, exchange)
    assert steps > 10
    for kill_at in range(steps):
        parent = tmp_path / f"kill-{kill_at}"
        parent.mkdir()
        (parent / "notes.txt").write_text("not boontrack's")
        (parent / ".out.staging-mine").mkdir()  # a look-alike name that boontrack did not create
        out = parent / "out"
        assert _run_writer(out, 0.1, exchange=exchange).returncode == 0
        killed = _run_writer(out, 0.9, kill_at=kill_at, exchange=exchange)
        assert killed.returncode == -signal.SIGKILL, killed.stderr
        seen = _published_value(out)
        # With an atomic exchange the destination is whole at every instant; with two renames it may be
        # missing until the next run, which restores it.
        assert seen in ({0.1, 0.9} if exchange else {0.1, 0.9, None}), kill_at
        recovered = _published_value(DirectorySink(out).path)
        assert recovered in {0.1, 0.9}, kill_at
        assert recovered == seen or seen is None
        assert sorted(p.name for p in parent.iterdir()) == [".out.staging-mine", "notes.txt", "out"], kill_at
        assert _run_writer(out, 0.9, exchange=exchange).returncode == 0
        assert _published_value(out) == 0.9
        assert sorted(p.name for p in parent.iterdir()) == [".out.staging-mine", "notes.txt", "out"], kill_at


def test_leftovers_of_a_live_writer_are_left_alone(tmp_path):
    out = tmp_path / "out"
    busy = DirectorySink(out)
    busy.write(_outputs(value=0.1))  # staged by this (live) process, not yet published
    DirectorySink(out)  # another sink on the same path recovers what dead writers left, and nothing else
    busy.write_fingerprint("fp")
    assert DirectorySink(out).read_fingerprint() == "fp"


def test_leftovers_from_another_host_are_cleaned_only_once_abandoned(tmp_path):
    out = tmp_path / "out"
    staging = tmp_path / f".out.staging-1234-{'0' * 8}-{'a' * 12}"  # host id 00000000: not this host
    staging.mkdir()
    (staging / DirectorySink.MANIFEST_FILE).write_text('{"files": ["metrics.json"]}')
    (staging / "metrics.json").write_text("{}")
    DirectorySink(out)
    assert staging.exists()  # fresh: its writer on the other host may still be running
    old = time.time() - DirectorySink.FOREIGN_GRACE_S - 60
    os.utime(staging, (old, old))
    DirectorySink(out)
    assert not staging.exists()


def test_a_leftover_that_cannot_be_deleted_is_warned_about_and_the_run_goes_on(tmp_path, monkeypatch):
    staging = tmp_path / f".out.staging-999999999-{'0' * 8}-{'b' * 12}"  # from a host whose writer is gone
    staging.mkdir()
    (staging / DirectorySink.MANIFEST_FILE).write_text('{"files": []}')
    old = time.time() - DirectorySink.FOREIGN_GRACE_S - 60
    os.utime(staging, (old, old))

    def refuse(path, *args, **kwargs):
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(os, "unlink", refuse)
    with pytest.warns(WriteBackWarning, match="could not delete leftover .*Permission denied"):
        sink = DirectorySink(tmp_path / "out")
    monkeypatch.undo()
    sink.write(_outputs())
    sink.write_fingerprint("fp")
    assert sink.read_fingerprint() == "fp"


@pytest.mark.slow
@pytest.mark.parametrize("exchange", [True, False], ids=["atomic-exchange", "two-renames"])
def test_two_processes_writing_at_once_end_with_one_complete_summary(tmp_path, exchange):
    out = tmp_path / "out"
    writers = [_run_writer(out, start, exchange=exchange, repeat=15, wait=False) for start in (0.1, 100.1)]
    for writer in writers:
        _, stderr = writer.communicate(timeout=120)
        assert writer.returncode == 0, stderr
    assert _published_value(out) in {14.1, 114.1}  # the last write of either process, whole
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


# --- run_job -------------------------------------------------------------------------------------------------


def test_run_job_without_sink_computes():
    source = FrameSource(_frame())
    result = run_job(source, SPEC)
    assert result.status == "computed" and result.ok and result.location == ""
    assert [g.label for g in result.summary.groups] == ["a", "b"]
    assert result.fingerprint == _fp(_frame(), source="memory:runs")


def test_run_job_writes_once_then_is_unchanged():
    source, sink = FrameSource(_frame()), MemorySink()
    first = run_job(source, SPEC, sink=sink)
    assert first.status == "updated" and sink.calls == ["read_fingerprint", "write", "write_fingerprint"]
    assert sink.stored == first.fingerprint
    assert "boon/test/a/boo_3" in sink.outputs.metrics
    sink.calls.clear()
    second = run_job(source, SPEC, sink=sink)
    assert (second.status, second.summary, sink.calls) == ("unchanged", None, ["read_fingerprint"])
    interactive = run_job(source, SPEC, sink=sink, summarize_unchanged=True)
    assert interactive.status == "unchanged" and interactive.summary is not None
    assert sink.calls == ["read_fingerprint"] * 2
    forced = run_job(source, SPEC, sink=sink, force=True)
    assert forced.status == "updated" and sink.calls[-2:] == ["write", "write_fingerprint"]


def _no_analysis(monkeypatch):
    """Make any analysis fail the test: what follows must come from the stored summary."""

    def analyze(*args, **kwargs):
        raise AssertionError("analyze was called")

    monkeypatch.setattr("boontrack.analysis.analyze", analyze)


def test_an_unchanged_directory_gives_its_stored_summary_back_without_analyzing(tmp_path, monkeypatch):
    from boontrack.reports import format_table, to_json

    source, out = FrameSource(_frame()), tmp_path / "out"
    first = run_job(source, SPEC, sink=DirectorySink(out))
    assert first.status == "updated" and first.stored_summary is None
    _no_analysis(monkeypatch)
    again = run_job(source, SPEC, sink=DirectorySink(out), summarize_unchanged=True)
    assert (again.status, again.summary, again.fingerprint) == ("unchanged", None, first.fingerprint)
    assert again.stored_summary == json.loads((out / "summary.json").read_text())
    assert format_table(again.stored_summary) == format_table(first.summary)
    assert to_json(again.stored_summary) == to_json(first.summary)
    assert run_job(source, SPEC, sink=DirectorySink(out)).stored_summary is None  # the scheduled job reads nothing


def test_a_changed_input_is_analyzed_again_and_written(tmp_path):
    out = tmp_path / "out"
    run_job(FrameSource(_frame()), SPEC, sink=DirectorySink(out))
    changed = run_job(FrameSource(_frame(test=(0, 0.2))), SPEC, sink=DirectorySink(out), summarize_unchanged=True)
    assert changed.status == "updated" and changed.stored_summary is None
    assert changed.summary.group("a").diagnostics.min == 0.2
    assert json.loads((out / "summary.json").read_text())["groups"]["a"]["diagnostics"]["min"] == 0.2


@pytest.mark.parametrize(
    "damage",
    [
        lambda path: path.unlink(),
        lambda path: path.write_bytes(path.read_bytes()[:100]),  # cut short: not JSON
        lambda path: path.write_text("[1, 2]"),  # JSON, but not a summary
    ],
    ids=["missing", "truncated", "not-an-object"],
)
def test_a_lost_stored_summary_is_computed_and_written_again(tmp_path, damage):
    from boontrack.reports import to_json

    source, out = FrameSource(_frame()), tmp_path / "out"
    first = run_job(source, SPEC, sink=DirectorySink(out))
    written = (out / "summary.json").read_text()
    damage(out / "summary.json")
    assert DirectorySink(out).read_fingerprint() == first.fingerprint  # up to date by its fingerprint
    repaired = run_job(source, SPEC, sink=DirectorySink(out), summarize_unchanged=True)
    assert repaired.status == "updated" and to_json(repaired.summary) == written
    assert (out / "summary.json").read_text() == written
    assert run_job(source, SPEC, sink=DirectorySink(out), summarize_unchanged=True).stored_summary is not None


def test_a_directory_gives_no_summary_back_for_another_fingerprint(tmp_path):
    out = tmp_path / "out"
    first = run_job(FrameSource(_frame()), SPEC, sink=DirectorySink(out))
    assert DirectorySink(out).read_summary(first.fingerprint)["runs"] == 7
    assert DirectorySink(out).read_summary("0" * 64) is None
    assert MemorySink().read_summary(first.fingerprint) is None  # a sink without stored summaries


def test_several_destinations_give_back_the_first_stored_summary(tmp_path, monkeypatch):
    source, out = FrameSource(_frame()), tmp_path / "out"
    first = run_job(source, SPEC, sink=open_sink(source, SPEC, out=out))
    tracker = MemorySink()
    tracker.stored = first.fingerprint
    _no_analysis(monkeypatch)
    for sinks in ([tracker, DirectorySink(out)], [DirectorySink(out), tracker]):
        again = run_job(source, SPEC, sink=_SinkGroup(sinks), summarize_unchanged=True)
        assert again.status == "unchanged" and again.stored_summary["runs"] == 7


def test_run_job_rewrites_when_a_value_changes():
    sink = MemorySink()
    run_job(FrameSource(_frame()), SPEC, sink=sink)
    changed = run_job(FrameSource(_frame(val=(1, 0.41))), SPEC, sink=sink)
    assert changed.status == "updated" and sink.stored == changed.fingerprint


@pytest.mark.parametrize("method", ["read_fingerprint", "write", "write_fingerprint"])
def test_a_failed_write_warns_and_is_reported(method):
    sink = MemorySink(location="https://alice:s3cret@tracker.example/runs/1", fail=method)
    with pytest.warns(WriteBackWarning, match="writing the summary to https://\\*\\*\\*@tracker.example") as record:
        result = run_job(FrameSource(_frame()), SPEC, sink=sink)
    assert result.status == "write-failed" and not result.ok and result.summary is not None
    assert "ConnectionError" in result.error and "s3cret" not in result.error
    assert all("s3cret" not in str(w.message) for w in record)
    assert sink.stored is None  # the fingerprint was not written: the next run redoes the work
    assert run_job(FrameSource(_frame()), SPEC, sink=sink).status == "updated"


def test_a_failed_write_raises_when_asked():
    with pytest.raises(ConnectionError):
        run_job(FrameSource(_frame()), SPEC, sink=MemorySink(fail="write"), raise_on_write_error=True)


def test_bad_input_raises_before_anything_is_written(tmp_path):
    sink = MemorySink()
    with pytest.raises(InputError, match="no column 'nope'"):
        run_job(FrameSource(_frame()), make_spec(val="nope"), sink=sink)
    assert sink.calls == []


def test_open_sink_combines_destinations(tmp_path):
    source = FrameSource(_frame())
    assert open_sink(source, SPEC) is None
    assert isinstance(open_sink(source, SPEC, out=tmp_path / "out"), DirectorySink)

    class WritableSource(FrameSource):
        def sink(self, key):
            self.key = key
            return MemorySink()

    writable = WritableSource(_frame())
    both = open_sink(writable, SPEC, out=tmp_path / "out", write_back=True)
    assert writable.key == summary_key("memory:runs", SPEC)
    result = run_job(writable, SPEC, sink=both)
    assert result.status == "updated"
    assert DirectorySink(tmp_path / "out").read_fingerprint() == result.fingerprint
    assert both.sinks[1].stored == result.fingerprint
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert run_job(writable, SPEC, sink=both).status == "unchanged"
