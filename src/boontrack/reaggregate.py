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

The other keys are the ``boontrack summarize`` options with underscores (``estimator``, ``minimize``,
``group_by``, ``seed_column``, ``duration``, ``baseline``, ``compare``, ``correction``, ``confidence``,
``resamples``, ``ci_method``, ``seed``, ``pick``, ``prefix``) and the source options (``parent``,
``tracking_uri``, ``sweep``, ``group``, ``study``, and ``options = {KEY = VALUE}`` for other backends). Relative file
paths (in ``source`` and ``out``) are relative to the config file's directory. ``pick`` is spelled
``"best-val-step"`` or ``"best_val_step"``. Without ``n``, each group reports the default budgets 1, 5 and 10
it has enough runs for (the others are named in its warnings); with ``n``, a group too small for it fails the
job.

The whole file is checked before any job runs. Each job then runs through :func:`boontrack.pipeline.run_job`
under a lock on its destination, so two copies started at once on one host wait for each other instead of
computing twice. The lock is an optimisation, not what keeps results whole: ``flock`` does not reach other
hosts (Kubernetes pods on other nodes; NFS may or may not pass it on), and writers that overlap anyway still
end with one complete summary, because :class:`~boontrack.files.DirectorySink` publishes each summary,
fingerprint included, in one swap and the last swap stays.
"""

from __future__ import annotations

import inspect
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from boontrack._redact import redact
from boontrack.backends import DEFAULT_PREFIX, available_backends, open_source
from boontrack.exceptions import InputError, WriteBackWarning
from boontrack.pipeline import SOURCE_OPTIONS, open_sink, run_job, source_options, summary_key
from boontrack.spec import make_spec

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

if TYPE_CHECKING:
    from boontrack.spec import Spec

__all__ = ["Job", "load_config", "run_jobs"]

#: Keys of a job that make its spec: the keywords of make_spec, i.e. the ``boontrack summarize`` options.
_SPEC_KEYS = frozenset(inspect.signature(make_spec).parameters)
_JOB_KEYS = frozenset(("name", "source", "out", "write_back", "plots", "prefix", "options", *SOURCE_OPTIONS))
_LOCKED = "skipped: locked (another run in progress)"


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
    options = table.get("options", {})
    if not isinstance(options, dict):
        raise fail(f"'options' must be a table (options = {{KEY = VALUE}}), got a {type(options).__name__}")
    for key, value in options.items():  # values may be secrets: name the key and the type only
        if not isinstance(value, (str, int, float, bool)):
            raise fail(f"option {key!r} must be a string, number or boolean, got a {type(value).__name__}")

    spec_fields = {key: table[key] for key in _SPEC_KEYS & set(table)}
    if isinstance(spec_fields.get("n"), int):
        spec_fields["n"] = [spec_fields["n"]]
    try:
        spec = make_spec(**spec_fields)
        chosen = source_options(**{key: table[key] for key in SOURCE_OPTIONS if key in table}, options=options)
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
    )


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


def run_jobs(
    jobs: tuple[Job, ...],
    *,
    force: bool = False,
    lock_timeout: float = 60.0,
    log: Callable[[str], None] = print,
    on_error: Callable[[], None] | None = None,
) -> int:
    """Run every job, logging one line each; returns how many failed (a failure does not stop the others).

    ``on_error`` is called inside the ``except`` block of a failed job (e.g. to print its traceback).
    """
    failed = 0
    for job in jobs:
        try:
            outcome = _run_locked(job, force=force, lock_timeout=lock_timeout)
        except Exception as exc:
            if on_error is not None:
                on_error()
            outcome = f"failed: {redact(' '.join(str(exc).split())) or type(exc).__name__}"
        failed += outcome.startswith("failed")
        log(f"{job.name}: {outcome}")
    return failed


def _run_locked(job: Job, *, force: bool, lock_timeout: float) -> str:
    source = open_source(job.source, **job.source_options)
    with _lock(_lock_path(job, source.identity()), timeout=lock_timeout) as acquired:
        if not acquired:
            return _LOCKED
        sink = open_sink(source, job.spec, out=job.out, write_back=job.write_back)
        with warnings.catch_warnings():  # a failed write is the job's log line, not a second message
            warnings.simplefilter("ignore", WriteBackWarning)
            result = run_job(source, job.spec, sink=sink, prefix=job.prefix, force=force, plots=job.plots)
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
