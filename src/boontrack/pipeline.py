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

import dataclasses
import functools
import hashlib
import json
import re
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from boontrack import vocabulary
from boontrack._redact import describe_error, redact
from boontrack.backends import DEFAULT_PREFIX, MetricRequest, Sink, Source, SummaryOutputs
from boontrack.exceptions import BackendError, InputError, WriteBackWarning
from boontrack.spec import Spec

if TYPE_CHECKING:
    import pandas as pd

    from boontrack.runtable import RunTable
    from boontrack.summary import Summary

__all__ = [
    "Destination",
    "JobResult",
    "after_sweep",
    "change_token",
    "fingerprint",
    "joint_change_token",
    "open_sinks",
    "publish",
    "read_runs",
    "resolve_direction",
    "run_job",
    "source_options",
    "stale_sinks",
    "summarize_after_sweep",
    "summarize_source",
    "summary_key",
]

T = TypeVar("T")

#: Source options the command line and the config file name explicitly; others go through ``options``.
SOURCE_OPTIONS = ("parent", "tracking_uri", "sweep", "group", "study")
#: A tracking URI: a scheme and the rest without white space, or MLflow's bare ``databricks``. (A local directory
#: given as a path, MLflow's file store, is accepted too: see :func:`source_options`.)
TRACKING_URI = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:\S*|databricks")


@dataclass(frozen=True)
class Destination:
    """What one destination of a job holds after it: ``"unchanged"`` (it held the summary already),
    ``"updated"`` (written) or ``"write-failed"`` (``error`` says why; the other destinations are written all
    the same)."""

    location: str
    status: Literal["unchanged", "updated", "write-failed"]
    error: str | None = None


@dataclass(frozen=True)
class JobResult:
    """What :func:`run_job` did.

    Attributes
    ----------
    status
        ``"unchanged"``: the sink already held this fingerprint, nothing was computed or written.
        ``"updated"``: computed and written. ``"computed"``: computed, no sink given.
        ``"write-failed"``: computed, but writing to a destination failed (see ``error`` and ``destinations``).
        ``"failed"``: the runs could not be read or summarized (only from :func:`summarize_after_sweep`;
        elsewhere that raises :class:`~boontrack.exceptions.BackendError` or
        :class:`~boontrack.exceptions.InputError`).
    summary
        The analysis; None when unchanged, unless ``summarize_unchanged=True`` and the sink cannot give its
        summary back (see ``stored_summary``).
    fingerprint
        The inputs' fingerprint (see :func:`fingerprint`).
    location
        Where the result was written (the sinks' locations, comma-separated), "" without a sink.
    error
        What failed (no credentials), one sentence per failed destination; None when nothing failed.
    stored_summary
        With ``summarize_unchanged=True``, when unchanged: the summary the sink holds, as the JSON data of its
        ``summary.json`` (:meth:`Summary.to_dict <boontrack.summary.Summary.to_dict>`), which
        :func:`~boontrack.reports.format_table` and :func:`~boontrack.reports.to_json` print as they print the
        analysis. None otherwise.
    """

    status: Literal["unchanged", "updated", "computed", "write-failed", "failed"]
    summary: Summary | None
    fingerprint: str
    location: str
    error: str | None = None
    stored_summary: Mapping[str, Any] | None = None
    #: Each destination's own outcome, in the order given (empty without a sink, or when the job failed).
    destinations: tuple[Destination, ...] = ()

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
    if tracking_uri is not None and not (TRACKING_URI.fullmatch(tracking_uri) or Path(tracking_uri).is_dir()):
        raise InputError(
            f"{vocabulary.name('tracking_uri')} {redact(tracking_uri)!r} is neither a URI nor an existing directory "
            "(expected e.g. http://HOST:5000, sqlite:///mlflow.db, file:///PATH, ./mlruns or databricks)"
        )
    named = {"parent": parent, "tracking_uri": tracking_uri, "sweep": sweep, "group": group, "study": study}
    chosen = {key: value for key, value in named.items() if value is not None}
    for key, value in (options or {}).items():
        key = key.replace("-", "_")
        if key in chosen:
            raise InputError(f"source option {vocabulary.name(key)} is given twice")
        chosen[key] = value
    return chosen


def fingerprint(
    table: RunTable,
    spec: Spec,
    *,
    source_identity: str,
    prefix: str = DEFAULT_PREFIX,
    histories: pd.DataFrame | None = None,
) -> str:
    """SHA-256 (hex) of everything a summary depends on.

    Covers the kept runs (run id, exact val and test values, group) in run-id order, the dropped runs with
    their reasons, the spec, the metric-name prefix, the source identity and the package version, and with
    training curves their histories (:func:`boontrack.training_runs.summary_histories`). Values enter as their
    IEEE-754 bytes, so the fingerprint changes with any change of a value and with nothing else (row order and
    column order do not matter).
    """
    import numpy as np

    from boontrack import __version__
    from boontrack.training_runs import history_parts

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
        *(() if histories is None else history_parts(histories)),
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


def joint_change_token(pairs: Sequence[tuple[Source, Spec]], *, prefix: str = DEFAULT_PREFIX) -> str | None:
    """One change token for a job that reads several sources (a comparison of sources: each source with each
    metric's spec), asked before any of their runs is read: SHA-256 (hex) of their :func:`change_token`, in order;
    None when a source offers none or cannot give it (then the job's fingerprint alone decides)."""
    tokens = [_change_token_or_none(source, spec, prefix) for source, spec in pairs]
    if not tokens or any(token is None for token in tokens):
        return None
    return hashlib.sha256(json.dumps(tokens).encode()).hexdigest()


def summary_key(source_identity: str, spec: Spec) -> str:
    """32 hex digits naming the (source, spec) pair: where its summary lives, whatever the runs hold now.

    Who said the metric's direction (``Spec.direction_from``) changes the summary's text, not its place.
    """
    options = {key: value for key, value in spec.to_dict().items() if key != "direction_from"}
    text = json.dumps({"source": source_identity, "spec": options}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def resolve_direction(source: Source, spec: Spec) -> Spec:
    """``spec`` with its metric's direction decided before any work (:meth:`Spec.resolve_direction`): the
    source's own direction of ``val`` where it knows one (:meth:`Source.direction
    <boontrack.backends.Source.direction>`, asked only while the spec has none), else the caller's, else by
    the rule for names. A resolved spec is returned as it is."""
    if spec.direction_from is not None:
        return spec
    return spec.resolve_direction(source.direction(spec.val.removeprefix("metrics.")))


def open_sinks(
    source: Source,
    spec: Spec,
    *,
    out: str | Path | None = None,
    write_back: bool = False,
    also: Mapping[str, Mapping[str, Any]] | None = None,
    each_on_its_own: bool = False,
) -> list[Sink]:
    """The destinations of a job: a :class:`~boontrack.directory.DirectorySink` for ``out``, the source's own
    sink (``write_back``), and a sink of another tracker for each ``"scheme:LOCATION"`` of ``also`` (with its
    options, through that scheme's backend: :func:`~boontrack.backends.sink_at`). The summary key names each
    tracker's sink, from the spec with its direction resolved.

    A destination that cannot be opened raises, unless ``each_on_its_own``: it then stands in the list as a
    sink whose every use raises that error, so that :func:`run_job` reports it as that destination's failure
    and writes the others (a callback's destinations, after the sweep).
    """
    from boontrack.backends import sink_at
    from boontrack.directory import DirectorySink

    openers: list[tuple[str, Callable[[], Sink]]] = []
    if out is not None:
        openers.append((str(out), lambda: DirectorySink(out)))
    if write_back or also:
        key = summary_key(source.identity(), resolve_direction(source, spec))
        if write_back:
            openers.append((f"{source.describe()} (written back)", lambda: source.sink(key)))
        for destination, options in (also or {}).items():
            openers.append((destination, functools.partial(sink_at, destination, key, **options)))
    sinks: list[Sink] = []
    for location, opener in openers:
        try:
            sinks.append(opener())
        except Exception as exc:
            if not each_on_its_own:
                raise
            sinks.append(_Unopened(redact(location), exc))
    return sinks


class _Unopened(Sink):
    """A destination that could not be opened: every use raises why, so that it fails on its own."""

    def __init__(self, location: str, error: Exception) -> None:
        self._location, self._error = location, error

    def location(self) -> str:
        return self._location

    def read_fingerprint(self) -> str | None:
        raise self._error

    def write(self, outputs: SummaryOutputs) -> None:
        raise self._error

    def write_fingerprint(self, fingerprint: str) -> None:
        raise self._error


def read_runs(source: Source, request: MetricRequest) -> pd.DataFrame:
    """The runs ``source`` holds for ``request``; :class:`InputError` naming the source when it holds none (an MLflow
    run given as a sweep's parent that has no runs as children, an empty file), where the table would only say
    that it is empty."""
    frame = source.read(request)
    if frame.empty:
        raise InputError(f"no runs in {redact(source.describe())}")
    return frame


def stale_sinks(sinks: Sequence[Sink], fp: str, *, force: bool = False) -> dict[int, Exception | None]:
    """The sinks to write, by position: those that do not hold the fingerprint ``fp`` (every one with ``force``),
    each with why it cannot even be read (None: it can, and holds another fingerprint or none)."""
    stale: dict[int, Exception | None] = {}
    for position, each in enumerate(sinks):
        try:
            if force or each.read_fingerprint() != fp:
                stale[position] = None
        except Exception as exc:  # a sink that cannot even be read cannot be written: report it as such
            stale[position] = exc
    return stale


def publish(
    sinks: Sequence[Sink],
    fp: str,
    render: Callable[[], SummaryOutputs],
    *,
    token: str | None = None,
    stale: Mapping[int, Exception | None] | None = None,
    force: bool = False,
    raise_on_error: bool = False,
) -> tuple[Destination, ...]:
    """The one write protocol, of a summary (:func:`run_job`) and of a comparison of sources
    (:func:`boontrack.sources.write_comparison`) alike: fingerprint, write, fingerprint last.

    Each sink that does not hold ``fp`` (``stale``, as :func:`stale_sinks` finds them when not given) is written
    the outputs that ``render`` gives, rendered once for all of them; then ``token`` (a :func:`change_token`,
    when the source offers one) and last the fingerprint, so that a write that fails or is killed midway leaves
    the old fingerprint and is redone by the next run. A destination that fails is reported on its own (warned,
    and a ``"write-failed"`` :class:`Destination` with why) while the others are written all the same, unless
    ``raise_on_error``: then the first failure raises.
    """
    if stale is None:
        stale = stale_sinks(sinks, fp, force=force)
    outputs: SummaryOutputs | None = None
    rendering_error: Exception | None = None
    if stale:
        try:
            outputs = render()
        except Exception as exc:
            if raise_on_error:
                raise
            rendering_error = exc
    done = []
    for position, each in enumerate(sinks):
        if position not in stale:
            done.append(Destination(each.location(), "unchanged"))
            continue
        try:
            problem = stale[position] or rendering_error
            if problem is not None:
                raise problem
            assert outputs is not None
            each.write(outputs)
            if token is not None:
                each.write_change_token(token, fp)  # published with the summary, by the fingerprint below
            each.write_fingerprint(fp)  # last: a failure before this line leaves the old fingerprint
        except Exception as exc:
            if raise_on_error:
                raise
            message = f"writing the summary to {redact(each.location()) or 'the sink'} failed: {describe_error(exc)}"
            warnings.warn(message, WriteBackWarning, stacklevel=4)  # as run_job's caller's caller
            done.append(Destination(each.location(), "write-failed", message))
        else:
            done.append(Destination(each.location(), "updated"))
    return tuple(done)


def run_job(
    source: Source,
    spec: Spec,
    *,
    sink: Sink | Sequence[Sink] | None = None,
    prefix: str = DEFAULT_PREFIX,
    progress: bool = False,
    force: bool = False,
    summarize_unchanged: bool = False,
    raise_on_write_error: bool = False,
    plots: bool = True,
    threads: int | None = None,
) -> JobResult:
    """Read the runs of ``source``, analyze them as ``spec`` says and write the result to each sink.

    The runs are read once and analyzed once, whatever the number of destinations; each destination is
    written only when it does not hold this summary yet, and a failure to write one is reported on its own
    (warned, and in ``JobResult.destinations``) while the others are written all the same.

    Parameters
    ----------
    source, spec
        Where the runs are, and what to compute. An unresolved direction is resolved first
        (:func:`resolve_direction`).
    sink
        Where to write: one sink or several (:func:`open_sinks`); None computes only (status ``"computed"``).
    prefix
        Metric-name prefix of the written summary (``boon/``).
    progress
        Show a progress bar during the analysis (for terminals).
    force
        Recompute and write even when the sinks hold the same fingerprint or change token.
    summarize_unchanged
        When the sinks are up to date, give a stored summary back (``JobResult.stored_summary``), or compute
        the summary where no sink can give it back (nothing is written); for interactive use. A sink whose
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
        Bad data or spec (unknown column, text in a metric column, all runs dropped, a loss without a
        direction, ...). Nothing is written.
    BackendError
        The source could not be read. Nothing is written.
    """
    spec = resolve_direction(source, spec)
    sinks = [sink] if isinstance(sink, Sink) else list(sink or ())
    # Asked before the runs are read: a change in between is then seen by the next run, never hidden.
    token = _change_token_or_none(source, spec, prefix) if sinks else None
    kept_tokens = [_stored_change_token(s) for s in sinks] if token is not None and not force else []
    if kept_tokens and not summarize_unchanged and len(set(kept_tokens)) == 1:
        kept = kept_tokens[0]
        if kept is not None and kept[0] == token:
            unchanged = tuple(Destination(s.location(), "unchanged") for s in sinks)
            return JobResult("unchanged", None, kept[1], _locations(sinks), destinations=unchanged)

    from boontrack.analysis import analyze
    from boontrack.reports import group_names
    from boontrack.runtable import RunTable
    from boontrack.training_runs import history_metrics, summary_histories, training_of

    request = MetricRequest(
        val=spec.val, test=spec.test, maximize=spec.higher_is_better, pick=spec.pick, histories=history_metrics(spec)
    )
    table = RunTable.from_frame(read_runs(source, request), spec)
    group_names(table.groups)  # names that cannot be written are bad input, found before the analysis
    histories = summary_histories(source, spec, table)  # None unless spec.curves asks for training curves
    fp = fingerprint(table, spec, source_identity=source.identity(), prefix=prefix, histories=histories)

    stale = stale_sinks(sinks, fp, force=force)
    kept_summary = None
    if not stale and summarize_unchanged:
        kept_summary, damaged = _stored_summary(sinks, fp)
        stale.update(dict.fromkeys(damaged))
    if token is not None:
        for position, each in enumerate(sinks):
            if position not in stale and (kept_tokens[position] if kept_tokens else None) != (token, fp):
                _refresh_change_token(each, token, fp)
    if sinks and not stale and (kept_summary is not None or not summarize_unchanged):
        unchanged = tuple(Destination(s.location(), "unchanged") for s in sinks)
        return JobResult("unchanged", None, fp, _locations(sinks), stored_summary=kept_summary, destinations=unchanged)

    summary = analyze(table, spec, progress=progress, source=redact(source.describe()), threads=threads)
    if histories is not None:
        summary = dataclasses.replace(summary, training=training_of(histories, spec))
    if not sinks:
        return JobResult("computed", summary, fp, "")
    if not stale:
        unchanged = tuple(Destination(s.location(), "unchanged") for s in sinks)
        return JobResult("unchanged", summary, fp, _locations(sinks), destinations=unchanged)
    from boontrack.reports import render_outputs

    def render() -> SummaryOutputs:
        return render_outputs(summary, prefix=prefix, plots=plots)

    outcomes = publish(sinks, fp, render, token=token, stale=stale, raise_on_error=raise_on_write_error)
    failures = [outcome.error for outcome in outcomes if outcome.error is not None]
    status: Literal["updated", "write-failed"] = "write-failed" if failures else "updated"
    # the locations after the writes: a sink may name a new run
    return JobResult(status, summary, fp, _locations(sinks), "; ".join(failures) or None, destinations=outcomes)


def after_sweep(
    what: str,
    job: Callable[[], T],
    *,
    raise_on_error: bool = False,
    failed: Callable[[str], T] | None = None,
) -> T:
    """Run ``job``, work done for a finished sweep, under the one failure rule of callbacks and ``summarize_*``
    functions: nothing that goes wrong raises into the user's script unless ``raise_on_error``.

    The sweep is over (or the job it follows ran) when this runs. A tracker that cannot be read or written,
    runs that cannot be summarized (none, a missing metric, too few for the budgets asked) and anything else
    that fails are warned once (:class:`~boontrack.exceptions.WriteBackWarning`: "``what`` failed: reason",
    without credentials) and ``failed(message)`` is returned: by default a :class:`JobResult` with status
    ``"failed"`` and the message in ``error``. With ``raise_on_error`` the error is raised. A destination that
    fails while others are written is ``job``'s own result (``"write-failed"``). Options are checked when the
    callback or call is made, before this: they always raise.
    """
    try:
        return job()
    except Exception as exc:
        if raise_on_error:
            raise
        expected = isinstance(exc, (InputError, BackendError))
        reason = " ".join(str(exc).split()) if expected else describe_error(exc)
        message = redact(f"{what} failed: {reason}")
        warnings.warn(message, WriteBackWarning, stacklevel=3)
        if failed is not None:
            return failed(message)
        return JobResult("failed", None, "", "", message)  # type: ignore[return-value]


def summarize_source(
    source: Source,
    spec: Spec,
    *,
    out: str | Path | None = None,
    write_back: bool = True,
    also: Mapping[str, Mapping[str, Any]] | None = None,
    plots: bool = True,
    summarize_unchanged: bool = False,
    raise_on_write_error: bool = False,
) -> JobResult:
    """A callback's summary: the direction resolved, every destination opened (:func:`open_sinks`: ``out``, the
    source's own sink when ``write_back``, the trackers of ``also``) and one :func:`run_job` for all of them:
    the runs are read once and analyzed once. Raises what goes wrong; callbacks call it under
    :func:`after_sweep`."""
    resolved = resolve_direction(source, spec)
    sinks = open_sinks(source, resolved, out=out, write_back=write_back, also=also, each_on_its_own=True)
    return run_job(
        source,
        resolved,
        sink=sinks,
        plots=plots,
        summarize_unchanged=summarize_unchanged,
        raise_on_write_error=raise_on_write_error,
    )


def summarize_after_sweep(
    source: Source,
    spec: Spec,
    *,
    raise_on_error: bool = False,
    out: str | Path | None = None,
    write_back: bool = True,
    also: Mapping[str, Mapping[str, Any]] | None = None,
    plots: bool = True,
) -> JobResult:
    """:func:`summarize_source` under the failure rule of :func:`after_sweep`: the summary of a finished sweep,
    written back beside its runs (and into ``out``, and to the trackers of ``also``; ``write_back=False``: not
    beside the runs), that never raises into the user's script unless ``raise_on_error``."""

    def job() -> JobResult:
        return summarize_source(
            source, spec, out=out, write_back=write_back, also=also, plots=plots, raise_on_write_error=raise_on_error
        )

    return after_sweep(f"summarizing {source.describe()}", job, raise_on_error=raise_on_error)


def _locations(sinks: Sequence[Sink]) -> str:
    return ", ".join(each.location() for each in sinks)


def _stored_summary(sinks: Sequence[Sink], fp: str) -> tuple[Mapping[str, Any] | None, list[int]]:
    """The stored summary of the first sink that gives one back, and the sinks whose summary is lost."""
    damaged = []
    for position, each in enumerate(sinks):
        try:
            kept = each.read_summary(fp)
        except BackendError:  # the tracker did not answer this time: compute to show it, write nothing
            continue
        except Exception:  # up to date by its fingerprint, but the summary is lost: compute and write it again
            damaged.append(position)
            continue
        if kept is not None:
            return kept, damaged
    return None, damaged


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
