"""The bootstrap's machinery, shared by the resampling, comparison, diagnostics and simulation modules.

Runs ranked into tie blocks (:class:`RankedRuns`) and evaluated on resamples through their counts, the
resamples' index draws in memory-bounded batches, the interval methods (percentile, BCa, symmetric
studentized, sup-t bands), and the measured rules for when an interval is doubtful
(:func:`few_runs_messages`). The formulas and the choice of the default method are described in
:mod:`boontrack.resampling`, the public face of this module. Nothing here validates its input: the public
functions do.
"""

from __future__ import annotations

import collections
import contextlib
import functools
import itertools
import math
import os
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextvars import ContextVar
from typing import Any, NamedTuple

import numpy as np
from scipy import special
from threadpoolctl import ThreadpoolController

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
#: Boo_n gathers P at the block ends from its table when the tie blocks are fewer than m / GATHER_SHARE (one
#: gather per block and budget); with more blocks one matrix product per batch is cheaper (measured).
GATHER_SHARE = 8
#: Runs below which the intervals of one group (and of a difference, for the smaller group) under-cover
#: whatever the budget (measured: see :func:`few_runs_message`).
FEW_RUNS_INTERVAL = 8
#: Skewness of the test scores towards the better side above which the runs are said to have a long tail,
#: checked up to TAIL_RUNS runs (where it was measured); a normal sample of 10-20 exceeds it 2-4 % of the time.
LONG_TAIL_SKEWNESS = 1.0
TAIL_RUNS = 100
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


@functools.cache
def _thread_pools() -> ThreadpoolController:
    """The thread pools of the loaded native libraries, found once (a search costs about a millisecond)."""
    return ThreadpoolController()


class _OneBlasThread:
    """BLAS limited to one thread while any kernel runs, in any thread; the limit found before is restored
    when the last one ends. A plain ``limit()`` per call is not enough with several threads: the first to end
    would restore the old limit under the others, and the last would leave its own limit behind for good.

    OpenBLAS ignores a limit set in another thread once the main thread has set one (measured with OpenBLAS
    0.3.31), so :func:`evaluate_batches` holds this in the calling thread while its threads run.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._users = 0
        self._limiter: Any = None

    def __enter__(self) -> None:
        with self._lock:
            if self._users == 0:
                self._limiter = _thread_pools().limit(limits=1, user_api="blas")
            self._users += 1

    def __exit__(self, *exc_info) -> None:
        with self._lock:
            self._users -= 1
            if self._users == 0:
                self._limiter.restore_original_limits()


_ONE_BLAS_THREAD = _OneBlasThread()


def _one_blas_thread(kernel):
    """Run ``kernel`` with BLAS limited to one thread (restored afterwards; about 5 us per call).

    The kernels' matrix products are small (a batch of resamples by m + 1 ranks, times the budgets): BLAS
    threads gained no wall time and cost up to 9x the CPU on two cores, more with several processes each
    starting its own threads. More cores are used by evaluating batches in threads (:func:`evaluate_batches`).
    """

    @functools.wraps(kernel)
    def limited(*args, **kwargs):
        with _ONE_BLAS_THREAD:
            return kernel(*args, **kwargs)

    return limited


#: Threads that evaluate the batches of one bootstrap; None is every CPU this process may use.
_THREADS: ContextVar[int | None] = ContextVar("boontrack_threads", default=None)


def available_cpus() -> int:
    """The CPUs this process may run on (its affinity mask where the system has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1


def thread_count() -> int:
    """The threads :func:`evaluate_batches` uses here (see :func:`using_threads`)."""
    return _THREADS.get() or available_cpus()


@contextlib.contextmanager
def using_threads(threads: int | None) -> Iterator[None]:
    """Evaluate bootstrap batches on ``threads`` threads inside the block (None: every available CPU)."""
    token = _THREADS.set(threads)
    try:
        yield
    finally:
        _THREADS.reset(token)


def evaluate_batches(kernel: Callable[[Any], Any], batches: Iterable[Any]) -> list[Any]:
    """``kernel(batch)`` for each batch, in order, on up to :func:`thread_count` threads.

    The batches are drawn here, in the calling thread and in order, so the resamples and the results are those
    of one thread whatever the count. At most two batches per thread are drawn ahead: memory stays bounded. A
    single batch (every sweep of up to 400 runs at 10,000 resamples) starts no thread. Threads pay because the
    kernels are numpy operations that release the GIL: on two cores they cut the bootstrap's wall time 1.5-1.7x
    for 2-16 % more CPU time.
    """
    threads = thread_count()
    batches = iter(batches)
    head = list(itertools.islice(batches, 2))
    if threads == 1 or len(head) < 2:
        return [kernel(batch) for batch in itertools.chain(head, batches)]
    results: list[Any] = []
    pending: collections.deque[Any] = collections.deque()
    with _ONE_BLAS_THREAD, ThreadPoolExecutor(threads, thread_name_prefix="boontrack") as pool:
        for batch in itertools.chain(head, batches):
            pending.append(pool.submit(kernel, batch))
            if len(pending) > 2 * threads:
                results.append(pending.popleft().result())
        results.extend(future.result() for future in pending)
    return results


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

    @functools.cached_property
    def _position_of(self) -> np.ndarray:
        position = np.empty(self.m, dtype=np.int32)
        position[self.order] = np.arange(self.m, dtype=np.int32)
        return position

    def positions(self, indices: np.ndarray) -> np.ndarray:
        """The positions in the ranking of the runs ``indices`` (indices into the runs as given)."""
        return self._position_of.take(indices)

    def block_totals(self, positions: np.ndarray, *, squares: bool = False) -> tuple[np.ndarray, ...]:
        """Per resample (rows of ``positions`` in the ranking) and block: number of draws and sum of test scores.

        Returns two arrays of shape (resamples, blocks), and a third, the sum of squared test scores, with
        ``squares=True``.
        """
        size, width = positions.shape
        totals = [
            np.empty((size, self.blocks), dtype=np.intp),
            *(np.empty((size, self.blocks)) for _ in range(1 + squares)),
        ]
        rows = max(1, CACHE_ELEMENTS // max(width, self.m if self._per_position else 1))
        count = self._count_per_position if self._per_position else self._count_per_block
        for start in range(0, size, rows):  # chunks of resamples whose arrays stay in cache: 2-5x faster
            part = slice(start, start + rows)
            count(positions[part].astype(np.intp), [total[part] for total in totals])  # cast once, not per take
        return tuple(totals)

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

    @_one_blas_thread
    def boo_n(self, positions: np.ndarray, cdf: np.ndarray) -> np.ndarray:
        """Boo_n of each resample (rows of ``positions`` in the ranking) for each budget: shape (resamples, budgets).

        ``cdf`` is ``best_of_n_cdf(M, budgets, estimator)`` with M = ``positions.shape[1]``, one row per budget.
        Boo_n of a resample is linear in P, and summed by parts it needs one value of P per block:
        ``sum_b (P(C_b) - P(C_{b-1})) mean_b = sum_b P(C_b) (mean_b - mean_{b+1}) - P(0) mean_1`` (with
        ``mean_{B+1} = 0``). With few tie blocks (fewer than ``m / GATHER_SHARE``) these values are gathered
        from the table for every budget at once. Else each resample becomes a row holding
        ``mean_b - mean_{b+1}`` at position ``C_b`` (one bincount), and one matrix product with the table gives
        every budget at once, in BLAS (with one thread: :func:`_one_blas_thread`).
        """
        counts, sums = self.block_totals(positions)
        cum = np.cumsum(counts, axis=1)
        means = sums / np.maximum(counts, 1)  # a block without draws has weight 0
        falls = _falls(means)
        size, width = cum.shape[0], cdf.shape[1]
        if cdf.shape[0] == 1 or self.blocks * GATHER_SHARE <= self.m:
            values = np.empty((size, cdf.shape[0]))
            for part in _budget_slices(cdf.shape[0], cum.size):
                values[:, part] = np.einsum("kij,ij->ik", cdf[part].take(cum, axis=1), falls)
        else:
            offsets = (np.arange(size) * width)[:, None]
            signed = np.bincount((cum + offsets).ravel(), weights=falls.ravel(), minlength=size * width)
            values = signed.reshape(size, width) @ cdf.T
        return values - cdf[:, 0] * means[:, :1] + self._offset

    @_one_blas_thread
    def boo_n_studentized(
        self, positions: np.ndarray, cdf: np.ndarray, slope: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Boo_n of each resample and its standard error from the empirical influence function.

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
        """
        rows = max(1, CACHE_ELEMENTS // self.blocks)
        if positions.shape[0] > rows:  # in chunks of resamples whose (resamples, blocks) arrays stay in cache
            parts = [
                self.boo_n_studentized(positions[k : k + rows], cdf, slope) for k in range(0, len(positions), rows)
            ]
            return np.concatenate([v for v, _ in parts]), np.concatenate([e for _, e in parts])
        m = positions.shape[1]
        ties = self.blocks < self.m
        counts, sums, *squares = self.block_totals(positions, squares=ties)
        cum = np.cumsum(counts, axis=1)
        means = sums / np.maximum(counts, 1)  # a block without draws has weight 0
        falls = _falls(means)
        share = counts / m
        if ties:  # spread of the test scores inside each block, sum_i c_i (t_i - mean_b)^2 / m, per share^2
            spread = np.maximum(squares[0] - sums * means, 0.0) / m
            spread /= np.square(np.maximum(share, 1.0 / m))
        values = np.empty((counts.shape[0], cdf.shape[0]))
        variances = np.empty_like(values)
        for part in _budget_slices(cdf.shape[0], cum.size):
            p_high = cdf[part].take(cum, axis=1)  # P(C_b), (budgets, resamples, blocks)
            values[:, part] = np.einsum("kij,ij->ik", p_high, falls) - cdf[part, 0] * means[:, :1]
            terms = slope[part].take(cum, axis=1)
            terms *= falls
            influence = np.cumsum(terms[..., ::-1], axis=2)[..., ::-1]  # R_b: the sum of the terms from b up
            influence -= np.einsum("ij,kij->ki", share, influence)[..., None]
            variance = np.einsum("ij,kij,kij->ki", share, influence, influence)
            if ties:  # the block's weight D_b = P(C_b) - P(C_{b-1}), per share of draws (in spread)
                weight = np.empty_like(p_high)
                np.subtract(p_high[..., 0], cdf[part, :1], out=weight[..., 0])
                np.subtract(p_high[..., 1:], p_high[..., :-1], out=weight[..., 1:])
                variance += np.einsum("ij,kij,kij->ki", spread, weight, weight)
            variances[:, part] = variance.T
        return values + self._offset, np.sqrt(variances / m)

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
    p = cdf_table(m, budgets, estimator)
    return m * np.gradient(p, axis=1)


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
) -> np.ndarray:
    """Boo_n on Gaussian-kernel smoothed resamples (Bajgar et al. 2018, footnote 11; Scott 1992).

    Each resampled pair gets independent N(0, h^2) noise per column with Scott's bandwidth
    ``h = sd * m^(-1/5)``; with ``test=None`` the noisy validation score is also the test score. The noise
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


def scott_bandwidth(x: np.ndarray) -> float:
    """Scott's rule for a Gaussian kernel in one dimension: sd * m^(-1/5); exactly 0 for constant scores."""
    return float(x.std(ddof=1)) * x.size ** (-0.2) if np.ptp(x) > 0 else 0.0


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
    assert resampled.studentized is not None  # kept by the studentized resampling
    return symmetric_bounds(resampled, np.quantile(np.abs(resampled.studentized), confidence_level, axis=0))


def symmetric_bounds(resampled: Resampled, quantile: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``est +- quantile * se`` per budget, cut to the plausible range (an unbounded quantile gives it)."""
    assert resampled.standard_error is not None  # kept by the studentized resampling, which this serves
    half = np.minimum(quantile, UNBOUNDED) * resampled.standard_error
    low, high = resampled.plausible
    return np.maximum(resampled.estimate - half, low), np.minimum(resampled.estimate + half, high)


def interval_ends(resampled: Resampled, confidence_level: float, method: str) -> tuple[np.ndarray, np.ndarray]:
    """Interval ends for each budget (column of the bootstrap distribution)."""
    if method == "studentized":
        return studentized_interval(resampled, confidence_level)
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
    """Sup-t band (Montiel Olea & Plagborg-Møller 2019): ``est +- c s`` with one c for every budget.

    c is the ``confidence_level`` quantile of the largest ``|est* - est| / s`` over the trustworthy budgets
    (over every budget when none is), s the per-resample standard error for the studentized method, else the
    bootstrap standard error. Budgets whose scale is 0 (constant scores) take no part: their band is a point.
    """
    over = trustworthy if trustworthy.any() else np.ones_like(trustworthy)
    if method == "studentized":
        assert resampled.studentized is not None  # kept by the studentized resampling
        statistic = np.abs(resampled.studentized[:, over])
        quantile = np.quantile(statistic.max(axis=1), confidence_level)
        return symmetric_bounds(resampled, np.full(resampled.estimate.size, quantile))
    scale = bootstrap_standard_error(resampled.dist)
    scaled = studentize(resampled.dist - resampled.estimate, scale)[:, over & (scale > 0)]
    critical = np.quantile(np.abs(scaled).max(axis=1), confidence_level) if scaled.shape[1] else 0.0
    half = np.nan_to_num(critical * scale)  # one resample: no scale, the band is the estimate
    return resampled.estimate - half, resampled.estimate + half


def few_runs_message(
    m: int, budgets: np.ndarray | None = None, test: np.ndarray | None = None, maximize: bool = True
) -> str | None:
    """:func:`few_runs_messages` in one message, or None."""
    return "; ".join(few_runs_messages(m, budgets, test, maximize)) or None


def few_runs_messages(
    m: int, budgets: np.ndarray | None = None, test: np.ndarray | None = None, maximize: bool = True
) -> list[str]:
    """Why intervals on these runs may under-cover, from measured coverage (:mod:`boontrack.simulate`).

    Three keys, each with what was measured for nominal 95 % (studentized / percentile, normal scores unless
    said): fewer than 8 runs (83-92 % / 76-83 % at m = 4-6; 93-96 % / 83-88 % at m = 8); a budget above m / 2
    (the trust rule of :class:`CurveBand`); test scores skewed towards the better end (sample skewness above
    1, for m <= 100: log-normal scores gave 81-87 % / 66-82 % at m = 20-50 and n = 5-10, and no resampling
    method sees a tail the runs have not sampled).
    """
    reasons = []
    if m < FEW_RUNS_INTERVAL:
        reasons.append(
            f"only {m} run{'' if m == 1 else 's'}: 95 % intervals covered 83-92 % at 4-6 runs and 93-96 % at 8 "
            "(studentized; percentile 76-88 %)"
        )
    if budgets is not None and budgets.max() > TRUSTED_SHARE * m and m > 1:
        reasons.append(
            f"n = {int(budgets.max())} is above m / 2 = {m / 2:g}: intervals there are wide (studentized, 2.6-7.7x "
            "the percentile width) or under-cover (percentile bands 43-67 %)"
        )
    skew = _better_side_skewness(test, maximize) if test is not None and 2 < m <= TAIL_RUNS else 0.0
    if skew > LONG_TAIL_SKEWNESS:
        reasons.append(
            f"test scores skewed towards better scores (skewness {skew:.1f}): on such long tails 95 % intervals "
            "covered 81-87 % (studentized; percentile 66-82 %)"
        )
    return reasons


def _better_side_skewness(test: np.ndarray, maximize: bool) -> float:
    """Sample skewness (biased, g1) of the test scores, positive when the long tail is on the better side."""
    centred = test - test.mean()
    spread = np.mean(centred**2)
    if spread == 0:
        return 0.0
    skew = float(np.mean(centred**3) / spread**1.5)
    return skew if maximize else -skew


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
