"""The pipeline: fingerprint, summary key, source options and run_job's idempotent write sequence."""

from __future__ import annotations

import dataclasses
import json
import warnings

import numpy as np
import pandas as pd
import pytest

from boontrack.backends import Direction, Sink, Source, SummaryOutputs
from boontrack.directory import DirectorySink
from boontrack.exceptions import BackendError, InputError, WriteBackWarning
from boontrack.pipeline import (
    after_sweep,
    fingerprint,
    open_sinks,
    resolve_direction,
    run_job,
    source_options,
    summary_key,
)
from boontrack.runtable import RunTable
from boontrack.spec import Spec

SPEC = Spec(val="val", test="test", n=[1, 3], group_by=["model"], n_resamples=50).resolve_direction()


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
    other_spec = Spec(val="val", test="test", n=[1, 3], group_by=["model"], n_resamples=51).resolve_direction()
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
    assert summary_key("mlflow:exp/parent", Spec(val="val", n=[1, 3], group_by=["model"]).resolve_direction()) != key


# --- source options ----------------------------------------------------------------------------------------


def test_source_options_pass_only_what_was_given():
    assert source_options() == {}
    assert source_options(parent="p", options={"api-key-file": "k"}) == {"parent": "p", "api_key_file": "k"}
    with pytest.raises(InputError, match="^source option `parent` is given twice$"):
        source_options(parent="p", options={"parent": "q"})


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
    first = run_job(source, SPEC, sink=open_sinks(source, SPEC, out=out))
    tracker = MemorySink()
    tracker.stored = first.fingerprint
    _no_analysis(monkeypatch)
    for sinks in ([tracker, DirectorySink(out)], [DirectorySink(out), tracker]):
        again = run_job(source, SPEC, sink=sinks, summarize_unchanged=True)
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
        run_job(FrameSource(_frame()), Spec(val="nope"), sink=sink)
    assert sink.calls == []


def test_open_sinks_combines_destinations(tmp_path):
    source = FrameSource(_frame())
    assert open_sinks(source, SPEC) == []
    (directory,) = open_sinks(source, SPEC, out=tmp_path / "out")
    assert isinstance(directory, DirectorySink)

    class WritableSource(FrameSource):
        def sink(self, key):
            self.key = key
            return MemorySink()

    writable = WritableSource(_frame())
    both = open_sinks(writable, SPEC, out=tmp_path / "out", write_back=True)
    assert writable.key == summary_key("memory:runs", SPEC)
    result = run_job(writable, SPEC, sink=both)
    assert result.status == "updated"
    assert DirectorySink(tmp_path / "out").read_fingerprint() == result.fingerprint
    assert both[1].stored == result.fingerprint
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert run_job(writable, SPEC, sink=both).status == "unchanged"


# --- several destinations, the direction, the failure rule of callbacks ---------------------------------------


def test_several_destinations_are_written_from_one_read_and_one_analysis(monkeypatch):
    import boontrack.analysis

    analyses = []
    analyze = boontrack.analysis.analyze
    monkeypatch.setattr(boontrack.analysis, "analyze", lambda *a, **k: analyses.append(1) or analyze(*a, **k))
    source, first, second = FrameSource(_frame()), MemorySink("memory://first"), MemorySink("memory://second")
    result = run_job(source, SPEC, sink=[first, second])
    assert (source.reads, len(analyses)) == (1, 1)
    assert result.status == "updated" and first.stored == second.stored == result.fingerprint
    assert [(d.location, d.status) for d in result.destinations] == [
        ("memory://first", "updated"),
        ("memory://second", "updated"),
    ]
    second.stored = None  # one destination lost its summary: only it is written again
    again = run_job(source, SPEC, sink=[first, second])
    assert [d.status for d in again.destinations] == ["unchanged", "updated"] and first.calls.count("write") == 1


def test_a_destination_that_fails_is_reported_on_its_own_and_the_others_are_written():
    failing, working = MemorySink("memory://failing", fail="write"), MemorySink("memory://working")
    with pytest.warns(WriteBackWarning) as record:
        result = run_job(FrameSource(_frame()), SPEC, sink=[failing, working])
    assert [str(w.message) for w in record] == [
        "writing the summary to memory://failing failed: ConnectionError: server at memory://failing said no"
    ]
    assert result.status == "write-failed" and result.error == str(record[0].message)
    assert [(d.status, d.error is None) for d in result.destinations] == [("write-failed", False), ("updated", True)]
    assert (failing.stored, working.stored) == (None, result.fingerprint)


def test_a_destination_that_cannot_be_opened_fails_on_its_own_when_asked(tmp_path):
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "notes.txt").write_text("mine")
    source = FrameSource(_frame())
    with pytest.raises(InputError, match="holds files boontrack did not write"):
        open_sinks(source, SPEC, out=taken)  # the command line: bad input, before any work
    sinks = open_sinks(source, SPEC, out=taken, also={"file:x": {}}, each_on_its_own=True)
    with pytest.warns(WriteBackWarning):
        result = run_job(source, SPEC, sink=sinks)
    assert [d.status for d in result.destinations] == ["write-failed", "write-failed"]
    assert "holds files boontrack did not write" in result.destinations[0].error
    assert "cannot hold summaries of runs kept elsewhere" in result.destinations[1].error


class DirectedSource(FrameSource):
    """A source that knows the direction of ``val``, as an Optuna study or a W&B sweep does."""

    def direction(self, metric):
        return Direction(maximize=False, said_by="the test's study") if metric == "val" else None


def test_the_direction_is_the_sources_resolved_before_the_runs_are_read():
    source = DirectedSource(_frame())
    unresolved = Spec(val="val", test="test", n=[1, 3], group_by=["model"], n_resamples=50)
    result = run_job(source, unresolved)
    assert (result.summary.spec.maximize, result.summary.spec.direction_from) == (False, "the test's study")
    with pytest.raises(InputError, match="^the test's study minimizes 'val', but `maximize=True` says the opposite"):
        run_job(source, dataclasses.replace(unresolved, maximize=True))
    assert source.reads == 1  # the refusal came before the read
    assert resolve_direction(FrameSource(_frame()), unresolved).direction_from == "default"


def test_after_sweep_warns_once_and_returns_a_failed_result_unless_asked_to_raise():
    def broken():
        raise BackendError("tracker at https://alice:pw@host said no")

    with pytest.warns(WriteBackWarning) as record:
        result = after_sweep("summarizing the sweep", broken)
    assert [str(w.message) for w in record] == ["summarizing the sweep failed: tracker at https://***@host said no"]
    assert (result.status, result.error) == ("failed", str(record[0].message))
    with pytest.raises(BackendError):
        after_sweep("summarizing the sweep", broken, raise_on_error=True)
    with pytest.warns(WriteBackWarning, match="^recording failed: KeyError: 'x'$"):
        assert (
            after_sweep("recording", lambda: {}["x"], failed=lambda message: message)
            == "recording failed: KeyError: 'x'"
        )
