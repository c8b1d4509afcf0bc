"""RunTable: the one place where runs become arrays.

A :class:`RunTable` is built from a run frame (see :mod:`boontrack.backends`) or any user DataFrame and a
:class:`boontrack.spec.Spec`. It resolves the spec's column names, checks types, decides which runs are
kept, and labels each run with its group. No run is dropped silently: every excluded run is listed in
:attr:`RunTable.dropped` with its reason (duplicate id, failed or unfinished status, missing or non-finite
metric, a negative duration when the analysis is by time).

Column resolution: the exact column name, else ``metrics.<name>`` then ``tags.<name>`` for the validation and test
metrics (and the duration), ``params.<name>`` then ``tags.<name>`` for group keys, the seed and the task. Tags are text
(Optuna's ``MLflowCallback`` stores a trial's user attributes as tags): a metric read from a tag is parsed as a
number, and a run whose tag holds text that is not a number is dropped with that reason (a tag is free text set
run by run, so one such run does not stop the analysis; in any other column such text is an error).
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from boontrack import vocabulary
from boontrack._validation import NOT_NUMBERS, REAL_OR_MISSING
from boontrack.exceptions import InputError

if TYPE_CHECKING:
    from boontrack.spec import Spec

__all__ = ["DroppedRun", "RunTable", "TaskCells", "resolve_column"]

#: Columns of :attr:`RunTable.runs` computed by boontrack; original columns of the same name are replaced
#: (``seed`` only when a seed column is given: otherwise the frame's own ``seed`` column, if any, is kept).
CANONICAL_COLUMNS = ("run_id", "group", "val", "test", "seed", "duration_s")
#: Statuses (lower case) of runs that completed; any other status excludes the run.
FINISHED_STATUSES = frozenset({"finished", "complete", "completed"})
#: Statuses a source gives a run whose record it could not read whole, and the reason such a run is dropped with.
UNREADABLE_STATUSES = {
    "incomplete": "incomplete run file",
    "corrupt": "corrupt run file",
    "unsupported": "run file of an unsupported format",
}
#: Label of the single group when no group keys are used.
SINGLE_GROUP = "all"
#: Label part for a run whose group key is missing.
MISSING_LABEL = "(missing)"
#: Text cells read as "no value" in a metric column (CSV files often write these).
_MISSING_TEXT = frozenset({"", "nan", "none", "null", "na", "n/a"})
_MAX_LISTED_COLUMNS = 12
#: The id of a run without one: its row position (see ``_run_ids``).
_POSITIONAL_ID = re.compile(r"row (0|[1-9][0-9]*)")


@dataclass(frozen=True)
class DroppedRun:
    """A run excluded from the analysis, and why."""

    run_id: str
    reason: str
    #: The run's group label when its group keys are known (None before grouping or without keys).
    group: str | None = None


@dataclass(frozen=True)
class TaskCells:
    """How the groups of a table with a task column split: each group is one approach (the runs' other group
    keys) on one task, and every approach has runs on every task."""

    #: The resolved task column.
    column: str
    #: Task labels, sorted as group keys sort (numbers numerically).
    tasks: tuple[str, ...]
    #: Approach labels (of the group keys but the task: ``"all"`` without any), sorted alike.
    approaches: tuple[str, ...]
    #: Group label -> (task, approach).
    cells: Mapping[str, tuple[str, str]]


class RunTable:
    """Validated runs, one row per run, with every excluded run and its reason.

    Build one with :meth:`from_frame`. Attributes:

    runs
        The kept runs in run-id order (the canonical order: the same runs give the same resamples whatever the
        order of the rows they came in; runs identified by their row position, "row 17", in row order): columns ``run_id`` (str), ``group`` (str), ``val``, ``test`` (float,
        finite; ``test`` equals ``val`` when the spec has no test metric), ``seed`` (object; with a seed
        column only, else the frame's own ``seed`` column if it has one), ``duration_s`` (float, NaN when
        unknown), then the frame's other columns.
    dropped
        Excluded runs as :class:`DroppedRun`, in input order.
    groups
        Group labels in order (sorted by their key values, numbers numerically).
    group_by
        The resolved group-key column names (empty for a single group).
    val_column, test_column, seed_column, duration_column
        The resolved column names (None when not used).
    task_cells
        With a task column (``Spec.task_column``): the tasks, the approaches and the (task, approach) of each
        group, whose labels then start with the task (``task=cola,method=new``); None without one.
    """

    def __init__(
        self,
        all_runs: pd.DataFrame,
        *,
        groups: tuple[str, ...],
        group_by: tuple[str, ...],
        val_column: str,
        test_column: str | None,
        seed_column: str | None,
        duration_column: str | None,
        task_cells: TaskCells | None = None,
    ) -> None:
        self._all_runs = all_runs
        kept = all_runs["dropped_reason"] == ""
        # Run ids of kept runs are unique (duplicates are dropped), so this order has no ties.
        kept_runs = all_runs.loc[kept].drop(columns="dropped_reason")
        self.runs: pd.DataFrame = kept_runs.iloc[_run_id_order(kept_runs["run_id"])].reset_index(drop=True)
        self.dropped: tuple[DroppedRun, ...] = tuple(
            DroppedRun(run_id, reason, group)
            for run_id, reason, group in all_runs.loc[~kept, ["run_id", "dropped_reason", "group"]].itertuples(
                index=False
            )
        )
        self.groups = groups
        self.group_by = group_by
        self.val_column = val_column
        self.test_column = test_column
        self.seed_column = seed_column
        self.duration_column = duration_column
        self.task_cells = task_cells

    def __repr__(self) -> str:
        return (
            f"RunTable({len(self.runs)} runs in {len(self.groups)} groups, {len(self.dropped)} dropped, "
            f"val={self.val_column!r}, test={self.test_column!r}, group_by={list(self.group_by)!r})"
        )

    @classmethod
    def from_frame(cls, frame: pd.DataFrame, spec: Spec) -> RunTable:
        """Validate ``frame`` against ``spec``: resolve columns, drop (and list) unusable runs, label groups.

        Raises
        ------
        InputError
            Unknown or repeated column (the message lists the available ones), text in a numeric column (naming the run
            and the value), no runs, or every run dropped (counted by reason).
        """
        if not isinstance(frame, pd.DataFrame):
            raise InputError(f"expected a pandas DataFrame of runs, got {type(frame).__name__}")
        if len(frame) == 0:
            raise InputError("the table has no runs")
        frame = frame.reset_index(drop=True)
        columns = [str(c) for c in frame.columns]
        repeated = next((name for name, count in Counter(columns).items() if count > 1), None)
        if repeated is not None:
            raise InputError(
                f"column {repeated!r} appears {Counter(columns)[repeated]} times; columns must have distinct names"
            )
        frame.columns = columns

        val_column = resolve_column(columns, spec.val, "metric")
        test_column = resolve_column(columns, spec.test, "metric") if spec.test is not None else None
        seed_column = resolve_column(columns, spec.seed_column, "param") if spec.seed_column is not None else None
        task_column = resolve_column(columns, spec.task_column, "param") if spec.task_column is not None else None
        if spec.duration is not None:
            duration_column: str | None = resolve_column(columns, spec.duration, "metric")
        else:
            duration_column = "duration_s" if "duration_s" in columns else None

        run_ids = _run_ids(frame)
        val, val_text = _numeric_column(frame, val_column, run_ids, "metric")
        test, test_text = _numeric_column(frame, test_column, run_ids, "metric") if test_column else (val, val_text)
        duration = (
            _numeric_column(frame, duration_column, run_ids, "duration", text_drops=False)[0]
            if duration_column
            else np.full(len(frame), np.nan)
        )
        # A run that ended before it started (its host's clock jumped) has no duration. It matters only where the
        # analysis is by time (``spec.duration``): there the run is dropped with that reason; elsewhere the
        # duration is unknown, as for a run without one.
        negative = duration < 0
        reasons = _drop_reasons(frame, run_ids, (val, val_text), (test, test_text), spec)
        if spec.duration is not None:
            todo = negative & (reasons == "")
            reasons[todo] = [f"negative duration ({float(d)!r} s: it ended before it started)" for d in duration[todo]]
        duration = np.where(negative, np.nan, duration)
        kept = reasons == ""
        if not kept.any():
            counts = Counter(reasons)
            detail = ", ".join(f"{count} {reason}" for reason, count in counts.most_common())
            raise InputError(f"all {len(frame)} runs were dropped: {detail}")

        if spec.group_by is None:
            group_by = _default_group_by(frame.loc[kept], columns, seed_column, task_column)
        else:
            group_by = tuple(resolve_column(columns, name, "param") for name in spec.group_by)
        task_cells = None
        if task_column is not None:
            labels, order_keys = _group_labels(frame, (task_column, *group_by))
            task_cells = _task_cells(frame, kept, labels, task_column, group_by, spec)
            group_by = (task_column, *group_by)
        else:
            labels, order_keys = _group_labels(frame, group_by)

        canonical = pd.DataFrame({"run_id": run_ids, "group": labels, "val": val, "test": test})
        if seed_column:
            canonical["seed"] = frame[seed_column].astype(object)
        canonical["duration_s"] = duration
        extras = frame.drop(columns=[c for c in CANONICAL_COLUMNS if c in canonical.columns and c in columns])
        all_runs = pd.concat([canonical, extras, pd.DataFrame({"dropped_reason": reasons})], axis=1)

        kept_labels = pd.unique(labels[kept])
        groups = tuple(sorted(kept_labels, key=lambda label: order_keys[label]))
        return cls(
            all_runs,
            groups=groups,
            group_by=group_by,
            val_column=val_column,
            test_column=test_column,
            seed_column=seed_column,
            duration_column=duration_column,
            task_cells=task_cells,
        )

    def group_runs(self, group: str) -> pd.DataFrame:
        """The kept runs of ``group``, in run-id order."""
        return self.runs.iloc[self._rows(group)]

    def arrays(self, group: str) -> tuple[np.ndarray, np.ndarray]:
        """Validation and test scores of ``group`` as float64 arrays (test equals val without a test metric)."""
        rows = self._rows(group)
        return self._scores[0][rows], self._scores[1][rows]

    def _rows(self, group: str) -> np.ndarray:
        """The positions in :attr:`runs` of ``group``'s runs, ascending."""
        rows = self._group_rows.get(group)
        if rows is None:
            raise InputError(f"no group {group!r}; groups are: {_listing(self.groups)}")
        return rows

    @functools.cached_property
    def _group_rows(self) -> dict[str, np.ndarray]:
        """Each group's positions in :attr:`runs`, found once: an analysis asks for a group's runs per comparison."""
        codes, labels = pd.factorize(self.runs["group"])
        order = np.argsort(codes, kind="stable")
        bounds = np.searchsorted(codes[order], np.arange(labels.size + 1))
        return {str(label): order[bounds[k] : bounds[k + 1]] for k, label in enumerate(labels)}

    @functools.cached_property
    def _scores(self) -> tuple[np.ndarray, np.ndarray]:
        return self.runs["val"].to_numpy(dtype=np.float64), self.runs["test"].to_numpy(dtype=np.float64)

    def all_runs(self) -> pd.DataFrame:
        """Every input row, kept or not, with the canonical columns and ``dropped_reason`` ("" when kept)."""
        return self._all_runs.copy()


def resolve_column(columns: Sequence[str], name: str, kind: str) -> str:
    """The column that ``name`` refers to: exact, else with the prefixes of ``kind`` ("metric" or "param")."""
    prefixes = ("metrics.", "tags.") if kind == "metric" else ("params.", "tags.")
    candidates = [name, *(prefix + name for prefix in prefixes)]
    for candidate in candidates:
        if candidate in columns:
            return candidate
    tried = ", ".join(repr(c) for c in candidates)
    raise InputError(f"no column {name!r} (tried {tried}); available columns: {_listing(columns)}")


def _listing(names: Sequence[str]) -> str:
    """Names for an error message, trimmed to a readable length."""
    shown = ", ".join(map(str, names[:_MAX_LISTED_COLUMNS]))
    if len(names) > _MAX_LISTED_COLUMNS:
        shown += f", ... ({len(names) - _MAX_LISTED_COLUMNS} more)"
    return shown or "none"


def _run_ids(frame: pd.DataFrame) -> np.ndarray:
    """Run ids as strings; without a ``run_id`` column (or for a missing id) the row position, "row 17"."""
    if "run_id" not in frame.columns:
        return np.array([f"row {i}" for i in range(len(frame))], dtype=object)
    ids = frame["run_id"]
    text = ids.astype(object).astype(str).to_numpy(dtype=object)
    missing = np.flatnonzero(ids.isna().to_numpy())
    text[missing] = [f"row {i}" for i in missing]
    return text


def _run_id_order(run_ids: pd.Series) -> np.ndarray:
    """Positions of the runs in the order of their ids: the ids given by row position ("row 17") in row order,
    before all others by text (code point order).

    Distinct ids, so the order has no ties ("row 07" is text). Vectorised on pandas' string dtype (pyarrow's
    compute functions where pyarrow is installed), where a sort key per run cost 0.7 s of CPU at 10^6 runs.
    """
    text = run_ids.astype("string").reset_index(drop=True)
    positional = text.str.fullmatch(_POSITIONAL_ID.pattern).fillna(False).to_numpy(dtype=bool)
    # a row position has no leading zero: ordered by its number of digits, then by its digits
    positions = pd.DataFrame({"digits": text[positional].str.len(), "text": text[positional]})
    by_position = positions.sort_values(["digits", "text"], kind="stable").index.to_numpy()
    others = text[~positional]
    by_text = others.index.to_numpy()[others.argsort(kind="stable").to_numpy()]
    return np.concatenate([by_position, by_text]).astype(np.intp)


#: Columns refused by their type (numpy's kind): numbers of another kind, and what pandas would turn into numbers.
_NOT_A_SCORE = {"b": "true/false values", "c": "complex numbers", **NOT_NUMBERS}


def _numeric_column(
    frame: pd.DataFrame, column: str, run_ids: np.ndarray, what: str, *, text_drops: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """Column values as float64 (NaN for missing cells), and the cells holding text that is not a number (None
    elsewhere).

    Such text is an InputError, except in a ``tags.*`` column when ``text_drops`` (its runs are dropped).
    """
    series = frame[column]
    no_text = np.full(len(frame), None, dtype=object)
    held = _NOT_A_SCORE.get(series.dtype.kind)
    if held is not None:
        raise InputError(f"column {column!r} holds {held}; a {what} must be a number")
    if pd.api.types.is_numeric_dtype(series):
        return series.to_numpy(dtype=np.float64, na_value=np.nan), no_text
    cells = series.astype(object)
    is_text = cells.map(lambda v: isinstance(v, str))
    missing = series.isna() | (is_text & cells.map(lambda v: isinstance(v, str) and v.strip().lower() in _MISSING_TEXT))
    # cells of other objects (bytes, dates, complex numbers) are not numbers, even where pandas would convert them
    numeric = is_text | cells.map(lambda v: isinstance(v, REAL_OR_MISSING))
    numbers = pd.to_numeric(cells.where(~missing & numeric), errors="coerce")
    not_numbers = (~missing & numbers.isna()).to_numpy()
    bad = np.flatnonzero(not_numbers)
    if bad.size and not (text_drops and column.startswith("tags.")):
        i = bad[0]
        raise InputError(
            f"column {column!r} must hold numbers; run {run_ids[i]!r} has {cells.iloc[i]!r}"
            + (f" ({bad.size} such cells)" if bad.size > 1 else "")
        )
    texts = np.asarray(np.where(not_numbers, cells.to_numpy(dtype=object), None), dtype=object) if bad.size else no_text
    return numbers.to_numpy(dtype=np.float64, na_value=np.nan), texts


def _drop_reasons(
    frame: pd.DataFrame,
    run_ids: np.ndarray,
    val: tuple[np.ndarray, np.ndarray],
    test: tuple[np.ndarray, np.ndarray],
    spec: Spec,
) -> np.ndarray:
    """Why each row is excluded ("" when kept); the first applicable reason wins.

    ``val`` and ``test`` are (values, texts) from :func:`_numeric_column`: a text cell that is not a number (a
    tag) is its own reason, before "missing metric".
    """
    reasons = np.full(len(frame), "", dtype=object)

    def mark(mask: np.ndarray, reason: Any) -> None:
        todo = mask & (reasons == "")
        reasons[todo] = reason(todo) if callable(reason) else reason

    mark(pd.Series(run_ids).duplicated().to_numpy(), "duplicate run_id")
    if "status" in frame.columns:
        status = frame["status"].astype(object)
        missing = status.isna().to_numpy()
        text = status.where(~status.isna(), "").map(lambda s: str(s).strip().lower()).to_numpy(dtype=object)
        mark(missing, "status missing")
        unfinished = ~missing & ~np.isin(text, list(FINISHED_STATUSES))
        mark(
            unfinished,
            lambda todo: np.array([UNREADABLE_STATUSES.get(s, f"status {s!r}") for s in text[todo]], dtype=object),
        )
    metrics = [("val", spec.val, *val)]
    if spec.test is not None:
        metrics.append(("test", spec.test, *test))
    for role, name, values, texts in metrics:
        mark(
            pd.notna(texts),
            lambda todo, name=name, texts=texts: np.array(
                [f"metric {name!r} is not a number ({t!r})" for t in texts[todo]], dtype=object
            ),
        )
        mark(np.isnan(values), f"missing metric {name!r}")
        mark(
            np.isinf(values),
            lambda todo, role=role, values=values: np.array(
                [f"non-finite {role} ({v})" for v in values[todo]], dtype=object
            ),
        )
    return reasons


def _default_group_by(
    kept: pd.DataFrame, columns: Sequence[str], seed_column: str | None, task_column: str | None
) -> tuple[str, ...]:
    """Every ``params.*`` column except the seed and the task that varies across the kept runs; none without a
    seed."""
    if seed_column is None:
        return ()
    return tuple(
        c
        for c in columns
        if c.startswith("params.") and c not in (seed_column, task_column) and kept[c].nunique(dropna=False) > 1
    )


def _task_cells(
    frame: pd.DataFrame, kept: np.ndarray, labels: np.ndarray, task_column: str, group_by: tuple[str, ...], spec: Spec
) -> TaskCells:
    """The tasks and approaches of the kept runs, and the (task, approach) of each group ``labels`` name (the
    labels of the task and ``group_by`` together); InputError for a task column that also groups, a single task,
    an approach without runs on a task, and reference scores (``Spec.normalize``) that lack a task."""
    if task_column in group_by:
        raise InputError(
            f"{task_column!r} is the task column ({vocabulary.name('task_column')}); it cannot also group the runs "
            f"({vocabulary.name('group_by')})"
        )
    task_labels, task_keys = _group_labels(frame.loc[kept], (task_column,))
    approach_labels, approach_keys = _group_labels(frame.loc[kept], group_by)
    tasks = tuple(sorted(set(task_labels), key=lambda label: task_keys[label]))
    approaches = tuple(sorted(set(approach_labels), key=lambda label: approach_keys[label]))
    if len(tasks) < 2:
        raise InputError(
            f"the task column {task_column!r} holds one task ({tasks[0]!r}) among the kept runs: across tasks needs "
            f"two or more; leave {vocabulary.name('task_column')} out to summarize one task"
        )
    present = set(zip(task_labels, approach_labels))
    missing = [(approach, task) for approach in approaches for task in tasks if (task, approach) not in present]
    if missing:
        approach, task = missing[0]
        raise InputError(
            f"group {approach!r} has no runs on task {task!r} ({len(missing)} such pairs in all): every group needs "
            "kept runs on every task to be compared across the tasks"
        )
    if isinstance(spec.normalize, tuple):
        given = {row[0] for row in spec.normalize}
        lacking = [task for task in tasks if task not in given]
        if lacking:
            raise InputError(
                f"the reference scores ({vocabulary.name('normalize_with')}) give none for task {lacking[0]!r} "
                f"({len(lacking)} task(s) in all; they give {_listing(sorted(given))})"
            )
    cells = dict(zip(labels[kept], zip(task_labels, approach_labels)))
    return TaskCells(task_column, tasks, approaches, cells)


def format_value(value: Any) -> str:
    """A group key value as label text: integral floats without ".0", missing values as "(missing)"."""
    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA:
        return MISSING_LABEL
    if isinstance(value, (float, np.floating)):
        return str(int(value)) if float(value).is_integer() else repr(float(value))
    return str(value)


def _sort_key(value: Any) -> tuple[int, Any]:
    """Numbers (and numeric text) first in numeric order, then text, then missing values."""
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return (2, "")
    try:
        return (0, float(value))
    except (TypeError, ValueError):
        return (1, str(value))


#: Kinds of column (``pandas.api.types.infer_dtype``) whose distinct values, as a hash table finds them, are
#: distinct labels: no bool beside a number (True and 1 are one key to a hash table, but two labels).
_HASHED_AS_LABELED = frozenset({"string", "integer", "floating", "mixed-integer-float", "boolean", "empty"})


def _formatted(values: pd.Series) -> np.ndarray:
    """Each value as label text (:func:`format_value`), formatted once per distinct value where the column's
    kind allows (formatting each run's value cost 0.8 s of CPU at 10^6 runs)."""
    if pd.api.types.infer_dtype(values, skipna=True) not in _HASHED_AS_LABELED:
        return values.map(format_value).to_numpy(dtype=object)
    codes, uniques = pd.factorize(values, use_na_sentinel=False)  # every missing value is one key
    return np.array([format_value(value) for value in uniques], dtype=object)[codes]


def _group_labels(frame: pd.DataFrame, group_by: tuple[str, ...]) -> tuple[np.ndarray, dict[str, tuple]]:
    """Label of every row ("all", "value" or "k1=v1,k2=v2") and, per label, the key it sorts by."""
    if not group_by:
        return np.full(len(frame), SINGLE_GROUP, dtype=object), {SINGLE_GROUP: ()}
    parts = []
    columns = []
    for column in group_by:
        values = frame[column].astype(object)
        formatted = _formatted(values)
        prefix = "" if len(group_by) == 1 else f"{short_name(column)}="
        parts.append(prefix + formatted if prefix else formatted)
        columns.append(values.to_numpy())
    labels = parts[0]
    for part in parts[1:]:
        labels = labels + "," + part
    unique_labels, first_rows = np.unique(labels.astype(str), return_index=True)
    # a label sorts by the values of its first run (values that share a label share their key, but for a
    # boolean and its text: True and "True")
    order_keys = {
        label: tuple(_sort_key(values[row]) for values in columns) for label, row in zip(unique_labels, first_rows)
    }
    return labels, order_keys


def short_name(column: str) -> str:
    """A group-key column without its ``params.``/``tags.`` prefix, for labels."""
    for prefix in ("params.", "tags."):
        if column.startswith(prefix):
            return column[len(prefix) :]
    return column
