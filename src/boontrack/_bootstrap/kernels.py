"""The bootstrap's kernels: runs ranked into tie blocks, resamples counted, Boo_n evaluated on them.

A resample enters only through its draws' counts per tie block (:meth:`RankedRuns.block_totals`, the counting
pass), from which :meth:`RankedRuns.boo_n` and :meth:`RankedRuns.boo_n_studentized` evaluate Boo_n (and its
delta-method standard error) at every budget (the evaluation passes). The draws themselves come in
memory-bounded batches (:meth:`RankedRuns.resampled`, :func:`bootstrap_indices`), counted as they are drawn where
the counting is compiled (:class:`Counted`). The formulas are described in :mod:`boontrack.resampling`.
Nothing here validates its input: the public functions do.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterator
from typing import NamedTuple, TypeAlias

import numpy as np

from boontrack._bootstrap.compiled import Counting
from boontrack._bootstrap.threads import one_blas_thread
from boontrack.estimators import Estimator, best_of_n_cdf

#: Runs x resamples per batch (16 MB of int32 indices): enough resamples that the work per tie block stays
#: vectorised, few enough that memory stays bounded at any n_resamples and m ...
BATCH_ELEMENTS = 1 << 22
#: ... with at least this many resamples per batch.
MIN_BATCH = 1
#: Runs x resamples counted at once: small enough that the counting's arrays (~2 MB each) stay in cache, which
#: makes it 2-5x faster than on whole batches; also the size of the (budgets, resamples, blocks) arrays.
CACHE_ELEMENTS = 1 << 18
#: Runs per tie block (on average) from which the draws are counted per position and summed over blocks, rather
#: than counted per block directly (see :class:`RankedRuns`; measured).
REDUCE_SHARE = 8
#: Boo_n gathers P at the block ends from its table (one gather per block and budget) when budgets x tie blocks
#: is at most GATHER_WORK x m; beyond, one matrix product per batch over the m + 1 numbers of draws is cheaper.
#: Measured (numpy, one thread, m = 100 to 10,000, distinct and tied scores): the gather took 0.8-0.9x the
#: product's time at 2-3 budgets without ties and 1.0-1.1x at 5, and with ties (blocks of a third of m or fewer)
#: at most 1.15x up to 26 budgets; 0.33x at 3 budgets of 1,000 runs in 372 blocks, a summary's reported budgets.
GATHER_WORK = 4
#: A resample counted as drawn holds two or three numbers of 8 bytes per tie block, where its positions hold one
#: of 4 bytes per run: batches of counted resamples are sized as if each block were this many runs, so that they
#: hold no more memory than batches of positions.
COUNTED_WEIGHT = 6
#: Stands for the sums of squares that a compiled count without squares does not fill.
_NONE = np.empty((0, 0))


class Counted(NamedTuple):
    """Resamples counted as they were drawn (:meth:`RankedRuns.resampled`): per resample and tie block, the draws,
    the sum of their test scores and of their squares (None when not counted), as :meth:`RankedRuns.block_totals`
    gives them, and ``width``, the runs drawn per resample."""

    counts: np.ndarray
    sums: np.ndarray
    squares: np.ndarray | None
    width: int

    def rows(self, part: slice) -> Counted:
        squares = None if self.squares is None else self.squares[part]
        return Counted(self.counts[part], self.sums[part], squares, self.width)


#: Resamples as the kernels take them: positions in the ranking (one row per resample), or :class:`Counted`.
Resamples: TypeAlias = "np.ndarray | Counted"


def resample_count(resamples: Resamples) -> int:
    return resamples.counts.shape[0] if isinstance(resamples, Counted) else resamples.shape[0]


def resample_rows(resamples: Resamples, part: slice) -> Resamples:
    return resamples.rows(part) if isinstance(resamples, Counted) else resamples[part]


class RankedRuns:
    """Runs ranked worst to best, grouped into tie blocks, ready to evaluate Boo_n on resamples.

    The ranking is by validation score, and inside a tie block by test score: a canonical order, so that the
    resamples (drawn as positions in it, see :mod:`boontrack.resampling`) do not depend on the order the runs
    came in. A resample enters only through two numbers per tie block: how many draws fell into the block and
    the sum of their test scores, laid out as (resamples, blocks). They come from the draws one of three ways,
    whichever was fastest (measured per draw, m = 20 to 100,000):

    - no ties: the per-position counts of one ``bincount`` are the block counts, and the sums are the counts
      times the scores (1.4x faster than the gather below);
    - at least ``REDUCE_SHARE`` runs per block on average: the per-position counts summed over each block with
      ``np.add.reduceat`` (1.1x faster at 10,000 runs, 1.7x at 100,000);
    - else: one ``bincount`` over the draws' blocks, and one weighted by their scores (``reduceat`` over small
      blocks was 2-3x slower).

    Cumulative sums then run along the contiguous last axis (5x faster than along axis 0).
    """

    def __init__(self, val: np.ndarray, test: np.ndarray, maximize: bool):
        self.m = val.size
        key = val if maximize else -val
        self.order = np.lexsort((test if maximize else -test, key))  # worst to best; ties by test score
        sorted_key = key[self.order]
        ends = np.append(np.flatnonzero(sorted_key[1:] != sorted_key[:-1]) + 1, self.m)
        self.blocks = ends.size
        self._starts = np.concatenate(([0], ends[:-1]))
        # Tie block of each position, as intp: bincount takes intp keys, and the rows' offsets are added in place.
        self._block_of = np.repeat(np.arange(self.blocks), np.diff(ends, prepend=0))
        # Test scores are summed relative to their median: constant scores then give exactly their value (a
        # collapsed interval), and sums of large counts keep their precision.
        self._offset = float(np.median(test))
        self._test = test[self.order] - self._offset
        self._per_position = self.blocks == self.m or self.blocks * REDUCE_SHARE <= self.m
        self._transposed: dict[int, tuple[np.ndarray, np.ndarray]] = {}  # see _by_draws

    @functools.cached_property
    def _position_of(self) -> np.ndarray:
        position = np.empty(self.m, dtype=np.int32)
        position[self.order] = np.arange(self.m, dtype=np.int32)
        return position

    def positions(self, indices: np.ndarray) -> np.ndarray:
        """The positions in the ranking of the runs ``indices`` (indices into the runs as given)."""
        return self._position_of.take(indices)

    def block_totals(
        self, positions: np.ndarray, *, squares: bool = False, counting: Counting | None = None
    ) -> tuple[np.ndarray, ...]:
        """Per resample (rows of ``positions`` in the ranking) and block: number of draws and sum of test scores.

        Returns two arrays of shape (resamples, blocks), and a third, the sum of squared test scores, with
        ``squares=True``. ``counting``: the same pass compiled
        (:func:`boontrack._bootstrap.compiled.compiled_counting`), None for numpy's.
        """
        size, width = positions.shape
        totals = [
            np.empty((size, self.blocks), dtype=np.intp),
            *(np.empty((size, self.blocks)) for _ in range(1 + squares)),
        ]
        if counting is not None:
            unsigned = positions.view(f"u{positions.dtype.itemsize}")  # the same positions, never negative
            counting.block_totals(
                unsigned, 0, self._block_of.view(np.uintp), self._test, *totals, *([] if squares else [_NONE]), squares
            )
            return tuple(totals)
        rows = max(1, CACHE_ELEMENTS // max(width, self.m if self._per_position else 1))
        count = self._count_per_position if self._per_position else self._count_per_block
        for start in range(0, size, rows):  # chunks of resamples whose arrays stay in cache: 2-5x faster
            part = slice(start, start + rows)
            count(positions[part].astype(np.intp), [total[part] for total in totals])  # cast once, not per take
        return tuple(totals)

    def counted(self, resamples: Resamples, *, squares: bool = False, counting: Counting | None = None) -> Counted:
        """``resamples`` counted per tie block (:meth:`block_totals`), or as they were counted when drawn."""
        if isinstance(resamples, Counted):
            assert resamples.squares is not None or not squares  # drawn with them where they are needed
            return resamples
        counts, sums, *squared = self.block_totals(resamples, squares=squares, counting=counting)
        return Counted(counts, sums, squared[0] if squares else None, resamples.shape[1])

    def resampled(
        self,
        rng: np.random.Generator,
        n_resamples: int,
        *,
        work: int = 0,
        squared: int = 0,
        counting: Counting | None = None,
    ) -> Iterator[Resamples]:
        """The bootstrap's resamples, batch by batch: the draws of :func:`bootstrap_indices` (``work`` as there).

        Where the counting is compiled and draws numpy's numbers (:func:`boontrack._bootstrap.compiled.counting_kernel`),
        each batch is counted as it is drawn (:class:`Counted`, in batches of :data:`COUNTED_WEIGHT` x blocks per
        resample at most), the first ``squared`` resamples with their sums of squares when there are ties (the
        studentized pass needs them); else the batches are positions, counted where they are evaluated.
        """
        drawing = None if counting is None else counting.drawn_totals
        if drawing is None:
            yield from bootstrap_indices(rng, self.m, n_resamples, work=work)
            return
        ties = self.blocks < self.m
        done = 0
        for size in batch_sizes(n_resamples, max(self.m, work, COUNTED_WEIGHT * self.blocks)):
            squares = ties and done < squared
            counts, sums = np.empty((size, self.blocks), dtype=np.intp), np.empty((size, self.blocks))
            squared_sums = np.empty((size, self.blocks)) if squares else _NONE
            drawing(rng, self.m, self._block_of.view(np.uintp), self._test, counts, sums, squared_sums, squares)
            yield Counted(counts, sums, squared_sums if squares else None, self.m)
            done += size

    def _count_per_position(self, drawn: np.ndarray, out: list[np.ndarray]) -> None:
        done = drawn.shape[0]
        drawn += np.arange(0, done * self.m, self.m)[:, None]  # row r counts into its own m positions
        counts = np.bincount(drawn.ravel(), minlength=done * self.m).reshape(done, self.m)
        sums = counts * self._test
        columns = [counts, sums, *([sums * self._test] if len(out) > 2 else [])]
        for total, column in zip(out, columns):
            if self.blocks == self.m:
                total[...] = column
            else:
                np.add.reduceat(column, self._starts, axis=1, out=total)

    def _count_per_block(self, drawn: np.ndarray, out: list[np.ndarray]) -> None:
        done = drawn.shape[0]
        keys = self._block_of.take(drawn)
        keys += np.arange(0, done * self.blocks, self.blocks)[:, None]  # row r counts into its own blocks
        keys = keys.ravel()
        length = self.blocks * done
        out[0][...] = np.bincount(keys, minlength=length).reshape(done, self.blocks)
        scores = self._test.take(drawn).ravel()
        out[1][...] = np.bincount(keys, weights=scores, minlength=length).reshape(done, self.blocks)
        if len(out) > 2:
            scores *= scores
            out[2][...] = np.bincount(keys, weights=scores, minlength=length).reshape(done, self.blocks)

    @one_blas_thread
    def boo_n(self, resamples: Resamples, cdf: np.ndarray, counting: Counting | None = None) -> np.ndarray:
        """Boo_n of each resample (rows of positions in the ranking, or :class:`Counted`) for each budget: shape
        (resamples, budgets).

        ``cdf`` is ``best_of_n_cdf(M, budgets, estimator)`` with M the runs drawn per resample, one row per budget.
        Boo_n of a resample is linear in P, and summed by parts it needs one value of P per block:
        ``sum_b (P(C_b) - P(C_{b-1})) mean_b = sum_b P(C_b) (mean_b - mean_{b+1}) - P(0) mean_1`` (with
        ``mean_{B+1} = 0``). With few budgets x tie blocks (at most ``GATHER_WORK m``) these values are
        gathered from the table for every budget at once. Else each resample becomes a row holding
        ``mean_b - mean_{b+1}`` at position ``C_b`` (one bincount), and one matrix product with the table gives
        every budget at once, in BLAS (with one thread: :func:`_one_blas_thread`). ``counting``: the counting
        and this evaluation compiled (:func:`boontrack._bootstrap.compiled.compiled_counting`), None for numpy's.
        """
        counts, sums, *_ = self.counted(resamples, counting=counting)
        if counting is not None:
            values = np.empty((counts.shape[0], cdf.shape[0]))
            counting.boo_n(counts, sums, self._by_draws(cdf), values)
            return values + self._offset
        cum = np.cumsum(counts, axis=1)
        means = sums / np.maximum(counts, 1)  # a block without draws has weight 0
        falls = _falls(means)
        size, width = cum.shape[0], cdf.shape[1]
        if cdf.shape[0] * self.blocks <= GATHER_WORK * self.m:
            values = np.empty((size, cdf.shape[0]))
            for part in _budget_slices(cdf.shape[0], cum.size):
                values[:, part] = np.einsum("kij,ij->ik", cdf[part].take(cum, axis=1), falls)
        else:
            offsets = (np.arange(size) * width)[:, None]
            signed = np.bincount((cum + offsets).ravel(), weights=falls.ravel(), minlength=size * width)
            values = signed.reshape(size, width) @ cdf.T
        return values - cdf[:, 0] * means[:, :1] + self._offset

    @one_blas_thread
    def boo_n_studentized(
        self,
        resamples: Resamples,
        cdf: np.ndarray,
        slope: np.ndarray,
        compiled: Callable[..., None] | None = None,
        counting: Counting | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Boo_n of each resample (as in :meth:`boo_n`) and its standard error from the empirical influence function.

        Boo_n is the L-statistic ``T(p) = sum_b (G(Q_b) - G(Q_{b-1})) mean_b`` of the resample's run weights
        ``p_i = c_i / m`` (``Q_b`` their cumulative sum over tie blocks, ``G(k/m) = P(k)``). Its derivative
        towards run i, in block b, is ``L_i = R_b + (D_b / q_b) (t_i - mean_b)`` up to a constant, with
        ``D_b`` the block's weight, ``q_b`` its share of draws and
        ``R_b = mean_b g(Q_b) + sum_{b' > b} mean_b' (g(Q_b') - g(Q_{b'-1}))``, where ``g = G'`` is ``slope``
        (one row per budget, like ``cdf``); summed by parts as in :meth:`boo_n`,
        ``R_b = sum_{b' >= b} g(Q_b') (mean_b' - mean_{b'+1})``, one reverse cumulative sum. The standard error
        is ``sqrt(sum_i p_i (L_i - Lbar)^2 / m)`` (the nonparametric delta method, Efron & Tibshirani 1993,
        §21.3). Returns two arrays of shape (resamples, budgets), with no per-resample loop: budgets are
        processed together, as (budgets, resamples, blocks) arrays of at most ``CACHE_ELEMENTS`` values.
        ``compiled``: the same pass compiled (:func:`boontrack._bootstrap.compiled.compiled_pass`), None for numpy's;
        ``counting``: the compiled counting (:meth:`block_totals`).
        """
        rows, size = max(1, CACHE_ELEMENTS // self.blocks), resample_count(resamples)
        if size > rows:  # in chunks of resamples whose (resamples, blocks) arrays stay in cache
            parts = [
                self.boo_n_studentized(resample_rows(resamples, slice(k, k + rows)), cdf, slope, compiled, counting)
                for k in range(0, size, rows)
            ]
            return np.concatenate([v for v, _ in parts]), np.concatenate([e for _, e in parts])
        ties = self.blocks < self.m
        counts, sums, squares, m = self.counted(resamples, squares=ties, counting=counting)
        values = np.empty((counts.shape[0], cdf.shape[0]))
        variances = np.empty_like(values)
        if compiled is not None:
            tables = self._by_draws(cdf), self._by_draws(slope)
            compiled(counts, sums, squares if ties else _NONE, ties, *tables, values, variances)
            return values + self._offset, np.sqrt(variances / m)
        # The blocks from the best down (the per-resample arrays turned once), so that R_b, a sum from b up, is
        # a cumulative sum along the blocks as they lie in memory.
        cum = np.cumsum(counts, axis=1)[:, ::-1].copy()
        means = sums / np.maximum(counts, 1)  # a block without draws has weight 0
        falls = _falls(means)[:, ::-1].copy()
        share = counts[:, ::-1] / m
        if ties:  # spread of the test scores inside each block, sum_i c_i (t_i - mean_b)^2 / m, per share^2
            spread = np.maximum(squares - sums * means, 0.0)[:, ::-1] / m
            spread /= np.square(np.maximum(share, 1.0 / m))
        for part in _budget_slices(cdf.shape[0], cum.size):
            p_high = cdf[part].take(cum, axis=1)  # P(C_b), (budgets, resamples, blocks from the best down)
            values[:, part] = np.einsum("kij,ij->ik", p_high, falls) - cdf[part, 0] * means[:, :1]
            terms = slope[part].take(cum, axis=1)
            terms *= falls
            influence = np.cumsum(terms, axis=2)  # R_b: the sum of the terms from b up
            influence -= np.einsum("ij,kij->ki", share, influence)[..., None]
            variance = np.einsum("ij,kij,kij->ki", share, influence, influence)
            if ties:  # the block's weight D_b = P(C_b) - P(C_{b-1}), per share of draws (in spread)
                weight = np.empty_like(p_high)
                np.subtract(p_high[..., -1], cdf[part, :1], out=weight[..., -1])
                np.subtract(p_high[..., :-1], p_high[..., 1:], out=weight[..., :-1])
                variance += np.einsum("ij,kij,kij->ki", spread, weight, weight)
            variances[:, part] = variance.T
        return values + self._offset, np.sqrt(variances / m)

    def _by_draws(self, table: np.ndarray) -> np.ndarray:
        """``table`` (P or its slope) transposed, one row per number of draws, for the compiled passes: kept for
        each table asked for, as a distribution's batches all ask for the same few (transposing them for each
        batch of 41 resamples of 100,000 runs made the compiled pass 1.4x slower than numpy's)."""
        kept = self._transposed.get(id(table))
        if kept is not None and kept[0] is table:
            return kept[1]
        transposed = np.ascontiguousarray(table.T)
        self._transposed[id(table)] = table, transposed  # one assignment: a thread reads either pair whole
        return transposed

    def estimate(self, cdf: np.ndarray) -> np.ndarray:
        """Boo_n of the data itself (every run drawn once), one value per budget."""
        return self.boo_n(np.arange(self.m)[None, :], cdf)[0]

    def leave_one_out(self, left_out: np.ndarray) -> np.ndarray:
        """Positions of the jackknife samples that leave out the positions ``left_out`` (a row each, m - 1 columns)."""
        kept = np.arange(self.m - 1)[None, :]
        return kept + (kept >= left_out[:, None])


def cdf_table(m: int, budgets: np.ndarray, estimator: Estimator) -> np.ndarray:
    """P(k), k = 0..m, one row per budget (see :func:`boontrack.estimators.best_of_n_cdf`)."""
    return best_of_n_cdf(m, np.asarray(budgets), estimator)


def slope_table(m: int, budgets: np.ndarray, estimator: Estimator) -> np.ndarray:
    """``g(k/m) = dP/du`` at u = k/m, k = 0..m, one row per budget: the slope the influence function uses.

    For V, ``P(k) = (k/m)^n`` and g is exactly ``n (k/m)^(n-1)``. U and W are functions of m as well as of
    the run weights; their slope is the central difference ``m (P(k+1) - P(k-1)) / 2`` (one-sided at the ends),
    which tends to V's as m grows (all three estimate the same functional).
    """
    if estimator == "V":
        n = np.asarray(budgets, dtype=np.float64)[:, None]
        return n * np.power(np.arange(m + 1)[None, :] / m, n - 1.0)  # 0^0 = 1: g = 1 for the mean
    return slope_of(cdf_table(m, budgets, estimator))


def slope_of(cdf: np.ndarray) -> np.ndarray:
    """The slope :func:`slope_table` gives U and W, from their P (one row per budget): ``m dP/dk``."""
    return (cdf.shape[1] - 1) * np.gradient(cdf, axis=1)


def _falls(means: np.ndarray) -> np.ndarray:
    """``mean_b - mean_{b+1}`` along the blocks of each resample (``mean_{B+1} = 0``), for sums by parts."""
    falls = means.copy()
    falls[:, :-1] -= means[:, 1:]
    return falls


def _budget_slices(budgets: int, per_budget: int) -> list[slice]:
    """Budgets in groups whose (budgets, resamples, blocks) arrays hold at most ``CACHE_ELEMENTS`` values."""
    step = max(1, CACHE_ELEMENTS // max(per_budget, 1))
    return [slice(k, k + step) for k in range(0, budgets, step)]


def batch_sizes(n_resamples: int, runs: int, elements: int | None = None) -> list[int]:
    """Resamples per batch, batches of about ``elements`` (default ``BATCH_ELEMENTS``) runs x resamples."""
    size = max(MIN_BATCH, (elements or BATCH_ELEMENTS) // runs)
    full, rest = divmod(n_resamples, size)
    return [size] * full + ([rest] if rest else [])


def draw_indices(rng: np.random.Generator, m: int, size: int) -> np.ndarray:
    return rng.integers(0, m, size=(size, m), dtype=np.int32)


def bootstrap_indices(rng: np.random.Generator, m: int, n_resamples: int, work: int | None = None):
    """Positions of the resamples' runs, batch by batch: batches of about ``BATCH_ELEMENTS`` draws, or of that
    much ``work`` per resample when a resample costs more than its m draws (the draws are the same either way)."""
    for size in batch_sizes(n_resamples, max(m, work or 0)):
        yield draw_indices(rng, m, size)


def jackknife_indices(runs: RankedRuns):
    """Positions of the leave-one-out samples (row i leaves out position i), batch by batch."""
    step = max(MIN_BATCH, BATCH_ELEMENTS // runs.m)
    for start in range(0, runs.m, step):
        yield runs.leave_one_out(np.arange(start, min(runs.m, start + step)))


def smoothed_boo_n(
    val: np.ndarray,
    test: np.ndarray | None,
    maximize: bool,
    cdf: np.ndarray,
    rng: np.random.Generator,
    n_resamples: int,
    bounds: tuple[float, float] = (-math.inf, math.inf),
) -> np.ndarray:
    """Boo_n on Gaussian-kernel smoothed resamples (Bajgar et al. 2018, footnote 11; Scott 1992).

    Each resampled pair gets independent N(0, h^2) noise per column with Scott's bandwidth
    ``h = sd * m^(-1/5)``; with ``test=None`` the noisy validation score is also the test score. Noisy test
    scores are reflected at the scores' ``bounds`` (the reflection kernel of Silverman 1986, §2.10): the
    kernel's mass beyond a bound folds back inside, so no resample leaves them. The noise
    changes the ranking inside every resample, so here, unlike the plain bootstrap, each resample is sorted
    (one vectorised ``argsort`` along axis 1 per batch). Ties (a constant column has h = 0) share their block's
    weight as in :func:`boontrack.boo_n`. Per batch: indices, then validation noise, then test noise.
    """
    m = val.size
    h_val = scott_bandwidth(val)
    h_test = None if test is None else scott_bandwidth(test)
    offset = float(np.median(val if test is None else test))  # as in RankedRuns: exact for constant scores
    out = np.empty((n_resamples, cdf.shape[0]))
    done = 0
    positions = np.arange(m)
    for size in batch_sizes(n_resamples, 2 * m, CACHE_ELEMENTS):  # sorted per batch: keep it in cache
        idx = draw_indices(rng, m, size)
        v = val[idx] + h_val * rng.standard_normal((size, m))
        t = v if test is None or h_test is None else test[idx] + h_test * rng.standard_normal((size, m))
        t = reflected(t, bounds)
        if test is None:
            v = t
        key = v if maximize else -v
        order = np.argsort(key, axis=1)
        key = np.take_along_axis(key, order, axis=1)
        t_sorted = np.take_along_axis(t, order, axis=1) - offset
        # Tie block of each sorted position: [start, end) from running max/min over the block boundaries.
        new_block = np.ones((size, m), dtype=bool)
        new_block[:, 1:] = key[:, 1:] != key[:, :-1]
        start = np.maximum.accumulate(np.where(new_block, positions, 0), axis=1)
        ends_here = np.ones((size, m), dtype=bool)
        ends_here[:, :-1] = new_block[:, 1:]
        end = np.minimum.accumulate(np.where(ends_here, positions + 1, m)[:, ::-1], axis=1)[:, ::-1]
        for k, p in enumerate(cdf):
            weights = (p.take(end) - p.take(start)) / (end - start)
            out[done : done + size, k] = np.einsum("ij,ij->i", weights, t_sorted)
        done += size
    return out + offset


def reflected(x: np.ndarray, bounds: tuple[float, float]) -> np.ndarray:
    """``x`` folded back into ``bounds`` at each bound it crosses, as light in a mirror (identity inside)."""
    low, high = bounds
    if math.isfinite(low) and math.isfinite(high):
        width = high - low
        folded = np.mod(x - low, 2.0 * width)
        return low + np.where(folded > width, 2.0 * width - folded, folded)
    if math.isfinite(low):
        return low + np.abs(x - low)
    if math.isfinite(high):
        return high - np.abs(high - x)
    return x


def scott_bandwidth(x: np.ndarray) -> float:
    """Scott's rule for a Gaussian kernel in one dimension: sd * m^(-1/5); exactly 0 for constant scores."""
    return float(x.std(ddof=1)) * x.size ** (-0.2) if np.ptp(x) > 0 else 0.0
