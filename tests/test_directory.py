"""The directory sink: its contract, and its behaviour under crashes and concurrent writers."""

from __future__ import annotations

import contextlib
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from boontrack.backends import CurveSeries, SummaryOutputs
from boontrack.directory import DirectorySink
from boontrack.exceptions import InputError, WriteBackWarning

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


def test_a_look_interleaved_with_another_writers_renames_is_taken_again(tmp_path, monkeypatch):
    """The interleaving a CI run hit (two writers, no atomic exchange): both reads of the manifest fell between
    the other writer's two renames, so they agreed on "no manifest" while the files listed in between were
    those of the directory renamed in, and every one of them looked foreign."""
    out = tmp_path / "out"
    first = DirectorySink(out)
    first.write(_outputs(value=0.1))
    first.write_fingerprint("one")
    read_manifest = DirectorySink._manifest
    reads = []

    def read_between_two_renames(self, directory):
        reads.append(directory)
        if len(reads) > 2:
            return read_manifest(self, directory)
        aside, published = tmp_path / f"aside-{len(reads)}", tmp_path / f"published-{len(reads)}"
        os.rename(out, aside)
        manifest = read_manifest(self, directory)
        shutil.copytree(aside, published)
        os.rename(published, out)
        return manifest

    monkeypatch.setattr(DirectorySink, "_manifest", read_between_two_renames)
    DirectorySink(out)  # no InputError
    assert reads[:2] == [out, out] and len(reads) > 2  # the first look did not count


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
from boontrack import directory as files
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
    files._exchange = no_exchange
for name in ("mkdir", "rename", "rmdir", "unlink", "fsync"):
    setattr(os, name, step(getattr(os, name)))
files._exchange = step(files._exchange)
for attempt in range(repeat):
    v = value + attempt
    artifacts = {"summary.json": json.dumps(v).encode(), "plots/curves.png": b"png"}
    if v < 0.5:
        artifacts["old-only.csv"] = b"stale if mixed in"
    sink = files.DirectorySink(out)
    sink.write(SummaryOutputs(metrics={"boon/acc/boo_5": v}, curves=[], artifacts=artifacts, description=f"Boo_5 = {v}"))
    sink.write_fingerprint(f"fp {v}")
print(steps)
"""


def _run_writer(out, value, *, kill_at=-1, exchange=True, repeat=1, wait=True):
    command = [
        sys.executable,
        "-c",
        _WRITER,
        str(out),
        repr(value),
        str(kill_at),
        "yes" if exchange else "no",
        str(repeat),
    ]
    if not wait:
        return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return subprocess.run(command, capture_output=True, text=True, timeout=60)


#: One interpreter with boontrack imported that forks a writer (:data:`_WRITER`) per line of arguments it reads,
#: each in its own process killed for real, and prints the writer's exit code (-9: SIGKILL). A fork starts a
#: writer in milliseconds where a new interpreter importing boontrack takes a quarter of a second.
_FORKING_WRITERS = r"""
import json, os, sys, traceback
from boontrack import directory
from boontrack.backends import SummaryOutputs

writer = compile(sys.argv[1], "<writer>", "exec")
for line in sys.stdin:
    args, capture = json.loads(line)
    pid = os.fork()
    if pid == 0:
        for fd, suffix in ((1, ".out"), (2, ".err")):
            os.dup2(os.open(capture + suffix, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), fd)
        sys.argv = ["-c", *args]
        try:
            exec(writer, {"__name__": "__main__"})
            sys.stdout.flush()
        except BaseException:
            traceback.print_exc()
            sys.stderr.flush()
            os._exit(1)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    print(os.waitstatus_to_exitcode(status), flush=True)
"""


class _ForkedWriters:
    """Writers forked from one prepared interpreter (:data:`_FORKING_WRITERS`), run one at a time."""

    def __init__(self, scratch):
        self.scratch, self.runs = scratch, 0
        command = [sys.executable, "-c", _FORKING_WRITERS, _WRITER]
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def run(self, out, value, *, kill_at=-1, exchange=True):
        self.runs += 1
        capture = str(self.scratch / f"writer-{self.runs}")
        args = [str(out), repr(value), str(kill_at), "yes" if exchange else "no", "1"]
        self.process.stdin.write(json.dumps([args, capture]) + "\n")
        self.process.stdin.flush()
        ready, _, _ = select.select([self.process.stdout], [], [], 60)
        assert ready, "no writer ended within 60 s"
        code = int(self.process.stdout.readline())
        output = [Path(capture + suffix).read_text() for suffix in (".out", ".err")]
        return subprocess.CompletedProcess(args, code, *output)

    def close(self):
        self.process.stdin.close()
        self.process.wait(timeout=60)


@pytest.fixture
def forked_writers(tmp_path):
    scratch = tmp_path / "writers"
    scratch.mkdir()
    writers = _ForkedWriters(scratch)
    yield writers
    writers.close()


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


def _steps_of_one_write(tmp_path, exchange, run_writer=_run_writer):
    scratch = tmp_path / "count"
    scratch.mkdir()
    assert run_writer(scratch / "out", 0.1, exchange=exchange).returncode == 0
    counted = run_writer(scratch / "out", 0.9, exchange=exchange)
    assert counted.returncode == 0, counted.stderr
    return int(counted.stdout)


@pytest.mark.slow
@pytest.mark.parametrize("exchange", [True, False], ids=["atomic-exchange", "two-renames"])
def test_a_writer_killed_at_any_step_leaves_the_old_or_the_new_summary_and_the_next_run_cleans_up(
    tmp_path, exchange, forked_writers
):
    """Each writer is a process of its own, forked ready to write; killed, it is killed with SIGKILL."""
    _run_writer = forked_writers.run
    steps = _steps_of_one_write(tmp_path, exchange, _run_writer)
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


# --- leftovers found by name, one listing per pass ----------------------------------------------------------


def _abandoned_leftover(parent: Path, destination: str, kind: str = "staging") -> Path:
    """A leftover of ``destination`` written from another host and untouched for longer than the grace period."""
    leftover = parent / f".{destination}.{kind}-1234-{'0' * 8}-{os.urandom(6).hex()}"
    if kind == "token":
        leftover.write_text("{}")
    else:
        leftover.mkdir()
        (leftover / DirectorySink.MANIFEST_FILE).write_text('{"files": []}')
    old = time.time() - DirectorySink.FOREIGN_GRACE_S - 60
    os.utime(leftover, (old, old))
    return leftover


#: Destinations whose names hold each other, dots, and a leftover's shape.
_NEIGHBOURS = ("a", "a.b", "b.a", "a.staging-0123456789ab", "a\nb")


@pytest.mark.parametrize("one_pass", [False, True], ids=["on-its-own", "in-a-pass"])
def test_a_sink_deletes_exactly_the_leftovers_of_its_own_destination(tmp_path, one_pass):
    from boontrack.directory import one_listing_per_folder

    leftovers = {
        name: [_abandoned_leftover(tmp_path, name), _abandoned_leftover(tmp_path, name, "token")]
        for name in _NEIGHBOURS
    }
    look_alikes = [tmp_path / ".a.staging-mine", tmp_path / ".a.lock", tmp_path / "a.staging-0123456789ab.b"]
    for path in look_alikes:
        path.write_text("not boontrack's")
    with one_listing_per_folder() if one_pass else contextlib.nullcontext():
        for position, name in enumerate(_NEIGHBOURS):
            DirectorySink(tmp_path / name)
            for other, paths in leftovers.items():
                gone = _NEIGHBOURS.index(other) <= position
                assert [path.exists() for path in paths] == [not gone, not gone], (name, other)
    assert all(path.exists() for path in look_alikes)


def test_a_sink_restores_its_previous_summary_from_the_listing_of_the_pass(tmp_path):
    """A crash between the two renames left no destination: the pass's listing still finds the summary aside."""
    from boontrack.directory import one_listing_per_folder

    aside = tmp_path / f".out.previous-1234-{'0' * 8}-{'c' * 12}"
    sink = DirectorySink(tmp_path / "out")
    sink.write(_outputs(value=0.25))
    sink.write_fingerprint("fp")
    os.rename(tmp_path / "out", aside)
    old = time.time() - DirectorySink.FOREIGN_GRACE_S - 60
    os.utime(aside, (old, old))
    with one_listing_per_folder():
        DirectorySink(tmp_path / "other")
        assert DirectorySink(tmp_path / "out").read_fingerprint() == "fp"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_a_sink_looks_at_none_of_its_neighbours(tmp_path, file_system_looks):
    """Its parent is listed once, and only its own leftovers' names are looked at further, however many
    summaries stand beside it."""
    for k in range(50):
        (tmp_path / f"sweep-{k}").mkdir()
        (tmp_path / f".sweep-{k}.lock").touch()
    leftover = _abandoned_leftover(tmp_path, "sweep-7")
    file_system_looks.clear()
    DirectorySink(tmp_path / "sweep-7")
    neighbours = {str(tmp_path / f"sweep-{k}") for k in range(50) if k != 7}
    looked_at = {path.removesuffix(os.sep) for _, path in file_system_looks}
    assert not looked_at & neighbours
    assert not any(path.startswith(str(tmp_path / ".sweep-")) and ".lock" in path for path in looked_at)
    assert file_system_looks.count(("listdir", str(tmp_path))) == 1
    assert not leftover.exists()


def test_sinks_of_one_pass_list_their_parent_once(tmp_path, file_system_looks):
    from boontrack.directory import one_listing_per_folder

    for k in range(20):
        (tmp_path / f"sweep-{k}").mkdir()
    file_system_looks.clear()
    with one_listing_per_folder():
        for k in range(20):
            DirectorySink(tmp_path / f"sweep-{k}")
    assert file_system_looks.count(("listdir", str(tmp_path))) == 1
    DirectorySink(tmp_path / "sweep-0")  # after the pass, a sink lists its parent itself
    assert file_system_looks.count(("listdir", str(tmp_path))) == 2
