"""Backends: where runs come from (a :class:`Source`) and where results go (a :class:`Sink`).

A backend is found by name through the entry-point group ``boontrack.backends``; the name is the scheme of a
source string (``mlflow:my-experiment``, ``wandb:entity/project``, ``wandb-offline:./wandb``). A string with no
registered scheme is a file path (CSV, TSV, JSONL, Parquet). A third party adds a tracker by publishing a
:class:`Backend` subclass under that group; the core never imports a tracker SDK.

The contract between a source and the rest of boontrack is the *run frame* that :meth:`Source.read` returns, a
:class:`pandas.DataFrame` with one row per run and these columns, the same for every backend:

===============  ================================================================================
``run_id``       str, unique within the source
``status``       str, lower case: ``finished``, ``failed``, ``running``, ``killed``, ``crashed``, ...;
                 ``incomplete``, ``corrupt`` or ``unsupported`` for a run whose record the source could not
                 read whole (a file cut short, failing its checksums, or of an unknown format)
``created_at``   ``datetime64[ns, UTC]`` (NaT when unknown)
``duration_s``   float seconds of training (NaN when unknown)
``params.<k>``   hyperparameters (MLflow params, W&B config), as logged
``metrics.<k>``  metric values chosen as :class:`MetricRequest` says
``tags.<k>``     tags (MLflow tags, W&B tags/group/job_type), as strings
===============  ================================================================================

Backends never drop runs: failed, running and incomplete runs come with their status, and
:class:`boontrack.runtable.RunTable` decides (and reports) what is excluded. A backend's own summary runs
(tagged ``boontrack.role=summary``) are the one exception: they are never read back as input.

What every backend does to build this frame (typing, the best-validation pick, recognising summary runs,
checking options, writing artifacts safely) is in the public integration layer, :mod:`boontrack.integration`; a
backend only translates between its SDK and that layer. The layer also states the callback contract that every
sweep framework's callback and every ``summarize_*`` function keeps: the same keywords with the same meaning,
one failure rule after the sweep, one read and one analysis for every destination.
"""

from __future__ import annotations

import abc
import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any, ClassVar

from boontrack import vocabulary
from boontrack.exceptions import InputError
from boontrack.runframe import SUMMARY_ROLE_TAG, MetricRequest
from boontrack.spec import Direction

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

__all__ = [
    "Backend",
    "CurveSeries",
    "DEFAULT_PREFIX",
    "Direction",
    "Discovered",
    "MetricRequest",
    "Sink",
    "Source",
    "SummaryOutputs",
    "SUMMARY_ROLE_TAG",
    "available_backends",
    "discovery_key",
    "load_backend",
    "open_source",
    "sink_at",
]

ENTRY_POINT_GROUP = "boontrack.backends"
#: Prefix of every metric name boontrack writes back (``boon/<metric>/boo_<n>``, ...).
DEFAULT_PREFIX = "boon/"


@dataclass(frozen=True)
class CurveSeries:
    """One expected-validation curve to log as a metric series with step = n."""

    key: str  #: full metric key, e.g. ``boon/test_acc/curve`` or ``boon/test_acc/CNN/curve``
    n: np.ndarray  #: budgets (the steps), int64, increasing
    values: np.ndarray  #: the curve at each n


@dataclass(frozen=True)
class SummaryOutputs:
    """Everything a sink writes, already rendered by :func:`boontrack.reports.render_outputs`.

    A sink writes ``metrics`` as scalar summary metrics, each of ``curves`` as a step series, ``artifacts`` as
    files (relative path -> bytes: ``summary.json``, ``report.md``, ``report.html``, ``curves.csv``, ``runs.csv``
    and, when matplotlib is installed, ``curves.png`` and ``distributions.png``), and ``description`` (Markdown, a
    few lines) as the run's description. ``tables`` are the same curve data as rows for trackers with table
    objects (W&B): name -> (columns, rows). ``training`` are the training curves of ``Spec.curves`` as series
    whose steps are the training steps (``boon/train/<metric>/<group>/mean``, ``ci_low``, ``ci_high``,
    ``band_low``, ``band_high``, ``runs``), for a tracker that holds every group in one run; their table is
    ``tables["training_curves"]``.
    """

    metrics: Mapping[str, float]
    curves: Sequence[CurveSeries]
    artifacts: Mapping[str, bytes]
    description: str
    tables: Mapping[str, tuple[Sequence[str], Sequence[Sequence[Any]]]] = field(default_factory=dict)
    training: Sequence[CurveSeries] = ()


class Sink(abc.ABC):
    """Where a summary is written. The pipeline calls, in this order::

        if the source has a change token and sink.read_change_token() == (token, stored fingerprint): stop
            (the runs were not even read)
        if sink.read_fingerprint() == fingerprint: stop (nothing is written; to show the summary,
            sink.read_summary(fingerprint) gives the stored one back where the sink can; a stale change
            token is replaced with sink.write_change_token(token, fingerprint))
        sink.write(outputs)
        sink.write_change_token(token, fingerprint)   # when the source has one
        sink.write_fingerprint(fingerprint)      # last, so a crash before it is redone next time

    A sink never modifies the user's runs, params or metrics, and ``write`` replaces the previous summary of
    the same key completely (no stale curve points stay mixed in).
    """

    @abc.abstractmethod
    def read_fingerprint(self) -> str | None:
        """The fingerprint of the last complete write, or None."""

    @abc.abstractmethod
    def write(self, outputs: SummaryOutputs) -> None:
        """Write metrics, curves, artifacts and description."""

    @abc.abstractmethod
    def write_fingerprint(self, fingerprint: str) -> None:
        """Record that the write for ``fingerprint`` completed."""

    def location(self) -> str:
        """Where a person finds the result (URL, run id or path); no credentials."""
        return ""

    def read_summary(self, fingerprint: str) -> Mapping[str, Any] | None:
        """The summary this sink holds for ``fingerprint``, as the JSON data of its ``summary.json``.

        Optional: the base class returns None (this sink cannot give a summary back), and so does a sink that
        no longer holds ``fingerprint`` (another writer published meanwhile); the caller then recomputes.
        A sink that should hold the summary but cannot read it (a missing or damaged ``summary.json``)
        raises: the pipeline then recomputes and writes the summary again.
        """
        return None

    def read_change_token(self) -> tuple[str, str] | None:
        """``(change token, fingerprint)`` stored with the complete summary this sink holds, or None.

        Optional (the base class stores no token, so every run is read). A sink returns a token only when it
        was stored for the fingerprint of the complete summary it holds now: a token left beside a summary
        that a crash or another writer replaced is never trusted.
        """
        return None

    def write_change_token(self, token: str, fingerprint: str) -> None:
        """Store ``token`` as the change token of the summary of ``fingerprint``.

        Called between :meth:`write` and :meth:`write_fingerprint` (the token is published with the summary),
        or alone when the sink already holds ``fingerprint`` and only the token is new. A sink that no longer
        holds ``fingerprint`` by then stores nothing. Optional: the base class stores nothing.
        """
        return None


class Source(abc.ABC):
    """A selection of runs in a tracker or a file."""

    @abc.abstractmethod
    def describe(self) -> str:
        """A short human-readable name for logs and reports; never contains credentials."""

    @abc.abstractmethod
    def identity(self) -> str:
        """A stable identifier of the selection (same runs selected -> same string), without credentials."""

    @abc.abstractmethod
    def read(self, request: MetricRequest) -> pd.DataFrame:
        """The run frame described in this module's docstring."""

    def change_token(self) -> str | None:
        """A cheap token that changes whenever the selected runs may have changed, or None (unknown).

        Optional: the base class has none, and its runs are read on every run of the job. A tracker that can
        tell cheaply (a request or two, far less than reading the runs) returns a short string, the same as
        long as no run was added, finished, or changed state; :func:`boontrack.pipeline.run_job` then skips the
        full read when the sink stored the same token with its complete summary. It is asked *before* the runs
        are read, so a change between the two is seen the next time.
        """
        return None

    def direction(self, metric: str) -> Direction | None:
        """Which way ``metric`` (a name as the frame has it, without ``metrics.``) is better, where this source
        knows it: an Optuna study's direction, a W&B sweep's ``metric.goal``, a Tune experiment's ``mode``.

        Optional: the base class knows none (MLflow and files do not record one). Asked once per job, before
        the runs are read; the summary then uses it and says so, and a caller's direction that contradicts it
        is refused (:meth:`boontrack.spec.Spec.resolve_direction`).
        """
        return None

    def read_histories(self, metrics: Sequence[str], run_ids: Sequence[str]) -> Mapping[str, pd.DataFrame]:
        """Every point each of ``metrics`` logged for the runs ``run_ids``: metric -> a frame with the columns
        ``run_id``, ``step`` and ``value`` (:data:`boontrack.runframe.POINT_COLUMNS`), in the order they were
        logged. Asked only for training curves (``Spec.curves``), after :meth:`read`.

        Optional: the base class keeps no histories (:class:`InputError`).
        """
        raise InputError(
            f"{self.describe()} keeps no per-step histories: {vocabulary.name('curves')} needs a source that does "
            "(a file of one row per run and step, MLflow, W&B)"
        )

    def sink(self, key: str) -> Sink:
        """The sink that writes back next to these runs; ``key`` (hex) identifies the (source, spec) pair.

        Sources that cannot be written back to (files) raise :class:`InputError`.
        """
        raise InputError(
            f"{self.describe()} cannot be written back to; write the summary to a directory with {vocabulary.name('out')}"
        )


@dataclass(frozen=True)
class Discovered:
    """One sweep found by :meth:`Backend.discover`: the source a user would write by hand for it.

    ``open_source(f"{scheme}:{location}", **options)`` opens exactly that sweep, so its summary, key and
    fingerprint are those of the same job written by hand.

    Attributes
    ----------
    key
        Stable and unique within one discovery, made of ``[A-Za-z0-9._-]``: names the sweep's ``out``
        sub-directory and, after the template's name, its job.
    label
        What a person recognises the sweep by (experiment and run names, a sweep id), for the log line.
    location
        The ``LOCATION`` of the source string ``scheme:LOCATION``.
    options
        The source options that select the sweep (merged over the template's own options).
    change_token
        What :meth:`Source.change_token` of that source gave when the sweep was found, where the discovery saw
        it without asking more (None: unknown). The scheduled job compares it with the stored token before
        opening anything else, so an unchanged sweep costs no request of its own.
    """

    key: str
    label: str
    location: str
    options: Mapping[str, Any] = field(default_factory=dict)
    change_token: str | None = None


class Backend(abc.ABC):
    """A tracker: turns the location part of ``name:LOCATION`` and options into a :class:`Source`."""

    #: The scheme, e.g. ``"mlflow"``; equal to the entry-point name.
    name: ClassVar[str]
    #: Options :meth:`open_source` accepts (CLI flag name with dashes -> help text).
    options: ClassVar[Mapping[str, str]] = {}
    #: Options :meth:`open_sink` accepts (name -> help text), when the backend declares them: a destination's
    #: options are then checked before any run is read (None: :meth:`open_sink` checks them when it opens).
    sink_options: ClassVar[Mapping[str, str] | None] = None
    #: Whether this backend's sources may know a metric's direction (:meth:`Source.direction`); a scheduled
    #: job of a backend that never does is checked for a loss without a direction when its file is read.
    knows_directions: ClassVar[bool] = False
    #: Keys of a job's ``discover = {...}`` table that :meth:`discover` accepts (name -> help text); a backend
    #: that can discover sweeps sets it (an empty table is then valid too: its default selection).
    discover_options: ClassVar[Mapping[str, str] | None] = None
    #: Whether a location may be a local path (a file, a directory): a config file's relative one is relative to
    #: the file's directory (a URL, ``...://...``, stays as it is). Locations that are names (an experiment, a
    #: project) are left as written.
    local_location: ClassVar[bool] = False

    @abc.abstractmethod
    def open_source(self, location: str, **options: Any) -> Source:
        """A source for ``location``; unknown or invalid options raise :class:`InputError`."""

    def open_sink(self, location: str, key: str, **options: Any) -> Sink:
        """A sink that writes a summary at ``location`` of this tracker (an MLflow experiment, ...) for runs
        kept elsewhere: how a sweep framework's summary also goes to a tracker (:func:`sink_at`).

        Optional: the base class cannot be written to this way (:class:`InputError`). ``key`` (hex)
        identifies the (source, spec) pair, as for :meth:`Source.sink`.
        """
        raise InputError(f"the {self.name!r} backend cannot hold summaries of runs kept elsewhere")

    def check_discover(self, location: str, select: Mapping[str, Any], **options: Any) -> None:
        """:class:`InputError` where ``location``, ``select`` (the job's ``discover`` table) and ``options`` cannot
        name any sweep, seen without reading anything: a scheduled job's config is refused when it is loaded (exit
        2, nothing runs) rather than failing at each pass. A backend that discovers checks here what its
        :meth:`discover` would refuse before its first request; the default has nothing to check."""
        return  # not abstract: a backend that cannot discover has nothing to check

    def discover(self, location: str, select: Mapping[str, Any], **options: Any) -> list[Discovered]:
        """Every sweep under ``location`` that ``select`` (the job's ``discover`` table) asks for.

        Optional: backends that list sweeps (MLflow: parent runs with children; W&B: sweeps or groups of a
        project; a study storage: its studies) override it and set :attr:`discover_options`. ``options`` are
        the job's source options (tracking URI, ...), which every discovered source keeps. Sweeps are returned
        in a stable order; one that cannot be told apart from a plain run (no children yet) is left out
        until it is a sweep. Invalid ``select`` keys raise :class:`InputError`; a tracker failure raises
        :class:`~boontrack.exceptions.BackendError`.
        """
        raise InputError(f"the {self.name!r} backend cannot discover sweeps; name one sweep per job")


def discovery_key(*parts: str) -> str:
    """A :attr:`Discovered.key` from names: the parts joined by ``-``, characters outside ``[A-Za-z0-9._-]``
    replaced by ``_`` and then a short hash of the original parts added, so that two names differing only there
    keep two keys."""
    import hashlib
    import re

    text = "-".join(parts)
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", text).lstrip(".") or "_"
    if safe == text:
        return safe
    return f"{safe[:80]}-{hashlib.sha256(text.encode()).hexdigest()[:8]}"


def available_backends() -> dict[str, Any]:
    """Registered backends: name -> entry point (not loaded)."""
    return dict(_registered())


@functools.lru_cache(maxsize=1)
def _registered() -> dict[str, Any]:
    # Looked up once per process: scanning the installed distributions costs ~20 ms, once per job otherwise.
    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}


def load_backend(name: str) -> Backend:
    """The backend registered under ``name``, instantiated."""
    registered = available_backends()
    if name not in registered:
        known = ", ".join(sorted(registered)) or "none"
        raise InputError(f"no boontrack backend named {name!r} (installed: {known})")
    return registered[name].load()()


def sink_at(destination: str, key: str, **options: Any) -> Sink:
    """The sink of ``"scheme:LOCATION"`` (e.g. ``"mlflow:my-experiment"``) through the registered backend of
    that scheme: how an integration writes to another tracker without importing it."""
    scheme, sep, location = destination.partition(":")
    if not sep:
        raise InputError(f"a destination is SCHEME:LOCATION (e.g. mlflow:EXPERIMENT), got {destination!r}")
    return load_backend(scheme).open_sink(location, key, **options)


def open_source(spec: str, **options: Any) -> Source:
    """Open ``"scheme:LOCATION"`` with its backend, or a file path when the scheme is not a backend name."""
    scheme, sep, location = spec.partition(":")
    if sep and scheme in available_backends():
        return load_backend(scheme).open_source(location, **options)
    return load_backend("file").open_source(spec, **options)
