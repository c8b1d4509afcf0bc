"""Interval methods on a bootstrap distribution: percentile, BCa, studentized, and sup-t bands.

:func:`curve_distribution` resamples one group's runs and returns everything the methods need
(:class:`Resampled`); :func:`interval_ends` and :func:`simultaneous_band` turn it into intervals. The choice of
the default method is described in :mod:`boontrack.resampling`.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import NamedTuple

import numpy as np
from scipy import special

from boontrack._bootstrap.kernels import (
    RankedRuns,
    bootstrap_indices,
    cdf_table,
    jackknife_indices,
    slope_table,
    smoothed_boo_n,
)
from boontrack._bootstrap.threads import evaluate_batches
from boontrack.estimators import Estimator

#: Stands for an infinite studentized value (a resample with se* = 0), kept finite so that quantiles are.
UNBOUNDED = 1e300
#: Runs x budgets above which a studentized band studentizes only its first STUDENTIZED_RESAMPLES resamples,
#: and the studentized default budgets are thinned to STUDENTIZED_WORK / m (see
#: :func:`boontrack.resampling.default_budgets`).
STUDENTIZED_WORK = 200_000
STUDENTIZED_RESAMPLES = 1999
#: Largest share n / m of budgets whose band is trustworthy (measurements in :class:`CurveBand`).
TRUSTED_SHARE = 0.5


class Resampled(NamedTuple):
    """Everything an interval method needs, one column per budget."""

    estimate: np.ndarray
    #: The statistic on each resample, (B, budgets).
    dist: np.ndarray
    #: Leave-one-out values (m, budgets), for BCa; else None.
    jackknife: np.ndarray | None
    #: Delta-method standard error on the data (budgets,), for the studentized method; else None.
    standard_error: np.ndarray | None
    #: (est* - est) / se* of the first B_t resamples (B_t, budgets), for the studentized method; else None.
    studentized: np.ndarray | None
    #: se* of the first B_t resamples (B_t, budgets), for the studentized method; else None.
    resample_standard_error: np.ndarray | None
    #: Where a studentized interval may reach (see :func:`plausible_range`).
    plausible: tuple[float, float]


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
    z0 = special.ndtri(np.clip(below, 0.5 / b, 1 - 0.5 / b))
    spread = jackknife.mean() - jackknife
    denominator = 6.0 * np.sum(spread**2) ** 1.5
    accel = np.sum(spread**3) / denominator if denominator > 0 else 0.0
    alpha = 1.0 - confidence_level
    z = special.ndtri(np.array([alpha / 2, 1 - alpha / 2]))
    probs = special.ndtr(z0 + (z0 + z) / (1.0 - accel * (z0 + z)))
    low, high = np.quantile(dist, probs)
    return float(low), float(high)


def bootstrap_standard_error(dist: np.ndarray) -> np.ndarray:
    """Standard deviation (ddof=1) along axis 0; NaN for one resample. Centred first, so that a constant
    distribution gives exactly 0 rather than a rounding residue."""
    if dist.shape[0] < 2:
        return np.full(dist.shape[1:], math.nan)
    return (dist - dist[0]).std(axis=0, ddof=1)


def studentized_interval(resampled: Resampled, confidence_level: float) -> tuple[np.ndarray, np.ndarray]:
    """Symmetric bootstrap-t interval (Hall 1988; Efron & Tibshirani 1993, §12.5), one per budget.

    ``est +- q se``, where q is the ``confidence_level`` quantile of the resamples' ``|est* - est| / se*`` and
    se the delta-method standard error on the data. The symmetric form covered 94-95 % where the equal-tailed
    one covered 91-92 % (normal scores, m = 10-20, n = 5-10, 1,000 sweeps each): Boo_n's downward bias
    and its skewness leave the truth above an equal-tailed interval too often. The interval is cut to
    :func:`plausible_range`, which it may otherwise leave on long-tailed scores; when more than
    ``1 - confidence_level`` of the resamples are degenerate (se* = 0: every draw had the same test score)
    q is unbounded and the interval is that range.
    """
    return symmetric_bounds(resampled, np.quantile(np.abs(resampled.studentized), confidence_level, axis=0))


def symmetric_bounds(resampled: Resampled, quantile: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``est +- quantile * se`` per budget, cut to the plausible range (an unbounded quantile gives it)."""
    half = np.minimum(quantile, UNBOUNDED) * resampled.standard_error
    low, high = resampled.plausible
    return np.maximum(resampled.estimate - half, low), np.minimum(resampled.estimate + half, high)


def interval_ends(resampled: Resampled, confidence_level: float, method: str) -> tuple[np.ndarray, np.ndarray]:
    """Interval ends for each budget (column of the bootstrap distribution)."""
    if method == "studentized":
        return studentized_interval(resampled, confidence_level)
    dist = resampled.dist
    low, high = np.empty(dist.shape[1]), np.empty(dist.shape[1])
    for k in range(dist.shape[1]):
        if method == "bca":
            low[k], high[k] = bca_interval(
                dist[:, k], float(resampled.estimate[k]), resampled.jackknife[:, k], confidence_level
            )
        else:
            low[k], high[k] = percentile_interval(dist[:, k], confidence_level)
    return low, high


def trusted_budgets(budgets: np.ndarray, m: int) -> np.ndarray:
    """Budgets where a band can be trusted: n <= m / 2 (the rule and its measurements: :class:`CurveBand`)."""
    return budgets <= TRUSTED_SHARE * m


def simultaneous_band(
    resampled: Resampled, confidence_level: float, method: str, trustworthy: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Sup-t band (Montiel Olea & Plagborg-Møller 2019): ``est +- c s`` with one c for every budget.

    c is the ``confidence_level`` quantile of the largest ``|est* - est| / s`` over the trustworthy budgets
    (over every budget when none is), s the per-resample standard error for the studentized method, else the
    bootstrap standard error. Budgets whose scale is 0 (constant scores) take no part: their band is a point.
    """
    over = trustworthy if trustworthy.any() else np.ones_like(trustworthy)
    if method == "studentized":
        statistic = np.abs(resampled.studentized[:, over])
        quantile = np.quantile(statistic.max(axis=1), confidence_level)
        return symmetric_bounds(resampled, np.full(resampled.estimate.size, quantile))
    scale = bootstrap_standard_error(resampled.dist)
    scaled = studentize(resampled.dist - resampled.estimate, scale)[:, over & (scale > 0)]
    critical = np.quantile(np.abs(scaled).max(axis=1), confidence_level) if scaled.shape[1] else 0.0
    half = np.nan_to_num(critical * scale)  # one resample: no scale, the band is the estimate
    return resampled.estimate - half, resampled.estimate + half


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
) -> Resampled:
    """The estimates, the bootstrap distribution and what the method needs besides (see :class:`Resampled`)."""
    m = val.size
    runs = RankedRuns(val, test, maximize)
    rows = cdf_table(m, budgets, estimator)
    estimate = runs.estimate(rows)
    jackknife = standard_error = studentized = resample_se = None
    if method == "smoothed":
        ranked_val, ranked_test = val[runs.order], test[runs.order] if test_given else None
        dist = smoothed_boo_n(ranked_val, ranked_test, maximize, rows, rng, n_resamples)
    elif method == "studentized":
        slope = slope_table(m, budgets, estimator)
        standard_error = runs.boo_n_studentized(np.arange(m)[None, :], rows, slope)[1][0]
        dist, resample_se = studentized_distribution(runs, rows, slope, rng, n_resamples)
        studentized = studentize(dist[: resample_se.shape[0]] - estimate, resample_se)
    else:
        dist = np.concatenate(evaluate_batches(lambda i: runs.boo_n(i, rows), bootstrap_indices(rng, m, n_resamples)))
    if method == "bca":
        rows_loo = cdf_table(m - 1, budgets, estimator)
        jackknife = np.concatenate(evaluate_batches(lambda i: runs.boo_n(i, rows_loo), jackknife_indices(runs)))
    plausible = plausible_range(test, maximize)
    return Resampled(estimate, dist, jackknife, standard_error, studentized, resample_se, plausible)


def plausible_range(test: np.ndarray, maximize: bool) -> tuple[float, float]:
    """Where Boo_n can plausibly lie: from the worst observed test score to the best one plus the whole range.

    Boo_n favours the better runs, so the truth lies beyond the worst observed score almost never, but beyond
    the best one now and then (in about 4 % of normal sweeps of 10 runs at n = 5): cutting intervals at the
    best observed score cost 2-3 points of coverage, while one range beyond it never binds on normal or
    beta-binomial scores. It stops the few runaway studentized intervals (a resample without a far outlier has
    a tiny se*) from reaching values no score is near.
    """
    worst, best = float(test.min()), float(test.max())
    span = best - worst
    return (worst, best + span) if maximize else (worst - span, best)


def studentized_distribution(
    runs: RankedRuns, rows: np.ndarray, slope: np.ndarray, rng: np.random.Generator, n_resamples: int
) -> tuple[np.ndarray, np.ndarray]:
    """Boo_n of every resample (B, budgets) and the standard error of the first ones (B_t, budgets).

    The standard error costs one pass over the tie blocks per budget and resample, where Boo_n alone is one
    matrix product for all budgets. When ``m x budgets`` exceeds ``STUDENTIZED_WORK`` (1,000 runs at 200
    budgets, 10,000 at 20), only the first ``STUDENTIZED_RESAMPLES`` resamples are studentized; the others
    still give the bootstrap distribution. The resamples are those of every other method.
    """
    wanted = n_resamples
    if runs.m * rows.shape[0] > STUDENTIZED_WORK:
        wanted = min(n_resamples, STUDENTIZED_RESAMPLES)

    def evaluate(indices: np.ndarray, studentized: int) -> tuple[np.ndarray, np.ndarray]:
        """The batch's Boo_n, and the standard errors of its first ``studentized`` resamples."""
        if studentized == 0:
            return runs.boo_n(indices, rows), np.empty((0, rows.shape[0]))
        value, error = runs.boo_n_studentized(indices[:studentized], rows, slope)
        if studentized < indices.shape[0]:
            value = np.concatenate([value, runs.boo_n(indices[studentized:], rows)])
        return value, error

    def batches() -> Iterator[tuple[np.ndarray, int]]:
        done = 0
        # A studentized resample costs budgets x blocks: batches sized by it keep the threads busy even when
        # all the draws would fit in one batch (200 runs, 200 budgets: 1.7x faster on two cores).
        for indices in bootstrap_indices(rng, runs.m, n_resamples, work=runs.blocks * rows.shape[0]):
            yield indices, min(indices.shape[0], max(0, wanted - done))
            done += indices.shape[0]

    parts = evaluate_batches(lambda batch: evaluate(*batch), batches())
    return np.concatenate([value for value, _ in parts]), np.concatenate([error for _, error in parts])


def studentize(difference: np.ndarray, standard_error: np.ndarray) -> np.ndarray:
    """``difference / standard_error``; 0 / 0 is 0 and x / 0 is +-UNBOUNDED (finite, so quantiles stay finite)."""
    positive = standard_error > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = difference / np.where(positive, standard_error, 1.0)
    return np.where(positive, ratio, np.sign(difference) * UNBOUNDED)
