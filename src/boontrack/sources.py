"""Run tables in files: CSV, TSV, JSON lines and Parquet, read as they are.

The file backend is what a source string without a registered scheme opens (``runs.csv``, ``./sweep.tsv``) and
what ``file:PATH`` opens explicitly. Columns keep the user's names; :class:`boontrack.runtable.RunTable` maps
them (``--val``, ``--group-by``, ...). Files are inputs only: results go to a directory with ``--out DIR``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from boontrack._optional import import_optional
from boontrack.backends import Backend, MetricRequest, Source
from boontrack.exceptions import InputError
from boontrack.runframe import check_options

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["FileBackend", "FileSource"]

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
            known = ", ".join(sorted(_READERS))
            raise InputError(
                f"cannot read {self.path}: unknown file type {suffix or '(no extension)'!r} (expected one of {known})"
            )
        self._format, self._reader = _READERS[suffix]

    def describe(self) -> str:
        return str(self.path)

    def identity(self) -> str:
        return str(self.path.resolve())

    def read(self, request: MetricRequest) -> pd.DataFrame:
        """The file's rows as a DataFrame with the file's own column names (``request`` selects nothing here)."""
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


class FileBackend(Backend):
    """``file:PATH``, and any source string whose scheme is not a registered backend."""

    name: ClassVar[str] = "file"

    def open_source(self, location: str, **options: Any) -> FileSource:
        check_options(self.name, options, self.options)
        return FileSource(location)
