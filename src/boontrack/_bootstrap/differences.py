"""Intervals of the difference in Boo_n between two groups, resampled independently or as pairs."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from boontrack._bootstrap.compiled import Counting, compiled_counting
from boontrack._bootstrap.intervals import (
    STUDENTIZED_METHODS,
    percentile_interval,
    pivot_tables,
    plausible_range,
    transformed_bounds,
    transformed_ratio,
)
from boontrack._bootstrap.kernels import CACHE_ELEMENTS, RankedRuns, batch_sizes, cdf_table, draw_indices
from boontrack._bootstrap.scales import UNBOUNDED_RANGE, Scale, difference_scale
from boontrack._bootstrap.threads import evaluate_batches
from boontrack.estimators import Estimator


class BudgetGroup:
    """One approach's runs, ready for resampling at one budget or several: ranked runs, the estimator's P, the
    centre's P and slope and the reference's P of a studentized ``method`` (:func:`pivot_tables`), one row per
    budget, and the plausible range.

    ``bounds`` are the scores' bounds (infinite: none).
    """

    def __init__(
        self,
        val: np.ndarray,
        test: np.ndarray,
        maximize: bool,
        budgets: int | np.ndarray,
        estimator: Estimator,
        method: str = "studentized",
        bounds: tuple[float, float] = UNBOUNDED_RANGE,
    ):
        self.runs = RankedRuns(val, test, maximize)
        budgets = np.atleast_1d(np.asarray(budgets, dtype=np.int64))
        self.cdf = cdf_table(val.size, budgets, estimator)
        pivot = method if method in STUDENTIZED_METHODS else "studentized"
        self.centre_cdf, self.centre_slope, self.reference_cdf = pivot_tables(self.cdf, budgets, estimator, pivot)
        self.bounds = bounds
        self.plausible = plausible_range(test, maximize, bounds)
        self.scores, self._setting = (val, test), (maximize, budgets, estimator, method, bounds)
        # The runs' tie blocks and shifted test scores in the order given: influence values are per run.
        self._block_of = self.runs._block_of.take(self.runs._position_of)
        self._test = test - self.runs._offset

    def taken(self, order: np.ndarray) -> BudgetGroup:
        """The same group with its runs in ``order`` (pairs of two groups in a common order)."""
        return BudgetGroup(self.scores[0][order], self.scores[1][order], *self._setting)

    @property
    def centred_elsewhere(self) -> bool:
        """Whether the centre is another estimator than the one asked for (U for ``"studentized-u"``)."""
        return self.centre_cdf is not self.cdf

    def on_data(self) -> np.ndarray:
        """The estimate, the centre and the reference on the runs themselves: (3, budgets)."""
        estimate = self.runs.estimate(self.cdf)
        centre = self.runs.estimate(self.centre_cdf) if self.centred_elsewhere else estimate
        reference = estimate if self.reference_cdf is self.cdf else self.runs.estimate(self.reference_cdf)
        return np.stack([estimate, centre, reference])

    def influences(self, counts: np.ndarray, counting: Counting | None = None) -> Iterator[np.ndarray]:
        """Empirical influence of each run on the centre of each resample, (resamples, m), from per-run draw
        counts: one array per budget, in turn (the counting is shared, one budget's arrays are held at a time).

        The run-level form of :meth:`boontrack._bootstrap.RankedRuns.boo_n_studentized`: run i in tie block b
        has ``L_i = R_b + (D_b / q_b) (t_i - mean_b)``. Paired standard errors need it per run, because A and B
        rank the same pairs differently. ``counting``: the same compiled, every budget at once, or None for numpy.
        """
        m, runs = counts.shape[1], self.runs
        if counting is not None:
            influences = np.empty((self.centre_cdf.shape[0], *counts.shape))
            tables = self.centre_cdf, self.centre_slope
            counting.influences(
                counts, runs.order, runs._starts, runs._test, self._block_of, self._test, *tables, influences
            )
            yield from influences
            return
        ranked = counts.take(runs.order, axis=1)
        block_counts = np.add.reduceat(ranked, runs._starts, axis=1)
        sums = np.add.reduceat(ranked * runs._test, runs._starts, axis=1)
        cum = np.cumsum(block_counts, axis=1)
        prev = cum - block_counts
        means = sums / np.maximum(block_counts, 1)
        share = np.maximum(block_counts / m, 1.0 / m)
        for p, g in zip(self.centre_cdf, self.centre_slope):
            weight = p.take(cum) - p.take(prev)
            g_high = g.take(cum)
            step = means * (g_high - g.take(prev))
            level = means * g_high + (np.cumsum(step[:, ::-1], axis=1)[:, ::-1] - step)
            ratio = weight / share
            # L_i = (R_b - ratio_b mean_b) + ratio_b t_i: two gathers per run, not three
            influence = ratio.take(self._block_of, axis=1)
            influence *= self._test
            influence += (level - ratio * means).take(self._block_of, axis=1)
            yield influence


def _paired_standard_error(
    group_a: BudgetGroup, group_b: BudgetGroup, indices: np.ndarray, counting: Counting | None = None
) -> np.ndarray:
    """Delta-method standard error of the difference of the centres on each resample of pairs (rows of
    ``indices``) at each budget: (resamples, budgets).

    A pair's influence on the difference is its influence on A minus its influence on B; the standard error is
    ``sqrt(sum_i p_i (d_i - dbar)^2 / m)`` with ``p_i`` the pair's share of the draws. ``counting``: the
    influences compiled (:meth:`BudgetGroup.influences`), or None for numpy's.
    """
    size, m = indices.shape
    rows = max(1, CACHE_ELEMENTS // m)
    if size > rows:  # in chunks whose (resamples, pairs) arrays stay in cache, and in the heap: 1.3x faster
        chunks = (indices[k : k + rows] for k in range(0, size, rows))
        return np.concatenate([_paired_standard_error(group_a, group_b, chunk, counting) for chunk in chunks])
    counts = np.bincount((indices + (np.arange(size) * m)[:, None]).ravel(), minlength=size * m).reshape(size, m)
    share = counts / m
    errors = np.empty((size, group_a.cdf.shape[0]))
    influences = zip(group_a.influences(counts, counting), group_b.influences(counts, counting))
    for k, (difference, influence_b) in enumerate(influences):
        difference -= influence_b
        difference -= np.einsum("ij,ij->i", share, difference)[:, None]
        errors[:, k] = np.sqrt(np.einsum("ij,ij,ij->i", share, difference, difference) / m)
    return errors


def _group_values(
    group: BudgetGroup, positions: np.ndarray, studentized: bool, counting: Counting | None
) -> tuple[np.ndarray, ...]:
    """One group's statistic on each resample (rows of ``positions`` in its ranking) and, studentized and
    resampled on its own, its centre and the centre's standard error: (resamples, budgets) each. ``counting``:
    the compiled counting, or None for numpy's."""
    if not studentized:
        return (group.runs.boo_n(positions, group.cdf, counting),)
    value = group.runs.boo_n(positions, group.cdf, counting) if group.centred_elsewhere else None
    centre, error = group.runs.boo_n_studentized(positions, group.centre_cdf, group.centre_slope, counting=counting)
    return (centre if value is None else value), centre, error


def difference_interval(
    group_a: BudgetGroup,
    group_b: BudgetGroup,
    paired: bool,
    method: str,
    confidence_level: float,
    n_resamples: int,
    rng: np.random.Generator,
) -> tuple[float, np.ndarray, tuple[float, float]]:
    """Boo_n(A) - Boo_n(B) on the data, on each resample, and its interval, for groups of one budget (see
    :func:`difference_intervals`)."""
    estimates, dist, intervals = difference_intervals(
        group_a, group_b, paired, method, confidence_level, n_resamples, rng
    )
    return float(estimates[0]), dist[:, 0], intervals[0]


def difference_intervals(
    group_a: BudgetGroup,
    group_b: BudgetGroup,
    paired: bool,
    method: str,
    confidence_level: float,
    n_resamples: int,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray, list[tuple[float, float]]]:
    """Boo_n(A) - Boo_n(B) on the data (budgets,), on each resample (resamples, budgets), and its interval at
    each of the groups' budgets (the same in both), every budget evaluated on the same resamples.

    Unpaired: A and B are resampled independently; per batch the positions of A are drawn, then those of B
    (positions in each group's ranking, as for one group). Paired: one draw serves both, so a resample keeps
    the pairs (A_i, B_i) together; it indexes the pairs sorted by A's validation score, A's test score, B's
    validation score, B's test score (ascending), so that it does not depend on the order they came in. A
    studentized interval is ``centre +- q se``, q the ``confidence_level`` quantile of
    ``|centre* - reference| / se*`` (symmetric: :func:`studentized_difference`; centre and reference those of the
    groups' :class:`~boontrack._bootstrap.intervals.Pivot`, differenced), on the scale of the difference's bounds,
    widened to hold the estimate and cut to the difference of the two groups' plausible ranges. The draws do not
    depend on the budgets: with the same generator, each budget's interval is the one groups of that budget alone
    would get.
    """
    if paired:  # the pairs in a canonical order, by A's scores then B's: nothing depends on the given one
        pairs = np.lexsort((*group_b.scores[::-1], *group_a.scores[::-1]))
        group_a, group_b = group_a.taken(pairs), group_b.taken(pairs)
    runs_a, runs_b = group_a.runs, group_b.runs
    estimates, centres, references = np.subtract(group_a.on_data(), group_b.on_data())
    studentized = method in STUDENTIZED_METHODS
    counting = compiled_counting((runs_a.m + runs_b.m) * n_resamples)

    def batches() -> Iterator[tuple[np.ndarray, np.ndarray]]:
        for size in batch_sizes(n_resamples, runs_a.m + runs_b.m):
            indices_a = draw_indices(rng, runs_a.m, size)
            yield indices_a, indices_a if paired else draw_indices(rng, runs_b.m, size)

    def evaluate(indices_a: np.ndarray, indices_b: np.ndarray) -> tuple[np.ndarray, ...]:
        """The batch's differences, and for a studentized method those of the centres and their errors."""
        if not paired:
            a = _group_values(group_a, indices_a, studentized, counting)
            b = _group_values(group_b, indices_b, studentized, counting)
            if not studentized:
                return (a[0] - b[0],)
            return a[0] - b[0], a[1] - b[1], np.hypot(a[2], b[2])
        # the draws are pairs, whose positions differ in the two rankings
        positions = runs_a.positions(indices_a), runs_b.positions(indices_b)
        groups = group_a, group_b
        difference = np.subtract(*(g.runs.boo_n(p, g.cdf, counting) for g, p in zip(groups, positions)))
        if not studentized:
            return (difference,)
        centre = difference
        if group_a.centred_elsewhere:
            centre_a, centre_b = (g.runs.boo_n(p, g.centre_cdf, counting) for g, p in zip(groups, positions))
            centre = centre_a - centre_b
        return difference, centre, _paired_standard_error(group_a, group_b, indices_a, counting)

    parts = evaluate_batches(lambda batch: evaluate(*batch), batches())
    dist, *pivot = (np.concatenate(arrays) for arrays in zip(*parts))
    if not studentized:
        return estimates, dist, [percentile_interval(dist[:, k], confidence_level) for k in range(dist.shape[1])]
    identity = np.arange(runs_a.m)[None, :]
    if paired:
        errors = _paired_standard_error(group_a, group_b, identity)[0]
    else:
        errors = np.hypot(_data_error(group_a), _data_error(group_b))
    resample_centres, resample_errors = pivot
    plausible = difference_range(group_a.plausible, group_b.plausible)
    scale = difference_scale(group_a.bounds, group_b.bounds)
    on_data = estimates, centres, references, errors
    lows, highs = studentized_difference(on_data, resample_centres, resample_errors, plausible, scale, confidence_level)
    return estimates, dist, list(zip(lows.tolist(), highs.tolist()))


def _data_error(group: BudgetGroup) -> np.ndarray:
    """The delta-method standard error of a group's centre on its runs, at each budget."""
    identity = np.arange(group.runs.m)[None, :]
    return group.runs.boo_n_studentized(identity, group.centre_cdf, group.centre_slope)[1][0]


def difference_range(plausible_a: tuple[float, float], plausible_b: tuple[float, float]) -> tuple[float, float]:
    """Where A - B can plausibly lie, from where A and B can (see :func:`plausible_range`)."""
    return plausible_a[0] - plausible_b[1], plausible_a[1] - plausible_b[0]


def studentized_difference(
    on_data: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    resample_centres: np.ndarray,
    resample_errors: np.ndarray,
    plausible: tuple[float, float],
    scale: Scale,
    confidence_level: float,
) -> tuple[np.ndarray, np.ndarray]:
    """The symmetric studentized intervals of differences, one per column, ``centre +- q se`` on ``scale``, widened
    to hold the estimate and cut to ``plausible``.

    ``on_data`` is (estimate, centre, reference, standard error) of each difference on the runs (columns,); q is
    the ``confidence_level`` quantile of ``|d* - reference| / se*`` over the resamples' centres and standard
    errors (resamples, columns). Returns the lows and the highs. Symmetric whatever the groups' own intervals: a
    difference of two groups' skewed pivots is less skewed than either, and each end reaching as far as the
    equal-tailed interval's cost power without a cell over 6 % of type-I error to mend
    (``tests/benchmarks/bench_compare.py --method studentized-u-farther``; docs/statistics/comparing.md).
    """
    estimate, centre, reference, error = (np.asarray(values, dtype=np.float64) for values in on_data)
    ratios = transformed_ratio(resample_centres, reference, resample_errors, scale)
    quantile = np.quantile(np.abs(ratios), confidence_level, axis=0)  # an unbounded quantile: the whole range
    low, high = transformed_bounds(centre, error, quantile, scale)
    return np.maximum(np.minimum(low, estimate), plausible[0]), np.minimum(np.maximum(high, estimate), plausible[1])
