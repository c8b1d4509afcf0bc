"""What every backend does between its SDK and the run frame, written once.

A backend translates its tracker's runs into :class:`RunRecord` values and per-step metric points; this module
does the rest, the same way for every tracker:

- :class:`MetricRequest`: which metric values a source puts in the frame (re-exported by
  :mod:`boontrack.backends`, where sources receive it);
- :func:`build_run_frame`: the run frame of :mod:`boontrack.backends` with one column typing (``run_id``,
  ``status`` and ``tags.*`` as ``str``, ``metrics.*`` as float64, ``created_at`` as UTC timestamps,
  ``duration_s`` as float seconds, ``params.*`` as logged);
- :func:`pick_values`: each run's values as ``pick`` says, the one place the rule is applied (through
  :func:`pick_best_val_step`: the validation value at each run's best step and the test value of the model at
  that step), or refused where a source holds no per-step values;
- :func:`is_summary_run`: boontrack's own summary runs, which are never inputs;
- :func:`check_options`: a backend's source options, unknown ones refused;
- :func:`write_artifacts`: artifact files written under a directory, paths that would leave it refused;
- :func:`seconds_from_environment`: a documented bound on a wait, read from an environment variable.

pandas and numpy are imported on first use: :mod:`boontrack.backends` imports this module.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, Literal

from boontrack import vocabulary
from boontrack.exceptions import InputError

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    #: What :func:`pick_values` takes as per-step points: metric name -> points (columns :data:`POINT_COLUMNS`),
    #: or a function giving them (called only when the pick needs them).
    Histories = Mapping[str, pd.DataFrame] | Callable[[], Mapping[str, pd.DataFrame]]

__all__ = [
    "MetricRequest",
    "POINT_COLUMNS",
    "GROUP_CURVE_ROLE",
    "SUMMARY_ROLE",
    "SUMMARY_ROLE_TAG",
    "RunRecord",
    "apply_best_val_step",
    "artifact_path",
    "build_run_frame",
    "build_run_frame_long",
    "check_options",
    "is_summary_run",
    "pick_best_val_step",
    "pick_values",
    "seconds_from_environment",
    "write_artifacts",
]

#: Tag (MLflow tag, W&B config key) that marks a run written by boontrack; such runs are never read as input.
SUMMARY_ROLE_TAG = "boontrack.role"
#: Value of :data:`SUMMARY_ROLE_TAG` on boontrack's summary runs.
SUMMARY_ROLE = "summary"
#: Value of :data:`SUMMARY_ROLE_TAG` on the per-group curve runs under an MLflow summary run.
GROUP_CURVE_ROLE = "group-curve"
#: Columns of the metric points :func:`pick_best_val_step` reads, one row per logged point.
POINT_COLUMNS = ("run_id", "step", "value")
#: Prefixes of the run frame's columns, in the order they follow the contract columns.
_PREFIXES = ("params.", "metrics.", "tags.")


@dataclass(frozen=True)
class MetricRequest:
    """Which metric values a source puts in the run frame.

    Attributes
    ----------
    val, test
        Metric names as the tracker knows them (no ``metrics.`` prefix); ``test`` may be None.
    maximize
        Direction of ``val``; needed to find the best-validation step.
    pick
        ``"last"``: the value as the tracker reports it (the last logged one). ``"best_val_step"``: for runs
        that log per-epoch histories, ``val`` is the best value over the history and ``test`` the value of the
        model at that step (the pairing of the Boo_n paper), by the one rule of
        :func:`boontrack.runframe.pick_best_val_step`; runs without a history fall back to ``"last"``. A
        source gives each run's last values and, when :attr:`needs_history`, the per-step points to
        :func:`pick_values`, which applies the pick.
    histories
        The metrics whose points :meth:`boontrack.backends.Source.read_histories` will be asked for after this
        read (training curves). A hint: a source that parses every point to read the runs (a file) keeps them
        for that call instead of parsing them again; others may ignore it.
    """

    val: str
    test: str | None = None
    maximize: bool = True
    pick: Literal["last", "best_val_step"] = "last"
    histories: tuple[str, ...] = ()

    @property
    def metrics(self) -> tuple[str, ...]:
        """The metric names asked for: ``val``, and ``test`` when there is one."""
        return (self.val,) if self.test is None else (self.val, self.test)

    @property
    def needs_history(self) -> bool:
        """Whether the pick needs the metrics' per-step points (:func:`pick_values`), which a source then reads."""
        return self.pick == "best_val_step"


def is_summary_run(tags: Mapping[str, Any]) -> bool:
    """True for a run boontrack wrote: its tags (MLflow) or config (W&B) carry ``boontrack.role`` = ``summary``
    or :data:`GROUP_CURVE_ROLE`."""
    return tags.get(SUMMARY_ROLE_TAG) in (SUMMARY_ROLE, GROUP_CURVE_ROLE)


def check_options(backend: str, options: Mapping[str, Any], known: Iterable[str]) -> dict[str, Any]:
    """The options given (dashes in names as underscores, None values left out); InputError for unknown ones.

    ``known`` are the names of :attr:`boontrack.backends.Backend.options` (either spelling).
    """
    known_names = sorted({name.replace("-", "_") for name in known})
    given = {name.replace("-", "_"): value for name, value in options.items() if value is not None}
    unknown = sorted(set(given) - set(known_names))
    if unknown:
        listed = ", ".join(vocabulary.name(name) for name in unknown)
        accepted = ", ".join(vocabulary.name(name) for name in known_names) or "none"
        raise InputError(f"unknown option(s) for {backend} sources: {listed} (known: {accepted})")
    return given


def artifact_path(relative: str, *, reserved: Iterable[str] = ()) -> PurePosixPath:
    """``relative`` as a path that stays inside the directory it is written to; ValueError otherwise.

    Refused: absolute paths, ``..`` parts, empty paths, and the names in ``reserved`` (files the sink writes
    itself).
    """
    path = PurePosixPath(relative)
    if not relative or path.is_absolute() or Path(relative).is_absolute() or ".." in path.parts or "\\" in relative:
        raise ValueError(f"artifact path {relative!r} cannot be written: it would leave the directory it is written to")
    if relative in set(reserved) or str(path) in set(reserved):
        raise ValueError(
            f"artifact path {relative!r} cannot be written: the name is reserved for boontrack's own files"
        )
    return path


def write_artifacts(directory: Path, artifacts: Mapping[str, bytes]) -> list[Path]:
    """Write each artifact (relative path -> bytes) under ``directory``; every path is checked first.

    Returns the files written, in the order given. Nothing is written when any path is refused.
    """
    paths = [(directory / artifact_path(relative), data) for relative, data in artifacts.items()]
    for target, data in paths:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(bytes(data))
    return [target for target, _ in paths]


def seconds_from_environment(variable: str, default: float) -> float:
    """The number of seconds in environment variable ``variable`` (``default`` when unset or empty).

    InputError naming the variable when it is not a finite number >= 0.
    """
    import math
    import os

    text = os.environ.get(variable, "").strip()
    if not text:
        return default
    try:
        seconds = float(text)
    except ValueError:
        seconds = math.nan
    if not math.isfinite(seconds) or seconds < 0:
        raise InputError(f"{variable} must be a number of seconds >= 0, got {text!r}")
    return seconds


@dataclass(frozen=True)
class RunRecord:
    """One run as a backend translated it from its SDK: plain values, before any typing.

    ``created_at`` is anything :func:`pandas.to_datetime` reads (naive times are UTC; None when unknown);
    ``duration_s`` is None when unknown (a running run has no end yet). ``metrics`` hold numbers only.
    """

    run_id: str
    status: str
    created_at: Any = None
    duration_s: float | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    metrics: Mapping[str, float] = field(default_factory=dict)
    tags: Mapping[str, Any] = field(default_factory=dict)


def build_run_frame(runs: Sequence[RunRecord]) -> pd.DataFrame:
    """The run frame of :mod:`boontrack.backends`, typed the same for every backend.

    Columns: ``run_id`` and ``status`` (``str``; status lower case, "unknown" when empty), ``created_at``
    (``datetime64[ns, UTC]``, NaT when unknown), ``duration_s`` (float64, NaN when unknown), then ``params.*``,
    ``metrics.*`` (float64) and ``tags.*`` (``str``, missing as NaN), each sorted by name. Summary runs
    (:func:`is_summary_run` on the tags) are left out before the frame is built, so that their metrics leave no
    empty columns behind.
    """
    import numpy as np
    import pandas as pd

    runs = [run for run in runs if not is_summary_run(run.tags)]
    created = pd.to_datetime(pd.Series([run.created_at for run in runs], dtype=object), utc=True, errors="coerce")
    base = pd.DataFrame(
        {
            "run_id": pd.Series([str(run.run_id) for run in runs], dtype="str"),
            "status": pd.Series([(run.status or "unknown").lower() for run in runs], dtype="str"),
            "created_at": created.astype("datetime64[ns, UTC]"),
            "duration_s": np.array(
                [np.nan if run.duration_s is None else float(run.duration_s) for run in runs], dtype=np.float64
            ),
        }
    )
    parts = [base]
    for prefix in _PREFIXES:
        records = [getattr(run, prefix[:-1]) for run in runs]
        if not any(records):
            continue
        part = pd.DataFrame.from_records(records, index=base.index)
        part = part.reindex(columns=sorted(part.columns, key=str)).add_prefix(prefix)
        if prefix == "metrics.":
            part = part.astype("float64")
        elif prefix == "tags.":
            part = part.astype("str")
        parts.append(part)
    return pd.concat(parts, axis=1)


def build_run_frame_long(
    runs: pd.DataFrame, *, params: pd.DataFrame, metrics: pd.DataFrame, tags: pd.DataFrame
) -> pd.DataFrame:
    """:func:`build_run_frame` for runs read column-wise (e.g. by SQL): the same frame, without one object per run.

    Parameters
    ----------
    runs
        One row per run, in the frame's order: ``run_id``, ``status``, ``created_at`` (datetimes), ``duration_s``
        (NaN when unknown).
    params, metrics, tags
        One row per value: ``run_id``, ``key``, ``value`` (at most one row per run and key); metric values
        are numbers. Rows of runs not in ``runs`` are ignored.

    Returns
    -------
    pandas.DataFrame
        Equal to ``build_run_frame`` of the same runs as :class:`RunRecord` values; summary runs left out.

    Notes
    -----
    Each prefix's columns are filled by one scatter of the values into a (runs x keys) array: 100,000 runs
    with 7 values each take about a fifth of a second, where the records' path takes seconds.
    """
    import numpy as np
    import pandas as pd

    tag_key, tag_value = _column(tags, "key"), _column(tags, "value")
    is_summary = (tag_key == SUMMARY_ROLE_TAG) & pd.Series(tag_value, dtype=object).isin(
        [SUMMARY_ROLE, GROUP_CURVE_ROLE]
    ).to_numpy()
    run_ids = _column(runs, "run_id")
    keep = ~pd.Index(run_ids).isin(_column(tags, "run_id")[is_summary])
    position = pd.Index(run_ids[keep].astype(str), dtype=object)
    status = _column(runs, "status")[keep]
    status = np.array([(s or "unknown").lower() for s in status], dtype=object)
    created = pd.to_datetime(pd.Series(runs["created_at"]).iloc[keep], utc=True, errors="coerce")
    base = pd.DataFrame(
        {
            "run_id": pd.Series(position.to_numpy(), dtype="str"),
            "status": pd.Series(status, dtype="str"),
            "created_at": created.astype("datetime64[ns, UTC]").array,
            "duration_s": pd.Series(runs["duration_s"]).to_numpy(dtype=np.float64)[keep],
        }
    )
    parts = [base]
    for prefix, long in zip(_PREFIXES, (params, metrics, tags)):
        rows = position.get_indexer(_column(long, "run_id").astype(str))
        found = rows >= 0
        if not found.any():
            continue
        codes, keys = pd.factorize(_column(long, "key")[found])
        numeric = prefix == "metrics."
        values = _column(long, "value")[found]
        table = np.full((len(position), len(keys)), np.nan, dtype=np.float64 if numeric else object)
        table[rows[found], codes] = values.astype(np.float64) if numeric else values
        # one column per key, typed as the constructor types it (strings: ``str``), as the records' path does
        order = sorted(range(len(keys)), key=lambda j: str(keys[j]))
        part = pd.DataFrame({f"{prefix}{keys[j]}": table[:, j] for j in order})
        parts.append(part.astype("str") if prefix == "tags." else part)
    return pd.concat(parts, axis=1)


def _column(frame: pd.DataFrame, name: str) -> np.ndarray:
    """A column as a numpy object array (no string dtype: lookups on it stay fast)."""
    import numpy as np

    return np.asarray(frame[name].to_numpy(dtype=object), dtype=object)


def pick_values(
    frame: pd.DataFrame,
    request: MetricRequest,
    histories: Histories | None,
    *,
    source: str = "this source",
    hint: str = "",
    columns: tuple[str, str | None] | None = None,
) -> pd.DataFrame:
    """``frame`` (each run's last values) with the values ``request.pick`` asks for: the one place a pick is made.

    ``pick="last"``: the frame as it is. ``pick="best_val_step"``: the values at each run's best validation
    step, by :func:`pick_best_val_step` on ``histories`` (metric name -> its points; a metric without points,
    or a run without any, keeps its last value, as a run that logged once has nothing to pick from).

    Parameters
    ----------
    histories
        The per-step points, or a function giving them (read only when the pick needs them); None: ``source``
        holds one value per run and metric, and ``pick="best_val_step"`` is refused (:class:`InputError`)
        rather than answered with last values.
    source, hint
        What holds the runs, and where the per-step values would be, for that message.
    columns
        The frame's columns of ``val`` and ``test`` (default ``metrics.<val>``, ``metrics.<test>``).

    Returns
    -------
    pandas.DataFrame
        A new frame; ``frame`` is not modified.
    """
    import pandas as pd

    if not request.needs_history:
        return frame
    if histories is None:
        raise InputError(
            f"{vocabulary.setting('pick', 'best_val_step')} takes each run's values at its best validation step, "
            f"and {source} holds one value per run and metric{hint}: summarize with "
            f"{vocabulary.setting('pick', 'last')}"
        )
    points = histories() if callable(histories) else histories
    empty = pd.DataFrame({name: pd.Series(dtype=object) for name in POINT_COLUMNS})

    def of(metric: str) -> pd.DataFrame:
        found = points.get(metric)
        return empty if found is None else found

    picked = pick_best_val_step(
        of(request.val), of(request.test) if request.test is not None else None, maximize=request.maximize
    )
    return apply_best_val_step(frame, picked, request, columns=columns)


def pick_best_val_step(
    val_points: pd.DataFrame, test_points: pd.DataFrame | None = None, *, maximize: bool = True
) -> pd.DataFrame:
    r"""The validation value at each run's best step, and the test value of the model kept at that step.

    The pairing of the Boo_n paper (Bajgar et al. 2018, §3.1.2 and Eq. 5: the test score of the model chosen on
    validation), computed for every run of a sweep at once from long-format points.

    Parameters
    ----------
    val_points, test_points
        One row per logged point of the validation (test) metric, columns ``run_id``, ``step``, ``value``,
        rows in the order they were logged. A step logged twice counts with its last value (a resumed run
        that logs a step again replaces it). ``test_points`` None: no test metric.
    maximize
        Direction of the validation metric.

    Returns
    -------
    pandas.DataFrame
        Indexed by ``run_id`` (the runs with at least one non-NaN validation point, sorted), columns ``step``
        (the best step), ``val``, ``test`` and ``test_logged`` (whether the run has any test point; when not,
        the backend keeps the run's last reported test value, e.g. a W&B summary value set once after training).

    Notes
    -----
    The rule, the same for every tracker:

    1. **Best step.** NaN validation points are not candidates (the model was not measured there). The best
       step is the one with the highest (``maximize``) or lowest value; among equal best values the **earliest**
       step wins: that is the checkpoint that early stopping and Lightning's ``ModelCheckpoint`` keep, since
       they replace the kept model only on a strict improvement.
    2. **Test at the best step.** When the run logged a test point at the best step, its value is the test
       score, also when it is NaN (the run is then dropped by the RunTable as missing the test metric: a test
       value from another step would describe another model).
    3. **Test logged once.** Otherwise, when the run logged the test metric at exactly one step, that single
       value is the test score, whatever its step: it is how ``trainer.test(ckpt_path="best")`` (or a final
       evaluation of the restored best checkpoint) reports, once after training, and it describes the model the
       run kept.
    4. **Test at other steps only.** Otherwise (several test points, none at the best step) the test score is
       NaN and the RunTable drops the run as missing the test metric. The test at a nearby step measures a
       different model than the one selected, and choosing "the nearest" would silently pair scores of two
       models; log validation and test with the same step (in W&B, in the same ``log`` call) instead.
    """
    import numpy as np
    import pandas as pd

    frames = [val_points] if test_points is None else [val_points, test_points]
    for points in frames:
        missing = [c for c in POINT_COLUMNS if c not in points.columns]
        if missing:
            raise ValueError(f"points need the columns {list(POINT_COLUMNS)}; missing {missing}")
    # Run ids as integer codes shared by both metrics: every step below is a numpy sort or a scatter.
    codes, run_ids = pd.factorize(pd.concat([points["run_id"].astype(str) for points in frames], ignore_index=True))
    runs = len(run_ids)
    val_code, val_step, val_value = _last_per_step(codes[: len(val_points)], val_points)
    usable = ~np.isnan(val_value)
    val_code, val_step, val_value = val_code[usable], val_step[usable], val_value[usable]
    # best value first (highest, or lowest when minimizing), then the earliest step
    order = np.lexsort((val_step, -val_value if maximize else val_value, val_code))
    first = np.ones(order.size, dtype=bool)
    first[1:] = val_code[order][1:] != val_code[order][:-1]
    best = order[first]
    has_best = np.zeros(runs, dtype=bool)
    has_best[val_code[best]] = True
    best_step = np.zeros(runs, dtype=np.int64)
    best_step[val_code[best]] = val_step[best]
    best_val = np.full(runs, np.nan)
    best_val[val_code[best]] = val_value[best]

    test = np.full(runs, np.nan)
    test_logged = np.zeros(runs, dtype=bool)
    if test_points is not None:
        test_code, test_step, test_value = _last_per_step(codes[len(val_points) :], test_points)
        test_logged[test_code] = True
        single = np.bincount(test_code, minlength=runs) == 1
        test[test_code[single[test_code]]] = test_value[single[test_code]]
        at_best = has_best[test_code] & (test_step == best_step[test_code])
        test[test_code[at_best]] = test_value[at_best]  # a point at the best step wins over a single one

    result = pd.DataFrame(
        {"step": best_step, "val": best_val, "test": test, "test_logged": test_logged},
        index=pd.Index(np.asarray(run_ids, dtype=object), name="run_id"),
    )
    return result.loc[has_best].sort_index()


def _last_per_step(codes: np.ndarray, points: pd.DataFrame) -> tuple[np.ndarray, ...]:
    """(run code, step, value) with one point per (run, step): the last one logged, sorted by run and step."""
    import numpy as np

    return last_per_step(codes, points["step"].to_numpy(dtype=np.int64), points["value"].to_numpy(dtype=np.float64))


def last_per_step(runs: np.ndarray, steps: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, ...]:
    """(run, step, value) of the points given in the order logged, one per (run, step): the last one logged, sorted
    by run and step. Points in that order already (most histories) are not sorted again."""
    import numpy as np

    if not in_run_and_step_order(runs, steps):
        order = np.lexsort((np.arange(runs.size), steps, runs))
        runs, steps, values = runs[order], steps[order], values[order]
    last = np.ones(runs.size, dtype=bool)
    last[:-1] = (runs[1:] != runs[:-1]) | (steps[1:] != steps[:-1])
    if last.all():  # no step logged twice: the arrays as they are, not copies
        return runs, steps, values
    return runs[last], steps[last], values[last]


def in_run_and_step_order(runs: np.ndarray, steps: np.ndarray) -> bool:
    """Whether the points are sorted by run (codes, in the order they are to be sorted in), then by step."""
    same_run = runs[1:] == runs[:-1]  # comparisons of neighbours: a byte per point, no differences
    return bool(((runs[1:] > runs[:-1]) | (same_run & (steps[1:] >= steps[:-1]))).all())


def apply_best_val_step(
    frame: pd.DataFrame,
    picked: pd.DataFrame,
    request: MetricRequest,
    *,
    columns: tuple[str, str | None] | None = None,
) -> pd.DataFrame:
    """``frame`` with ``metrics.<val>`` (and ``metrics.<test>``; or ``columns``) replaced by
    :func:`pick_best_val_step`'s values.

    Runs without validation points keep their last values (the fallback of ``pick="best_val_step"``); runs
    without any test point keep their last test value.
    """
    val_column, test_column = columns or (
        f"metrics.{request.val}",
        None if request.test is None else f"metrics.{request.test}",
    )
    out = frame.copy()
    ids = out["run_id"].astype(str)
    picked_here = ids.isin(picked.index).to_numpy()
    _replace(out, val_column, picked_here, ids.map(picked["val"]))
    if test_column is not None:
        with_test = ids.isin(picked.index[picked["test_logged"].to_numpy(dtype=bool)]).to_numpy()
        _replace(out, test_column, with_test, ids.map(picked["test"]))
    return out


def _replace(frame: pd.DataFrame, column: str, where: Any, values: pd.Series) -> None:
    """Set ``frame[column]`` to ``values`` where ``where`` holds; a missing column is added only when needed."""
    import numpy as np

    if column not in frame and not where.any():
        return
    previous = frame[column].to_numpy(dtype=np.float64) if column in frame else np.nan
    frame[column] = np.where(where, values.to_numpy(dtype=np.float64), previous)
