"""The scheduled re-aggregation job: ``boontrack reaggregate --config boontrack.toml``.

The config file holds one ``[[jobs]]`` table per summary to keep up to date::

    [[jobs]]
    name = "cifar-resnet"                 # unique; names the job in the log
    source = "runs/cifar.csv"             # as on the command line: a file, or SCHEME:LOCATION
    val = "Best Precision_valid"          # required
    test = "Best Precision_test"
    n = [1, 5, 10]                        # optional: without it 1, 5, 10, each where a group has the runs
    out = "summaries/cifar"               # a directory, and/or
    write_back = true                     # the tracker the runs came from
    plots = false                         # no PNG plots (default true; they are most of a small job's cost)

The other keys are the fields of :class:`~boontrack.spec.Spec`, as in Python (``estimator``, ``maximize``,
``group_by``, ``seed_column``, ``duration``, ``baseline``, ``compare``, ``correction``, ``confidence_level``,
``n_resamples``, ``ci_method``, ``seed``, ``pick``, ``curves``), ``prefix``, and the source options (``parent``,
``tracking_uri``, ``sweep``, ``group``, ``study``, and ``options = {KEY = VALUE}`` for other backends); the
command line's names of 0.2.0 (``minimize``, ``confidence``, ``resamples``) are accepted for one release with
a DeprecationWarning. Every relative path is relative to the config file's directory, whatever the working
directory: a file ``source``, ``out``, a tracker's location that is a local path (``wandb-offline:DIR``,
``hydra:SWEEP_DIR``, an Optuna journal file), a SQLite URI's path (``tracking_uri = "sqlite:///mlflow.db"``,
``optuna:sqlite:///optuna.db``, in ``options`` too) and a tracking URI that is a local directory. ``pick`` is
spelled ``"best-val-step"`` or ``"best_val_step"``. Without ``n``, each group reports the default budgets 1, 5
and 10 it has enough runs for (the others are named in its warnings); with ``n``, a group too small for it fails
the job. A job whose source never knows a metric's direction (a file, MLflow) and
whose ``val`` is named like a loss without ``maximize`` makes the file invalid.

A job may name a set of sweeps instead of one, with ``discover``: ``discover = true`` (every sweep of the
source: the parent runs with children of an MLflow experiment, the sweeps of a W&B project) or a table of
the backend's discovery options (MLflow: ``experiments = "cifar-*"``, a glob on experiment names, and/or
``filter = "tags.team = 'vision'"``, an MLflow experiment search filter, with ``source = "mlflow:"``; W&B:
``by = "sweep"`` or ``by = "group"``). Each run of the command asks the tracker again (new sweeps are picked
up), and each sweep found becomes its own job, exactly the job written by hand for that sweep (same source,
options, summary and fingerprint), named ``NAME/KEY``, with ``out`` a directory holding one sub-directory
per sweep (``out/KEY``). See :meth:`boontrack.backends.Backend.discover`.

The whole file is checked before any job runs. Each job then runs through :func:`boontrack.pipeline.run_job`
under a lock on its destination, so two copies started at once on one host wait for each other instead of
computing twice. The lock is an optimisation, not what keeps results whole: ``flock`` does not reach other
hosts (Kubernetes pods on other nodes; NFS may or may not pass it on), and writers that overlap anyway still
end with one complete summary, because :class:`~boontrack.directory.DirectorySink` publishes each summary,
fingerprint included, in one swap and the last swap stays (and the MLflow sink keeps the newest complete
summary of a key).

Jobs run one after another, or ``workers`` at a time in worker processes, or as tasks of another
:class:`Engine` (Ray: :mod:`boontrack_ray.engine`). Whatever runs them, the driver admits at most
``per_server`` jobs of one tracking server at once (a job sends its requests one at a time, except the MLflow
history reads, four at a time), so the requests one server sees at once stay bounded by ``4 * per_server``
however many workers there are; no state is shared between workers, so a worker that dies holds nothing.
"""

from __future__ import annotations

import collections
import dataclasses
import functools
import heapq
import re
import signal
import sys
import tempfile
import threading
import time
import traceback
import warnings
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from boontrack import vocabulary
from boontrack._redact import redact
from boontrack._signals import STOPPING, signals_held
from boontrack._workers import ProcessEngine
from boontrack.backends import DEFAULT_PREFIX, available_backends, load_backend, open_source
from boontrack.exceptions import InputError, WriteBackWarning
from boontrack.pipeline import (
    SOURCE_OPTIONS,
    TRACKING_URI,
    change_token,
    open_sinks,
    resolve_direction,
    run_job,
    source_options,
    summary_key,
)
from boontrack.runframe import seconds_from_environment
from boontrack.spec import Spec

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = [
    "DEFAULT_PER_SERVER",
    "Engine",
    "Job",
    "PassInterrupted",
    "ProcessEngine",
    "discover_jobs",
    "load_config",
    "run_job_line",
    "run_jobs",
]

#: Keys of a job that make its spec: the options of Spec, and the config file's spellings of 0.2.0.
SPEC_KEYS = frozenset({f.name for f in dataclasses.fields(Spec) if f.name != "direction_from"}) | {
    "minimize",
    "confidence",
    "resamples",
}
_JOB_KEYS = frozenset(
    ("name", "source", "out", "write_back", "plots", "prefix", "options", "discover", *SOURCE_OPTIONS)
)
_LOCKED = "skipped: locked (another run in progress)"
#: Jobs of one tracking server running at once, by default.
DEFAULT_PER_SERVER = 4
#: Environment variable: seconds the jobs running in workers are given to finish after SIGINT or SIGTERM, before
#: they are stopped (a summary being published still finishes). Kubernetes waits 30 s before its SIGKILL.
STOP_GRACE_VARIABLE = "BOONTRACK_STOP_GRACE"
DEFAULT_STOP_GRACE_S = 10.0
#: Seconds between two looks at the signals while the driver waits for its workers.
_SIGNAL_POLL_S = 0.5


@dataclass(frozen=True)
class Job:
    """One validated ``[[jobs]]`` table."""

    name: str
    source: str
    spec: Spec
    out: Path | None = None
    write_back: bool = False
    plots: bool = True
    prefix: str = DEFAULT_PREFIX
    source_options: Mapping[str, Any] = field(default_factory=dict)
    #: A set of sweeps: the backend's discovery options (empty: its default set); None for one source.
    discover: Mapping[str, Any] | None = None
    #: A discovered sweep as a person knows it (experiment and run names, a sweep id), for the log line.
    label: str = ""
    #: A discovered sweep's change token as the discovery saw it (None: the source is asked).
    change_token: str | None = None


def load_config(path: str | Path) -> tuple[Job, ...]:
    """Read and check a config file; the first problem raises :class:`InputError` naming the job and key."""
    path = Path(path)
    document = read_config(path)
    unknown = sorted(set(document) - {"jobs"})
    if unknown:
        raise InputError(f"config {path}: unknown top-level key {unknown[0]!r} (expected [[jobs]] tables)")
    tables = document.get("jobs")
    if not isinstance(tables, list) or not tables or not all(isinstance(t, dict) for t in tables):
        raise InputError(f"config {path}: no [[jobs]] tables")
    jobs = tuple(_job(table, index, path.parent.absolute()) for index, table in enumerate(tables, start=1))
    _check_unique(jobs, lambda job: job.name, "name", path)
    _check_unique([job for job in jobs if job.out], lambda job: job.out, "out directory", path)
    return jobs


def read_config(path: Path) -> dict[str, Any]:
    """The TOML document of a config file; InputError saying why it cannot be read."""
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except OSError as exc:
        raise InputError(f"cannot read config {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise InputError(f"config {path} is not UTF-8 text (byte {exc.start}); a TOML file is expected") from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"config {path} is not valid TOML: {exc}") from None


def _job(table: dict[str, Any], index: int, base: Path) -> Job:
    name = table.get("name")
    if not isinstance(name, str) or not name:
        raise InputError(f"job #{index}: 'name' is required (a non-empty string)")

    def fail(message: str) -> InputError:
        return InputError(f"job {name!r}: {message}")

    unknown = sorted(set(table) - _JOB_KEYS - SPEC_KEYS)
    if unknown:
        raise fail(f"unknown key {unknown[0]!r} (known keys: {', '.join(sorted(_JOB_KEYS | SPEC_KEYS))})")
    for key in ("source", "val"):
        if key not in table:
            raise fail(f"{key!r} is required")
    for key in ("source", "out", "prefix", *SOURCE_OPTIONS):
        if key in table and (not isinstance(table[key], str) or not table[key]):
            raise fail(f"{key!r} must be a non-empty string, got {table[key]!r}")
    for key in ("write_back", "plots"):
        if not isinstance(table.get(key, False), bool):
            raise fail(f"{key!r} must be true or false, got {table[key]!r}")
    if "out" not in table and not table.get("write_back"):
        raise fail('no destination: give out = "DIR" and/or write_back = true')
    discover = _discover_options(table, fail)
    options = table.get("options", {})
    if not isinstance(options, dict):
        raise fail(f"'options' must be a table (options = {{KEY = VALUE}}), got a {type(options).__name__}")
    for key, value in options.items():  # values may be secrets: name the key and the type only
        if not isinstance(value, (str, int, float, bool)):
            raise fail(f"option {key!r} must be a string, number or boolean, got a {type(value).__name__}")

    try:
        given = spec_relative_to(base, {key: table[key] for key in SPEC_KEYS & set(table)})
        spec = Spec.from_keywords(given, spoken=vocabulary.CONFIG)
        named = options_relative_to(base, {key: table[key] for key in SOURCE_OPTIONS if key in table})
        chosen = source_options(**named, options=options_relative_to(base, options))
        if discover is not None:  # what can be seen of the sweeps to find without looking for them
            scheme, _, location = table["source"].partition(":")
            load_backend(scheme).check_discover(location, discover, **chosen)
        if not _may_know_directions(table["source"]):
            spec = spec.resolve_direction()  # a loss without a direction makes the file invalid, before any job
    except InputError as exc:
        raise fail(str(exc)) from None
    return Job(
        name=name,
        source=relative_to(base, table["source"]),
        spec=spec,
        out=base / table["out"] if "out" in table else None,
        write_back=table.get("write_back", False),
        plots=table.get("plots", True),
        prefix=table.get("prefix", DEFAULT_PREFIX),
        source_options=chosen,
        discover=discover,
    )


def _may_know_directions(source: str) -> bool:
    """Whether the backend of ``source`` may know a metric's direction (:attr:`Backend.knows_directions
    <boontrack.backends.Backend.knows_directions>`); a file never does."""
    scheme, sep, _ = source.partition(":")
    return bool(sep and scheme in available_backends() and load_backend(scheme).knows_directions)


def _discover_options(table: dict[str, Any], fail: Callable[[str], InputError]) -> dict[str, Any] | None:
    """The job's ``discover`` table (``true``: an empty one), checked against its backend; None without."""
    discover = table.get("discover", False)
    if discover is False:
        return None
    if discover is True:
        discover = {}
    if not isinstance(discover, dict):
        raise fail(f"'discover' must be true or a table (discover = {{KEY = VALUE}}), got {discover!r}")
    scheme, sep, _ = table["source"].partition(":")
    if not (sep and scheme in available_backends()):
        raise fail(f"'discover' needs a tracker source (SCHEME:LOCATION), got {table['source']!r}")
    known = load_backend(scheme).discover_options
    if known is None:
        raise fail(f"the {scheme!r} backend cannot discover sweeps; name one sweep per job")
    for key, value in discover.items():
        if key not in known:
            listed = ", ".join(sorted(known)) or "none"
            raise fail(f"unknown discover key {key!r} for {scheme!r} (known: {listed})")
        if not isinstance(value, (str, int, float, bool)):
            raise fail(f"discover key {key!r} must be a string, number or boolean, got a {type(value).__name__}")
    return dict(discover)


#: A SQLite URI with a relative path (``sqlite:///runs/mlflow.db``): four slashes make the path absolute, and
#: ``:memory:`` names no file.
_RELATIVE_SQLITE = re.compile(r"(sqlite(?:\+\w+)?:///)(?!/|:memory:)(.+)")


def relative_to(base: Path, source: str) -> str:
    """A source of a config file in the directory ``base`` as the file means it, whatever the working directory:
    a file, a SQLite URI's path and a tracker's location that is a local path (:attr:`Backend.local_location
    <boontrack.backends.Backend.local_location>`) resolved against ``base``; names (an experiment, a project) and
    other URLs as they are."""
    scheme, sep, location = source.partition(":")
    if not (sep and scheme in available_backends()):
        return str(base / source)
    location = _sqlite_relative_to(base, location)
    if location and "://" not in location and load_backend(scheme).local_location:
        location = str(base / location)
    return f"{scheme}:{location}"


def spec_relative_to(base: Path, keywords: Mapping[str, Any]) -> dict[str, Any]:
    """The spec options of a config file in ``base`` as the file means them: ``normalize_with``'s file resolved
    against ``base``."""
    path = keywords.get("normalize_with")
    if isinstance(path, str) and path:
        return {**keywords, "normalize_with": str(base / path)}
    return dict(keywords)


def options_relative_to(base: Path, options: Mapping[str, Any]) -> dict[str, Any]:
    """A source's or destination's options in a config file in ``base`` as the file means them: SQLite URIs' paths
    and a tracking URI that is a local directory (MLflow's file store) resolved against ``base``."""
    resolved = {
        key: _sqlite_relative_to(base, value) if isinstance(value, str) else value for key, value in options.items()
    }
    for key in ("tracking_uri", "tracking-uri"):
        uri = resolved.get(key)
        if isinstance(uri, str) and uri and not TRACKING_URI.fullmatch(uri):
            resolved[key] = str(base / uri)
    return resolved


def _sqlite_relative_to(base: Path, uri: str) -> str:
    relative = _RELATIVE_SQLITE.fullmatch(uri)
    return f"{relative[1]}{base / relative[2]}" if relative else uri


def _check_unique(jobs: Any, key: Callable[[Job], Any], what: str, path: Path) -> None:
    seen: dict[Any, str] = {}
    for job in jobs:
        if key(job) in seen:
            raise InputError(f"config {path}: jobs {seen[key(job)]!r} and {job.name!r} have the same {what}")
        seen[key(job)] = job.name


def discover_jobs(jobs: Sequence[Job], *, log: Callable[[str], None] = print) -> tuple[list[Job], int]:
    """The jobs to run: each ``discover`` job replaced by one job per sweep its backend finds now.

    A discovered job is the job written by hand for that sweep (its source string and options are those the
    backend gives back), named ``NAME/KEY``, writing to ``out/KEY``. Logs one line per discovering job; a
    discovery that fails is logged as that job's failure and counted (the second value), and the other jobs
    still run.
    """
    found: list[Job] = []
    failed = 0
    for job in jobs:
        if job.discover is None:
            found.append(job)
            continue
        scheme, _, location = job.source.partition(":")
        try:
            sweeps = load_backend(scheme).discover(location, job.discover, **job.source_options)
        except Exception as exc:
            failed += 1
            log(f"{job.name}: failed: discovering sweeps: {_one_line(exc)}")
            continue
        log(f"{job.name}: {len(sweeps)} sweep{'s' * (len(sweeps) != 1)} found")
        for sweep in sweeps:
            found.append(
                dataclasses.replace(
                    job,
                    name=f"{job.name}/{sweep.key}",
                    label=sweep.label,
                    source=f"{scheme}:{sweep.location}",
                    out=job.out / sweep.key if job.out is not None else None,
                    source_options={**job.source_options, **sweep.options},
                    discover=None,
                    change_token=sweep.change_token,
                )
            )
    return found, failed


class Engine(Protocol):
    """Runs jobs elsewhere (worker processes, a Ray cluster): :func:`run_job_line` on each, as told.

    ``submit`` starts one job and returns a handle; ``wait`` blocks until at least one of ``handles`` is done,
    or ``timeout`` seconds passed, and returns each finished one with what :func:`run_job_line` returned (an
    engine that lost a job for good returns ``("failed: REASON", None)`` for it); ``close`` ends the engine's
    workers, stopping the jobs still running within a bound.
    """

    slots: int

    def submit(self, job: Job, *, force: bool, lock_timeout: float) -> Any: ...

    def wait(
        self, handles: Sequence[Any], timeout: float | None = None
    ) -> list[tuple[Any, tuple[str, str | None]]]: ...

    def close(self) -> None: ...


class PassInterrupted(KeyboardInterrupt):
    """A pass ended early by SIGINT or SIGTERM: no job was started after the signal, the running ones were given
    :data:`STOP_GRACE_VARIABLE` seconds to finish, then stopped."""

    def __init__(self, signum: int, not_run: int) -> None:
        self.signum, self.not_run = signum, not_run
        super().__init__(f"interrupted by {signal.Signals(signum).name}: {not_run} job{'s' * (not_run != 1)} not run")


def run_jobs(
    jobs: Sequence[Job],
    *,
    force: bool = False,
    lock_timeout: float = 60.0,
    log: Callable[[str], None] = print,
    on_error: Callable[[str], None] | None = None,
    workers: int = 1,
    engine: Engine | None = None,
    per_server: int = DEFAULT_PER_SERVER,
) -> int:
    """Discover, then run every job, logging one line each; returns how many failed (a failure does not stop
    the others).

    With ``workers`` > 1 the jobs run in that many worker processes, with an ``engine`` as its tasks; lines are
    then logged as jobs finish. At most ``per_server`` jobs of one tracking server run at once. Before a job is
    handed to a worker, the driver compares its change token with the stored one (a discovered sweep's token
    comes with it): an unchanged job is logged without starting anything. ``on_error`` is given the traceback
    of each failed job (e.g. to print it).

    SIGINT and SIGTERM (in the main thread) end the pass: no job starts after them; a job run in this process
    stops at once (a summary being published finishes first), jobs in workers get
    :data:`STOP_GRACE_VARIABLE` seconds (a second signal: none) and are then stopped; then
    :class:`PassInterrupted` is raised.
    """
    if workers < 1 or per_server < 1:
        raise InputError(f"workers and per_server must be >= 1, got {workers} and {per_server}")
    grace = seconds_from_environment(STOP_GRACE_VARIABLE, DEFAULT_STOP_GRACE_S)

    def say(line: str) -> None:
        log(redact(line))

    from boontrack.directory import one_listing_per_folder

    runnable, failed = discover_jobs(jobs, log=say)
    if engine is None and workers > 1:
        engine = ProcessEngine(workers, run_job_line)
    runner = engine if engine is not None else _InDriver()
    queue = _Admission(runnable, per_server)
    # The sweeps of a discovering job are written side by side (out/KEY): one listing of out for the pass.
    with _stop_on_signals(abort_at_once=engine is None) as stop, one_listing_per_folder():
        try:
            failed += _report(_scheduled(queue, runner, force, lock_timeout, stop, grace), say, on_error)
        except PassInterrupted:
            if stop.signum is None:
                raise
        finally:
            with signals_held():  # the workers are stopped whatever arrives meanwhile
                runner.close()
    if stop.signum is not None:
        raise PassInterrupted(stop.signum, len(queue))
    return failed


def _report(
    results: Iterator[tuple[Job, tuple[str, str | None]]],
    log: Callable[[str], None],
    on_error: Callable[[str], None] | None,
) -> int:
    failed = 0
    for job, (outcome, trace) in results:
        if trace is not None and on_error is not None:
            on_error(redact(trace))
        failed += outcome.startswith("failed")
        name = f"{job.name} ({job.label})" if job.label else job.name
        log(f"{name}: {outcome}")
    return failed


def _scheduled(
    queue: _Admission, engine: Engine, force: bool, lock_timeout: float, stop: _Stop, grace: float
) -> Iterator[tuple[Job, tuple[str, str | None]]]:
    """Each job's result as it finishes, ``engine.slots`` jobs at a time, at most ``per_server`` of one tracking
    server (the others wait their turn in order). After a signal, no job is started, and the running ones are
    waited for until ``grace`` seconds have passed."""
    running: dict[Any, Job] = {}
    # A job run in this process reads its own token: asking in the driver first would cost its requests twice.
    checked = not isinstance(engine, _InDriver)
    while running or (queue and stop.signum is None):
        while stop.signum is None and len(running) < engine.slots and (job := queue.take()) is not None:
            outcome = _unchanged(job) if not force and (checked or job.change_token is not None) else None
            if outcome is not None:
                queue.release(job)
                yield job, (outcome, None)
                continue
            running[engine.submit(job, force=force, lock_timeout=lock_timeout)] = job
        if not running:
            continue
        if stop.signum is not None:
            left = stop.deadline(grace) - time.monotonic()
            if left <= 0:
                return
            finished = engine.wait(list(running), timeout=min(left, _SIGNAL_POLL_S))
        else:
            finished = engine.wait(list(running), timeout=_SIGNAL_POLL_S)
        for handle, result in finished:
            job = running.pop(handle)
            queue.release(job)
            yield job, result


class _Admission:
    """The jobs waiting to run, in order, and how many of each tracking server run: the next job that may
    start in O(log servers), so a pass costs O(jobs x log) however many wait behind one server."""

    def __init__(self, jobs: Sequence[Job], per_server: int) -> None:
        self._per_server = per_server
        self._waiting: dict[str | None, collections.deque[tuple[int, Job]]] = {}
        for index, job in enumerate(jobs):
            self._waiting.setdefault(_server(job), collections.deque()).append((index, job))
        self._running: Counter[str | None] = Counter()
        # (index of its first waiting job, server) for each server that may start one now
        self._ready = [(queue[0][0], server) for server, queue in self._waiting.items()]
        heapq.heapify(self._ready)
        self._queued = set(self._waiting)
        self._count = len(jobs)

    def __len__(self) -> int:
        return self._count

    def take(self) -> Job | None:
        """The first waiting job whose server has room, now counted as running; None when there is none."""
        if not self._ready:
            return None
        _, server = heapq.heappop(self._ready)
        self._queued.discard(server)
        _, job = self._waiting[server].popleft()
        self._count -= 1
        self._running[server] += 1
        self._offer(server)
        return job

    def release(self, job: Job) -> None:
        """A job that ended: its server has room again."""
        server = _server(job)
        self._running[server] -= 1
        self._offer(server)

    def _offer(self, server: str | None) -> None:
        has_room = server is None or self._running[server] < self._per_server
        if has_room and server not in self._queued and self._waiting[server]:
            heapq.heappush(self._ready, (self._waiting[server][0][0], server))
            self._queued.add(server)


def _server(job: Job) -> str | None:
    """The tracking server a job talks to (its scheme and tracking URI option), None for files."""
    scheme, sep, _ = job.source.partition(":")
    if not sep or scheme not in _backend_names():
        return None
    return f"{scheme}:{job.source_options.get('tracking_uri', '')}"


@functools.lru_cache(maxsize=1)
def _backend_names() -> frozenset[str]:
    """The registered schemes, looked up once per process (an entry-point scan costs milliseconds)."""
    return frozenset(available_backends())


def _unchanged(job: Job) -> str | None:
    """``"unchanged"`` when the job's destination holds a complete summary stored with the job's current change
    token, else None (then the job runs, and decides for itself). Asked in the driver, without the job's lock:
    it only reads. A discovered sweep's token is the one found with it; a failure to tell is no failure here."""
    try:
        source = open_source(job.source, **job.source_options)
        spec = resolve_direction(source, job.spec)
        sinks = open_sinks(source, spec, out=job.out, write_back=job.write_back)
        token = change_token(source, spec, prefix=job.prefix, source_token=job.change_token) if sinks else None
        stored = {sink.read_change_token() for sink in sinks} if token is not None else set()
    except Exception:  # noqa: BLE001 - the job itself reports what is wrong
        return None
    (kept,) = stored if len(stored) == 1 else (None,)  # every destination holds the same summary and token
    return "unchanged" if kept is not None and kept[0] == token else None


class _Stop:
    """What a signal asked of the pass: its number (None: no signal), and when it came."""

    def __init__(self) -> None:
        self.signum: int | None = None
        self.at: float | None = None

    def deadline(self, grace: float) -> float:
        return (self.at or time.monotonic()) + grace


@contextmanager
def _stop_on_signals(*, abort_at_once: bool) -> Iterator[_Stop]:
    """SIGINT and SIGTERM recorded in the :class:`_Stop` yielded, for the duration of the block (main thread
    only). ``abort_at_once`` (the jobs run in this process) or a second signal: :class:`PassInterrupted` is also
    raised where the main thread is."""
    stop = _Stop()
    if threading.current_thread() is not threading.main_thread():
        yield stop
        return

    def handler(signum: int, _frame: Any) -> None:
        again = stop.signum is not None
        if not again:
            stop.signum, stop.at = signum, time.monotonic()
        if abort_at_once or again:
            raise PassInterrupted(signum, 0)

    previous = {signum: signal.signal(signum, handler) for signum in STOPPING}
    try:
        yield stop
    finally:
        for signum, handler_before in previous.items():
            signal.signal(signum, signal.SIG_DFL if handler_before is None else handler_before)


class _InDriver:
    """The jobs run one at a time, here, in the driver's process (a handle is the job and its options)."""

    slots = 1

    def submit(self, job: Job, *, force: bool, lock_timeout: float) -> functools.partial:
        return functools.partial(run_job_line, job, force=force, lock_timeout=lock_timeout)

    def wait(self, handles: Sequence[Any], timeout: float | None = None) -> list[tuple[Any, tuple[str, str | None]]]:
        return [(handles[0], handles[0]())]

    def close(self) -> None:
        pass


def run_job_line(
    job: Job, *, force: bool = False, lock_timeout: float = 60.0, threads: int | None = None
) -> tuple[str, str | None]:
    """Run one (discovered or written) job: its log line's outcome, and the traceback when it failed.

    What every engine runs, in the driver or in a worker: never raises for a failing job. ``threads`` is the
    job's share of the CPUs (None: all of them, for jobs run one at a time).
    """
    try:
        with vocabulary.speaking(vocabulary.CONFIG):  # messages name the job's keys as the config file writes them
            return _run_locked(job, force=force, lock_timeout=lock_timeout, threads=threads), None
    except Exception as exc:
        return f"failed: {_one_line(exc)}", traceback.format_exc()


def _one_line(exc: BaseException) -> str:
    return redact(" ".join(str(exc).split())) or type(exc).__name__


def _run_locked(job: Job, *, force: bool, lock_timeout: float, threads: int | None) -> str:
    source = open_source(job.source, **job.source_options)
    with _lock(_lock_path(job, source.identity()), timeout=lock_timeout) as acquired:
        if not acquired:
            return _LOCKED
        spec = resolve_direction(source, job.spec)
        sinks = open_sinks(source, spec, out=job.out, write_back=job.write_back)
        with warnings.catch_warnings():  # a failed write is the job's log line, not a second message
            warnings.simplefilter("ignore", WriteBackWarning)
            result = run_job(source, spec, sink=sinks, prefix=job.prefix, force=force, plots=job.plots, threads=threads)
    if result.error:
        return f"failed: {result.error}"
    return result.status if result.status == "unchanged" else f"{result.status} ({result.location})"


def _lock_path(job: Job, source_identity: str) -> Path:
    """The lock file of a job's destination: beside its ``out`` directory, else per (source, spec)."""
    if job.out is not None:
        return job.out.parent / f".{job.out.name}.lock"
    return Path(tempfile.gettempdir()) / "boontrack-locks" / f"{summary_key(source_identity, job.spec)}.lock"


@contextmanager
def _lock(path: Path, *, timeout: float) -> Iterator[bool]:
    """An exclusive ``flock`` on ``path``, waiting up to ``timeout`` seconds; yields whether it was acquired.

    The lock file is never deleted (deleting it would let two processes lock different files).
    """
    import fcntl

    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    yield False
                    return
                time.sleep(0.1)
        try:
            yield True
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
