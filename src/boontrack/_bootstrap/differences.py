"""Intervals of the difference in Boo_n between two groups, resampled independently or as pairs."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from boontrack._bootstrap.intervals import percentile_interval, plausible_range, studentize
from boontrack._bootstrap.kernels import CACHE_ELEMENTS, RankedRuns, batch_sizes, cdf_table, draw_indices, slope_table
from boontrack._bootstrap.threads import evaluate_batches
from boontrack.estimators import Estimator


class BudgetGroup:
    """One approach's runs, ready for resampling at one budget: ranked runs, P and its slope, plausible range."""

    def __init__(self, val: np.ndarray, test: np.ndarray, maximize: bool, budget: int, estimator: Estimator):
        self.runs = RankedRuns(val, test, maximize)
        self.cdf = cdf_table(val.size, np.array([budget]), estimator)
        self.slope = slope_table(val.size, np.array([budget]), estimator)
        self.plausible = plausible_range(test, maximize)
        self.scores, self._setting = (val, test), (maximize, budget, estimator)
        # The runs' tie blocks and shifted test scores in the order given: influence values are per run.
        self._block_of = self.runs._block_of.take(self.runs._position_of)
        self._test = test - self.runs._offset

    def taken(self, order: np.ndarray) -> BudgetGroup:
        """The same group with its runs in ``order`` (pairs of two groups in a common order)."""
        return BudgetGroup(self.scores[0][order], self.scores[1][order], *self._setting)

    def influence(self, counts: np.ndarray) -> np.ndarray:
        """Empirical influence of each run on Boo_n of each resample, (resamples, m), from per-run draw counts.

        The run-level form of :meth:`boontrack._bootstrap.RankedRuns.boo_n_studentized`: run i in tie block b
        has ``L_i = R_b + (D_b / q_b) (t_i - mean_b)``. Paired standard errors need it per run, because A and B
        rank the same pairs differently.
        """
        m, runs = counts.shape[1], self.runs
        ranked = counts.take(runs.order, axis=1)
        block_counts = np.add.reduceat(ranked, runs._starts, axis=1)
        sums = np.add.reduceat(ranked * runs._test, runs._starts, axis=1)
        cum = np.cumsum(block_counts, axis=1)
        prev = cum - block_counts
        means = sums / np.maximum(block_counts, 1)
        p, g = self.cdf[0], self.slope[0]
        weight = p.take(cum) - p.take(prev)
        g_high = g.take(cum)
        step = means * (g_high - g.take(prev))
        level = means * g_high + (np.cumsum(step[:, ::-1], axis=1)[:, ::-1] - step)
        ratio = weight / np.maximum(block_counts / m, 1.0 / m)
        # L_i = (R_b - ratio_b mean_b) + ratio_b t_i: two gathers per run, not three
        influence = ratio.take(self._block_of, axis=1)
        influence *= self._test
        influence += (level - ratio * means).take(self._block_of, axis=1)
        return influence


def _paired_standard_error(group_a: BudgetGroup, group_b: BudgetGroup, indices: np.ndarray) -> np.ndarray:
    """Delta-method standard error of Boo_n(A) - Boo_n(B) on each resample of pairs (rows of ``indices``).

    A pair's influence on the difference is its influence on A minus its influence on B; the standard error is
    ``sqrt(sum_i p_i (d_i - dbar)^2 / m)`` with ``p_i`` the pair's share of the draws.
    """
    size, m = indices.shape
    rows = max(1, CACHE_ELEMENTS // m)
    if size > rows:  # in chunks whose (resamples, pairs) arrays stay in cache, and in the heap: 1.3x faster
        chunks = (indices[k : k + rows] for k in range(0, size, rows))
        return np.concatenate([_paired_standard_error(group_a, group_b, chunk) for chunk in chunks])
    counts = np.bincount((indices + (np.arange(size) * m)[:, None]).ravel(), minlength=size * m).reshape(size, m)
    share = counts / m
    difference = group_a.influence(counts)
    difference -= group_b.influence(counts)
    difference -= np.einsum("ij,ij->i", share, difference)[:, None]
    return np.sqrt(np.einsum("ij,ij,ij->i", share, difference, difference) / m)


def difference_interval(
    group_a: BudgetGroup,
    group_b: BudgetGroup,
    paired: bool,
    method: str,
    confidence_level: float,
    n_resamples: int,
    rng: np.random.Generator,
) -> tuple[float, np.ndarray, tuple[float, float]]:
    """Boo_n(A) - Boo_n(B) on the data, on each resample, and its interval.

    Unpaired: A and B are resampled independently; per batch the positions of A are drawn, then those of B
    (positions in each group's ranking, as for one group). Paired: one draw serves both, so a resample keeps
    the pairs (A_i, B_i) together; it indexes the pairs sorted by A's validation score, A's test score, B's
    validation score, B's test score (ascending), so that it does not depend on the order they came in. The
    studentized interval is ``est +- q se``, q the ``confidence_level`` quantile of ``|est* - est| / se*``
    (symmetric, as for one group), cut to the difference of the two groups' plausible ranges.
    """
    if paired:  # the pairs in a canonical order, by A's scores then B's: nothing depends on the given one
        pairs = np.lexsort((*group_b.scores[::-1], *group_a.scores[::-1]))
        group_a, group_b = group_a.taken(pairs), group_b.taken(pairs)
    runs_a, runs_b = group_a.runs, group_b.runs
    estimate = float(runs_a.estimate(group_a.cdf)[0] - runs_b.estimate(group_b.cdf)[0])
    studentized = method == "studentized"

    def batches() -> Iterator[tuple[np.ndarray, np.ndarray]]:
        for size in batch_sizes(n_resamples, runs_a.m + runs_b.m):
            indices_a = draw_indices(rng, runs_a.m, size)
            yield indices_a, indices_a if paired else draw_indices(rng, runs_b.m, size)

    def evaluate(indices_a: np.ndarray, indices_b: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        """The batch's differences, and their standard errors for the studentized method."""
        if studentized and not paired:
            value_a, error_a = runs_a.boo_n_studentized(indices_a, group_a.cdf, group_a.slope)
            value_b, error_b = runs_b.boo_n_studentized(indices_b, group_b.cdf, group_b.slope)
            return value_a[:, 0] - value_b[:, 0], np.hypot(error_a[:, 0], error_b[:, 0])
        if paired:  # the draws are pairs, whose positions differ in the two rankings
            value_a = runs_a.boo_n(runs_a.positions(indices_a), group_a.cdf)
            value_b = runs_b.boo_n(runs_b.positions(indices_b), group_b.cdf)
        else:
            value_a, value_b = runs_a.boo_n(indices_a, group_a.cdf), runs_b.boo_n(indices_b, group_b.cdf)
        error = _paired_standard_error(group_a, group_b, indices_a) if studentized else None
        return value_a[:, 0] - value_b[:, 0], error

    parts = evaluate_batches(lambda batch: evaluate(*batch), batches())
    dist = np.concatenate([difference for difference, _ in parts])
    if not studentized:
        return estimate, dist, percentile_interval(dist, confidence_level)
    identity = np.arange(runs_a.m)[None, :]
    if paired:
        error = float(_paired_standard_error(group_a, group_b, identity)[0])
    else:
        error = float(
            np.hypot(
                runs_a.boo_n_studentized(identity, group_a.cdf, group_a.slope)[1][0, 0],
                runs_b.boo_n_studentized(np.arange(runs_b.m)[None, :], group_b.cdf, group_b.slope)[1][0, 0],
            )
        )
    plausible = difference_range(group_a.plausible, group_b.plausible)
    errors = np.concatenate([errors for _, errors in parts])
    return estimate, dist, studentized_difference(estimate, dist, error, errors, plausible, confidence_level)


def difference_range(plausible_a: tuple[float, float], plausible_b: tuple[float, float]) -> tuple[float, float]:
    """Where A - B can plausibly lie, from where A and B can (see :func:`plausible_range`)."""
    return plausible_a[0] - plausible_b[1], plausible_a[1] - plausible_b[0]


def studentized_difference(
    estimate: float,
    dist: np.ndarray,
    error: float,
    resample_errors: np.ndarray,
    plausible: tuple[float, float],
    confidence_level: float,
) -> tuple[float, float]:
    """The symmetric studentized interval of a difference, ``est +- q se``, cut to ``plausible``.

    q is the ``confidence_level`` quantile of ``|d* - d| / se*`` over the resamples whose standard error
    ``resample_errors`` holds (the first ones of ``dist``); ``error`` is the standard error on the data.
    """
    ratios = studentize(dist[: resample_errors.size] - estimate, resample_errors)
    half = float(np.quantile(np.abs(ratios), confidence_level)) * error  # an unbounded quantile: the whole range
    return max(estimate - half, plausible[0]), min(estimate + half, plausible[1])
