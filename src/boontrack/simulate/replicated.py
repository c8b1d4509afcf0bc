"""The intervals of a difference in Boo_n, computed for many simulated pairs of sweeps at once.

:func:`difference_ends` is :func:`boontrack._bootstrap.difference_interval` (its studentized interval and the
percentile interval of the same resamples) for every replication of :func:`~boontrack.simulate.comparison_rates`
in a few array passes: the replications' runs are ranked side by side, each padded to m tie blocks (an empty
block weighs nothing), and the resamples of all of them are counted with one ``bincount``. The draws are those
of one :func:`difference_interval` call per replication in turn, so the intervals are the same (to rounding:
sums may be taken in another order). Scores are maximised and the estimator is V, as in a comparison's summary.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from boontrack._bootstrap.intervals import pivot_tables, transformed_bounds, transformed_ratio
from boontrack._bootstrap.kernels import CACHE_ELEMENTS, batch_sizes, cdf_table
from boontrack._bootstrap.scales import difference_scale, score_range


@dataclass(frozen=True)
class _Tables:
    """P of the statistic, P and slope of the centre, P of the reference (:func:`pivot_tables`), one budget."""

    cdf: np.ndarray
    centre_cdf: np.ndarray
    centre_slope: np.ndarray
    reference_cdf: np.ndarray

    @classmethod
    def of(cls, m: int, budget: int, method: str) -> _Tables:
        budgets = np.array([budget])
        cdf = cdf_table(m, budgets, "V")
        return cls(cdf, *pivot_tables(cdf, budgets, "V", method))


class _RankedSweeps:
    """The runs of many sweeps (rows), each ranked worst to best into tie blocks as
    :class:`~boontrack._bootstrap.RankedRuns` ranks one sweep; every row has m blocks, the last ones empty."""

    def __init__(self, val: np.ndarray, test: np.ndarray):
        rows, self.m = val.shape
        self.order = np.lexsort((test, val), axis=1)
        sorted_val = np.take_along_axis(val, self.order, axis=1)
        starts = np.ones_like(sorted_val, dtype=bool)
        starts[:, 1:] = sorted_val[:, 1:] != sorted_val[:, :-1]
        self.block_of = np.cumsum(starts, axis=1) - 1  # the tie block of each position
        self.tied = ~starts.all(axis=1)  # rows with a tie block of several runs
        self.offset = np.median(test, axis=1)
        self.test = np.take_along_axis(test, self.order, axis=1) - self.offset[:, None]
        self.position_of = np.empty_like(self.order)
        np.put_along_axis(self.position_of, self.order, np.arange(self.m)[None, :], axis=1)
        self.bounds = [score_range(row, None) for row in test]
        worst, best = test.min(axis=1), test.max(axis=1)
        low, high = np.array(self.bounds).T
        self.plausible = np.maximum(worst, low), np.minimum(2 * best - worst, high)

    def totals(self, positions: np.ndarray) -> tuple[np.ndarray, ...]:
        """Per row, resample and block (rows, resamples, m): draws, and sums of test scores (and, when a row has
        ties, of their squares).

        Summed draw by draw as :meth:`RankedRuns.block_totals` does for a sweep with ties, and as counts times
        scores for one without, as it does there."""
        rows, size, m = positions.shape
        drawn = positions + (np.arange(rows) * m)[:, None, None]  # into the rows' runs laid end to end
        keys = np.arange(0, rows * size * m, m).reshape(rows, size, 1)  # each resample counts into its own m
        if not self.tied.any():
            counts = np.bincount((keys + positions).ravel(), minlength=positions.size).reshape(positions.shape)
            return counts, counts * self.test[:, None, :]
        keys = (keys + self.block_of.take(drawn)).ravel()
        scores = self.test.take(drawn).ravel()
        counts = np.bincount(keys, minlength=positions.size).reshape(positions.shape)
        sums = np.bincount(keys, weights=scores, minlength=positions.size).reshape(positions.shape)
        scores *= scores
        squares = np.bincount(keys, weights=scores, minlength=positions.size).reshape(positions.shape)
        single = ~self.tied
        sums[single] = counts[single] * self.test[single][:, None, :]
        return counts, sums, squares

    def boo_n(self, totals: tuple[np.ndarray, ...], cdf: np.ndarray) -> np.ndarray:
        """Boo_n of each resample, (rows, resamples), from its :meth:`totals`: :meth:`RankedRuns.boo_n` at one
        budget."""
        counts, sums = totals[:2]
        means = sums / np.maximum(counts, 1)  # a block without draws has weight 0
        values = np.einsum("rij,rij->ri", cdf[0].take(np.cumsum(counts, axis=2)), _falls(means))
        return values - cdf[0, 0] * means[..., 0] + self.offset[:, None]

    def boo_n_studentized(
        self, totals: tuple[np.ndarray, ...], cdf: np.ndarray, slope: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Boo_n and its delta-method standard error, (rows, resamples) each, from the resamples' :meth:`totals`:
        :meth:`RankedRuns.boo_n_studentized` at one budget."""
        counts, sums, *squares = totals
        m = self.m
        cum = np.cumsum(counts, axis=2)
        means = sums / np.maximum(counts, 1)
        falls = _falls(means)
        share = counts / m
        p_high = cdf[0].take(cum)
        values = np.einsum("rij,rij->ri", p_high, falls) - cdf[0, 0] * means[..., 0]
        terms = slope[0].take(cum)
        terms *= falls
        influence = np.cumsum(terms[..., ::-1], axis=2)[..., ::-1]
        influence -= np.einsum("rij,rij->ri", share, influence)[..., None]
        variance = np.einsum("rij,rij,rij->ri", share, influence, influence)
        if squares:  # the spread of the test scores inside each block, weighted by the block's P
            spread = np.maximum(squares[0] - sums * means, 0.0) / m
            spread /= np.square(np.maximum(share, 1.0 / m))
            weight = np.diff(p_high, axis=2, prepend=cdf[0, 0])
            within = np.einsum("rij,rij,rij->ri", spread, weight, weight)
            variance += np.where(self.tied[:, None], within, 0.0)  # a sweep without ties has none
        return values + self.offset[:, None], np.sqrt(variance / m)

    def influence(self, counts: np.ndarray, cdf: np.ndarray, slope: np.ndarray) -> np.ndarray:
        """Influence of each run on the centre of each resample, (rows, resamples, m), from per-run draw counts:
        :meth:`boontrack._bootstrap.BudgetGroup.influence`."""
        rows, size, m = counts.shape
        ranked = np.take_along_axis(counts, self.order[:, None, :], axis=2)
        keys = (
            np.broadcast_to(self.block_of[:, None, :], counts.shape)
            + (np.arange(rows * size) * m).reshape(rows, size, 1)
        ).ravel()
        block_counts = np.bincount(keys, weights=ranked.ravel(), minlength=counts.size).reshape(counts.shape)
        sums = np.bincount(keys, weights=(ranked * self.test[:, None, :]).ravel(), minlength=counts.size)
        sums = sums.reshape(counts.shape)
        cum = np.cumsum(block_counts, axis=2).astype(np.intp)
        prev = cum - block_counts.astype(np.intp)
        means = sums / np.maximum(block_counts, 1)
        p, g = cdf[0], slope[0]
        weight = p.take(cum) - p.take(prev)
        g_high = g.take(cum)
        step = means * (g_high - g.take(prev))
        level = means * g_high + (np.cumsum(step[..., ::-1], axis=2)[..., ::-1] - step)
        ratio = weight / np.maximum(block_counts / m, 1.0 / m)
        block_of_run = np.take_along_axis(self.block_of, self.position_of, axis=1)[:, None, :]
        run_test = np.take_along_axis(self.test, self.position_of, axis=1)[:, None, :]
        gathered = np.take_along_axis(ratio, np.broadcast_to(block_of_run, counts.shape), axis=2)
        base = np.take_along_axis(level - ratio * means, np.broadcast_to(block_of_run, counts.shape), axis=2)
        return gathered * run_test + base


def _falls(means: np.ndarray) -> np.ndarray:
    falls = means.copy()
    falls[..., :-1] -= means[..., 1:]
    return falls


def _per_run_counts(indices: np.ndarray) -> np.ndarray:
    rows, size, m = indices.shape
    keys = (indices + (np.arange(rows * size) * m).reshape(rows, size, 1)).ravel()
    return np.bincount(keys, minlength=indices.size).reshape(indices.shape)


def _paired_standard_error(a: _RankedSweeps, b: _RankedSweeps, indices: np.ndarray, tables: _Tables) -> np.ndarray:
    counts = _per_run_counts(indices)
    share = counts / counts.shape[2]
    difference = a.influence(counts, tables.centre_cdf, tables.centre_slope)
    difference -= b.influence(counts, tables.centre_cdf, tables.centre_slope)
    difference -= np.einsum("rij,rij->ri", share, difference)[..., None]
    return np.sqrt(np.einsum("rij,rij,rij->ri", share, difference, difference) / counts.shape[2])


def _values(sweeps: _RankedSweeps, positions: np.ndarray, tables: _Tables) -> tuple[np.ndarray, ...]:
    """The statistic, the centre and its standard error on each resample, (rows, resamples) each."""
    totals = sweeps.totals(positions)
    centre, error = sweeps.boo_n_studentized(totals, tables.centre_cdf, tables.centre_slope)
    value = centre if tables.centre_cdf is tables.cdf else sweeps.boo_n(totals, tables.cdf)
    return value, centre, error


def _split_draws(flat: np.ndarray, rows: int, sizes: list[int], draws: int, m: int) -> tuple[np.ndarray, np.ndarray]:
    """A's and B's draws, (rows, resamples, m) each, from the draws of one difference_interval per row in turn:
    per batch, A's then (unpaired) B's."""
    per_row = flat.reshape(rows, -1)
    parts, start = [], 0
    for size in sizes:  # the batches of one replication (one, up to 100,000 draws)
        block = per_row[:, start : start + draws * size * m].reshape(rows, draws, size, m)
        parts.append((block[:, 0], block[:, -1]))
        start += draws * size * m
    a, b = (np.concatenate(x, axis=1) for x in zip(*parts))
    return a, b


def difference_ends(
    a: tuple[np.ndarray, np.ndarray],
    b: tuple[np.ndarray, np.ndarray],
    budget: int,
    paired: bool,
    method: str,
    confidence_level: float,
    n_resamples: int,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray]:
    """The studentized ``method`` interval and the percentile interval of Boo_n(A) - Boo_n(B) of each row of
    A's and B's (validation, test) scores, shape (rows, 2) each; the draws are those of one
    :func:`~boontrack._bootstrap.difference_interval` call per row, in row order."""
    rows, m = a[0].shape
    tables = _Tables.of(m, budget, method)
    chunk = max(1, CACHE_ELEMENTS // (n_resamples * m))  # replications whose arrays stay in cache: 2x faster
    parts = [
        _chunk_ends(
            tuple(x[start : start + chunk] for x in (*a, *b)), paired, tables, confidence_level, n_resamples, rng
        )
        for start in range(0, rows, chunk)  # replications in chunks of bounded memory, drawn in row order
    ]
    studentized, percentile = (np.concatenate(x) for x in zip(*parts))
    return studentized, percentile


def _chunk_ends(scores, paired, tables, confidence_level, n_resamples, rng):
    a_val, a_test, b_val, b_test = scores
    if paired:  # the pairs in difference_interval's canonical order
        pairs = np.lexsort((b_test, b_val, a_test, a_val), axis=1)
        a_val, a_test, b_val, b_test = (np.take_along_axis(x, pairs, axis=1) for x in (a_val, a_test, b_val, b_test))
    rows, m = a_val.shape
    sweeps = _RankedSweeps(a_val, a_test), _RankedSweeps(b_val, b_test)
    on_data = [_values(s, s.order[:, None, :] * 0 + np.arange(m), tables) for s in sweeps]
    estimate, centre = (x - y for x, y in zip(on_data[0][:2], on_data[1][:2]))
    reference = estimate
    if tables.reference_cdf is not tables.cdf:
        reference = np.subtract(
            *(s.boo_n(s.totals(np.broadcast_to(np.arange(m), (rows, 1, m))), tables.reference_cdf) for s in sweeps)
        )
    if paired:
        error = _paired_standard_error(*sweeps, np.broadcast_to(np.arange(m), (rows, 1, m)), tables)
    else:
        error = np.hypot(on_data[0][2], on_data[1][2])
    draws = 1 if paired else 2
    flat = rng.integers(0, m, size=rows * draws * n_resamples * m, dtype=np.int32)
    indices = _split_draws(flat, rows, batch_sizes(n_resamples, 2 * m), draws, m)
    positions = indices  # unpaired, the draws are positions in each sweep's ranking, as in difference_interval
    if paired:  # the draws are pairs, whose positions differ in the two rankings
        positions = tuple(
            np.take_along_axis(s.position_of, i.reshape(rows, -1), axis=1).reshape(i.shape)
            for s, i in zip(sweeps, indices)
        )
    values_a, values_b = (_values(s, p, tables) for s, p in zip(sweeps, positions))
    dist, resample_centre = values_a[0] - values_b[0], values_a[1] - values_b[1]
    if paired:
        resample_error = _paired_standard_error(*sweeps, indices[0], tables)
    else:
        resample_error = np.hypot(values_a[2], values_b[2])
    alpha = 1.0 - confidence_level
    percentile = np.quantile(dist, [alpha / 2, 1 - alpha / 2], axis=1).T
    studentized = np.empty((rows, 2))
    plausible_low = sweeps[0].plausible[0] - sweeps[1].plausible[1]
    plausible_high = sweeps[0].plausible[1] - sweeps[1].plausible[0]
    scales = [difference_scale(x, y) for x, y in zip(sweeps[0].bounds, sweeps[1].bounds)]
    for scale in set(scales):  # the rows of each of the (few) scales together
        chosen = np.array([s == scale for s in scales])
        ratios = transformed_ratio(resample_centre[chosen], reference[chosen], resample_error[chosen], scale)
        quantile = np.quantile(np.abs(ratios), confidence_level, axis=1)
        low, high = transformed_bounds(centre[chosen, 0], error[chosen, 0], quantile, scale)
        studentized[chosen, 0] = np.maximum(np.minimum(low, estimate[chosen, 0]), plausible_low[chosen])
        studentized[chosen, 1] = np.minimum(np.maximum(high, estimate[chosen, 0]), plausible_high[chosen])
    return studentized, percentile
