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
from boontrack._bootstrap.kernels import batch_sizes, cdf_table
from boontrack._bootstrap.scales import difference_scale, score_range

#: Replications x resamples x runs evaluated at once (8 MB per array). Measured on 4 cells of 400 replications x
#: 499 resamples: chunks of 2^18 took 1.3x the CPU time (2^20: 3.1 s, of it 0.8 s in the kernel's page faults;
#: 2^18: 4.1 s, 1.6 s) and chunks of one replication 2.3x; the peak memory is about 200 MB above the interpreter's.
CHUNK_ELEMENTS = 1 << 20


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
        self.tied = np.logical_not(starts.all(axis=1))  # rows with a tie block of several runs
        self.offset = np.median(test, axis=1)
        self.test = np.take_along_axis(test, self.order, axis=1) - self.offset[:, None]
        self.position_of = np.empty_like(self.order)
        np.put_along_axis(self.position_of, self.order, np.arange(self.m)[None, :], axis=1)
        self.run_block = np.take_along_axis(self.block_of, self.position_of, axis=1)  # runs in the order given
        self.run_test = test - self.offset[:, None]
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
        return self._summed(cdf, np.cumsum(counts, axis=2), means, _falls(means)) + self.offset[:, None]

    @staticmethod
    def _summed(cdf: np.ndarray, cum: np.ndarray, means: np.ndarray, falls: np.ndarray) -> np.ndarray:
        """``sum_b P(C_b) (mean_b - mean_{b+1}) - P(0) mean_1``, the sum by parts of :meth:`RankedRuns.boo_n`."""
        return np.einsum("rij,rij->ri", cdf[0].take(cum), falls) - cdf[0, 0] * means[..., 0]

    def boo_n_studentized(
        self, totals: tuple[np.ndarray, ...], cdf: np.ndarray, slope: np.ndarray, other: np.ndarray | None = None
    ) -> tuple[np.ndarray, ...]:
        """Boo_n and its delta-method standard error, (rows, resamples) each, from the resamples' :meth:`totals`:
        :meth:`RankedRuns.boo_n_studentized` at one budget; and Boo_n by another estimator's P ``other`` (the
        statistic when the centre is another estimator), sharing the passes over the blocks."""
        counts, sums, *squares = totals
        m = self.m
        cum = np.cumsum(counts, axis=2)
        means = sums / np.maximum(counts, 1)  # a block without draws has weight 0
        falls = _falls(means)
        statistic = () if other is None else (self._summed(other, cum, means, falls) + self.offset[:, None],)
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
        return values + self.offset[:, None], np.sqrt(variance / m), *statistic

    def influence(self, counts: np.ndarray, cdf: np.ndarray, slope: np.ndarray) -> np.ndarray:
        """Influence of each run on the centre of each resample, (rows, resamples, m), from per-run draw counts:
        :meth:`boontrack._bootstrap.BudgetGroup.influences` at one budget."""
        rows, size, m = counts.shape
        resamples = np.arange(0, counts.size, m).reshape(rows, size, 1)  # where each resample's m values start
        block_counts = counts.take(resamples + self.order[:, None, :])
        sums = block_counts * self.test[:, None, :]
        if self.tied.any():  # per block, summed in the order of the ranking as np.add.reduceat does
            keys = (resamples + self.block_of[:, None, :]).ravel()
            sums = np.bincount(keys, weights=sums.ravel(), minlength=counts.size).reshape(counts.shape)
            block_counts = np.bincount(keys, weights=block_counts.ravel(), minlength=counts.size)
            block_counts = block_counts.astype(np.intp).reshape(counts.shape)
        cum = np.cumsum(block_counts, axis=2)
        prev = cum - block_counts
        means = sums / np.maximum(block_counts, 1)
        p, g = cdf[0], slope[0]
        weight = p.take(cum) - p.take(prev)
        g_high = g.take(cum)
        step = means * (g_high - g.take(prev))
        level = means * g_high + (np.cumsum(step[..., ::-1], axis=2)[..., ::-1] - step)
        ratio = weight / np.maximum(block_counts / m, 1.0 / m)
        # L_i = (R_b - ratio_b mean_b) + ratio_b t_i, b the block of run i
        run_block = resamples + self.run_block[:, None, :]
        influence = ratio.take(run_block)
        influence *= self.run_test[:, None, :]
        influence += (level - ratio * means).take(run_block)
        return influence


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
    other = None if tables.centre_cdf is tables.cdf else tables.cdf
    centre, error, *value = sweeps.boo_n_studentized(
        sweeps.totals(positions), tables.centre_cdf, tables.centre_slope, other
    )
    return (value[0] if value else centre), centre, error


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
    chunk = max(1, CHUNK_ELEMENTS // (n_resamples * m))
    parts = [
        _chunk_ends(
            tuple(x[start : start + chunk] for x in (*a, *b)), paired, tables, confidence_level, n_resamples, rng
        )
        for start in range(0, rows, chunk)  # replications in chunks of bounded memory, drawn in row order
    ]
    studentized, percentile = (np.concatenate(x) for x in zip(*parts))
    return studentized, percentile


def _chunk_ends(scores, paired, tables, confidence_level, n_resamples, rng):
    """:func:`difference_ends` of one chunk of replications."""
    a_val, a_test, b_val, b_test = scores
    if paired:  # the pairs in difference_interval's canonical order
        pairs = np.lexsort((b_test, b_val, a_test, a_val), axis=1)
        a_val, a_test, b_val, b_test = (np.take_along_axis(x, pairs, axis=1) for x in (a_val, a_test, b_val, b_test))
    rows, m = a_val.shape
    sweeps = _RankedSweeps(a_val, a_test), _RankedSweeps(b_val, b_test)
    identity = np.broadcast_to(np.arange(m), (rows, 1, m))  # every run drawn once: the runs themselves
    on_data = [_values(s, identity, tables) for s in sweeps]
    estimate, centre = (x - y for x, y in zip(on_data[0][:2], on_data[1][:2]))
    reference = estimate
    if tables.reference_cdf is not tables.cdf:
        reference = np.subtract(*(s.boo_n(s.totals(identity), tables.reference_cdf) for s in sweeps))
    if paired:
        error = _paired_standard_error(*sweeps, identity, tables)
    else:
        error = np.hypot(on_data[0][2], on_data[1][2])
    draws = 1 if paired else 2
    flat = rng.integers(0, m, size=rows * draws * n_resamples * m, dtype=np.int32)
    indices = _split_draws(flat, rows, batch_sizes(n_resamples, 2 * m), draws, m)
    positions = indices  # unpaired, the draws are positions in each sweep's ranking, as in difference_interval
    if paired:  # the draws are pairs, whose positions differ in the two rankings
        positions = tuple(
            s.position_of.take(i + np.arange(0, rows * m, m)[:, None, None]) for s, i in zip(sweeps, indices)
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
