"""The one pipeline: read runs -> RunTable -> fingerprint -> analyze -> render -> write, idempotently.

:func:`run_job` is the only implementation of this sequence. The command line (``boontrack summarize``), the
scheduled job (``boontrack reaggregate``) and the post-sweep callbacks of the tracker backends all call it.

A write is skipped when the sink already holds the :func:`fingerprint` of the same inputs; the fingerprint is
written last, so a write that fails midway is redone by the next run. An up-to-date sink that can give its summary
back (:meth:`Sink.read_summary <boontrack.backends.Sink.read_summary>`) spares the command line computing it again
to print it. Writing back never raises into the caller unless asked to: the failure is warned
(:class:`~boontrack.exceptions.WriteBackWarning`) and carried by the :class:`JobResult`.

This module imports nothing heavy at import time (the command line imports it on start-up).
"""

from __future__ import annotations

import ctypes
import errno
import functools
import hashlib
import json
import math
import os
import re
import socket
import sys
import time
import uuid
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from boontrack._redact import redact
from boontrack.backends import DEFAULT_PREFIX, MetricRequest, Sink, Source, SummaryOutputs
from boontrack.exceptions import BackendError, InputError, WriteBackWarning
from boontrack.runframe import artifact_path
from boontrack.spec import Spec

if TYPE_CHECKING:
    from boontrack.analysis import Summary
    from boontrack.runtable import RunTable

__all__ = [
    "DirectorySink",
    "JobResult",
    "budgets",
    "fingerprint",
    "make_spec",
    "open_sink",
    "run_job",
    "source_options",
    "summarize_after_sweep",
    "summary_key",
]

#: Spellings of ``pick`` accepted by the command line and the config file -> Spec spelling.
PICK_SPELLINGS = {"last": "last", "best-val-step": "best_val_step", "best_val_step": "best_val_step"}

#: Source options the command line and the config file name explicitly; others go through ``options``.
SOURCE_OPTIONS = ("parent", "tracking_uri", "sweep", "group")
#: A tracking URI: a scheme and the rest without white space, or MLflow's bare ``databricks``. (A local directory
#: given as a path, MLflow's file store, is accepted too: see :func:`source_options`.)
_TRACKING_URI = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:\S*|databricks")


@dataclass(frozen=True)
class JobResult:
    """What :func:`run_job` did.

    Attributes
    ----------
    status
        ``"unchanged"``: the sink already held this fingerprint, nothing was computed or written.
        ``"updated"``: computed and written. ``"computed"``: computed, no sink given.
        ``"write-failed"``: computed, but writing to the sink failed (see ``error``).
        ``"failed"``: the runs could not be read or summarized (only from :func:`summarize_after_sweep`;
        elsewhere that raises :class:`~boontrack.exceptions.BackendError` or
        :class:`~boontrack.exceptions.InputError`).
    summary
        The analysis; None when unchanged, unless ``summarize_unchanged=True`` and the sink cannot give its
        summary back (see ``stored_summary``).
    fingerprint
        The inputs' fingerprint (see :func:`fingerprint`).
    location
        Where the result was written (the sink's location), "" without a sink.
    error
        One line describing what failed (no credentials), None when nothing failed.
    stored_summary
        With ``summarize_unchanged=True``, when unchanged: the summary the sink holds, as the JSON data of its
        ``summary.json`` (:meth:`Summary.to_dict <boontrack.analysis.Summary.to_dict>`), which
        :func:`~boontrack.reports.format_table` and :func:`~boontrack.reports.to_json` print as they print the
        analysis. None otherwise.
    """

    status: Literal["unchanged", "updated", "computed", "write-failed", "failed"]
    summary: Summary | None
    fingerprint: str
    location: str
    error: str | None = None
    stored_summary: Mapping[str, Any] | None = None

    @property
    def ok(self) -> bool:
        """True unless reading the runs or writing the result failed."""
        return self.error is None


def make_spec(
    *,
    val: str,
    test: str | None = None,
    n: Sequence[int] | None = None,
    estimator: str = "V",
    minimize: bool = False,
    group_by: Sequence[str] | None = None,
    seed_column: str | None = None,
    duration: str | None = None,
    baseline: str | None = None,
    compare: str = "baseline",
    correction: str = "holm",
    confidence: float = 0.95,
    resamples: int = 9999,
    ci_method: str = "studentized",
    seed: int = 0,
    pick: str = "last",
) -> Spec:
    """A :class:`~boontrack.spec.Spec` from the option names of the command line and the config file.

    The keywords are the ``boontrack summarize`` options (dashes as underscores) and the keys of a
    ``[[jobs]]`` table. :meth:`Spec.check <boontrack.spec.Spec.check>` validates every value, and a bad one
    raises :class:`InputError` naming the option as the user wrote it. ``n=None`` (not given): the default
    budgets, each where a group has enough runs (see :meth:`Spec.budgets_for`).
    """
    spec = Spec(
        val=val,
        test=test,
        n=tuple(n) if isinstance(n, list) else n,
        estimator=estimator,
        # a non-boolean stays as it is, so that the check reports it (``not "yes"`` would be a silent False)
        maximize=not minimize if isinstance(minimize, bool) else minimize,
        group_by=tuple(group_by) if isinstance(group_by, list) else group_by,
        seed_column=seed_column,
        duration=duration,
        baseline=baseline,
        compare=compare,
        correction=correction,
        confidence_level=confidence,
        n_resamples=resamples,
        ci_method=ci_method,
        seed=seed,
        pick=PICK_SPELLINGS.get(pick, pick),
    )
    return spec.check(names=OPTION_NAMES)


#: Spec fields whose command-line and config name differs (spec field -> option name).
OPTION_NAMES = {
    "maximize": "minimize",
    "confidence_level": "confidence",
    "n_resamples": "resamples",
}


def source_options(
    *,
    parent: str | None = None,
    tracking_uri: str | None = None,
    sweep: str | None = None,
    group: str | None = None,
    options: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The keyword options for :func:`boontrack.backends.open_source`: only those given, ``options`` merged in.

    ``options`` holds a third-party backend's own options (``--option KEY=VALUE``); dashes in keys become
    underscores. The backend validates them.
    """
    if tracking_uri is not None and not (_TRACKING_URI.fullmatch(tracking_uri) or Path(tracking_uri).is_dir()):
        raise InputError(
            f"tracking_uri {redact(tracking_uri)!r} is neither a URI nor an existing directory "
            "(expected e.g. http://HOST:5000, sqlite:///mlflow.db, file:///PATH, ./mlruns or databricks)"
        )
    named = {"parent": parent, "tracking_uri": tracking_uri, "sweep": sweep, "group": group}
    chosen = {key: value for key, value in named.items() if value is not None}
    for key, value in (options or {}).items():
        key = key.replace("-", "_")
        if key in chosen:
            raise InputError(f"source option {key!r} is given twice")
        chosen[key] = value
    return chosen


def fingerprint(table: RunTable, spec: Spec, *, source_identity: str, prefix: str = DEFAULT_PREFIX) -> str:
    """SHA-256 (hex) of everything a summary depends on.

    Covers the kept runs (run id, exact val and test values, group) in run-id order, the dropped runs with
    their reasons, the spec, the metric-name prefix, the source identity and the package version. Values
    enter as their IEEE-754 bytes, so the fingerprint changes with any change of a value and with nothing
    else (row order and column order do not matter).
    """
    import numpy as np

    from boontrack import __version__

    runs = table.runs
    run_ids = runs["run_id"].to_numpy(dtype=str)
    order = np.argsort(run_ids, kind="stable")
    header = {
        "version": __version__,
        "source": source_identity,
        "spec": spec.to_dict(),
        "prefix": prefix,
        "dropped": sorted([d.run_id, d.reason] for d in table.dropped),
    }
    digest = hashlib.sha256()
    for part in (
        json.dumps(header, sort_keys=True).encode(),
        json.dumps(run_ids[order].tolist()).encode(),
        json.dumps(runs["group"].to_numpy(dtype=str)[order].tolist()).encode(),
        runs["val"].to_numpy(dtype="<f8")[order].tobytes(),
        runs["test"].to_numpy(dtype="<f8")[order].tobytes(),
    ):
        # Length-prefixed, so that no two different inputs concatenate to the same bytes.
        digest.update(len(part).to_bytes(8, "little"))
        digest.update(part)
    return digest.hexdigest()


def summary_key(source_identity: str, spec: Spec) -> str:
    """32 hex digits naming the (source, spec) pair: where its summary lives, whatever the runs hold now."""
    text = json.dumps({"source": source_identity, "spec": spec.to_dict()}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def open_sink(source: Source, spec: Spec, *, out: str | Path | None = None, write_back: bool = False) -> Sink | None:
    """The destination of a job: a :class:`DirectorySink`, the source's own sink, both, or None."""
    sinks: list[Sink] = []
    if out is not None:
        sinks.append(DirectorySink(out))
    if write_back:
        sinks.append(source.sink(summary_key(source.identity(), spec)))
    if not sinks:
        return None
    return sinks[0] if len(sinks) == 1 else _SinkGroup(sinks)


def run_job(
    source: Source,
    spec: Spec,
    *,
    sink: Sink | None = None,
    prefix: str = DEFAULT_PREFIX,
    progress: bool = False,
    force: bool = False,
    summarize_unchanged: bool = False,
    raise_on_write_error: bool = False,
    plots: bool = True,
) -> JobResult:
    """Read the runs of ``source``, analyze them as ``spec`` says and write the result to ``sink``.

    Parameters
    ----------
    source, spec
        Where the runs are, and what to compute.
    sink
        Where to write; None computes only (status ``"computed"``).
    prefix
        Metric-name prefix of the written summary (``boon/``).
    progress
        Show a progress bar during the analysis (for terminals).
    force
        Recompute and write even when the sink holds the same fingerprint.
    summarize_unchanged
        When the sink is up to date, give its stored summary back (``JobResult.stored_summary``), or compute
        the summary where the sink cannot give it back (nothing is written); for interactive use. A sink whose
        stored summary is missing or damaged is written again.
    raise_on_write_error
        Raise a failed write instead of warning and reporting it in the result.
    plots
        Render the PNG plots among the written artifacts (most of the cost of a write with few runs).

    Returns
    -------
    JobResult

    Raises
    ------
    InputError
        Bad data or spec (unknown column, text in a metric column, all runs dropped, ...). Nothing is written.
    BackendError
        The source could not be read. Nothing is written.
    """
    from boontrack.analysis import analyze
    from boontrack.reports import group_names
    from boontrack.runtable import RunTable

    request = MetricRequest(val=spec.val, test=spec.test, maximize=spec.maximize, pick=spec.pick)
    table = RunTable.from_frame(source.read(request), spec)
    group_names(table.groups)  # names that cannot be written are bad input, found before the analysis
    fp = fingerprint(table, spec, source_identity=source.identity(), prefix=prefix)
    location = sink.location() if sink is not None else ""

    stored, read_error = None, None
    if sink is not None and not force:
        try:
            stored = sink.read_fingerprint()
        except Exception as exc:  # a sink that cannot even be read cannot be written: report it as such
            read_error = exc
    unchanged = stored == fp
    kept = None
    if unchanged and summarize_unchanged:
        try:
            kept = sink.read_summary(fp)
        except BackendError:  # the tracker did not answer this time: compute to show it, write nothing
            kept = None
        except Exception:  # up to date by its fingerprint, but the summary is lost: compute and write it again
            unchanged = False
    if unchanged and (kept is not None or not summarize_unchanged):
        return JobResult("unchanged", None, fp, location, stored_summary=kept)

    summary = analyze(table, spec, progress=progress, source=redact(source.describe()))
    if sink is None:
        return JobResult("computed", summary, fp, location)
    if unchanged:
        return JobResult("unchanged", summary, fp, location)
    try:
        if read_error is not None:
            raise read_error
        _write(sink, summary, fp, prefix=prefix, plots=plots)
    except Exception as exc:
        if raise_on_write_error:
            raise
        message = f"writing the summary to {redact(location) or 'the sink'} failed: {_describe(exc)}"
        warnings.warn(message, WriteBackWarning, stacklevel=2)
        return JobResult("write-failed", summary, fp, location, message)
    return JobResult("updated", summary, fp, sink.location())  # after the write: it may name a new run


def budgets(n: int | Sequence[int] | None) -> tuple[int, ...] | None:
    """``Spec.n`` from one budget, several, or None (the default budgets), as the callbacks take them."""
    if n is None:
        return None
    return tuple(n) if isinstance(n, Iterable) and not isinstance(n, str) else (n,)


def summarize_after_sweep(source: Source, spec: Spec, *, raise_on_error: bool = False) -> JobResult:
    """The post-sweep callbacks' job: summarize ``source`` and write the result back beside its runs.

    The sweep is over when this runs, so nothing that goes wrong from here on crashes the user's script: a
    tracker that cannot be read or written (:class:`~boontrack.exceptions.BackendError`) and anything about
    the data (:class:`~boontrack.exceptions.InputError`: no runs, a missing metric, too few runs for the
    budgets asked) is warned (:class:`~boontrack.exceptions.WriteBackWarning`) and returned (status
    ``"failed"`` or ``"write-failed"``, the reason in ``error``), unless ``raise_on_error`` is True. An invalid
    spec is a mistake in the call, found before anything is read: it always raises :class:`InputError`.
    """
    spec.check()
    sink = None
    try:
        sink = open_sink(source, spec, write_back=True)  # may look the sweep up in the tracker
        return run_job(source, spec, sink=sink, raise_on_write_error=raise_on_error)
    except (BackendError, InputError) as exc:
        if raise_on_error:
            raise
        message = redact(f"summarizing {source.describe()} failed: {exc}")
        warnings.warn(message, WriteBackWarning, stacklevel=3)
        return JobResult("failed", None, "", sink.location() if sink is not None else "", message)


def _write(sink: Sink, summary: Summary, fp: str, *, prefix: str, plots: bool) -> None:
    from boontrack.reports import render_outputs

    sink.write(render_outputs(summary, prefix=prefix, plots=plots))
    sink.write_fingerprint(fp)  # last: a failure before this line leaves the old fingerprint




def _describe(exc: BaseException) -> str:
    """One line naming the error, without credentials embedded in URLs."""
    text = " ".join(str(exc).split())
    return redact(f"{type(exc).__name__}: {text}" if text else type(exc).__name__)


class _SinkGroup(Sink):
    """Several sinks written as one: up to date only when every one holds the fingerprint."""

    def __init__(self, sinks: Sequence[Sink]) -> None:
        self.sinks = tuple(sinks)

    def read_fingerprint(self) -> str | None:
        stored = {sink.read_fingerprint() for sink in self.sinks}
        return stored.pop() if len(stored) == 1 else None

    def write(self, outputs: SummaryOutputs) -> None:
        for sink in self.sinks:
            sink.write(outputs)

    def write_fingerprint(self, fingerprint: str) -> None:
        for sink in self.sinks:
            sink.write_fingerprint(fingerprint)

    def location(self) -> str:
        return ", ".join(sink.location() for sink in self.sinks)

    def read_summary(self, fingerprint: str) -> Mapping[str, Any] | None:
        """The stored summary of the first sink that gives one back."""
        for sink in self.sinks:
            kept = sink.read_summary(fingerprint)
            if kept is not None:
                return kept
        return None


class DirectorySink(Sink):
    """A directory holding one summary: its artifacts, ``metrics.json``, ``curves.json`` and ``description.md``.

    The destination is at every moment the previous complete summary or the new one, each with its own
    fingerprint (``.boontrack-fingerprint``), whatever happens to the process. ``write`` builds the new content
    in a hidden sibling directory (``.<name>.staging-<pid>-<host>-<random>``); ``write_fingerprint`` adds the
    fingerprint there and swaps the two directories in one atomic exchange (``renameat2``, Linux). Where
    there is no such exchange (other systems; file systems such as NFS), the old directory is renamed aside
    (``.<name>.previous-...``) and the new one renamed into place; a crash between these two renames leaves no
    destination until the next :class:`DirectorySink` on that path (any later run) renames the previous one back.

    Every sink on a path first cleans up what crashed writers left beside it: a leftover whose writer is gone
    (same host: its process has exited; another host: untouched for :attr:`FOREIGN_GRACE_S` seconds) is
    restored when the destination is missing, else deleted. Concurrent writers need no lock: each publishes
    a complete directory, and the last one to publish stays.

    The destination must be new, empty, or a directory this sink wrote (its files are listed in
    ``.boontrack-manifest.json``): a directory with other files is refused, and only files listed in a
    manifest are ever deleted.

    ``metrics.json`` maps metric names to values (null for non-finite ones); ``curves.json`` is a list of
    ``{"key", "n", "values"}`` objects, one per curve.
    """

    FINGERPRINT_FILE = ".boontrack-fingerprint"
    MANIFEST_FILE = ".boontrack-manifest.json"
    METRICS_FILE = "metrics.json"
    #: The artifact holding every number of the summary (see :func:`boontrack.reports.render_outputs`).
    SUMMARY_FILE = "summary.json"
    CURVES_FILE = "curves.json"
    DESCRIPTION_FILE = "description.md"
    #: Seconds after which a leftover written from another host counts as abandoned (its process cannot be
    #: checked from here); far longer than the milliseconds a swap takes.
    FOREIGN_GRACE_S = 3600.0

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path).absolute()
        self._staged: Path | None = None
        self._recover()
        self._check_owned()

    def location(self) -> str:
        return str(self.path)

    def read_fingerprint(self) -> str | None:
        try:
            return (self.path / self.FINGERPRINT_FILE).read_text(encoding="utf-8").strip() or None
        except FileNotFoundError:
            return None

    def read_summary(self, fingerprint: str) -> dict[str, Any] | None:
        """The data of ``summary.json`` when this directory holds the summary of ``fingerprint``, else None.

        The fingerprint is read again after ``summary.json``, so that a summary another writer published
        meanwhile is not taken for this one. A missing or unreadable ``summary.json`` raises.
        """
        text = (self.path / self.SUMMARY_FILE).read_text(encoding="utf-8")
        if self.read_fingerprint() != fingerprint:
            return None
        data = json.loads(text)
        if not isinstance(data, dict):
            raise ValueError(f"{self.path / self.SUMMARY_FILE} does not hold a summary")
        return data

    def write(self, outputs: SummaryOutputs) -> None:
        """Build the new content beside the destination; :meth:`write_fingerprint` publishes it."""
        files = self._render(outputs)
        self._check_owned()
        self._discard_staged()
        staging = self._sibling("staging")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        os.mkdir(staging)
        try:
            # The manifest first: every file of a staging directory is listed, so a leftover can be deleted.
            manifest = {"files": sorted(files)}
            _write_durably(staging / self.MANIFEST_FILE, json.dumps(manifest, indent=2).encode())
            for relative, data in files.items():
                (staging / relative).parent.mkdir(parents=True, exist_ok=True)
                _write_durably(staging / relative, data)
        except BaseException:
            self._remove_written(staging)
            raise
        self._staged = staging

    def write_fingerprint(self, fingerprint: str) -> None:
        """Stamp the content of the last :meth:`write` with ``fingerprint`` and swap both into place at once."""
        if self._staged is None:
            raise RuntimeError("write_fingerprint() called before write()")
        staging, self._staged = self._staged, None
        try:
            _write_durably(staging / self.FINGERPRINT_FILE, (fingerprint + "\n").encode())
            _fsync_directory(staging)
            self._check_owned()
            self._publish(staging)
        except BaseException:
            self._remove_written(staging)
            raise

    def _publish(self, staging: Path) -> None:
        """Put ``staging`` at the destination; the content it replaces is deleted (files this sink wrote only)."""
        try:
            _exchange(staging, self.path)
        except FileNotFoundError:  # no destination yet
            self._rename_into_place(staging, previous=None)
        except OSError as exc:
            if exc.errno not in _NO_EXCHANGE:
                raise
            previous = self._sibling("previous")
            try:
                os.rename(self.path, previous)
            except FileNotFoundError:
                previous = None
            self._rename_into_place(staging, previous)
        else:
            self._remove_written(staging)  # it holds the replaced content now
        _fsync_directory(self.path.parent)

    def _rename_into_place(self, staging: Path, previous: Path | None) -> None:
        try:
            os.rename(staging, self.path)
        except OSError as exc:
            if exc.errno not in (errno.EEXIST, errno.ENOTEMPTY):
                if previous is not None:
                    os.rename(previous, self.path)  # put the old summary back before reporting the failure
                raise
            # Another writer published between our look and our rename: its complete summary stays, as if it
            # had published just after us.
            self._remove_written(staging)
        if previous is not None:
            self._remove_written(previous)

    def _discard_staged(self) -> None:
        if self._staged is not None:
            self._remove_written(self._staged)
            self._staged = None

    def _sibling(self, kind: str) -> Path:
        return self.path.parent / f".{self.path.name}.{kind}-{os.getpid()}-{_HOST_ID}-{uuid.uuid4().hex[:12]}"

    def _leftovers(self) -> list[tuple[Path, str]]:
        """Staging and previous directories beside the destination whose writer is gone, with their kind."""
        pattern = re.compile(
            rf"\.{re.escape(self.path.name)}\.(staging|previous)-(?:(\d+)-([0-9a-f]{{8}})-)?[0-9a-f]{{12,32}}"
        )
        try:
            names = os.listdir(self.path.parent)
        except OSError:  # no parent yet, or not readable: nothing this sink can recover
            return []
        found = []
        for name in sorted(names):
            match = pattern.fullmatch(name)
            candidate = self.path.parent / name
            if match and candidate.is_dir() and not _writer_alive(match[2], match[3], candidate, self.FOREIGN_GRACE_S):
                found.append((candidate, match[1]))
        return found

    def _recover(self) -> None:
        """Finish what a crashed writer left: restore the previous summary if the destination is missing, then
        delete the leftovers (only files their manifests list)."""
        for directory, kind in self._leftovers():
            if kind == "previous" and not self.path.exists():
                try:
                    os.rename(directory, self.path)
                    continue
                except OSError:  # another process restored or published meanwhile
                    pass
            try:
                self._remove_written(directory)
            except OSError as exc:  # cleaning up is no reason to fail this run; a later one tries again
                warnings.warn(f"could not delete leftover {directory}: {_describe(exc)}", WriteBackWarning, stacklevel=3)

    def _render(self, outputs: SummaryOutputs) -> dict[str, bytes]:
        own = {
            self.METRICS_FILE: _json_bytes({key: _finite_or_none(v) for key, v in outputs.metrics.items()}),
            self.CURVES_FILE: _json_bytes(
                [
                    {
                        "key": curve.key,
                        "n": [int(k) for k in curve.n],
                        "values": [_finite_or_none(v) for v in curve.values],
                    }
                    for curve in outputs.curves
                ]
            ),
            self.DESCRIPTION_FILE: outputs.description.encode("utf-8"),
        }
        reserved = {*own, self.FINGERPRINT_FILE, self.MANIFEST_FILE}
        for relative in outputs.artifacts:
            artifact_path(relative, reserved=reserved)
        return {**own, **{relative: bytes(data) for relative, data in outputs.artifacts.items()}}

    def _check_owned(self) -> None:
        """InputError unless the destination is absent, empty, or holds only files this sink wrote."""
        if not self.path.exists():
            return
        if not self.path.is_dir():
            raise InputError(f"{self.path} exists and is not a directory")
        for _ in range(3):
            try:
                ours = self._owned_files(self.path) if self._manifest(self.path) else set()
                foreign = sorted(
                    str(p.relative_to(self.path)) for p in self.path.rglob("*") if p.is_file() and p not in ours
                )
                break
            except FileNotFoundError:  # another writer swapped the directory while we looked: look again
                continue
        else:
            return
        if foreign:
            listed = ", ".join(foreign[:5]) + (f", ... ({len(foreign) - 5} more)" if len(foreign) > 5 else "")
            raise InputError(
                f"{self.path} holds files boontrack did not write ({listed}); choose a new or empty directory"
            )

    def _owned_files(self, directory: Path) -> set[Path]:
        listed = self._manifest(directory).get("files", [])
        return {directory / name for name in [*listed, self.FINGERPRINT_FILE, self.MANIFEST_FILE]}

    def _manifest(self, directory: Path) -> dict[str, Any]:
        try:
            manifest = json.loads((directory / self.MANIFEST_FILE).read_text(encoding="utf-8"))
        except (FileNotFoundError, NotADirectoryError, ValueError):
            return {}
        return manifest if isinstance(manifest, dict) else {}

    def _remove_written(self, directory: Path) -> None:
        """Delete the files this sink wrote in ``directory``, and the directory when nothing else is left."""
        if not directory.exists():
            return
        for path in sorted(self._owned_files(directory), reverse=True):
            path.unlink(missing_ok=True)
        for sub in sorted((p for p in directory.rglob("*") if p.is_dir()), reverse=True):
            _rmdir_if_empty(sub)
        if not _rmdir_if_empty(directory) and directory.exists():
            warnings.warn(
                f"{directory} holds files boontrack did not write; it is left in place",
                WriteBackWarning,
                stacklevel=3,
            )


#: Short id of this host in the names of staging directories, so that a later run knows whose they are.
_HOST_ID = hashlib.sha256(socket.gethostname().encode()).hexdigest()[:8]
#: errno values of a file system or kernel that cannot exchange two directories atomically.
_NO_EXCHANGE = {errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EXDEV}


def _exchange(first: Path, second: Path) -> None:
    """Swap two directories in one atomic step (Linux ``renameat2(RENAME_EXCHANGE)``); OSError(EINVAL) where
    the kernel or file system cannot."""
    renameat2 = getattr(_libc(), "renameat2", None)
    if renameat2 is None:
        raise OSError(errno.ENOSYS, "renameat2 is not available")
    at_fdcwd, rename_exchange = -100, 2
    if renameat2(at_fdcwd, os.fsencode(first), at_fdcwd, os.fsencode(second), rename_exchange) != 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code), str(second))


@functools.cache
def _libc() -> Any:
    return ctypes.CDLL(None, use_errno=True) if sys.platform.startswith("linux") else None


def _writer_alive(pid: str | None, host: str | None, directory: Path, grace_s: float) -> bool:
    """Whether the process that named ``directory`` may still be writing it."""
    if pid is not None and host == _HOST_ID and os.name == "posix":  # elsewhere signal 0 is not a probe
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            return False
        except PermissionError:  # alive, under another user
            return True
        return True
    try:
        return time.time() - directory.stat().st_mtime < grace_s
    except FileNotFoundError:
        return False


def _write_durably(path: Path, data: bytes) -> None:
    with open(path, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())


def _fsync_directory(directory: Path) -> None:
    """Make renames and new entries in ``directory`` survive a power cut (a no-op where unsupported)."""
    try:
        descriptor = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)


def _rmdir_if_empty(directory: Path) -> bool:
    try:
        directory.rmdir()
    except OSError:
        return False
    return True


def _finite_or_none(value: Any) -> float | None:
    value = float(value)
    return value if math.isfinite(value) else None


def _json_bytes(data: Any) -> bytes:
    return (json.dumps(data, indent=2, allow_nan=False) + "\n").encode("utf-8")
