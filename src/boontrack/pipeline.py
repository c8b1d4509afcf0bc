"""The one pipeline: read runs -> RunTable -> fingerprint -> analyze -> render -> write, idempotently.

:func:`run_job` is the only implementation of this sequence. The command line (``boontrack summarize``), the
scheduled job (``boontrack reaggregate``) and the post-sweep callbacks of the tracker backends all call it.

A write is skipped when the sink already holds the :func:`fingerprint` of the same inputs; the fingerprint is
written last, so a write that fails midway is redone by the next run. Writing back never raises into the caller
unless asked to: the failure is warned (:class:`~boontrack.exceptions.WriteBackWarning`) and carried by the
:class:`JobResult`.

This module imports nothing heavy at import time (the command line imports it on start-up).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import shutil
import uuid
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from boontrack._redact import redact
from boontrack.backends import MetricRequest, Sink, Source, SummaryOutputs
from boontrack.exceptions import BackendError, InputError, WriteBackWarning
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

DEFAULT_PREFIX = "boon/"
#: Command-line spelling of ``--pick`` -> Spec spelling.
PICK_SPELLINGS = {"last": "last", "best-val-step": "best_val_step"}

#: Source options the command line and the config file name explicitly; others go through ``options``.
SOURCE_OPTIONS = ("parent", "tracking_uri", "sweep", "group")


@dataclass(frozen=True)
class JobResult:
    """What :func:`run_job` did.

    Attributes
    ----------
    status
        ``"unchanged"``: the sink already held this fingerprint, nothing was computed or written.
        ``"updated"``: computed and written. ``"computed"``: computed, no sink given.
        ``"write-failed"``: computed, but writing to the sink failed (see ``error``).
        ``"failed"``: the runs could not be read (only from :func:`summarize_after_sweep`; elsewhere that
        raises :class:`~boontrack.exceptions.BackendError`).
    summary
        The analysis; None when unchanged (unless ``summarize_unchanged=True``).
    fingerprint
        The inputs' fingerprint (see :func:`fingerprint`).
    location
        Where the result was written (the sink's location), "" without a sink.
    error
        One line describing what failed (no credentials), None when nothing failed.
    """

    status: Literal["unchanged", "updated", "computed", "write-failed", "failed"]
    summary: Summary | None
    fingerprint: str
    location: str
    error: str | None = None

    @property
    def ok(self) -> bool:
        """True unless reading the runs or writing the result failed."""
        return self.error is None


def make_spec(
    *,
    val: str,
    test: str | None = None,
    n: Sequence[int] = (1, 5, 10),
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
    raises :class:`InputError` naming the option as the user wrote it.
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
    return spec.check(names=_OPTION_NAMES)


#: Spec fields whose command-line and config name differs.
_OPTION_NAMES = {
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
        Still compute the summary when the sink is up to date (nothing is written); for interactive use.
    raise_on_write_error
        Raise a failed write instead of warning and reporting it in the result.

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
    from boontrack.runtable import RunTable

    request = MetricRequest(val=spec.val, test=spec.test, maximize=spec.maximize, pick=spec.pick)
    table = RunTable.from_frame(source.read(request), spec)
    fp = fingerprint(table, spec, source_identity=source.identity(), prefix=prefix)
    location = sink.location() if sink is not None else ""

    stored, read_error = None, None
    if sink is not None and not force:
        try:
            stored = sink.read_fingerprint()
        except Exception as exc:  # a sink that cannot even be read cannot be written: report it as such
            read_error = exc
    unchanged = stored == fp
    if unchanged and not summarize_unchanged:
        return JobResult("unchanged", None, fp, location)

    summary = analyze(table, spec, progress=progress, source=source.describe())
    if sink is None:
        return JobResult("computed", summary, fp, location)
    if unchanged:
        return JobResult("unchanged", summary, fp, location)
    try:
        if read_error is not None:
            raise read_error
        _write(sink, summary, fp, prefix=prefix)
    except Exception as exc:
        if raise_on_write_error:
            raise
        message = f"writing the summary to {redact(location) or 'the sink'} failed: {_describe(exc)}"
        warnings.warn(message, WriteBackWarning, stacklevel=2)
        return JobResult("write-failed", summary, fp, location, message)
    return JobResult("updated", summary, fp, sink.location())  # after the write: it may name a new run


def budgets(n: int | Sequence[int]) -> tuple[int, ...]:
    """``Spec.n`` from one budget or several, as the callbacks take them (validated by the analysis)."""
    return tuple(n) if isinstance(n, Iterable) and not isinstance(n, str) else (n,)


def summarize_after_sweep(source: Source, spec: Spec, *, raise_on_error: bool = False) -> JobResult:
    """The post-sweep callbacks' job: summarize ``source`` and write the result back beside its runs.

    The sweep is over when this runs, so a tracker that cannot be read or written must not crash the user's
    script: the failure is warned (:class:`~boontrack.exceptions.WriteBackWarning`) and returned (status
    ``"failed"`` or ``"write-failed"``), unless ``raise_on_error`` is True. Bad arguments or data
    (:class:`~boontrack.exceptions.InputError`) always raise: they are mistakes in the call, not outages.
    """
    sink = open_sink(source, spec, write_back=True)
    try:
        return run_job(source, spec, sink=sink, raise_on_write_error=raise_on_error)
    except BackendError as exc:
        if raise_on_error:
            raise
        message = redact(f"summarizing {source.describe()} failed: {exc}")
        warnings.warn(message, WriteBackWarning, stacklevel=3)
        return JobResult("failed", None, "", sink.location(), message)


def _write(sink: Sink, summary: Summary, fp: str, *, prefix: str) -> None:
    from boontrack.reports import render_outputs

    sink.write(render_outputs(summary, prefix=prefix))
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


class DirectorySink(Sink):
    """A directory holding one summary: its artifacts, ``metrics.json``, ``curves.json`` and ``description.md``.

    ``write`` builds the new content in a fresh directory beside the destination and renames it into place,
    so the destination never holds half of one summary and half of another. The fingerprint
    (``.boontrack-fingerprint``) is written afterwards, atomically. The destination must be new, empty, or
    a directory this sink wrote (its files are listed in ``.boontrack-manifest.json``): a directory with
    other files is refused, and only files the sink wrote are ever deleted.

    ``metrics.json`` maps metric names to values (null for non-finite ones); ``curves.json`` is a list of
    ``{"key", "n", "values"}`` objects, one per curve.

    A process killed during ``write`` may leave a hidden ``.<name>.staging-*`` or ``.<name>.previous-*``
    directory beside the destination; boontrack never reads them, and they can be deleted.
    """

    FINGERPRINT_FILE = ".boontrack-fingerprint"
    MANIFEST_FILE = ".boontrack-manifest.json"
    METRICS_FILE = "metrics.json"
    CURVES_FILE = "curves.json"
    DESCRIPTION_FILE = "description.md"

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path).absolute()
        self._written_token: str | None = None
        self._check_owned()

    def location(self) -> str:
        return str(self.path)

    def read_fingerprint(self) -> str | None:
        try:
            return (self.path / self.FINGERPRINT_FILE).read_text(encoding="utf-8").strip() or None
        except FileNotFoundError:
            return None

    def write(self, outputs: SummaryOutputs) -> None:
        files = self._render(outputs)
        self._check_owned()
        token = uuid.uuid4().hex
        staging = self.path.parent / f".{self.path.name}.staging-{token}"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        os.mkdir(staging)
        try:
            for relative, data in files.items():
                target = staging / relative
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
            manifest = {"token": token, "files": sorted(files)}
            (staging / self.MANIFEST_FILE).write_text(json.dumps(manifest, indent=2), encoding="utf-8")
            self._swap_in(staging, token)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        self._written_token = token

    def write_fingerprint(self, fingerprint: str) -> None:
        # Refuse to stamp content another writer put there since our write: the fingerprint must describe it.
        manifest = self._manifest(self.path)
        if self._written_token is None or manifest.get("token") != self._written_token:
            raise RuntimeError(f"{self.path} was replaced by another writer; its fingerprint is left unset")
        temporary = self.path / f"{self.FINGERPRINT_FILE}.{self._written_token}.tmp"
        temporary.write_text(fingerprint + "\n", encoding="utf-8")
        os.replace(temporary, self.path / self.FINGERPRINT_FILE)

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
            parts = Path(relative).parts
            if Path(relative).is_absolute() or ".." in parts or not parts or relative in reserved:
                raise ValueError(f"artifact path {relative!r} cannot be written into {self.path}")
        return {**own, **{relative: bytes(data) for relative, data in outputs.artifacts.items()}}

    def _check_owned(self) -> None:
        """InputError unless the destination is absent, empty, or holds only files this sink wrote."""
        if not self.path.exists():
            return
        if not self.path.is_dir():
            raise InputError(f"{self.path} exists and is not a directory")
        ours = self._owned_files(self.path)
        foreign = sorted(
            str(p.relative_to(self.path)) for p in self.path.rglob("*") if p.is_file() and p not in ours
        )
        if foreign:
            listed = ", ".join(foreign[:5]) + (f", ... ({len(foreign) - 5} more)" if len(foreign) > 5 else "")
            raise InputError(
                f"{self.path} holds files boontrack did not write ({listed}); choose a new or empty directory"
            )

    def _owned_files(self, directory: Path) -> set[Path]:
        manifest = self._manifest(directory)
        if not manifest:
            return set()
        return {directory / name for name in [*manifest.get("files", []), self.FINGERPRINT_FILE, self.MANIFEST_FILE]}

    def _manifest(self, directory: Path) -> dict[str, Any]:
        try:
            return json.loads((directory / self.MANIFEST_FILE).read_text(encoding="utf-8"))
        except (FileNotFoundError, ValueError):
            return {}

    def _swap_in(self, staging: Path, token: str) -> None:
        """Rename ``staging`` to the destination; the previous content is moved aside and its files removed."""
        previous = self.path.parent / f".{self.path.name}.previous-{token}"
        try:
            os.rename(self.path, previous)
        except FileNotFoundError:
            previous = None
        try:
            os.rename(staging, self.path)
        except OSError:
            if previous is not None:
                os.rename(previous, self.path)
            raise RuntimeError(f"{self.path} was created by another writer during this write") from None
        if previous is not None:
            self._remove_written(previous)

    def _remove_written(self, directory: Path) -> None:
        """Delete the files this sink wrote in ``directory``, and the directory when nothing else is left."""
        for path in sorted(self._owned_files(directory), reverse=True):
            path.unlink(missing_ok=True)
        for sub in sorted((p for p in directory.rglob("*") if p.is_dir()), reverse=True):
            _rmdir_if_empty(sub)
        if not _rmdir_if_empty(directory):
            warnings.warn(
                f"files appeared in {self.path} during the write; they are kept in {directory}",
                WriteBackWarning,
                stacklevel=3,
            )


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
