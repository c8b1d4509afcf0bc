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
``n_resamples``, ``ci_method``, ``seed``, ``pick``), ``prefix``, and the source options (``parent``,
``tracking_uri``, ``sweep``, ``group``, ``study``, and ``options = {KEY = VALUE}`` for other backends); the
command line's names of 0.2.0 (``minimize``, ``confidence``, ``resamples``) are accepted for one release with
a DeprecationWarning. Relative file paths (in ``source`` and ``out``) are relative to the config file's
directory. ``pick`` is spelled ``"best-val-step"`` or ``"best_val_step"``. Without ``n``, each group reports the
default budgets 1, 5 and 10 it has enough runs for (the others are named in its warnings); with ``n``, a group
too small for it fails the job. A job whose source never knows a metric's direction (a file, MLflow) and
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

import dataclasses
import functools
import sys
import tempfile
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
from boontrack.backends import DEFAULT_PREFIX, available_backends, load_backend, open_source
from boontrack.exceptions import InputError, WriteBackWarning
from boontrack.pipeline import SOURCE_OPTIONS, open_sinks, resolve_direction, run_job, source_options, summary_key
from boontrack.spec import Spec

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = [
    "DEFAULT_PER_SERVER",
    "Engine",
    "Job",
    "ProcessEngine",
    "discover_jobs",
    "load_config",
    "run_job_line",
    "run_jobs",
]

#: Keys of a job that make its spec: the options of Spec, and the config file's spellings of 0.2.0.
_SPEC_KEYS = frozenset({f.name for f in dataclasses.fields(Spec) if f.name != "direction_from"}) | {
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


def load_config(path: str | Path) -> tuple[Job, ...]:
    """Read and check a config file; the first problem raises :class:`InputError` naming the job and key."""
    path = Path(path)
    try:
        with path.open("rb") as handle:
            document = tomllib.load(handle)
    except OSError as exc:
        raise InputError(f"cannot read config {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise InputError(f"config {path} is not UTF-8 text (byte {exc.start}); a TOML file is expected") from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"config {path} is not valid TOML: {exc}") from None
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


def _job(table: dict[str, Any], index: int, base: Path) -> Job:
    name = table.get("name")
    if not isinstance(name, str) or not name:
        raise InputError(f"job #{index}: 'name' is required (a non-empty string)")

    def fail(message: str) -> InputError:
        return InputError(f"job {name!r}: {message}")

    unknown = sorted(set(table) - _JOB_KEYS - _SPEC_KEYS)
    if unknown:
        raise fail(f"unknown key {unknown[0]!r} (known keys: {', '.join(sorted(_JOB_KEYS | _SPEC_KEYS))})")
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
        spec = Spec.from_keywords({key: table[key] for key in _SPEC_KEYS & set(table)}, spoken=vocabulary.CONFIG)
        chosen = source_options(**{key: table[key] for key in SOURCE_OPTIONS if key in table}, options=options)
        if not _may_know_directions(table["source"]):
            spec = spec.resolve_direction()  # a loss without a direction makes the file invalid, before any job
    except InputError as exc:
        raise fail(str(exc)) from None
    return Job(
        name=name,
        source=_relative_to(base, table["source"]),
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


def _relative_to(base: Path, source: str) -> str:
    """A file source resolved against ``base``; tracker sources (``scheme:...``) as they are."""
    scheme, sep, _ = source.partition(":")
    if sep and scheme in available_backends():
        return source
    return str(base / source)


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
                )
            )
    return found, failed


class Engine(Protocol):
    """Runs jobs elsewhere (worker processes, a Ray cluster): :func:`run_job_line` on each, as told.

    ``submit`` starts one job and returns a handle; ``wait`` blocks until at least one of ``handles`` is done
    and returns each finished one with what :func:`run_job_line` returned (an engine that lost a job for
    good returns ``("failed: REASON", None)`` for it); ``close`` ends the engine's workers.
    """

    slots: int

    def submit(self, job: Job, *, force: bool, lock_timeout: float) -> Any: ...

    def wait(self, handles: Sequence[Any]) -> list[tuple[Any, tuple[str, str | None]]]: ...

    def close(self) -> None: ...


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
    then logged as jobs finish. At most ``per_server`` jobs of one tracking server run at once. ``on_error``
    is given the traceback of each failed job (e.g. to print it).
    """
    if workers < 1 or per_server < 1:
        raise InputError(f"workers and per_server must be >= 1, got {workers} and {per_server}")
    runnable, failed = discover_jobs(jobs, log=log)
    if engine is None and workers > 1:
        engine = ProcessEngine(workers)
    if engine is None:
        results: Iterator[tuple[Job, tuple[str, str | None]]] = (
            (job, run_job_line(job, force=force, lock_timeout=lock_timeout)) for job in runnable
        )
        return failed + _report(results, log, on_error)
    try:
        return failed + _report(_scheduled(runnable, engine, per_server, force, lock_timeout), log, on_error)
    finally:
        engine.close()


def _report(
    results: Iterator[tuple[Job, tuple[str, str | None]]],
    log: Callable[[str], None],
    on_error: Callable[[str], None] | None,
) -> int:
    failed = 0
    for job, (outcome, trace) in results:
        if trace is not None and on_error is not None:
            on_error(trace)
        failed += outcome.startswith("failed")
        name = f"{job.name} ({job.label})" if job.label else job.name
        log(f"{name}: {outcome}")
    return failed


def _scheduled(
    jobs: Sequence[Job], engine: Engine, per_server: int, force: bool, lock_timeout: float
) -> Iterator[tuple[Job, tuple[str, str | None]]]:
    """Each job's result as it finishes, ``engine.slots`` jobs at a time, at most ``per_server`` of one
    tracking server (the others wait their turn in order)."""
    waiting = list(jobs)
    running: dict[Any, Job] = {}
    busy: Counter[str | None] = Counter()
    while waiting or running:
        for job in list(waiting):
            if len(running) >= engine.slots:
                break
            server = _server(job)
            if server is not None and busy[server] >= per_server:
                continue
            waiting.remove(job)
            running[engine.submit(job, force=force, lock_timeout=lock_timeout)] = job
            busy[server] += 1
        for handle, result in engine.wait(list(running)):
            job = running.pop(handle)
            busy[_server(job)] -= 1
            yield job, result


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


class ProcessEngine:
    """``slots`` worker processes on this machine (started fresh: no tracker client is shared with them)."""

    def __init__(self, slots: int) -> None:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        from boontrack._bootstrap import available_cpus

        self.slots = slots
        self._threads = max(1, available_cpus() // slots)  # each worker's share: no more threads than CPUs
        self._new_pool = lambda: ProcessPoolExecutor(max_workers=slots, mp_context=multiprocessing.get_context("spawn"))
        self._pool = self._new_pool()

    def submit(self, job: Job, *, force: bool, lock_timeout: float) -> Any:
        from concurrent.futures.process import BrokenProcessPool

        options: dict[str, Any] = {"force": force, "lock_timeout": lock_timeout, "threads": self._threads}
        try:
            return self._pool.submit(run_job_line, job, **options)
        except BrokenProcessPool:  # a worker died: the jobs it took failed; the others get a new pool
            self._pool.shutdown(wait=False)
            self._pool = self._new_pool()
            return self._pool.submit(run_job_line, job, **options)

    def wait(self, handles: Sequence[Any]) -> list[tuple[Any, tuple[str, str | None]]]:
        from concurrent.futures import FIRST_COMPLETED, wait

        done, _ = wait(handles, return_when=FIRST_COMPLETED)
        finished = []
        for future in done:
            try:
                finished.append((future, future.result()))
            except Exception as exc:  # the worker process died (killed, out of memory): the job did not finish
                finished.append((future, (f"failed: worker lost ({_one_line(exc)})", None)))
        return finished

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


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
