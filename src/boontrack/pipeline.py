"""The one pipeline: read runs -> RunTable -> fingerprint -> analyze -> render -> write, idempotently.

:func:`run_job` is the only implementation of this sequence. The command line (``boontrack summarize``), the
scheduled job (``boontrack reaggregate``) and the post-sweep callbacks of the tracker backends all call it.

A write is skipped when the sink already holds the :func:`fingerprint` of the same inputs; the fingerprint is
written last, so a write that fails midway is redone by the next run. Where the source offers a cheap
:meth:`change token <boontrack.backends.Source.change_token>`, it is stored beside the fingerprint, and a
job whose token is unchanged does not even read its runs (:func:`change_token`). An up-to-date sink that can give its summary
back (:meth:`Sink.read_summary <boontrack.backends.Sink.read_summary>`) spares the command line computing it again
to print it. Writing back never raises into the caller unless asked to: the failure is warned
(:class:`~boontrack.exceptions.WriteBackWarning`) and carried by the :class:`JobResult`.

This module imports nothing heavy at import time (the command line imports it on start-up).
"""

from __future__ import annotations

import hashlib
import json
import re
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from boontrack._redact import describe_error, redact
from boontrack.backends import DEFAULT_PREFIX, MetricRequest, Sink, Source, SummaryOutputs
from boontrack.exceptions import BackendError, InputError, WriteBackWarning
from boontrack.spec import Spec

if TYPE_CHECKING:
    from boontrack.analysis import Summary
    from boontrack.runtable import RunTable

__all__ = [
    "JobResult",
    "budgets",
    "change_token",
    "fingerprint",
    "open_sink",
    "run_job",
    "source_options",
    "summarize_after_sweep",
    "summary_key",
]

#: Source options the command line and the config file name explicitly; others go through ``options``.
SOURCE_OPTIONS = ("parent", "tracking_uri", "sweep", "group", "study")
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


def source_options(
    *,
    parent: str | None = None,
    tracking_uri: str | None = None,
    sweep: str | None = None,
    group: str | None = None,
    study: str | None = None,
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
    named = {"parent": parent, "tracking_uri": tracking_uri, "sweep": sweep, "group": group, "study": study}
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


def change_token(
    source: Source, spec: Spec, *, prefix: str = DEFAULT_PREFIX, source_token: str | None = None
) -> str | None:
    """The source's change token bound to everything else the fingerprint covers, or None without one.

    SHA-256 (hex) of the source's own token (``source_token`` when already known, e.g. found with a discovered
    sweep; else asked), its identity, the spec, the prefix and the package version: a stored token matches only
    a summary computed by this version for this spec, so an upgrade or a new option reads the runs again.
    """
    from boontrack import __version__

    token = source_token if source_token is not None else source.change_token()
    if token is None:
        return None
    text = json.dumps(
        {"token": token, "source": source.identity(), "spec": spec.to_dict(), "prefix": prefix, "version": __version__},
        sort_keys=True,
    )
    return hashlib.sha256(text.encode()).hexdigest()


def summary_key(source_identity: str, spec: Spec) -> str:
    """32 hex digits naming the (source, spec) pair: where its summary lives, whatever the runs hold now."""
    text = json.dumps({"source": source_identity, "spec": spec.to_dict()}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def open_sink(source: Source, spec: Spec, *, out: str | Path | None = None, write_back: bool = False) -> Sink | None:
    """The destination of a job: a :class:`~boontrack.files.DirectorySink`, the source's own sink, both, or
    None."""
    from boontrack.files import DirectorySink

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
    threads: int | None = None,
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
        Recompute and write even when the sink holds the same fingerprint or change token.
    summarize_unchanged
        When the sink is up to date, give its stored summary back (``JobResult.stored_summary``), or compute
        the summary where the sink cannot give it back (nothing is written); for interactive use. A sink whose
        stored summary is missing or damaged is written again.
    raise_on_write_error
        Raise a failed write instead of warning and reporting it in the result.
    plots
        Render the PNG plots among the written artifacts (most of the cost of a write with few runs).
    threads
        Threads of the analysis (None: every CPU this process may use; see :func:`boontrack.analysis.analyze`).

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
    # Asked before the runs are read: a change in between is then seen by the next run, never hidden.
    token = _change_token_or_none(source, spec, prefix) if sink is not None else None
    kept_token = _stored_change_token(sink) if token is not None and not force else None
    if kept_token is not None and kept_token[0] == token and not summarize_unchanged:
        return JobResult("unchanged", None, kept_token[1], sink.location())

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
    if unchanged and token is not None and kept_token != (token, fp):
        _refresh_change_token(sink, token, fp)
    if unchanged and (kept is not None or not summarize_unchanged):
        return JobResult("unchanged", None, fp, location, stored_summary=kept)

    summary = analyze(table, spec, progress=progress, source=redact(source.describe()), threads=threads)
    if sink is None:
        return JobResult("computed", summary, fp, location)
    if unchanged:
        return JobResult("unchanged", summary, fp, location)
    try:
        if read_error is not None:
            raise read_error
        _write(sink, summary, fp, prefix=prefix, plots=plots, token=token)
    except Exception as exc:
        if raise_on_write_error:
            raise
        message = f"writing the summary to {redact(location) or 'the sink'} failed: {describe_error(exc)}"
        warnings.warn(message, WriteBackWarning, stacklevel=2)
        return JobResult("write-failed", summary, fp, location, message)
    return JobResult("updated", summary, fp, sink.location())  # after the write: it may name a new run


def budgets(n: int | Sequence[int] | None) -> tuple[int, ...] | None:
    """``Spec.n`` from one budget, several, or None (the default budgets), as the callbacks take them."""
    if n is None:
        return None
    return tuple(n) if isinstance(n, Iterable) and not isinstance(n, str) else (n,)


def summarize_after_sweep(
    source: Source,
    spec: Spec,
    *,
    raise_on_error: bool = False,
    out: str | Path | None = None,
    write_back: bool = True,
    plots: bool = True,
) -> JobResult:
    """The post-sweep callbacks' job: summarize ``source`` and write the result back beside its runs (and, with
    ``out``, into that directory; ``write_back=False``: only there, see :func:`open_sink`).

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
        sink = open_sink(source, spec, out=out, write_back=write_back)  # may look the sweep up in the tracker
        return run_job(source, spec, sink=sink, raise_on_write_error=raise_on_error, plots=plots)
    except (BackendError, InputError) as exc:
        if raise_on_error:
            raise
        message = redact(f"summarizing {source.describe()} failed: {exc}")
        warnings.warn(message, WriteBackWarning, stacklevel=3)
        return JobResult("failed", None, "", sink.location() if sink is not None else "", message)


def _write(sink: Sink, summary: Summary, fp: str, *, prefix: str, plots: bool, token: str | None) -> None:
    from boontrack.reports import render_outputs

    sink.write(render_outputs(summary, prefix=prefix, plots=plots))
    if token is not None:
        sink.write_change_token(token, fp)  # published with the summary, by the fingerprint below
    sink.write_fingerprint(fp)  # last: a failure before this line leaves the old fingerprint


def _change_token_or_none(source: Source, spec: Spec, prefix: str) -> str | None:
    """The change token, or None when the tracker could not give it (the full read that follows then
    reports what is wrong, as it would have without a token)."""
    try:
        return change_token(source, spec, prefix=prefix)
    except Exception:  # noqa: BLE001 - an optimisation: never the reason a job fails
        return None


def _stored_change_token(sink: Sink) -> tuple[str, str] | None:
    """The sink's stored (token, fingerprint); None when it cannot be read (the full read then decides)."""
    try:
        return sink.read_change_token()
    except Exception:  # noqa: BLE001 - an optimisation: the full read that follows reports a broken sink
        return None


def _refresh_change_token(sink: Sink, token: str, fp: str) -> None:
    """Store a new token beside an up-to-date summary (its runs changed in ways that do not enter it, or it
    was written without one)."""
    try:
        sink.write_change_token(token, fp)
    except Exception:  # noqa: BLE001 - the summary is right; only the next run's shortcut is lost
        pass


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

    def read_change_token(self) -> tuple[str, str] | None:
        stored = {sink.read_change_token() for sink in self.sinks}
        return stored.pop() if len(stored) == 1 else None

    def write_change_token(self, token: str, fingerprint: str) -> None:
        for sink in self.sinks:
            sink.write_change_token(token, fingerprint)

    def read_summary(self, fingerprint: str) -> Mapping[str, Any] | None:
        """The stored summary of the first sink that gives one back."""
        for sink in self.sinks:
            kept = sink.read_summary(fingerprint)
            if kept is not None:
                return kept
        return None
