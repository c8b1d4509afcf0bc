"""How many resamples an interval needs: as many as keep the Monte Carlo error of its ends small.

``n_resamples="auto"`` draws the resamples in rounds (:func:`until_precise`): :data:`FIRST_RESAMPLES`, then
:data:`RESAMPLES_STEP` more at a time, until the Monte Carlo standard error of every end of the intervals read is
below :data:`PRECISION` of the interval's half-width, and at most :data:`MOST_RESAMPLES`. A round's resamples are drawn
after the previous round's from the same generator, so the result is that of one call with the total count (to the
studentized resamples a work bound may leave out: :func:`boontrack._bootstrap.intervals.studentized_resamples`).

An end is a quantile of the resamples; its Monte Carlo standard error is read off them (:func:`quantile_error`):
the quantiles one binomial standard deviation of the resamples' count below and above its level enclose it about
as often as one standard error does, whatever the shape of the distribution.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Final

import numpy as np

from boontrack._bootstrap.intervals import FARTHER_METHODS, STUDENTIZED_METHODS, UNBOUNDED, Resampled

#: The value of ``n_resamples`` that asks for as many resamples as the intervals' precision needs.
AUTO: Final = "auto"
#: Resamples of the first round ((B + 1) alpha / 2 is a whole number at the usual levels) ...
FIRST_RESAMPLES = 999
#: ... of each further one ...
RESAMPLES_STEP = 1000
#: ... and in all, at most.
MOST_RESAMPLES = 9999
#: The Monte Carlo standard error of an end, as a share of the interval's half-width, that ends the rounds.
PRECISION = 0.05


def until_precise(
    draw: Callable[[int, int], Resampled], confidence_level: float, method: str, read: np.ndarray | None
) -> Resampled:
    """``draw(count, drawn)`` in rounds (``drawn`` resamples drawn before) until :func:`monte_carlo_error` of the
    budgets ``read`` (a boolean mask; None: every budget) is at most :data:`PRECISION`, or :data:`MOST_RESAMPLES`
    are drawn."""
    resampled = draw(FIRST_RESAMPLES, 0)
    while (
        resampled.resamples < MOST_RESAMPLES
        and monte_carlo_error(resampled, confidence_level, method, read) > PRECISION
    ):
        more = min(RESAMPLES_STEP, MOST_RESAMPLES - resampled.resamples)
        resampled = resampled.extended(draw(more, resampled.resamples))
    return resampled


def monte_carlo_error(resampled: Resampled, confidence_level: float, method: str, read: np.ndarray | None) -> float:
    """The largest Monte Carlo standard error of an end of the intervals at the budgets ``read`` (a boolean mask;
    None: every budget), as a share of the interval's half-width; 0 for an interval that is a point or reaches the
    whole plausible range.

    Studentized methods: the quantiles of the pivot that set the ends (its absolute value's, and for the
    ``FARTHER_METHODS`` its own at each tail, whichever reaches farther), at the budgets whose pivot was resampled,
    in standard errors. Others: the quantiles of the bootstrap distribution (the percentile interval's ends, which
    BCa's and the smoothed bootstrap's resemble), measured from the estimate.
    """
    tail = (1 + confidence_level) / 2
    if method in STUDENTIZED_METHODS:
        pivot = resampled.pivot
        assert pivot is not None  # kept by the studentized resampling
        columns = slice(None) if read is None else read[pivot.columns]
        studentized = pivot.studentized()[:, columns]
        symmetric = quantile_reach(np.abs(studentized), confidence_level)
        ends = [symmetric, symmetric]
        if method in FARTHER_METHODS:
            ends = [farther(symmetric, quantile_reach(sign * studentized, tail)) for sign in (1, -1)]
    else:
        dist, estimate = resampled.dist, resampled.estimate
        if read is not None:
            dist, estimate = dist[:, read], estimate[read]
        ends = [quantile_reach(sign * (dist - estimate), tail) for sign in (1, -1)]
    (below, below_error), (above, above_error) = ends
    half_width = (below + above) / 2
    shown = (half_width > 0) & (below < UNBOUNDED) & (above < UNBOUNDED)
    return float(np.max(np.maximum(below_error, above_error)[shown] / half_width[shown], initial=0.0))


def quantile_reach(values: np.ndarray, probability: float) -> tuple[np.ndarray, np.ndarray]:
    """The ``probability`` quantile of each column of ``values`` and its Monte Carlo standard error
    (:func:`quantile_error`)."""
    return np.quantile(values, probability, axis=0), quantile_error(values, probability)


def quantile_error(values: np.ndarray, probability: float) -> np.ndarray:
    """The Monte Carlo standard error of the ``probability`` quantile of each column of ``values``: its binomial
    standard error in probability, ``s = sqrt(p (1 - p) / B)`` for B rows, times the quantile function's slope
    there, read as the span between the quantiles at ``p -+ 2 s`` over 4 s (the sample quantile's rank is
    binomial; a span of two standard errors each way averages the slope over enough order statistics to be
    steady)."""
    step = 2 * math.sqrt(probability * (1 - probability) / values.shape[0])
    low, high = np.quantile(values, [max(0.0, probability - step), min(1.0, probability + step)], axis=0)
    return (high - low) / 4


def farther(
    symmetric: tuple[np.ndarray, np.ndarray], one_tail: tuple[np.ndarray, np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """Per column, the farther of two reaches with its error: the one an end of the ``FARTHER_METHODS`` takes."""
    chosen = one_tail[0] > symmetric[0]
    return np.where(chosen, one_tail[0], symmetric[0]), np.where(chosen, one_tail[1], symmetric[1])
