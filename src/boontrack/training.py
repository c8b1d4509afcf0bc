"""Training curves of a group across its runs: the mean at each step, with pointwise and simultaneous bands.

A metric logged per step (per epoch, per evaluation) by several runs of a group (seeds of one configuration)
gives, at each step, the mean over the runs that logged it and two bootstrap bands over runs: a pointwise one
(each step's own interval) and a simultaneous one (meant to hold the whole mean curve at once). The bootstrap
resamples whole runs, so each resample is a set of whole curves and the correlation of a run's values over
its steps is kept. Both bands are studentized, as the Boo_n curves of :mod:`boontrack.resampling` are: at step
s the statistic is ``t*_s = (mean*_s - mean_s) / se*_s`` with ``se = sd / sqrt(runs)``; the pointwise band is
``mean_s +- q_s se_s`` with q_s the ``confidence_level`` quantile of ``|t*_s|``, the simultaneous band
``mean_s +- c se_s`` with c that quantile of ``max_s |t*_s|`` (a sup-t band, Montiel Olea & Plagborg-Møller
2019). When every value lies in [0, 1] (or ``bounds`` are declared) the bands are computed on the logit scale
of the bounds and mapped back (:mod:`boontrack._bootstrap.scales`), so they stay inside.

Runs logged on different step grids are aligned on the step: a step's statistics use the runs that logged it,
and ``TrainingCurves.runs`` says how many. Steps with fewer than ``min_runs`` runs are marked
(``enough_runs`` False) and take no part in the simultaneous band's critical value.
"""

from __future__ import annotations

import copy
import functools
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, fields
from typing import Any, Literal

import numpy as np

from boontrack._bootstrap import evaluate_batches
from boontrack._bootstrap.intervals import UNBOUNDED, transformed_bounds, transformed_ratio
from boontrack._bootstrap.kernels import batch_sizes, draw_indices
from boontrack._bootstrap.scales import Scale
from boontrack._validation import (
    MAX_MAGNITUDE,
    as_bounds,
    as_choice,
    as_count,
    as_probability,
    as_rng,
)
from boontrack.exceptions import FewRunsWarning
from boontrack.spec import BEST_SO_FAR, Spec
from boontrack.vocabulary import name as _named

__all__ = ["DEFAULT_MIN_RUNS", "CurveKind", "TrainingCurves", "training_curves"]

CurveKind = Literal["value", "best-so-far"]
CURVE_KINDS: tuple[str, ...] = ("value", "best-so-far")
#: Runs a step needs to take part in the simultaneous band: with 3-4 runs it held the whole curve in only 54-90 % of
#: sweeps, from 5 runs on in 94-100 % (measurements in :func:`training_curves`).
DEFAULT_MIN_RUNS = 5
#: Steps of a group its bands are computed at, at most: a longer curve gets them at this many of its steps, evenly
#: spread (:func:`band_steps`), more than its plot is wide in pixels (900). The bands then cost resamples x these
#: steps, whatever the curve's length; the other steps get the mean, its standard error and the runs.
BAND_STEPS = 1000
#: Resamples x steps of studentized values held at once (8 MB): the bands' memory does not grow with the steps.
CHUNK_ELEMENTS = 1 << 20
#: Resamples x steps (or runs) of one batch, whose arrays (512 KB) stay in a core's cache while the batch is
#: studentized: 17-29 ns an element, against 100-200 ns in batches of 2**20 (measured, 6 runs, 104-1,000 steps).
BATCH_ELEMENTS = 1 << 16
#: Label of the single group when ``group_by`` is None (as :data:`boontrack.runtable.SINGLE_GROUP`).
SINGLE_GROUP = "all"


@dataclass(frozen=True)
class TrainingCurves:
    """Mean training curves of each group across its runs, with bootstrap bands; one row per (group, step).

    Attributes
    ----------
    group, step
        The group's label and the step, sorted by group then step; every step any run of the group logged.
    runs
        How many runs of the group logged that step (the mean and bands are over them).
    mean, standard_error
        Mean over those runs and its standard error ``sd / sqrt(runs)`` (NaN with one run).
    low, high
        The pointwise band: at each step on its own, an interval at ``confidence_level`` (NaN with one run).
    simultaneous_low, simultaneous_high
        The simultaneous (sup-t) band over the group's steps with enough runs; NaN at the other steps.
    enough_runs
        True where ``runs >= min_runs``: the steps the simultaneous band covers. Elsewhere the pointwise band
        rests on few runs; draw and report it as doubtful.
    metric, curve
        The metric's name and what was averaged: ``"value"`` (the metric itself) or ``"best-so-far"`` (per run,
        the running best validation value, or, with a test metric, the test value at that best step).
    test
        The test metric's name for a best-so-far curve of test values, else None.
    maximize, direction
        For ``"best-so-far"``: the direction used, and which way is better and who said so (``"higher is better,
        as asked"``, as a summary states it); None and ``""`` for ``"value"``.
    confidence_level, n_resamples, min_runs
        As requested.
    bounds
        The values' bounds the bands respect (declared, or [0, 1] when every value lies in it); infinite where
        there is none.
    """

    group: np.ndarray
    step: np.ndarray
    runs: np.ndarray
    mean: np.ndarray
    standard_error: np.ndarray
    low: np.ndarray
    high: np.ndarray
    simultaneous_low: np.ndarray
    simultaneous_high: np.ndarray
    enough_runs: np.ndarray
    metric: str
    curve: str
    test: str | None
    maximize: bool | None
    direction: str
    confidence_level: float
    n_resamples: int
    min_runs: int
    bounds: tuple[float, float]

    @property
    def entry(self) -> str:
        """These curves as an entry of ``Spec.curves`` asks for them: the metric, or ``best-so-far:<metric>`` (the
        test metric's name for the test value at the best step); their name in files and trackers."""
        return self.metric if self.curve == "value" else f"{BEST_SO_FAR}{self.test or self.metric}"

    @property
    def groups(self) -> tuple[str, ...]:
        """The group labels, in order."""
        return tuple(dict.fromkeys(self.group.tolist()))

    def of(self, group: str) -> TrainingCurves:
        """The rows of one group."""
        rows = self.group == group
        if not rows.any():
            raise ValueError(f"{_named('group')} {group!r} is not a group of these curves: {list(self.groups)}")
        return self._rows(rows)

    def plotted(self) -> TrainingCurves:
        """The rows a plot draws: every row but those between the steps a group's bands were computed at (a
        group of more than :data:`BAND_STEPS` steps), at most that many per group, which is more than a plot is
        wide in pixels."""
        return self._rows(~((self.runs > 1) & np.isnan(self.low)))

    def _rows(self, rows: np.ndarray) -> TrainingCurves:
        arrays = {
            name: getattr(self, name)[rows]
            for name in (
                "group", "step", "runs", "mean", "standard_error", "low", "high", "simultaneous_low",
                "simultaneous_high", "enough_runs",
            )
        }  # fmt: skip
        options = {name: getattr(self, name) for name in _OPTIONS}
        return TrainingCurves(**arrays, **options)


_OPTIONS = (
    "metric", "curve", "test", "maximize", "direction", "confidence_level", "n_resamples", "min_runs", "bounds",
)  # fmt: skip


# ----------------------------------------------------------------------------------------------------------
# Input


def _column(data: Any, column: Any, option: str) -> np.ndarray:
    """Column ``column`` of ``data`` (a DataFrame or a mapping of names to arrays) as a 1-D array."""
    if not isinstance(column, str):
        raise ValueError(f"{_named(option)} must be a column name, got {column!r}")
    try:
        values = data[column]
    except (KeyError, IndexError, TypeError, ValueError):
        raise ValueError(f"{_named(option)}: `data` has no column {column!r}") from None
    values = np.asarray(values)
    if values.ndim != 1:
        raise ValueError(f"{_named(option)}: column {column!r} must be 1-D, got shape {values.shape}")
    return values


def _numbers(data: Any, column: str, option: str) -> np.ndarray:
    """A numeric column: finite real values within ±MAX_MAGNITUDE, or ValueError naming the first bad row."""
    raw = _column(data, column, option)
    if raw.dtype.kind not in "iuf":
        raise ValueError(f"{_named(option)}: column {column!r} must hold real numbers, got dtype {raw.dtype}")
    values = raw.astype(np.float64, copy=False)
    bad = np.flatnonzero(~(np.abs(values) <= MAX_MAGNITUDE))  # NaN and infinities too
    if bad.size:
        raise ValueError(
            f"{_named(option)}: column {column!r} must be finite (within ±{MAX_MAGNITUDE:g}); row {bad[0]} is "
            f"{float(values[bad[0]])!r} ({bad.size} such rows): drop the points a run did not measure, or keep a "
            "diverged run's last finite value"
        )
    return values


def _steps(data: Any, column: str) -> np.ndarray:
    """The step column: whole numbers as int64, other real numbers as they are."""
    raw = _column(data, column, "step")
    if raw.dtype.kind in "iu":
        return raw.astype(np.int64, copy=False)
    steps = _numbers(data, column, "step")
    return steps.astype(np.int64) if np.all(steps == np.round(steps)) else steps


def _labels(data: Any, column: str, option: str) -> np.ndarray:
    """A column of labels (run ids, groups) as given; they are compared as text (:func:`_factorized`)."""
    return _column(data, column, option)


def _factorized(labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct labels as text, sorted, and the position of each row's label among them, as ``np.unique`` of
    the labels as text gives them. A history lists a run's points together: only the first label of each stretch
    of equal ones is converted and sorted, so that a long history costs one comparison per point."""
    starts = np.flatnonzero(np.concatenate(([True], labels[1:] != labels[:-1])))
    distinct, position = np.unique(labels[starts].astype(str), return_inverse=True)
    position = position.astype(np.min_scalar_type(distinct.size))  # a byte per row for up to 255 labels
    return distinct, np.repeat(position, np.diff(np.append(starts, labels.size)))


#: Whole numbers are numbered through a table over their range (13x faster than sorting 6 million of them) while
#: the range holds at most this many values per row.
_DENSE_SPAN = 4


def _numbered(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct values, sorted, and the position of each row's value among them, as
    ``np.unique(values, return_inverse=True)`` gives them; through a table over their range for whole numbers
    that span little more than their count, the positions then in the smallest type that holds them."""
    if values.dtype.kind not in "iu" or values.size == 0:
        return np.unique(values, return_inverse=True)
    least = values.min()
    span = int(values.max()) - int(least) + 1
    if span > _DENSE_SPAN * values.size:
        return np.unique(values, return_inverse=True)
    offset = values - least
    present = np.zeros(span, dtype=bool)
    present[offset] = True
    positions = np.cumsum(present, dtype=np.min_scalar_type(span)) - 1  # read only where present: >= 0
    return np.flatnonzero(present) + least, positions[offset]


def _repeated_point(run_ids: np.ndarray, run_code: np.ndarray, steps: np.ndarray, step_code: np.ndarray) -> ValueError:
    """The error for rows that repeat a run and step, naming the first such run and step."""
    cells, counts = np.unique(run_code.astype(np.int64) * steps.size + step_code, return_counts=True)
    cell = cells[np.argmax(counts > 1)]
    return ValueError(
        f"`data` has {counts.max()} rows for run {str(run_ids[cell // steps.size])!r} at step "
        f"{steps[cell % steps.size].item()!r}: keep one row per run and step (the last one logged)"
    )


@dataclass(frozen=True)
class _Grid:
    """One group's runs aligned on its steps: ``values[run, step]``, NaN where a run did not log the step."""

    steps: np.ndarray
    values: np.ndarray
    test: np.ndarray | None


def _grids(
    run: np.ndarray, group: np.ndarray, step: np.ndarray, value: np.ndarray, test: np.ndarray | None
) -> dict[str, _Grid]:
    """Each group's grid; ValueError for a run in two groups or logged twice at a step. Time and memory grow with
    the rows and each group's runs x steps: the rows are never sorted."""
    run_ids, run_code = _factorized(run)
    group_ids, group_code = _factorized(group)
    group_of_run = np.empty(run_ids.size, dtype=group_code.dtype)
    group_of_run[run_code] = group_code  # the group of each run's last row, which all its rows must have
    split = run_code[group_of_run[run_code] != group_code]
    if split.size:
        raise ValueError(f"{_named('group_by')}: run {str(run_ids[split.min()])!r} has rows in more than one group")
    step_values, step_code = _numbered(step)
    if group_ids.size == 1:
        parts: list[Any] = [slice(None)]  # every row, without a copy
    else:
        parts = np.split(np.argsort(group_code, kind="stable"), np.cumsum(np.bincount(group_code))[:-1])
    grids = {}
    for label, rows in zip(group_ids, parts):
        runs_here, r = _numbered(run_code[rows])
        steps_here, s = _numbered(step_code[rows])
        shape = (runs_here.size, steps_here.size)
        values = np.full(shape, np.nan)
        values[r, s] = value[rows]
        if np.count_nonzero(~np.isnan(values)) < value[rows].size:  # the values are finite: a cell written twice
            raise _repeated_point(run_ids, run_code, step_values, step_code)
        tests = None
        if test is not None:
            tests = np.full(shape, np.nan)
            tests[r, s] = test[rows]
        grids[str(label)] = _Grid(step_values[steps_here], values, tests)
    return grids


def _direction(curve: str, maximize: Any, metric: str) -> tuple[bool | None, str]:
    """The direction a best-so-far curve needs, and who said it, by the rule of every summary
    (:meth:`boontrack.spec.Spec.resolve_direction`): the caller's, else higher is better, except for a metric
    named like a loss or an error, which is refused without one. A curve of values needs none."""
    spec = Spec(val=metric, maximize=maximize)  # checks maximize
    if curve != "best-so-far":
        return None, ""
    resolved = spec.resolve_direction()
    return resolved.maximize, resolved.direction


def _min_runs_iv(min_runs: Any) -> int:
    count = as_count(min_runs, "min_runs")
    if count < 2:
        raise ValueError(f"{_named('min_runs')} must be at least 2 (a band needs two runs), got {min_runs!r}")
    return count


def _training_curves_iv(
    data, value, test, run, step, group_by, curve, maximize, min_runs, confidence_level, n_resamples, rng, bounds
):
    curve = as_choice(curve, "curve", CURVE_KINDS)
    if test is not None and curve != "best-so-far":
        raise ValueError(f"{_named('test')} is for curve='best-so-far' (the test value at the best validation step)")
    values = _numbers(data, value, "value")
    if values.size == 0:
        raise ValueError("`data` has no rows: at least one run is needed")
    tests = None if test is None else _numbers(data, test, "test")
    steps = _steps(data, step)
    runs = _labels(data, run, "run")
    groups = np.full(values.size, SINGLE_GROUP) if group_by is None else _labels(data, group_by, "group_by")
    for option, column in (("test", tests), ("step", steps), ("run", runs), ("group_by", groups)):
        if column is not None and column.size != values.size:
            raise ValueError(f"{_named(option)}: the column has {column.size} rows, `value`'s {values.size}")
    direction = _direction(curve, maximize, value)
    plotted = values if tests is None else tests
    return (
        _grids(runs, groups, steps, values, tests),
        curve,
        direction,
        _min_runs_iv(min_runs),
        as_probability(confidence_level, "confidence_level"),
        as_count(n_resamples, "n_resamples"),
        as_rng(rng),
        as_bounds(bounds, plotted),
    )


# ----------------------------------------------------------------------------------------------------------
# Statistics


def best_so_far(values: np.ndarray, test: np.ndarray | None, maximize: bool) -> np.ndarray:
    """Per run (row), at each logged step: the best validation value so far, or with ``test`` the test value at
    the step where that best was first reached (ties keep the earlier step, as early stopping does); NaN where
    the run did not log."""
    logged = ~np.isnan(values)
    signed = np.where(logged, values if maximize else -values, -np.inf)
    best = np.maximum.accumulate(signed, axis=1)
    before = np.concatenate([np.full((values.shape[0], 1), -np.inf), best[:, :-1]], axis=1)
    improved = logged & (signed > before)
    where = np.maximum.accumulate(np.where(improved, np.arange(values.shape[1]), 0), axis=1)
    source = values if test is None else test
    return np.where(logged, np.take_along_axis(source, where, axis=1), np.nan)


@dataclass(frozen=True)
class _Moments:
    """Each step's runs, mean and standard error, from values centred on a reference (one run's value), so that
    a constant step has exactly zero spread and a shift of every value shifts only the reference."""

    logged: np.ndarray
    reference: np.ndarray
    centred: np.ndarray
    runs: np.ndarray
    shift: np.ndarray
    mean: np.ndarray
    standard_error: np.ndarray

    def at(self, steps: np.ndarray) -> _Moments:
        """The moments of ``steps`` (positions) alone."""
        return _Moments(*(getattr(self, field.name)[..., steps] for field in fields(self)))


def _moments(values: np.ndarray) -> _Moments:
    logged = ~np.isnan(values)
    first = np.argmax(logged, axis=0)
    reference = values[first, np.arange(values.shape[1])]
    centred = np.where(logged, values - reference, 0.0)
    runs = logged.sum(axis=0)
    shift = centred.sum(axis=0) / runs
    squares = np.where(logged, (centred - shift) ** 2, 0.0).sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        standard_error = np.where(runs > 1, np.sqrt(squares / np.maximum(runs - 1, 1) / runs), np.nan)
    return _Moments(logged, reference, centred, runs, shift, reference + shift, standard_error)


def _studentized(moments: _Moments, indices: np.ndarray, scale: Scale) -> np.ndarray:
    """``(mean* - mean) / se*`` at each step for a batch of resamples of whole runs, on the bounds' scale;
    +-UNBOUNDED where se* = 0 and the resample's mean differs, UNBOUNDED where no drawn run logged the step."""
    b, m = indices.shape
    counts = np.bincount((indices + m * np.arange(b)[:, None]).ravel(), minlength=b * m).reshape(b, m)
    counts = counts.astype(np.float64)
    runs = counts @ moments.logged
    total = counts @ moments.centred
    squares = counts @ moments.centred**2
    with np.errstate(divide="ignore", invalid="ignore"):
        shift = total / runs
        variance = np.maximum(squares - total * shift, 0.0) / (runs - 1)
        error = np.where(runs > 1, np.sqrt(variance / runs), 0.0)
    centre = moments.reference + np.where(runs > 0, shift, 0.0)
    ratio = transformed_ratio(centre, moments.mean, error, scale)
    return np.where(runs > 0, ratio, UNBOUNDED)


def band_steps(runs: np.ndarray, limit: int) -> np.ndarray:
    """The steps (positions) a group's bands are computed at: every step with two runs or more, or ``limit`` of
    them evenly spread, the first and the last included."""
    candidates = np.flatnonzero(runs > 1)
    if candidates.size <= limit:
        return candidates
    return candidates[np.unique(np.linspace(0, candidates.size - 1, limit).round().astype(np.intp))]


def _batches(rng: np.random.Generator, m: int, n_resamples: int, steps: int) -> Iterator[np.ndarray]:
    """The resamples (rows of m run positions) in batches of about :data:`BATCH_ELEMENTS` resamples x ``steps``."""
    for size in batch_sizes(n_resamples, max(m, steps), BATCH_ELEMENTS):
        yield draw_indices(rng, m, size)


def _studentized_quantiles(
    moments: _Moments,
    steps: np.ndarray,
    enough: np.ndarray,
    level: float,
    n_resamples: int,
    rng: np.random.Generator,
    scale: Scale,
) -> tuple[np.ndarray, np.ndarray]:
    """At each of ``steps``, the ``level`` quantile of ``|t*|`` over the resamples; and per resample, the largest
    ``|t*|`` over those of ``steps`` where ``enough`` holds (0 where none does).

    The steps are taken in chunks of :data:`CHUNK_ELEMENTS` resamples x steps, so that memory does not grow with
    the curve's length. Every chunk sees the same resamples: its draws come from a copy of ``rng`` as it was,
    and the last chunk's from ``rng`` itself, which is left where one pass over the draws leaves it.
    """
    m = moments.logged.shape[0]
    width = max(1, CHUNK_ELEMENTS // n_resamples)
    quantiles = np.empty(steps.size)
    largest = np.zeros(n_resamples)
    for start in range(0, max(steps.size, 1), width):  # one pass over the draws at least: the generator moves on
        chunk = steps[start : start + width]
        draws = rng if start + width >= steps.size else copy.deepcopy(rng)
        batches = _batches(draws, m, n_resamples, chunk.size)
        studentized = functools.partial(_studentized, moments.at(chunk), scale=scale)
        ratios = np.abs(np.concatenate(evaluate_batches(studentized, batches)))
        quantiles[start : start + chunk.size] = np.quantile(ratios, level, axis=0)
        counted = enough[chunk]
        if counted.any():
            np.maximum(largest, ratios[:, counted].max(axis=1), out=largest)
    return quantiles, largest


def _plausible(values: np.ndarray, bounds: tuple[float, float]) -> tuple[np.ndarray, np.ndarray]:
    """Where a step's mean can plausibly lie: the runs' range widened by itself on each side, inside the bounds.
    It stops the intervals that a resample with se* = 0 makes unbounded (two runs: half the resamples draw one
    run twice) at values no run is near, as :func:`boontrack._bootstrap.intervals.plausible_range` does."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a step no run logged has no range
        least, most = np.nanmin(values, axis=0), np.nanmax(values, axis=0)
    span = most - least
    return np.maximum(least - span, bounds[0]), np.minimum(most + span, bounds[1])


def _group_bands(
    values: np.ndarray,
    min_runs: int,
    level: float,
    n_resamples: int,
    rng: np.random.Generator,
    bounds: tuple[float, float],
) -> dict[str, np.ndarray]:
    moments = _moments(values)
    scale = Scale(*bounds)
    enough = (moments.runs > 1) & (moments.runs >= min_runs)
    at = band_steps(moments.runs, BAND_STEPS)
    quantiles, largest = _studentized_quantiles(moments, at, enough, level, n_resamples, rng, scale)
    least, most = _plausible(values, bounds)
    banded = np.zeros(moments.runs.size, dtype=bool)
    banded[at] = True

    def band(quantile: np.ndarray, where: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        error = np.where(where, moments.standard_error, 0.0)
        low, high = transformed_bounds(moments.mean, error, quantile, scale)
        return np.where(where, np.clip(low, least, most), np.nan), np.where(where, np.clip(high, least, most), np.nan)

    pointwise = np.zeros(moments.runs.size)
    pointwise[at] = quantiles
    low, high = band(pointwise, banded)
    simultaneous = banded & enough
    critical = np.quantile(largest, level) if simultaneous.any() else np.float64(0.0)
    simultaneous_low, simultaneous_high = band(np.full(moments.runs.size, critical), simultaneous)
    return {
        "runs": moments.runs,
        "mean": moments.mean,
        "standard_error": moments.standard_error,
        "low": low,
        "high": high,
        "simultaneous_low": simultaneous_low,
        "simultaneous_high": simultaneous_high,
        "enough_runs": enough,
    }


def training_curves(
    data: Any,
    *,
    value: str = "value",
    test: str | None = None,
    run: str = "run_id",
    step: str = "step",
    group_by: str | None = None,
    curve: CurveKind = "value",
    maximize: bool | None = None,
    min_runs: int = DEFAULT_MIN_RUNS,
    confidence_level: float = 0.95,
    n_resamples: int = 9999,
    rng: Any = None,
    bounds: tuple[float | None, float | None] | None = None,
) -> TrainingCurves:
    """Each group's mean training curve across its runs, with a pointwise and a simultaneous bootstrap band.

    The bootstrap resamples whole runs (Bajgar et al. 2018, Appendix D.1, over runs rather than single scores)
    and studentizes the mean at each step: the pointwise band is ``mean_s +- q_s se_s``, q_s the
    ``confidence_level`` quantile of ``|mean*_s - mean_s| / se*_s``; the simultaneous band ``mean_s +- c se_s``
    with c that quantile of the largest such ratio over the steps with at least ``min_runs`` runs (the sup-t band
    of :class:`boontrack.resampling.CurveBand`). With bounds (declared, or [0, 1] when every value lies in it)
    both are computed on their logit scale and mapped back. A step's interval is cut to the runs' range
    widened by itself on each side (a resample that draws one run only has se* = 0 and an unbounded ratio:
    with two runs, half of them do, and the band is that range).

    Parameters
    ----------
    data : pandas.DataFrame or mapping of column name to 1-D array
        Long form: one row per run and step (a step logged twice is refused; keep the last value logged).
    value : str
        Column of the metric (the validation metric for ``curve="best-so-far"``).
    test : str, optional
        For ``curve="best-so-far"``: column of the test metric at the same steps; the curve is then each run's
        test value at its best validation step so far.
    run, step : str
        Columns of the run id and of the step (any real numbers; steps of different runs are aligned by value).
    group_by : str, optional
        Column of the group label (one curve per group); None: every run in one group, ``"all"``.
    curve : {"value", "best-so-far"}
        ``"value"``: the metric as logged. ``"best-so-far"``: per run, the running best of ``value`` (what early
        stopping reports; among equal values the earlier step is kept) or the ``test`` value at that step.
    maximize : bool, optional
        Direction of ``value`` for ``"best-so-far"`` (unused for ``"value"``). None: higher is better, except
        for a metric named like a loss or an error (``val_loss``, ``eval/perplexity``), which is refused: say
        which way (:meth:`boontrack.spec.Spec.resolve_direction`).
    min_runs : int
        Steps logged by fewer runs are marked (``enough_runs`` False) and left out of the simultaneous band.
    confidence_level : float
        In (0, 1).
    n_resamples : int
        Bootstrap resamples B. The bands are computed at up to :data:`BAND_STEPS` (1,000) steps per group, a
        chunk of :data:`CHUNK_ELEMENTS` resamples x steps at a time: memory grows with runs x steps, time with
        runs x steps plus B x 1,000.
    rng : int or numpy.random.Generator, optional
        Source of randomness; the same seed gives the same result. The global RNG is never used.
    bounds : (low, high), optional
        Bounds of the curve's values (None on a side: open). None: [0, 1] when every value lies in it, else none.

    Returns
    -------
    TrainingCurves
        One row per group and step. A group of more than :data:`BAND_STEPS` steps (with two runs or more) gets
        its bands at that many of them, evenly spread, the first and the last included (:func:`band_steps`):
        there they are those of the curve of those steps alone; the other rows have the mean, standard error and
        runs, and NaN bands. :meth:`TrainingCurves.plotted` gives the rows a plot draws.

    Raises
    ------
    ValueError
        A missing column, values that are not finite numbers, a run in two groups or logged twice at a step,
        a loss-like ``value`` for ``"best-so-far"`` without ``maximize``, ``test`` without ``"best-so-far"``,
        ``min_runs`` < 2, ``confidence_level`` outside (0, 1), ``n_resamples`` < 1, bounds that do not hold
        the values.

    Warns
    -----
    FewRunsWarning
        Some steps have fewer than ``min_runs`` runs (how many, per group, in the message).

    Notes
    -----
    Coverage at nominal 95 %, measured on simulated curves with known means (30 steps; a run-level random
    effect plus AR(1) noise with coefficient 0.8 around an accuracy rising to 0.9, one rising to about 0.99 on
    the logit scale, a decaying loss, and runs that stop at steps 10-30;
    ``tests/benchmarks/bench_training_curves.py``, 400 sweeps per cell, 999 resamples): at 5, 10 and 20 runs
    the pointwise band covered 94.4-97.9 % of the steps and the simultaneous band held the whole curve in
    94.0-99.8 % of the sweeps, at 1.45-2.19x the pointwise width (4.4-7.2x on the ragged grids at 10 and 20 runs,
    where the late steps, with 5-9 runs left, set the critical value). With 3 or 4 runs (``min_runs=2``, 200
    sweeps) the pointwise band still covered 94.6-98.4 % but the simultaneous one only 54-64 % (3 runs) and
    82-90 % (4 runs): hence the default ``min_runs`` of 5. Best-so-far curves of the same simulated runs (the
    benchmark's ``--curve best-so-far``) at 5-20 runs: pointwise 94.9-97.9 %, simultaneous 95.5-99.8 %. No band
    covers a failure the runs have not shown: when 10 % of the runs diverge (their loss jumps from about 0.3 to
    5), the simultaneous band held the mean curve in 20-70 % of the sweeps at 5-20 runs (pointwise 53-74 %); with
    such runs, look at them, and at the curve without them, rather than at the mean.

    Curves of 3,000 steps (the same shapes on a finer grid, bands at 1,000 steps, 300 sweeps per cell;
    ``--steps 3000``): pointwise 94.5-98.3 %; simultaneous 95.7-100 % at 10 and 20 runs, 88.0-96.3 % at 5 runs,
    and 66.3-78.7 % at 5 runs when the noise is nearly independent from one band step to the next. Computing the
    bands at 100 of 300 steps rather than at all of them changed neither coverage beyond 1.6 points (the same
    sweeps and resamples); the shortfall at 5 runs comes with the number of steps held at once.

    Examples
    --------
    >>> from boontrack.training import training_curves
    >>> data = {"run_id": ["a", "a", "b", "b", "c", "c", "d", "d", "e", "e"],
    ...         "step": [1, 2] * 5, "value": [0.5, 0.6, 0.52, 0.63, 0.49, 0.61, 0.51, 0.58, 0.5, 0.62]}
    >>> curves = training_curves(data, rng=0, n_resamples=999)
    >>> curves.step.tolist(), curves.runs.tolist()
    ([1, 2], [5, 5])
    >>> bool(all(curves.simultaneous_low <= curves.mean) and all(curves.mean <= curves.simultaneous_high))
    True
    """
    grids, curve, (direction, said), min_runs, level, n_resamples, rng, bound_pair = _training_curves_iv(
        data, value, test, run, step, group_by, curve, maximize, min_runs, confidence_level, n_resamples, rng, bounds
    )
    parts: dict[str, list[np.ndarray]] = {}
    few = []
    for label, grid in grids.items():
        values = grid.values
        if curve == "best-so-far":
            values = best_so_far(grid.values, grid.test, direction is not False)
        columns = _group_bands(values, min_runs, level, n_resamples, rng, bound_pair)
        columns = {"group": np.full(grid.steps.size, label, dtype=object), "step": grid.steps, **columns}
        for column, array in columns.items():
            parts.setdefault(column, []).append(array)
        short = int(np.count_nonzero(columns["runs"] < min_runs))
        if short:
            few.append(f"{label!r}: {short} of {grid.steps.size} steps")
    if few:
        warnings.warn(
            f"steps with fewer than {min_runs} runs are marked (enough_runs False) and left out of the simultaneous "
            f"band: {'; '.join(few)}",
            FewRunsWarning,
            stacklevel=2,
        )
    arrays = {column: np.concatenate(chunks) for column, chunks in parts.items()}
    return TrainingCurves(
        **arrays,
        metric=value,
        curve=curve,
        test=test,
        maximize=direction,
        direction=said,
        confidence_level=level,
        n_resamples=n_resamples,
        min_runs=min_runs,
        bounds=bound_pair,
    )
