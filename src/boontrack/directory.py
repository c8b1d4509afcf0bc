"""Summaries written to a directory (``--out DIR``), crash-safe: :class:`DirectorySink`, for runs of any source."""

from __future__ import annotations

import ctypes
import errno
import hashlib
import json
import math
import os
import re
import socket
import stat
import time
import uuid
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from boontrack._redact import describe_error
from boontrack._signals import libc, signals_held
from boontrack.backends import Sink, SummaryOutputs
from boontrack.exceptions import InputError, WriteBackWarning
from boontrack.runframe import artifact_path

__all__ = ["DirectorySink", "one_listing_per_folder"]


class DirectorySink(Sink):
    """A directory holding one summary: its artifacts, ``metrics.json``, ``curves.json`` and ``description.md``.

    The destination is at every moment the previous complete summary or the new one, each with its own
    fingerprint (``.boontrack-fingerprint``), whatever happens to the process. ``write`` builds the new content
    in a hidden sibling directory (``.<name>.staging-<pid>-<host>-<random>``); ``write_fingerprint`` adds the
    fingerprint there and swaps the two directories in one atomic exchange (``renameat2``, Linux). Where
    there is no such exchange (other systems; file systems such as NFS), the old directory is renamed aside
    (``.<name>.previous-...``) and the new one renamed into place, with SIGINT and SIGTERM held until both are
    done; a crash between these two renames (``kill -9``, a power cut) leaves no destination until the next
    :class:`DirectorySink` on that path (any later run) renames the previous one back.

    A change token (:meth:`write_change_token`) is a file of the summary (``.boontrack-change-token``, holding
    the token and the fingerprint it was stored for), published with it by the same swap; a token refreshed
    beside an unchanged summary replaces that one file (written beside the directory, then renamed in). It is
    trusted only while its fingerprint is the directory's own.

    Every sink on a path first cleans up what crashed writers left beside it: a leftover whose writer is gone
    (same host: its process has exited; another host: untouched for :attr:`FOREIGN_GRACE_S` seconds) is
    restored when the destination is missing, else deleted. The leftovers are found by their names in one
    listing of the parent directory, and only names of this destination's leftovers are looked at further;
    inside :func:`one_listing_per_folder` (a ``reaggregate`` pass) the sinks of one parent share that listing.
    Concurrent writers need no lock: each publishes a complete directory, and the last one to publish stays.

    The destination must be new, empty, or a directory this sink wrote (its files are listed in
    ``.boontrack-manifest.json``): a directory with other files is refused, and only files listed in a
    manifest are ever deleted.

    ``metrics.json`` maps metric names to values (null for non-finite ones); ``curves.json`` is a list of
    ``{"key", "n", "values"}`` objects, one per curve.
    """

    FINGERPRINT_FILE = ".boontrack-fingerprint"
    MANIFEST_FILE = ".boontrack-manifest.json"
    CHANGE_TOKEN_FILE = ".boontrack-change-token"
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

    def read_change_token(self) -> tuple[str, str] | None:
        """``(token, fingerprint)`` when the token file was stored for the fingerprint this directory holds.

        The token file is read before the fingerprint: a summary swapped in between shows another fingerprint
        (or the same inputs), never a token taken for a summary it was not stored with.
        """
        try:
            stored = json.loads((self.path / self.CHANGE_TOKEN_FILE).read_text(encoding="utf-8"))
        except (FileNotFoundError, NotADirectoryError, ValueError):
            return None
        if not isinstance(stored, dict) or not isinstance(stored.get("token"), str):
            return None
        fingerprint = self.read_fingerprint()
        return (stored["token"], fingerprint) if fingerprint and stored.get("fingerprint") == fingerprint else None

    def write_change_token(self, token: str, fingerprint: str) -> None:
        """Into the summary being written (published by :meth:`write_fingerprint`), else beside the published
        one when it holds ``fingerprint``."""
        data = _json_bytes({"token": token, "fingerprint": fingerprint})
        if self._staged is not None:
            _write_durably(self._staged / self.CHANGE_TOKEN_FILE, data)
            return
        if self.read_fingerprint() != fingerprint:
            return
        pending = self._sibling("token")
        try:
            _write_durably(pending, data)
            os.replace(pending, self.path / self.CHANGE_TOKEN_FILE)
        finally:
            pending.unlink(missing_ok=True)
        _fsync_directory(self.path)

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
            moved: Path | None = previous
            with signals_held():  # no destination between the two renames: a signal waits for the second
                try:
                    os.rename(self.path, previous)
                except FileNotFoundError:
                    moved = None
                self._rename_into_place(staging, moved)
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
        """Staging and previous directories, and pending token files, beside the destination whose writer is
        gone, with their kind."""
        found = []
        for leftover in sorted(self._leftover_names(), key=lambda match: match[0]):
            candidate = self.path.parent / leftover[0]  # only this destination's leftovers cost a stat
            expected = candidate.is_file() if leftover["kind"] == "token" else candidate.is_dir()
            if expected and not _writer_alive(leftover["pid"], leftover["host"], candidate, self.FOREIGN_GRACE_S):
                found.append((candidate, leftover["kind"]))
        return found

    def _leftover_names(self) -> list[re.Match[str]]:
        """The names beside the destination shaped like its leftovers (:data:`_LEFTOVER_NAME`).

        Inside :func:`one_listing_per_folder` the first sink of a parent lists it for all, and each sink takes
        its own names out: a second sink on the same path in that pass finds none.
        """
        shared = _SHARED_LISTINGS.get()
        if shared is None:
            return _leftover_names_by_destination(self.path.parent).get(self.path.name, [])
        if self.path.parent not in shared:
            shared[self.path.parent] = _leftover_names_by_destination(self.path.parent)
        return shared[self.path.parent].pop(self.path.name, [])

    def _recover(self) -> None:
        """Finish what a crashed writer left: restore the previous summary if the destination is missing, then
        delete the leftovers (only files their manifests list)."""
        for directory, kind in self._leftovers():
            if kind == "token":
                directory.unlink(missing_ok=True)
                continue
            if kind == "previous" and not self.path.exists():
                try:
                    os.rename(directory, self.path)
                    continue
                except OSError:  # another process restored or published meanwhile
                    pass
            try:
                self._remove_written(directory)
            except OSError as exc:  # cleaning up is no reason to fail this run; a later one tries again
                warnings.warn(
                    f"could not delete leftover {directory}: {describe_error(exc)}", WriteBackWarning, stacklevel=3
                )

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
        reserved = {*own, self.FINGERPRINT_FILE, self.MANIFEST_FILE, self.CHANGE_TOKEN_FILE}
        for relative in outputs.artifacts:
            artifact_path(relative, reserved=reserved)
        return {**own, **{relative: bytes(data) for relative, data in outputs.artifacts.items()}}

    def _check_owned(self) -> None:
        """InputError unless the destination is absent, empty, or holds only files this sink wrote."""
        for attempt in range(_OWNERSHIP_LOOKS):
            seen = self._look()
            if seen is not None:
                break
            # Another writer swapped the directory while we looked (without an atomic exchange the destination
            # is briefly missing): look again once it has settled.
            time.sleep(0.01 * attempt)
        else:
            return
        if seen:
            listed = ", ".join(seen[:5]) + (f", ... ({len(seen) - 5} more)" if len(seen) > 5 else "")
            raise InputError(
                f"{self.path} holds files boontrack did not write ({listed}); choose a new or empty directory"
            )

    def _look(self) -> list[str] | None:
        """The files of the destination no manifest lists ([] when it is absent), or None when the destination
        changed during the look.

        A look counts only when the same unchanged directory (device, inode and change time) stood at the path
        before and after it: a path missing for an instant between another writer's two renames, or a directory
        swapped in while its files were listed, would otherwise pass for a directory of foreign files.
        """
        try:
            before = self.path.stat()
        except FileNotFoundError:
            return []
        if not stat.S_ISDIR(before.st_mode):
            raise InputError(f"{self.path} exists and is not a directory")
        try:
            manifest = self._manifest(self.path)
            ours = self._owned_files(self.path) if manifest else set()
            foreign = sorted(
                str(p.relative_to(self.path)) for p in self.path.rglob("*") if p.is_file() and p not in ours
            )
            unchanged = self._manifest(self.path) == manifest and _identity(self.path.stat()) == _identity(before)
        except FileNotFoundError:
            return None
        return foreign if unchanged else None

    def _owned_files(self, directory: Path) -> set[Path]:
        listed = self._manifest(directory).get("files", [])
        return {
            directory / name for name in [*listed, self.FINGERPRINT_FILE, self.MANIFEST_FILE, self.CHANGE_TOKEN_FILE]
        }

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
#: How many times a destination is looked at before its ownership is given up on as unknowable (other writers
#: swapping it all the while): each look that sees it change is followed by another.
_OWNERSHIP_LOOKS = 10
#: errno values of a file system or kernel that cannot exchange two directories atomically.
_NO_EXCHANGE = {errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EXDEV}
#: The name of a leftover beside a destination (see ``DirectorySink._sibling``): ``.<destination>.<kind>-`` then
#: the writer's pid and host id (absent in names of older versions) and a random part. Neither the kind nor
#: what follows it holds a dot, so the destination is everything between the first and the last dot.
_LEFTOVER_NAME = re.compile(
    r"\.(?P<destination>.*)\.(?P<kind>staging|previous|token)-(?:(?P<pid>\d+)-(?P<host>[0-9a-f]{8})-)?[0-9a-f]{12,32}",
    re.DOTALL,
)
#: Inside :func:`one_listing_per_folder`: each parent directory's leftover names listed so far, by destination.
_SHARED_LISTINGS: ContextVar[dict[Path, dict[str, list[re.Match[str]]]] | None] = ContextVar(
    "boontrack_shared_listings", default=None
)


@contextmanager
def one_listing_per_folder() -> Iterator[None]:
    """Inside the block, the :class:`DirectorySink` objects of one parent directory share one listing of it.

    A pass over N summaries written side by side (``out = DIR`` of a discovering job: ``DIR/<sweep>``) then
    lists ``DIR`` once, not once per sweep: its cost grows as N, not N². A leftover that a writer leaves after
    the listing is cleaned up by the next pass, as one left after the pass would be.
    """
    reset = _SHARED_LISTINGS.set({})
    try:
        yield
    finally:
        _SHARED_LISTINGS.reset(reset)


def _leftover_names_by_destination(folder: Path) -> dict[str, list[re.Match[str]]]:
    """The names in ``folder`` shaped like leftovers (:data:`_LEFTOVER_NAME`), by destination: one listing and
    no ``stat``, however many entries it has."""
    try:
        names = os.listdir(folder)
    except OSError:  # no parent yet, or not readable: nothing a sink can recover
        return {}
    found: dict[str, list[re.Match[str]]] = {}
    for name in names:
        if match := _LEFTOVER_NAME.fullmatch(name):
            found.setdefault(match["destination"], []).append(match)
    return found


def _identity(status: os.stat_result) -> tuple[int, int, int]:
    """What changes when another directory takes the path, or this one's entries change (a reused inode number
    comes with a new change time)."""
    return status.st_dev, status.st_ino, status.st_ctime_ns


def _exchange(first: Path, second: Path) -> None:
    """Swap two directories in one atomic step (Linux ``renameat2(RENAME_EXCHANGE)``); OSError(EINVAL) where
    the kernel or file system cannot."""
    renameat2 = getattr(libc(), "renameat2", None)
    if renameat2 is None:
        raise OSError(errno.ENOSYS, "renameat2 is not available")
    at_fdcwd, rename_exchange = -100, 2
    if renameat2(at_fdcwd, os.fsencode(first), at_fdcwd, os.fsencode(second), rename_exchange) != 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code), str(second))


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
