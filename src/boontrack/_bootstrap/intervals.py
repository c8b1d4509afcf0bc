"""Interval methods on a bootstrap distribution: percentile, BCa, studentized (with a calibrated level), sup-t bands.

:func:`curve_distribution` resamples one group's runs and returns everything the methods need
(:class:`Resampled`); :func:`interval_ends` and :func:`simultaneous_band` turn it into intervals. The choice of
the default method is described in :mod:`boontrack.resampling`.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import NamedTuple

import numpy as np

from boontrack._bootstrap.compiled import compiled_counting, compiled_pass
from boontrack._bootstrap.kernels import (
    BATCH_ELEMENTS,
    Counted,
    RankedRuns,
    Resamples,
    bootstrap_indices,
    cdf_table,
    draw_indices,
    jackknife_indices,
    resample_count,
    resample_rows,
    slope_of,
    slope_table,
    smoothed_boo_n,
)
from boontrack._bootstrap.scales import UNBOUNDED_RANGE, Scale
from boontrack._bootstrap.threads import evaluate_batches
from boontrack._special import ndtr, ndtri
from boontrack.estimators import Estimator

#: Stands for an infinite studentized value (a resample with se* = 0), kept finite so that quantiles are.
UNBOUNDED = 1e300
#: Runs x budgets x resamples of one group's studentized pass beyond which only its first resamples are
#: studentized (:func:`studentized_resamples`): 100 runs at 100 budgets and 10,000 resamples studentize in full.
STUDENTIZED_WORK = 10**8
#: Fewest resamples studentized when the work is cut: (B + 1) * alpha / 2 is a whole number at the usual levels.
STUDENTIZED_RESAMPLES = 1999
#: Largest share n / m of budgets whose band is trustworthy (measurements in :class:`CurveBand`).
TRUSTED_SHARE = 0.5
#: Budgets of a band whose studentized pivot is resampled, about (:func:`pivot_columns`), besides the reported ones
#: and the largest trustworthy one: at the others the reaches are interpolated between theirs.
PIVOT_BUDGETS = 10


#: The studentized-u interval at a level calibrated by a second-level bootstrap (:func:`calibration_prepivots`).
CALIBRATED_METHOD = "studentized-u-calibrated"
#: The studentized-u pivot, each end as far as the farther of the symmetric and the equal-tailed interval's
#: (:func:`farther_reaches`): the default.
FARTHER_METHOD = "studentized-u-farther"
#: The same ends with the pivot's quantiles from resamples of fewer runs than the sweep has
#: (:func:`k_out_of_m_sizes`, :func:`k_out_of_m_pivots`).
K_OF_M_METHOD = "studentized-u-k-of-m"
STUDENTIZED_METHODS = ("studentized-u", "studentized", CALIBRATED_METHOD, FARTHER_METHOD, K_OF_M_METHOD)
#: The studentized methods whose ends reach as far as the farther of the symmetric and the equal-tailed interval's.
FARTHER_METHODS = (FARTHER_METHOD, K_OF_M_METHOD)
#: The studentized methods whose pivot is the resamples' own (no second level, no resamples of fewer runs): a band
#: can take the reaches of its unread budgets from its first resamples alone (:func:`curve_distribution`).
PLAIN_METHODS = ("studentized-u", "studentized", FARTHER_METHOD)
#: A k-out-of-m resample draws at least this share of the sweep's runs ...
K_OF_M_SHARE = 0.5
#: ... and at least this many times the budget (at n = m/2 of ten runs: 8 runs, not 5) ...
K_OF_M_PER_BUDGET = 1.5
#: ... and at least this many runs (fewer leave se* = 0 often: a pivot that is then unbounded), at most m.
K_OF_M_FEWEST = 5
#: 1.5 n is rounded up to a multiple of ceil(m / K_OF_M_SIZES), so that a curve of many budgets has at most half
#: this many sizes and two, each one pass over the resamples (every size exact up to 32 runs).
K_OF_M_SIZES = 32
#: Resamples whose own resamples calibrate the level, at most (fewer when n_resamples is smaller) ...
CALIBRATING_RESAMPLES = 249
#: ... and the resamples drawn from each of them (Booth & Hall 1994: the inner count matters less than the outer).
INNER_RESAMPLES = 39
#: Runs x budgets x calibrating x inner resamples of one group's calibration beyond which fewer resamples
#: calibrate (:func:`calibrating_resamples`) ...
CALIBRATION_WORK = 10**8
#: ... down to this many.
FEWEST_CALIBRATING = 49


class Pivot(NamedTuple):
    """What a studentized interval is made of, one column per budget.

    The interval is ``centre +- q se`` (on the scale of :mod:`boontrack._bootstrap.scales`), q the quantile of
    ``|centre* - reference| / se*`` over the resamples. For ``"studentized"`` the centre is the estimate and the
    reference too. For ``"studentized-u"`` the centre is Tang et al.'s unbiased U and the reference is V, Boo_n of
    the runs themselves: U of a resample is unbiased for it (U is unbiased whatever the population, and the
    resamples' population is the runs), as U of the runs is unbiased for the true Boo_n, so no bias is left
    to estimate. Budgets above m, where U is undefined, fall back to V as centre.

    The resamples are studentized at the budgets of ``columns`` alone (:func:`pivot_columns`); at the others the
    reaches (q, in standard errors) are interpolated between theirs (:meth:`spread`).
    """

    #: The budgets, and the centre on the data and its delta-method standard error at each (budgets,).
    budgets: np.ndarray
    centre: np.ndarray
    standard_error: np.ndarray
    #: The value the resamples' centres are compared with (budgets,).
    reference: np.ndarray
    #: The budgets (indices into ``budgets``) whose resamples are studentized, ascending.
    columns: np.ndarray
    #: The centre and its standard error on the first B_t resamples at the budgets of ``columns`` (B_t, columns).
    resample_centre: np.ndarray
    resample_standard_error: np.ndarray
    scale: Scale
    #: For the calibrated method: each calibrating resample's prepivot (calibrating resamples, columns), the
    #: share of its own resamples' |pivot| below its |pivot| (:func:`calibration_prepivots`); else None.
    prepivots: np.ndarray | None = None

    def calibrated_level(self, confidence_level: float) -> np.ndarray:
        """The level, per budget of ``columns``, at which the interval holds the truth in ``confidence_level`` of
        the calibrating resamples' worlds, the ``confidence_level`` quantile of the prepivots (Beran 1987, §3), and
        never below ``confidence_level``: the calibration only widens. Left free, it narrowed the interval at
        n = m/2, where the resamples of a resample repeat runs more than the resamples do, and cost coverage there
        (SciTail simple_overlap, m = 10, n = 5: 89.0 % where studentized-u covered 95.8 %; 400 sweeps)."""
        assert self.prepivots is not None  # kept by the calibrated resampling
        return np.maximum(confidence_level, np.quantile(self.prepivots, confidence_level, axis=0))

    def studentized(self) -> np.ndarray:
        """``(centre* - reference) / se*`` on the transformed scale, one row per studentized resample and one
        column per budget of ``columns``."""
        reference = self.reference[self.columns]
        return transformed_ratio(self.resample_centre, reference, self.resample_standard_error, self.scale)

    def spread(self, reach: np.ndarray) -> np.ndarray:
        """A reach per budget of ``columns`` (in standard errors), at every budget: interpolated in log n between
        them (the reach of a pivot changes slowly with n; a reach beyond the plausible range stays so)."""
        if self.columns.size == self.budgets.size:
            return reach
        return np.interp(np.log(self.budgets), np.log(self.budgets[self.columns]), np.minimum(reach, UNBOUNDED))

    def bounds(self, quantile: np.ndarray, upper: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``centre - quantile * se`` and ``centre + upper * se`` (``upper``: ``quantile`` when None) per budget of
        ``columns``, spread to every budget (:meth:`spread`), on the transformed scale and mapped back."""
        low, high = transformed_bounds(self.centre, self.standard_error, self.spread(quantile), self.scale)
        if upper is not None:
            high = transformed_bounds(self.centre, self.standard_error, self.spread(upper), self.scale)[1]
        return low, high


class Resampled(NamedTuple):
    """Everything an interval method needs, one column per budget."""

    estimate: np.ndarray
    #: The statistic (the estimator asked for) on each resample, (B, budgets).
    dist: np.ndarray
    #: Leave-one-out values (m, budgets), for BCa; else None.
    jackknife: np.ndarray | None
    #: For the studentized methods; else None.
    pivot: Pivot | None
    #: Where an interval may reach (see :func:`plausible_range`), inside the score's bounds.
    plausible: tuple[float, float]
    #: The scale of the score's bounds (the identity without bounds).
    scale: Scale

    @property
    def resamples(self) -> int:
        """The resamples drawn."""
        return self.dist.shape[0]

    def extended(self, more: Resampled) -> Resampled:
        """These resamples and ``more`` of the same runs (drawn after them from the same generator), as one."""
        pivot = self.pivot
        if pivot is not None:
            assert more.pivot is not None  # the same method
            prepivots = None
            if pivot.prepivots is not None and more.pivot.prepivots is not None:
                prepivots = np.concatenate([pivot.prepivots, more.pivot.prepivots])
            pivot = pivot._replace(
                resample_centre=np.concatenate([pivot.resample_centre, more.pivot.resample_centre]),
                resample_standard_error=np.concatenate(
                    [pivot.resample_standard_error, more.pivot.resample_standard_error]
                ),
                prepivots=prepivots,
            )
        return self._replace(dist=np.concatenate([self.dist, more.dist]), pivot=pivot)


def transformed_ratio(centre: np.ndarray, reference: np.ndarray, error: np.ndarray, scale: Scale) -> np.ndarray:
    """``(g(centre) - g(reference)) / (error g'(centre))`` for the scale's map g (the identity: a plain ratio).

    A centre on a bound is infinitely far from an inner reference on the transformed scale: its ratio is
    +-UNBOUNDED (0 when the reference is on the same bound), as for a resample with se* = 0 (:func:`studentize`).
    """
    if not scale.bounded:
        return studentize(centre - reference, error)
    inside = scale.interior(centre)
    with np.errstate(all="ignore"):  # the transformed branch is not taken where it is infinite
        difference = scale.forward(centre) - scale.forward(reference)
        ratio = studentize(np.where(inside, difference, 0.0), error * np.where(inside, scale.slope(centre), 1.0))
    apart = np.sign(np.nan_to_num(centre - reference))
    return np.where(inside, ratio, apart * UNBOUNDED)


def transformed_bounds(
    centre: np.ndarray, error: np.ndarray, quantile: np.ndarray, scale: Scale
) -> tuple[np.ndarray, np.ndarray]:
    """``g^-1(g(centre) +- quantile * error * g'(centre))``: an unbounded quantile reaches the bounds.

    A centre on a bound (every run that carries weight scored it) has no transformed scale: there the interval
    is ``centre +- quantile * error``, cut at the bounds.
    """
    quantile = np.minimum(quantile, UNBOUNDED)
    with np.errstate(all="ignore"):  # the transformed branch is not taken where it is infinite
        plain = quantile * error
        if not scale.bounded:
            return centre - plain, centre + plain
        inside = scale.interior(centre)
        middle, half = scale.forward(centre), plain * scale.slope(centre)
        low = np.where(inside, scale.inverse(middle - half), np.maximum(centre - plain, scale.low))
        high = np.where(inside, scale.inverse(middle + half), np.minimum(centre + plain, scale.high))
    return low, high


def percentile_interval(dist: np.ndarray, confidence_level: float) -> tuple[float, float]:
    alpha = 1.0 - confidence_level
    low, high = np.quantile(dist, [alpha / 2, 1 - alpha / 2])
    return float(low), float(high)


def bca_interval(
    dist: np.ndarray, estimate: float, jackknife: np.ndarray, confidence_level: float
) -> tuple[float, float]:
    """Bias-corrected and accelerated interval (Efron 1987; the formulas of scipy.stats.bootstrap).

    The bias-correction quantile is kept within ``[1/(2B), 1 - 1/(2B)]``: when every resample lies on one side
    of the estimate the correction is unbounded, and the interval then ends at the extreme resample.
    """
    b = dist.size
    below = (np.count_nonzero(dist < estimate) + np.count_nonzero(dist <= estimate)) / (2.0 * b)
    z0 = ndtri(np.clip(below, 0.5 / b, 1 - 0.5 / b))
    spread = jackknife.mean() - jackknife
    denominator = 6.0 * np.sum(spread**2) ** 1.5
    accel = np.sum(spread**3) / denominator if denominator > 0 else 0.0
    alpha = 1.0 - confidence_level
    z = ndtri(np.array([alpha / 2, 1 - alpha / 2]))
    probs = ndtr(z0 + (z0 + z) / (1.0 - accel * (z0 + z)))
    low, high = np.quantile(dist, probs)
    return float(low), float(high)


def bootstrap_standard_error(dist: np.ndarray) -> np.ndarray:
    """Standard deviation (ddof=1) along axis 0; NaN for one resample. Centred first, so that a constant
    distribution gives exactly 0 rather than a rounding residue."""
    if dist.shape[0] < 2:
        return np.full(dist.shape[1:], math.nan)
    return (dist - dist[0]).std(axis=0, ddof=1)


def studentized_interval(resampled: Resampled, confidence_level: float, method: str) -> tuple[np.ndarray, np.ndarray]:
    """Bootstrap-t interval (Hall 1988; Efron & Tibshirani 1993, §12.5), one per budget: symmetric, and for the
    ``FARTHER_METHODS`` each end as far as the farther of the symmetric and the equal-tailed one's (below).

    ``centre +- q se`` (:class:`Pivot`), where q is the ``confidence_level`` quantile of the resamples'
    ``|centre* - reference| / se*`` and se the delta-method standard error on the data. The interval is widened to
    hold the estimate (when the centre is another estimator's) and cut to :func:`plausible_range`, which it may
    otherwise leave on long-tailed scores; when more than ``1 - confidence_level`` of the resamples are
    degenerate (se* = 0: every draw had the same test score) q is unbounded and the interval is that range.

    ``CALIBRATED_METHOD`` takes the quantile at the calibrated level of :meth:`Pivot.calibrated_level` instead
    of ``confidence_level``; on the same resamples its interval is otherwise the ``"studentized-u"`` one.

    The ``FARTHER_METHODS`` reach on each side as far as the farther of that symmetric interval and the
    equal-tailed one (Hall's percentile-t): ``centre - max(q, t_hi) se`` to ``centre + max(q, -t_lo) se``, t_lo and
    t_hi the ``(1 - confidence_level) / 2`` and ``(1 + confidence_level) / 2`` quantiles of ``(centre* -
    reference) / se*``. Where the scores have a long tail, the pivot has one on the same side (a resample that
    misses the runs' best, or holds it twice, moves far with a small se*), and the equal-tailed end carries it
    where the truth lies when a sweep has missed the population's best; the symmetric quantile would spread it
    over both sides. The equal-tailed interval alone follows the resampled Boo_n's own skew, which points the
    other way from the true one's on normal scores (it can lose the runs' best but never exceed it): holding the
    symmetric interval, the farther one covers wherever that one does on the same resamples.
    """
    pivot = resampled.pivot
    assert pivot is not None  # kept by the studentized resampling
    level = pivot.calibrated_level(confidence_level) if method == CALIBRATED_METHOD else confidence_level
    studentized = pivot.studentized()
    quantile = column_quantiles(np.abs(studentized), level)
    if method not in FARTHER_METHODS:
        return _held_and_cut(resampled, *pivot.bounds(quantile))
    reaches = farther_reaches(quantile, studentized, -studentized, confidence_level)  # the level is not calibrated
    return _held_and_cut(resampled, *pivot.bounds(*reaches))


def farther_reaches(
    symmetric: np.ndarray, falling: np.ndarray, rising: np.ndarray, confidence_level: float
) -> tuple[np.ndarray, np.ndarray]:
    """How far below and above the centre, in standard errors, the ``FARTHER_METHODS`` reach: the symmetric reach,
    or the ``(1 + confidence_level) / 2`` quantile (along axis 0) of ``falling`` (the pivot, which sets the lower
    end) and of ``rising`` (its negative, the upper end), the equal-tailed interval's, whichever is farther."""
    tail = (1 + confidence_level) / 2
    below, above = (np.maximum(symmetric, quantiles(values, tail)) for values in (falling, rising))
    return below, above


def column_quantiles(values: np.ndarray, probabilities: float | np.ndarray) -> np.ndarray:
    """The ``probabilities[k]`` quantile of column k of ``values`` (numpy's default, linear interpolation), over its
    values that are not NaN (a pivot's budgets studentized on the first resamples only: :class:`Pivot`) when
    ``probabilities`` is one number."""
    if np.ndim(probabilities) == 0:
        return quantiles(values, float(probabilities))
    ordered = np.sort(values, axis=0)
    position = np.asarray(probabilities) * (values.shape[0] - 1)
    below = np.floor(position).astype(np.intp)
    above = np.minimum(below + 1, values.shape[0] - 1)
    columns = np.arange(values.shape[1])
    low, high = ordered[below, columns], ordered[above, columns]
    return low + (position - below) * (high - low)


def quantiles(values: np.ndarray, probability: float) -> np.ndarray:
    """The ``probability`` quantile of each column of ``values``, over its values that are not NaN."""
    if np.isnan(values).any():
        return np.nanquantile(values, probability, axis=0)
    return np.quantile(values, probability, axis=0)


def _held_and_cut(resampled: Resampled, low: np.ndarray, high: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The interval widened to hold the estimate, then cut to the plausible range (which holds the estimate)."""
    least, most = resampled.plausible
    low = np.maximum(np.minimum(low, resampled.estimate), least)
    high = np.minimum(np.maximum(high, resampled.estimate), most)
    return low, high


def interval_ends(resampled: Resampled, confidence_level: float, method: str) -> tuple[np.ndarray, np.ndarray]:
    """Interval ends for each budget (column of the bootstrap distribution).

    The percentile and BCa ends are resampled values, inside the scores' range and so inside their bounds.
    """
    if method in STUDENTIZED_METHODS:
        return studentized_interval(resampled, confidence_level, method)
    dist = resampled.dist
    low, high = np.empty(dist.shape[1]), np.empty(dist.shape[1])
    jackknife = resampled.jackknife
    for k in range(dist.shape[1]):
        if method == "bca":
            assert jackknife is not None  # kept by the resampling for BCa
            low[k], high[k] = bca_interval(dist[:, k], float(resampled.estimate[k]), jackknife[:, k], confidence_level)
        else:
            low[k], high[k] = percentile_interval(dist[:, k], confidence_level)
    return low, high


def trusted_budgets(budgets: np.ndarray, m: int) -> np.ndarray:
    """Budgets where a band can be trusted: n <= m / 2 (the rule and its measurements: :class:`CurveBand`)."""
    return budgets <= TRUSTED_SHARE * m


def simultaneous_band(
    resampled: Resampled, confidence_level: float, method: str, trustworthy: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Sup-t band (Montiel Olea & Plagborg-Møller 2019): ``centre +- c s`` with one c for every budget.

    c is the ``confidence_level`` quantile of the largest ``|centre* - reference| / s`` over the trustworthy
    budgets (over every budget when none is), s the per-resample standard error for the studentized methods,
    else the bootstrap standard error (and the centre and reference the estimate); on the transformed scale of
    the scores' bounds. Budgets whose scale is 0 (constant scores) take no part: their band is a point.
    The band of the ``FARTHER_METHODS`` reaches on each side as far as the farther of c and the ``(1 +
    confidence_level) / 2`` quantile of the largest ``(centre* - reference) / s`` (below) or of its negative
    (above), as their intervals do (:func:`studentized_interval`), so that it holds each of them.
    """
    over = trustworthy if trustworthy.any() else np.ones_like(trustworthy)
    if method in STUDENTIZED_METHODS:
        pivot = resampled.pivot
        assert pivot is not None  # kept by the studentized resampling
        studentized = pivot.studentized()[:, over[pivot.columns]]  # the smallest budget is a column: never empty
        studentized = studentized[~np.isnan(studentized).any(axis=1)]  # the resamples studentized at every budget
        reach = np.full(pivot.columns.size, np.quantile(np.abs(studentized).max(axis=1), confidence_level))
        if method not in FARTHER_METHODS:
            return _held_and_cut(resampled, *pivot.bounds(reach))
        largest = studentized.max(axis=1), (-studentized).max(axis=1)
        return _held_and_cut(resampled, *pivot.bounds(*farther_reaches(reach, *largest, confidence_level)))
    scale = bootstrap_standard_error(resampled.dist)
    ratios = transformed_ratio(resampled.dist, resampled.estimate, scale, resampled.scale)
    scaled = ratios[:, over & (scale > 0)]
    critical = np.quantile(np.abs(scaled).max(axis=1), confidence_level) if scaled.shape[1] else 0.0
    # one resample: no scale, the band is the estimate
    low, high = transformed_bounds(resampled.estimate, np.nan_to_num(scale), np.float64(critical), resampled.scale)
    return low, high


def curve_distribution(
    val: np.ndarray,
    test: np.ndarray,
    test_given: bool,
    budgets: np.ndarray,
    estimator: Estimator,
    maximize: bool,
    n_resamples: int,
    method: str,
    rng: np.random.Generator,
    bounds: tuple[float, float] = UNBOUNDED_RANGE,
    reported: np.ndarray | None = None,
    *,
    drawn: int = 0,
) -> Resampled:
    """The estimates, the bootstrap distribution and what the method needs besides (see :class:`Resampled`).

    ``bounds`` are the scores' bounds (infinite: none), which the intervals respect (:mod:`.scales`).
    ``reported``: a studentized method's distribution is evaluated at these budgets only (a boolean mask; None:
    every budget), NaN at the others (see :func:`studentized_distribution`), and its pivot at these budgets and a
    grid of others (:func:`pivot_columns`). ``drawn``: these resamples follow ``drawn`` others of the same runs,
    from which the band took its reaches: the pivot of ``"studentized-u-farther"``, ``"studentized-u"`` and
    ``"studentized"`` is studentized at the ``reported`` budgets alone (NaN at the grid's others), where the
    intervals read are, and as many of them as one draw of them all would have studentized.
    """
    m = val.size
    runs = RankedRuns(val, test, maximize)
    rows = cdf_table(m, budgets, estimator)
    estimate = runs.estimate(rows)
    scale = Scale(*bounds)
    jackknife = pivot = None
    if method == "smoothed":
        ranked_val, ranked_test = val[runs.order], test[runs.order] if test_given else None
        dist = smoothed_boo_n(ranked_val, ranked_test, maximize, rows, rng, n_resamples, bounds)
    elif method in STUDENTIZED_METHODS:
        centre_cdf, centre_slope, reference_cdf = pivot_tables(rows, budgets, estimator, method)
        identity = np.arange(m)[None, :]
        centre, error = (values[0] for values in runs.boo_n_studentized(identity, centre_cdf, centre_slope))
        reference = estimate if reference_cdf is rows else runs.estimate(reference_cdf)
        columns = pivot_columns(budgets, m, reported)
        tables = centre_cdf[columns], centre_slope[columns], reference_cdf[columns]
        read = np.ones(columns.size, bool)
        if drawn and reported is not None and method in PLAIN_METHODS:
            read = reported[columns]
        dist, resample_centre, resample_error = studentized_distribution(
            runs,
            tables[0][read],
            tables[1][read],
            rows,
            rng,
            n_resamples,
            reported,
            studentize=method != K_OF_M_METHOD,
            drawn=drawn,
        )
        if not read.all():  # the grid's other budgets: NaN, as the resamples were not studentized there
            resample_centre, resample_error = (widened(values, read) for values in (resample_centre, resample_error))
        prepivots = None
        if method == CALIBRATED_METHOD:
            prepivots = calibration_prepivots(runs, tables, reference[columns], scale, rng, n_resamples)
        if method == K_OF_M_METHOD:
            resample_centre, resample_error = k_out_of_m_pivots(runs, budgets[columns], rng, n_resamples)
        pivot = Pivot(budgets, centre, error, reference, columns, resample_centre, resample_error, scale, prepivots)
    else:
        counting = compiled_counting(m * n_resamples)
        draws = runs.resampled(rng, n_resamples, counting=counting)
        dist = np.concatenate(evaluate_batches(lambda i: runs.boo_n(i, rows, counting), draws))
    if method == "bca":
        rows_loo = cdf_table(m - 1, budgets, estimator)
        jackknife = np.concatenate(evaluate_batches(lambda i: runs.boo_n(i, rows_loo), jackknife_indices(runs)))
    plausible = plausible_range(test, maximize, bounds)
    return Resampled(estimate, dist, jackknife, pivot, plausible, scale)


def widened(values: np.ndarray, read: np.ndarray) -> np.ndarray:
    """``values`` of the columns ``read`` (a boolean mask) placed among NaN columns for the others."""
    out = np.full((values.shape[0], read.size), np.nan)
    out[:, read] = values
    return out


def pivot_columns(budgets: np.ndarray, m: int, reported: np.ndarray | None = None) -> np.ndarray:
    """The budgets (indices into the sorted, distinct ``budgets``) whose studentized pivot is resampled: all of
    them when they are few, else about :data:`PIVOT_BUDGETS` log-spaced ones from the first to the last, the
    ``reported`` ones (a boolean mask) and the largest trustworthy one (:func:`trusted_budgets`), so that a band
    is exact where it is read and where its trustworthy part ends.

    A pivot's cost grows with the budgets it is studentized at (one pass over the tie blocks per budget and
    resample), while its reaches change slowly with n: the other budgets' are interpolated in log n
    (:meth:`Pivot.spread`).
    """
    count = budgets.size
    if count <= PIVOT_BUDGETS:
        return np.arange(count)
    points = np.geomspace(budgets[0], budgets[-1], PIVOT_BUDGETS)
    chosen = np.zeros(count, dtype=bool)
    chosen[np.searchsorted(budgets, points).clip(0, count - 1)] = True
    chosen[[0, -1]] = True
    trusted = np.flatnonzero(trusted_budgets(budgets, m))
    if trusted.size:
        chosen[trusted[-1]] = True
    if reported is not None:
        chosen |= reported
    return np.flatnonzero(chosen)


def pivot_tables(
    rows: np.ndarray, budgets: np.ndarray, estimator: Estimator, method: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """P and its slope for the centre of a studentized interval, and P for its reference (see :class:`Pivot`);
    ``rows`` is the estimator's P (:func:`cdf_table`), returned as it is where it serves.

    ``"studentized"``: the estimator's own, for both. ``"studentized-u"``: U's for the centre at budgets up to
    m (V's above, where U is undefined), V's for the reference.
    """
    m = rows.shape[1] - 1
    if method == "studentized":
        return rows, slope_table(m, budgets, estimator), rows
    plug_in = rows if estimator == "V" else cdf_table(m, budgets, "V")
    unbiased = budgets <= m
    if unbiased.all():  # U at every budget: its P once, and its slope from it
        centre = rows if estimator == "U" else cdf_table(m, budgets, "U")
        return centre, slope_of(centre), plug_in
    within = np.minimum(budgets, m)
    u = cdf_table(m, within, "U")
    centre = np.where(unbiased[:, None], u, plug_in)
    slope = np.where(unbiased[:, None], slope_of(u), slope_table(m, budgets, "V"))
    return centre, slope, plug_in


def plausible_range(
    test: np.ndarray, maximize: bool, bounds: tuple[float, float] = UNBOUNDED_RANGE
) -> tuple[float, float]:
    """Where Boo_n can plausibly lie: from the worst observed test score to the best one plus the whole range,
    inside the scores' bounds.

    Boo_n favours the better runs, so the truth lies beyond the worst observed score almost never, but beyond
    the best one now and then (in about 4 % of normal sweeps of 10 runs at n = 5): cutting intervals at the
    best observed score cost 2-3 points of coverage, while one range beyond it never binds on normal or
    beta-binomial scores. It stops the few runaway studentized intervals (a resample without a far outlier has
    a tiny se*) from reaching values no score is near.
    """
    worst, best = float(test.min()), float(test.max())
    span = best - worst
    low, high = (worst, best + span) if maximize else (worst - span, best)
    return max(low, bounds[0]), min(high, bounds[1])


def studentized_distribution(
    runs: RankedRuns,
    cdf: np.ndarray,
    slope: np.ndarray,
    rows: np.ndarray,
    rng: np.random.Generator,
    n_resamples: int,
    reported: np.ndarray | None = None,
    *,
    studentize: bool = True,
    drawn: int = 0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The statistic on every resample (B, budgets), and the centre and its standard error on the first ones
    (B_t, budgets of the pivot; none when not ``studentize``: the k-out-of-m pivot has resamples of its own).

    ``cdf`` and ``slope`` are the centre's at the budgets of the pivot (:func:`pivot_tables`,
    :func:`pivot_columns`), ``rows`` the statistic's P at every budget. The standard error costs one pass over
    the tie blocks per budget and resample, where Boo_n alone is one matrix product for all budgets: only the
    first :func:`studentized_resamples` resamples are studentized, the others still give the bootstrap
    distribution. ``reported`` (a boolean mask, None: every budget): the budgets whose statistic is evaluated on
    every resample, NaN at the others; the interval and the band need none of it. The resamples are those of
    every other method. ``drawn``: resamples drawn (and studentized as far as the bound allows) before these.
    """
    wanted = max(0, studentized_resamples(runs.m, cdf.shape[0], drawn + n_resamples) - drawn) if studentize else 0
    compiled = compiled_pass(runs.blocks * cdf.shape[0] * wanted)
    counting = compiled_counting(runs.m * n_resamples, loaded=compiled is not None)
    every = reported is None or bool(reported.all())
    reported_rows = rows if every else rows[reported]  # one table for every batch: its transpose is kept

    def statistic(resamples: Resamples) -> np.ndarray:
        """The statistic at the reported budgets, NaN at the others."""
        values = runs.boo_n(resamples, reported_rows, counting)
        if every:
            return values
        filled = np.full((values.shape[0], rows.shape[0]), np.nan)
        filled[:, reported] = values
        return filled

    def evaluate(resamples: Resamples, studentized: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The batch's statistic (one matrix product for every budget, a small part of the studentized pass's
        cost), and the centre and its standard error on its first ``studentized`` resamples."""
        if studentized == 0:
            return statistic(resamples), *(np.empty((0, cdf.shape[0])),) * 2
        # counted once, with the squares the standard error needs where there are ties, for both passes
        counted = runs.counted(resamples, squares=runs.blocks < runs.m, counting=counting)
        first = resample_rows(counted, slice(studentized))
        return statistic(counted), *runs.boo_n_studentized(first, cdf, slope, compiled, counting)

    def batches() -> Iterator[tuple[Resamples, int]]:
        done = 0
        # A studentized resample costs budgets x blocks: batches sized by it keep the threads busy even when
        # all the draws would fit in one batch (200 runs, 200 budgets: 1.7x faster on two cores).
        work = runs.blocks * cdf.shape[0]
        for resamples in runs.resampled(rng, n_resamples, work=work, squared=wanted, counting=counting):
            size = resample_count(resamples)
            yield resamples, min(size, max(0, wanted - done))
            done += size

    parts = evaluate_batches(lambda batch: evaluate(*batch), batches())
    value, centre, error = (np.concatenate(arrays) for arrays in zip(*parts))
    return value, centre, error


def k_out_of_m_sizes(m: int, budgets: np.ndarray) -> np.ndarray:
    """How many runs a k-out-of-m resample draws for each budget (:func:`k_out_of_m_pivots`).

    ``k = max(m / 2, 1.5 n, 5)`` rounded up, at most m (m for budgets above m); 1.5 n is rounded up to a multiple
    of ``ceil(m / K_OF_M_SIZES)``. Of the sizes measured over the population suite this one missed least
    (1,000 sweeps per cell: 18 cells below 93 % where ``"studentized-u"`` had 35, 5 below 90 % where it had 20;
    the docs' Honest intervals): half the runs, and at least 1.5 n, so that the n-th best of a resample's runs
    still varies.
    """
    step = math.ceil(m / K_OF_M_SIZES)
    per_budget = np.ceil(np.ceil(K_OF_M_PER_BUDGET * budgets) / step) * step
    least = np.maximum(np.maximum(math.ceil(K_OF_M_SHARE * m), K_OF_M_FEWEST), per_budget)
    return np.where(budgets > m, m, np.minimum(m, least)).astype(np.intp)


def k_out_of_m_pivots(
    runs: RankedRuns, budgets: np.ndarray, rng: np.random.Generator, n_resamples: int
) -> tuple[np.ndarray, np.ndarray]:
    """U and its standard error on resamples of k runs of the m (Bickel, Götze & van Zwet 1997), per budget.

    The pivot ``|U*_k - V| / se*_k`` of k < m runs drawn from the runs stands to V, the runs' own Boo_n, as the
    sweep's ``|U - Boo_n| / se`` stands to the truth: U of k draws is unbiased for V whatever k. The m-out-of-m
    pivot is too light-tailed where the top of the population is rarely drawn (a resample holds at most the runs'
    best, which the truth exceeds); on fewer runs a resample's best is more often below the runs' best, as the
    sweep's is below the population's, and the pivot's quantile grows towards the one the sweep needs. The
    interval is still around U with the sweep's own se (its ends: :func:`studentized_interval`). k follows
    :func:`k_out_of_m_sizes`; every size reads the first k draws of the same resamples of m runs (a prefix of m
    independent draws is k independent draws), so that the budgets' pivots are joint, as the band needs. As many resamples as the studentized pass
    studentizes (:func:`studentized_resamples`), each budget on k <= m runs, every draw counted once (the sizes'
    counts build on each other); the draws are numpy's, after the distribution's own resamples.
    """
    m = runs.m
    sizes = k_out_of_m_sizes(m, budgets)
    tables = []
    for size in np.unique(sizes):
        chosen = sizes == size
        rows = cdf_table(int(size), budgets[chosen], "V")
        cdf, slope, _ = pivot_tables(rows, budgets[chosen], "V", "studentized-u")
        tables.append((int(size), chosen, cdf, slope))
    count = studentized_resamples(m, budgets.size, n_resamples)
    compiled = compiled_pass(runs.blocks * budgets.size * count)
    counting = compiled_counting(m * count, loaded=compiled is not None)
    ties = runs.blocks < m

    def pivots(draws: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The pivots of one batch; the sizes ascend, and each size's counts are the smaller one's plus those of
        the draws between them, so that every draw is counted once whatever the number of sizes."""
        centre, error = np.empty((draws.shape[0], budgets.size)), np.empty((draws.shape[0], budgets.size))
        first: Counted | None = None
        for size, chosen, cdf, slope in tables:
            done = 0 if first is None else first.width
            more = runs.counted(np.ascontiguousarray(draws[:, done:size]), squares=ties, counting=counting)
            first = more if first is None else added(first, more)
            centre[:, chosen], error[:, chosen] = runs.boo_n_studentized(first, cdf, slope, compiled, counting)
        return centre, error

    work = runs.blocks * budgets.size
    parts = evaluate_batches(pivots, bootstrap_indices(rng, m, count, work=work))
    centre, error = (np.concatenate(arrays) for arrays in zip(*parts))
    return centre, error


def added(first: Counted, more: Counted) -> Counted:
    """The totals of two sets of draws of the same resamples, as one set."""
    squares = None if first.squares is None or more.squares is None else first.squares + more.squares
    return Counted(first.counts + more.counts, first.sums + more.sums, squares, first.width + more.width)


def calibration_prepivots(
    runs: RankedRuns,
    tables: tuple[np.ndarray, np.ndarray, np.ndarray],
    reference: np.ndarray,
    scale: Scale,
    rng: np.random.Generator,
    n_resamples: int,
) -> np.ndarray:
    """Beran's prepivots (1987) of the ``"studentized-u"`` pivot, one row per calibrating resample.

    A calibrating resample plays the data one level down: its V is the truth of its own resamples, as the runs'
    V is the truth of theirs, and its pivot ``|U* - V| / se*`` (on the scale of the bounds) stands to its
    resamples' ``|U** - V*| / se**`` as the true pivot stands to the resamples'. The share of its resamples'
    pivots below its own is the lowest level at which its interval holds its truth; the ``confidence_level``
    quantile of these shares (:meth:`Pivot.calibrated_level`) is the level at which the interval holds the truth
    in that share of the calibrating resamples: Hall & Martin's (1988) iterated bootstrap. ``tables`` are the centre's P and slope and the
    reference's P (:func:`pivot_tables`). The calibrating resamples are drawn after the interval's, so that
    those are ``"studentized-u"``'s with the same seed; then each batch's inner draws, in order.
    """
    cdf, slope, reference_cdf = tables
    m, budgets = runs.m, cdf.shape[0]
    count = calibrating_resamples(m, budgets, n_resamples)
    outer = draw_indices(rng, m, count)
    compiled = compiled_pass(runs.blocks * budgets * count * (INNER_RESAMPLES + 1))
    counting = compiled_counting(m * count * (INNER_RESAMPLES + 1), loaded=compiled is not None)
    centre, error = runs.boo_n_studentized(outer, cdf, slope, compiled, counting)
    pivot = np.abs(transformed_ratio(centre, reference, error, scale))
    truth = runs.boo_n(outer, reference_cdf, counting)  # each calibrating resample's V: the truth of its resamples
    # batches of about BATCH_ELEMENTS of work, as the interval's studentized pass (:func:`studentized_distribution`)
    rows_per_batch = max(1, BATCH_ELEMENTS // (max(m, runs.blocks * budgets) * INNER_RESAMPLES))

    def batches() -> Iterator[tuple[slice, np.ndarray]]:
        for start in range(0, count, rows_per_batch):
            rows = slice(start, min(count, start + rows_per_batch))
            yield rows, rng.integers(0, m, size=(rows.stop - rows.start, INNER_RESAMPLES, m), dtype=np.int32)

    def prepivot(batch: tuple[slice, np.ndarray]) -> np.ndarray:
        """The share of each calibrating resample's own resamples whose |pivot| lies below its |pivot|."""
        rows, draws = batch
        inner = np.take_along_axis(outer[rows, None, :], draws, axis=2).reshape(-1, m)  # positions in the ranking
        inner_centre, inner_error = runs.boo_n_studentized(inner, cdf, slope, compiled, counting)
        inner_truth = np.repeat(truth[rows], INNER_RESAMPLES, axis=0)
        inner_pivot = np.abs(transformed_ratio(inner_centre, inner_truth, inner_error, scale))
        return (inner_pivot.reshape(draws.shape[0], INNER_RESAMPLES, budgets) < pivot[rows, None, :]).mean(axis=1)

    return np.concatenate(evaluate_batches(prepivot, batches()))


def calibrating_resamples(m: int, budgets: int, n_resamples: int) -> int:
    """How many resamples calibrate the level of a calibrated interval of ``m`` runs over ``budgets`` budgets.

    ``CALIBRATING_RESAMPLES`` (at most ``n_resamples``), each with ``INNER_RESAMPLES`` resamples of its own,
    while the work ``m x budgets x calibrating x inner`` is at most ``CALIBRATION_WORK``; beyond, as many as that
    work affords, and at least ``FEWEST_CALIBRATING``: the calibration then costs about what the interval's own
    studentized pass costs (1,999 resamples from ``STUDENTIZED_WORK`` on).
    """
    affordable = CALIBRATION_WORK // (m * budgets * INNER_RESAMPLES)
    return min(n_resamples, CALIBRATING_RESAMPLES, max(FEWEST_CALIBRATING, affordable))


def studentized_resamples(m: int, budgets: int, n_resamples: int) -> int:
    """How many of ``n_resamples`` resamples of ``m`` runs a studentized band over ``budgets`` budgets studentizes.

    All of them while ``m x budgets x n_resamples`` is at most ``STUDENTIZED_WORK``; beyond, as many as that work
    affords, rounded down to k x 1,000 - 1 resamples and at least ``STUDENTIZED_RESAMPLES``. The work of a group
    is then bounded by ``STUDENTIZED_WORK`` or by 1,999 resamples' worth, so its cost per run falls as m grows.
    Fewer studentized resamples leave the interval valid (a bootstrap-t interval on B* resamples with
    (B* + 1) alpha / 2 whole); they add Monte Carlo noise to its quantile: at B* = 1,999 the 97.5 % quantile of a
    normal pivot has a Monte Carlo standard error of about 3 % of its value (1.4 % at 9,999).
    """
    if m * budgets * n_resamples <= STUDENTIZED_WORK:
        return n_resamples
    affordable = (STUDENTIZED_WORK // (m * budgets) + 1) // 1000 * 1000 - 1
    return min(n_resamples, max(STUDENTIZED_RESAMPLES, affordable))


def studentize(difference: np.ndarray, standard_error: np.ndarray) -> np.ndarray:
    """``difference / standard_error``; 0 / 0 is 0 and x / 0 is +-UNBOUNDED (finite, so quantiles stay finite)."""
    positive = standard_error > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = difference / np.where(positive, standard_error, 1.0)
    return np.where(positive, ratio, np.sign(difference) * UNBOUNDED)
