"""The file backend: run tables read from files (CSV, TSV, JSON lines, Parquet), read as they are.

:class:`FileBackend` is what a source string without a registered scheme opens (``runs.csv``, ``./sweep.tsv``)
and what ``file:PATH`` opens explicitly. Columns keep the user's names; :class:`boontrack.runtable.RunTable`
maps them (``--val``, ``--group-by``, ...). Input files are only read. Summaries are written to a directory by
:class:`boontrack.directory.DirectorySink`.

A file holds one row per run, or, with a ``step`` column (and ``run_id``), one row per run and step, as a
tracker's history is exported: each run's values are then its last logged ones (an empty cell is a value not
logged at that step), and ``pick="best_val_step"`` picks them at its best validation step. A file of one row per
run has no steps to pick from, and refuses that pick.
"""

from __future__ import annotations

import difflib
import hashlib
import re
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from boontrack._optional import import_optional
from boontrack.backends import Backend, MetricRequest, Source
from boontrack.exceptions import InputError
from boontrack.runframe import POINT_COLUMNS, check_options, in_run_and_step_order, pick_values

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["FileBackend", "FileSource"]

#: The column that makes a file one row per run and step.
STEP_COLUMN = "step"
#: Suffixes pandas decompresses by itself; the format is the suffix before them.
_COMPRESSION_SUFFIXES = {".gz", ".bz2", ".zip", ".xz", ".zst"}


def _read_csv(path: Path) -> pd.DataFrame:
    return _read_delimited(path, sep=",")


def _read_tsv(path: Path) -> pd.DataFrame:
    return _read_delimited(path, sep="\t")


def _read_delimited(path: Path, *, sep: str) -> pd.DataFrame:
    import pandas as pd

    # pandas renames a repeated header ("acc", "acc.1"): look at the header as written first.
    header = pd.read_csv(path, sep=sep, header=None, nrows=1, dtype=str, keep_default_na=False)
    if len(header):
        _refuse_repeated_columns(header.iloc[0].tolist(), path)
    return pd.read_csv(path, sep=sep)


def _refuse_repeated_columns(names: list[Any], path: Path) -> None:
    """InputError naming the first column name that ``names`` holds more than once."""
    counts = Counter(map(str, names))
    repeated = next((name for name, count in counts.items() if count > 1), None)
    if repeated is not None:
        raise InputError(
            f"cannot read {path}: column {repeated!r} appears {counts[repeated]} times; give each column its own name"
        )


def _read_json_lines(path: Path) -> pd.DataFrame:
    import pandas as pd

    # precise_float: pandas' fast parser otherwise reads 0.6 as 0.6000000000000001
    return pd.read_json(path, lines=True, precise_float=True)


def _read_json(path: Path) -> pd.DataFrame:
    """A JSON array of run objects, else JSON lines (both are common under ``.json``)."""
    import pandas as pd

    try:
        return pd.read_json(path, orient="records", precise_float=True)
    except ValueError:  # "Trailing data": one object per line
        return _read_json_lines(path)


def _read_parquet(path: Path) -> pd.DataFrame:
    import pandas as pd

    import_optional("pyarrow", extra="parquet", needed_for=f"reading {path}")
    import pyarrow.parquet

    _refuse_repeated_columns(pyarrow.parquet.read_schema(path).names, path)
    return pd.read_parquet(path)


#: suffix -> (format name for messages, reader)
_READERS: dict[str, tuple[str, Callable[[Path], Any]]] = {
    ".csv": ("CSV", _read_csv),
    ".tsv": ("TSV", _read_tsv),
    ".tab": ("TSV", _read_tsv),
    ".jsonl": ("JSON lines", _read_json_lines),
    ".json": ("JSON", _read_json),
    ".ndjson": ("JSON lines", _read_json_lines),
    ".parquet": ("Parquet", _read_parquet),
    ".pq": ("Parquet", _read_parquet),
}


def _format_suffix(path: Path) -> str:
    """The suffix that names the format, looking through a compression suffix (``runs.csv.gz`` -> ``.csv``)."""
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] in _COMPRESSION_SUFFIXES:
        suffixes.pop()
    return suffixes[-1] if suffixes else ""


#: What starts a source string ``SCHEME:LOCATION``: a letter, then letters, digits, ``+ - .``; two characters at
#: least, so that a Windows drive (``C:``) stays part of a path.
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]+")


def _unknown_kind(source: str, suffix: str) -> str:
    """Why ``source`` is neither a tracker nor a file boontrack reads: a scheme no installed backend has
    (``mlfow:exp``), named with the installed schemes and the closest one, or a file type it does not know."""
    types = ", ".join(sorted(_READERS))
    scheme, colon, _ = source.partition(":")
    if not (colon and _SCHEME.fullmatch(scheme)):
        return f"unknown file type {suffix or '(no extension)'!r} (expected one of {types})"
    from boontrack.backends import available_backends

    schemes = sorted(name for name in available_backends() if name != FileBackend.name)
    closest = difflib.get_close_matches(scheme, schemes, n=1)
    guess = f", did you mean '{closest[0]}:'?" if closest else ""
    listed = ", ".join(f"{name}:" for name in schemes)
    return f"unknown scheme '{scheme}:'{guess} (schemes: {listed}; file types: {types})"


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


class FileSource(Source):
    """One file of runs, one row per run; the format comes from the extension.

    ``.csv``; ``.tsv`` and ``.tab`` (tab-separated); ``.jsonl`` and ``.ndjson`` (one JSON object per line);
    ``.json`` (an array of objects, or one object per line); ``.parquet`` and ``.pq`` (needs pyarrow). Any of these may be compressed (``.gz``, ``.bz2``, ``.zip``,
    ``.xz``, ``.zst``).
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        suffix = _format_suffix(self.path)
        if suffix not in _READERS:
            raise InputError(f"cannot read {self.path}: {_unknown_kind(str(path), suffix)}")
        self._format, self._reader = _READERS[suffix]
        self._kept_rows: pd.DataFrame | None = None  # see read_histories

    def describe(self) -> str:
        return str(self.path)

    def identity(self) -> str:
        return str(self.path.resolve())

    def change_token(self) -> str | None:
        """SHA-256 of the file's bytes (None when it cannot be read: the read then says why). Hashing is far
        cheaper than parsing, and unlike a modification time it does not depend on any clock."""
        digest = hashlib.sha256()
        try:
            with self.path.open("rb") as handle:
                for block in iter(lambda: handle.read(1 << 20), b""):
                    digest.update(block)
        except OSError:
            return None
        return digest.hexdigest()

    def read(self, request: MetricRequest) -> pd.DataFrame:
        """The file's rows as a DataFrame with the file's own column names (``request`` selects nothing here)."""
        frame = self._frame()
        if STEP_COLUMN not in frame.columns:
            hint = f" (one row per run and step, with a {STEP_COLUMN!r} column, holds them)"
            return pick_values(frame, request, None, source=f"{self.path}, a file of one row per run,", hint=hint)
        rows = _step_rows(frame, self.path)
        self._kept_rows = rows if request.histories else None
        return _runs_of_steps(rows, request)

    def read_histories(self, metrics: Sequence[str], run_ids: Sequence[str]) -> dict[str, pd.DataFrame]:
        """Each metric's points from a file of one row per run and step (``run_id``, ``step`` and the metric's
        column; an empty cell is a value not logged at that step); a file of one row per run has none.

        The rows the last :meth:`read` parsed, when it was told that histories would follow
        (``MetricRequest.histories``): the file is then parsed once, and the runs and their histories are of the
        same version of it. Otherwise the file is read again.
        """
        from boontrack.runtable import resolve_column

        rows, self._kept_rows = self._kept_rows, None
        if rows is None:
            frame = self._frame()
            if STEP_COLUMN not in frame.columns:
                raise InputError(
                    f"{self.path} holds one row per run and no histories: training curves need one row per run and "
                    f"step, with columns 'run_id', {STEP_COLUMN!r} and the metric"
                )
            rows = _step_rows(frame, self.path)
        summarized = rows["run_id"].astype(str).isin(run_ids)
        if not summarized.all():
            rows = rows.loc[summarized]
        columns = [str(c) for c in rows.columns]
        return {metric: _points(rows, resolve_column(columns, metric, "metric")) for metric in metrics}

    def _frame(self) -> pd.DataFrame:
        """The file's rows, parsed; InputError naming the file and what is wrong with it."""
        import pandas as pd

        if not self.path.is_file():
            reason = "it is a directory" if self.path.is_dir() else "no such file"
            raise InputError(f"cannot read {self.path}: {reason}")
        try:
            frame = self._reader(self.path)
        except InputError:
            raise
        except pd.errors.EmptyDataError:
            raise InputError(f"cannot read {self.path}: the file is empty") from None
        except OSError as exc:
            raise InputError(f"cannot read {self.path}: {exc.strerror or _first_line(exc)}") from None
        except Exception as exc:  # parsers raise ValueError, ParserError, ArrowInvalid, UnicodeDecodeError, ...
            raise InputError(f"cannot read {self.path} as {self._format}: {_first_line(exc)}") from None
        if frame.empty:
            raise InputError(f"cannot read {self.path}: the file has no rows")
        _refuse_repeated_columns(list(frame.columns), self.path)
        return frame


def _runs_of_steps(rows: pd.DataFrame, request: MetricRequest) -> pd.DataFrame:
    """One row per run from the rows per run and step (:func:`_step_rows`): each column's last value logged (empty
    cells are values not logged at that step), then the values ``request.pick`` asks for, with the rows as the
    metrics' histories."""
    from boontrack.runtable import resolve_column

    runs = rows.drop(columns=STEP_COLUMN).groupby("run_id", sort=False).last().reset_index()
    columns = [str(c) for c in rows.columns]
    metric_columns = {metric: resolve_column(columns, metric, "metric") for metric in request.metrics}

    def histories() -> dict[str, pd.DataFrame]:
        return {metric: _points(rows, column) for metric, column in metric_columns.items()}

    picked = (metric_columns[request.val], metric_columns.get(request.test) if request.test is not None else None)
    return pick_values(runs, request, histories, columns=picked)


def _points(rows: pd.DataFrame, column: str) -> pd.DataFrame:
    """The logged points of one metric column (:data:`POINT_COLUMNS`): its non-empty cells."""
    logged = rows.loc[rows[column].notna(), ["run_id", STEP_COLUMN, column]]
    return logged.set_axis(list(POINT_COLUMNS), axis=1)


def _step_rows(frame: pd.DataFrame, path: Path) -> pd.DataFrame:
    """The rows of a file with a step column, its steps whole numbers, sorted by run and step (stably: rows of
    one run and step stay in file order, the last one logged last)."""
    import pandas as pd

    if "run_id" not in frame.columns:
        raise InputError(f"cannot read {path}: a file with a {STEP_COLUMN!r} column needs a 'run_id' column")
    steps = frame[STEP_COLUMN]
    if steps.dtype.kind not in "iu":  # whole numbers as read need no check
        steps = pd.to_numeric(steps, errors="coerce")
        if steps.isna().any() or (steps != steps.round()).any():
            row = int(steps.index[steps.isna() | (steps != steps.round())][0])
            raise InputError(
                f"cannot read {path}: column {STEP_COLUMN!r} must hold whole numbers; row {row + 2} does not"
            )
    rows = frame.assign(**{STEP_COLUMN: steps.astype("int64")})
    if _in_run_and_step_order(rows):
        return rows  # as most exports are: no copy of the whole file
    return rows.sort_values(["run_id", STEP_COLUMN], kind="stable")


def _in_run_and_step_order(rows: pd.DataFrame) -> bool:
    """Whether the rows are sorted by run and step already: each run's rows together, the runs in the order of
    their ids (none missing) and each run's steps in order."""
    import pandas as pd

    runs, ids = pd.factorize(rows["run_id"])  # numbered in order of appearance; -1 for a missing id
    if (runs < 0).any() or not pd.Index(ids).is_monotonic_increasing:
        return False
    return in_run_and_step_order(runs, rows[STEP_COLUMN].to_numpy())


class FileBackend(Backend):
    """``file:PATH``, and any source string whose scheme is not a registered backend."""

    name: ClassVar[str] = "file"
    local_location: ClassVar[bool] = True

    def open_source(self, location: str, **options: Any) -> FileSource:
        check_options(self.name, options, self.options)
        return FileSource(location)
