"""Bootstrap confidence intervals for Boo_n, expected-validation curves and the mean.

The bootstrap resamples runs, keeping each run's (validation, test) pair together (Bajgar et al. 2018,
Appendix D.1). Resample r of a batch of ``b`` resamples is row r of
``rng.integers(0, m, size=(b, m), dtype=numpy.int32)``:
indices into the runs as given. Batches follow each other in the generator's stream, so the resamples do not
depend on the batch size, and they are the resamples ``scipy.stats.bootstrap(..., paired=True, rng=seed)``
draws: with the same seed both give the same bootstrap distribution and intervals (the tests check it).

A resample is used only through its counts: ranked by validation score, it is the original ranking with run i
repeated ``c_i`` times, so no resample is sorted. With the original tie blocks b (runs of equal validation
score), ``c_b`` draws in block b and cumulative counts ``C_b = c_1 + ... + c_b``, the resample's block b
occupies ranks ``C_{b-1}+1 .. C_b`` and

.. math:: \\widehat{\\mathrm{Boo}}_n = \\sum_b \\bigl(P(C_b) - P(C_{b-1})\\bigr)\\,
          \\frac{\\sum_{i \\in b} c_i t_i}{\\sum_{i \\in b} c_i}

(Bajgar et al. 2018, eq. 7 with the tie rule of §3.2), where ``P`` is one row of
:func:`boontrack.estimators.best_of_n_cdf` for m runs, computed once per budget n. The same formula with
every run drawn once is the point estimate, and with one run left out (and ``P`` for m - 1 runs) it is a
jackknife value for the BCa acceleration.

The default interval is studentized (bootstrap-t): the same counts give each resample's delta-method standard
error, from the empirical influence function of the L-statistic (one reverse cumulative sum over the tie
blocks per budget; :meth:`_RankedRuns.boo_n_studentized`). It was chosen by its measured coverage on
populations with a known Boo_n (:mod:`boontrack.simulate`, ``tests/benchmarks/bench_coverage.py``).

Resamples are processed in batches of about ``_BATCH_ELEMENTS`` draws (16 MB), counted in cache-sized chunks,
so memory stays bounded and ``n_resamples`` is limited only by time. The kernels run BLAS with one thread
(:func:`_one_blas_thread`). Every function takes ``rng`` (an int seed or a ``numpy.random.Generator``) and
never touches the global random state.
"""

from __future__ import annotations

import functools
import math
import warnings
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

import numpy as np
from scipy import special
from threadpoolctl import ThreadpoolController

from boontrack._validation import (
    as_budget,
    as_budgets,
    as_choice,
    as_count,
    as_flag,
    as_probability,
    as_rng,
    as_scores,
    as_val_test,
)
from boontrack.estimators import Estimator, _warn_or_raise_budget, best_of_n_cdf, rank_blocks
from boontrack.exceptions import ConstantScoresWarning, FewRunsWarning
from boontrack.spec import CI_METHODS, ESTIMATORS

__all__ = [
    "BootstrapResult",
    "ConfidenceInterval",
    "CurveBand",
    "Method",
    "boo_n_ci",
    "boo_n_curve_ci",
    "default_budgets",
    "mean_ci",
]

Method = Literal["studentized", "percentile", "bca", "smoothed"]

#: Runs x resamples per batch (16 MB of int32 indices): enough resamples that the work per tie block stays
#: vectorised, few enough that memory stays bounded at any n_resamples and m ...
_BATCH_ELEMENTS = 1 << 22
#: ... with at least this many resamples per batch.
_MIN_BATCH = 1
#: Runs x resamples counted at once: small enough that the counting's arrays (~2 MB each) stay in cache, which
#: makes it 2-5x faster than on whole batches; also the size of the (budgets, resamples, blocks) arrays.
_CACHE_ELEMENTS = 1 << 18
#: Boo_n gathers P at the block ends from its table when the tie blocks are fewer than m / _GATHER_SHARE (one
#: gather per block and budget); with more blocks one matrix product per batch is cheaper (measured).
_GATHER_SHARE = 8
#: Default number of budgets of a curve band.
_MAX_DEFAULT_BUDGETS = 200
#: Runs below which the intervals of one group (and of a difference, for the smaller group) under-cover
#: whatever the budget (measured: see :func:`_few_runs_message`).
_FEW_RUNS_INTERVAL = 8
#: Skewness of the test scores towards the better side above which the runs are said to have a long tail,
#: checked up to _TAIL_RUNS runs (where it was measured); a normal sample of 10-20 exceeds it 2-4 % of the time.
_LONG_TAIL_SKEWNESS = 1.0
_TAIL_RUNS = 100
#: Stands for an infinite studentized value (a resample with se* = 0), kept finite so that quantiles are.
_UNBOUNDED = 1e300
#: Runs x budgets above which a studentized band studentizes only its first _STUDENTIZED_RESAMPLES resamples,
#: and the studentized default budgets are thinned to _STUDENTIZED_WORK / m (at least _MIN_STUDENTIZED_BUDGETS).
_STUDENTIZED_WORK = 200_000
_STUDENTIZED_RESAMPLES = 1999
_MIN_STUDENTIZED_BUDGETS = 24
#: Largest share n / m of budgets whose band is trustworthy (measurements in :class:`CurveBand`).
_TRUSTED_SHARE = 0.5


@dataclass(frozen=True)
class ConfidenceInterval:
    """A two-sided confidence interval."""

    low: float
    high: float


@dataclass(frozen=True)
class BootstrapResult:
    """A point estimate with its bootstrap interval.

    Attributes
    ----------
    estimate
        The statistic on the data (for ``method="smoothed"`` too: smoothing only widens the distribution).
    confidence_interval
        Two-sided interval at ``confidence_level``.
    standard_error
        Standard deviation (``ddof=1``) of the bootstrap distribution; NaN with a single resample.
    bootstrap_distribution
        The statistic on each resample, shape ``(n_resamples,)``.
    method, confidence_level, n_resamples
        As requested.
    """

    estimate: float
    confidence_interval: ConfidenceInterval
    standard_error: float
    bootstrap_distribution: np.ndarray
    method: str
    confidence_level: float
    n_resamples: int


@dataclass(frozen=True)
class CurveBand:
    """Pointwise and simultaneous confidence bands for a curve of Boo_n over budgets n.

    All budgets share the same resamples, so each resample is one whole curve. ``low``/``high`` form a
    *pointwise* band: at each budget on its own, the interval covers Boo_n with probability
    ``confidence_level``, but the whole curve lies inside it far less often (33-77 % for a 95 % percentile
    band over n = 1..10). ``simultaneous_low``/``simultaneous_high`` form a *simultaneous* (sup-t) band
    (Montiel Olea & Plagborg-Møller 2019): one critical value c, the ``confidence_level`` quantile over the
    resamples of ``max_n |est*_n - est_n| / s_n`` (s the per-resample standard error for the studentized
    method, else the bootstrap standard error), taken over the trustworthy budgets, gives ``est_n +- c s_n``,
    meant to hold the whole curve at once. Measured over n = 1..m/2 (normal scores, m = 20 and 50, 333 sweeps
    each; ``tests/benchmarks/bench_coverage.py``), the studentized simultaneous band held the whole curve in
    92-94 % of sweeps at 1.5-1.6x the pointwise width, its pointwise band in 82-89 %; percentile bands held it
    in 78-87 % (simultaneous) and 56-78 % (pointwise).

    ``trustworthy`` is False at budgets ``n > m / 2``. There, measured on normal scores (300 sweeps per cell),
    the validation curve's percentile band covered 43-67 % (n = m/2 .. m, m = 10-50) and the studentized
    band, though it covered 89-94 %, was 2.6-7.7x as wide as the percentile band; beyond m (extrapolation)
    it is wider still. For n <= m/2 the studentized intervals covered 92-96 % on normal and beta-binomial
    scores at m = 10-100 (see :mod:`boontrack.simulate`). Draw and report the band there as doubtful.

    Attributes
    ----------
    n
        The budgets evaluated (sorted, distinct).
    estimate, low, high, standard_error
        Aligned with ``n``; ``standard_error`` is the standard deviation of the bootstrap distribution.
    simultaneous_low, simultaneous_high
        The simultaneous band, aligned with ``n``.
    trustworthy
        Boolean, aligned with ``n``: False where ``n > m / 2``.
    confidence_level, method
        As requested.
    n_resamples
        Number of bootstrap resamples.
    bootstrap_distribution
        The curve of each resample, shape ``(n_resamples, len(n))``.
    """

    n: np.ndarray
    estimate: np.ndarray
    low: np.ndarray
    high: np.ndarray
    standard_error: np.ndarray
    confidence_level: float
    method: str
    n_resamples: int
    bootstrap_distribution: np.ndarray
    simultaneous_low: np.ndarray
    simultaneous_high: np.ndarray
    trustworthy: np.ndarray

    def at(self, n: int) -> BootstrapResult:
        """The interval of Boo_n at one budget of the band, as :func:`boo_n_ci` would give it on these resamples."""
        matches = np.flatnonzero(self.n == n)
        if not matches.size:
            raise ValueError(f"`n` = {n!r} is not a budget of this band (budgets {self.n.min()}..{self.n.max()})")
        k = int(matches[0])
        return BootstrapResult(
            estimate=float(self.estimate[k]),
            confidence_interval=ConfidenceInterval(float(self.low[k]), float(self.high[k])),
            standard_error=float(self.standard_error[k]),
            bootstrap_distribution=self.bootstrap_distribution[:, k],
            method=self.method,
            confidence_level=self.confidence_level,
            n_resamples=self.n_resamples,
        )


# ----------------------------------------------------------------------------------------------------------
# Resampling machinery (shared with boontrack.compare)


class _Resampled(NamedTuple):
    """Everything an interval method needs, one column per budget."""

    estimate: np.ndarray
    #: The statistic on each resample, (B, budgets).
    dist: np.ndarray
    #: Leave-one-out values (m, budgets), for BCa; else None.
    jackknife: np.ndarray | None
    #: Delta-method standard error on the data (budgets,), for the studentized method; else None.
    standard_error: np.ndarray | None
    #: (est* - est) / se* of each resample (B, budgets), for the studentized method; else None.
    studentized: np.ndarray | None
    #: Where a studentized interval may reach (see :func:`_plausible_range`).
    plausible: tuple[float, float]


@functools.cache
def _thread_pools() -> ThreadpoolController:
    """The thread pools of the loaded native libraries, found once (a search costs about a millisecond)."""
    return ThreadpoolController()


def _one_blas_thread(kernel):
    """Run ``kernel`` with BLAS limited to one thread (restored afterwards; about 5 us per call).

    The kernels' matrix products are small (a batch of resamples by m + 1 ranks, times the budgets): BLAS
    threads gained no wall time and cost up to 9x the CPU on two cores, more with several processes each
    starting its own threads. More cores are used by running jobs or groups in separate processes.
    """

    @functools.wraps(kernel)
    def limited(*args, **kwargs):
        with _thread_pools().limit(limits=1, user_api="blas"):
            return kernel(*args, **kwargs)

    return limited


class _RankedRuns:
    """Runs ranked by validation score and grouped into tie blocks, ready to evaluate Boo_n on resamples.

    A resample enters only through two numbers per tie block: how many draws fell into the block and the sum
    of their test scores. Both come from one ``bincount`` over the batch's draws (the second weighted by the
    drawn test scores), laid out as (resamples, blocks). This is the count-weighted block sum of the sorted
    runs without forming per-run counts: ``np.add.reduceat`` over per-run counts was 3-7x slower when blocks
    are small (no or few ties), the common case for continuous metrics. Cumulative sums then run along the
    contiguous last axis (5x faster than along axis 0).
    """

    def __init__(self, val: np.ndarray, test: np.ndarray, maximize: bool):
        blocks = rank_blocks(val, maximize=maximize)
        self.m = val.size
        self.blocks = blocks.ends.size
        # Tie block of each run, in input order; int32 halves the memory the gather reads (m < 2^31 runs).
        self._block_of = np.empty(self.m, dtype=np.int32)
        self._block_of[blocks.order] = np.repeat(np.arange(self.blocks), np.diff(blocks.ends, prepend=0))
        # Test scores are summed relative to their median: constant scores then give exactly their value (a
        # collapsed interval), and sums of large counts keep their precision.
        self._offset = float(np.median(test))
        self._test = test - self._offset

    def block_totals(self, indices: np.ndarray, *, squares: bool = False) -> tuple[np.ndarray, ...]:
        """Per resample (rows of ``indices``, run indices) and block: number of draws and sum of test scores.

        Returns two arrays of shape (resamples, blocks), and a third, the sum of squared test scores, with
        ``squares=True``.
        """
        size, width = indices.shape
        totals = [
            np.empty((size, self.blocks), dtype=np.intp),
            *(np.empty((size, self.blocks)) for _ in range(1 + squares)),
        ]
        rows = max(1, _CACHE_ELEMENTS // max(width, 1))
        for start in range(0, size, rows):  # chunks of resamples whose arrays stay in cache: 2-5x faster
            runs = indices[start : start + rows].astype(np.intp)  # take casts int32 indices per call: cast once
            done = runs.shape[0]
            flat = np.add(self._block_of.take(runs), (np.arange(done) * self.blocks)[:, None], dtype=np.intp).ravel()
            length = self.blocks * done
            part = slice(start, start + done)
            totals[0][part] = np.bincount(flat, minlength=length).reshape(done, self.blocks)
            drawn = self._test.take(runs).ravel()
            totals[1][part] = np.bincount(flat, weights=drawn, minlength=length).reshape(done, self.blocks)
            if squares:
                totals[2][part] = np.bincount(flat, weights=drawn * drawn, minlength=length).reshape(done, self.blocks)
        return tuple(totals)

    @_one_blas_thread
    def boo_n(self, indices: np.ndarray, cdf: np.ndarray) -> np.ndarray:
        """Boo_n of each resample (rows of ``indices``) for each budget: shape (resamples, budgets).

        ``cdf`` is ``best_of_n_cdf(M, budgets, estimator)`` with M = ``indices.shape[1]``, one row per budget.
        Boo_n of a resample is linear in P, and summed by parts it needs one value of P per block:
        ``sum_b (P(C_b) - P(C_{b-1})) mean_b = sum_b P(C_b) (mean_b - mean_{b+1}) - P(0) mean_1`` (with
        ``mean_{B+1} = 0``). With few tie blocks (fewer than ``m / _GATHER_SHARE``) these values are gathered
        from the table for every budget at once. Else each resample becomes a row holding
        ``mean_b - mean_{b+1}`` at position ``C_b`` (one bincount), and one matrix product with the table gives
        every budget at once, in BLAS (with one thread: :func:`_one_blas_thread`).
        """
        counts, sums = self.block_totals(indices)
        cum = np.cumsum(counts, axis=1)
        means = sums / np.maximum(counts, 1)  # a block without draws has weight 0
        falls = _falls(means)
        size, width = cum.shape[0], cdf.shape[1]
        if cdf.shape[0] == 1 or self.blocks * _GATHER_SHARE <= self.m:
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
        self, indices: np.ndarray, cdf: np.ndarray, slope: np.ndarray
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
        processed together, as (budgets, resamples, blocks) arrays of at most ``_CACHE_ELEMENTS`` values.
        """
        rows = max(1, _CACHE_ELEMENTS // self.blocks)
        if indices.shape[0] > rows:  # in chunks of resamples whose (resamples, blocks) arrays stay in cache
            parts = [self.boo_n_studentized(indices[k : k + rows], cdf, slope) for k in range(0, len(indices), rows)]
            return np.concatenate([v for v, _ in parts]), np.concatenate([e for _, e in parts])
        m = indices.shape[1]
        ties = self.blocks < self.m
        counts, sums, *squares = self.block_totals(indices, squares=ties)
        cum = np.cumsum(counts, axis=1)
        means = sums / np.maximum(counts, 1)  # a block without draws has weight 0
        falls = _falls(means)
        share = counts / m
        if ties:  # spread of the test scores inside each block: sum_i c_i (t_i - mean_b)^2 / m
            spread = np.maximum(squares[0] - sums * means, 0.0) / m
            share_floor = np.maximum(share, 1.0 / m)
        values = np.empty((counts.shape[0], cdf.shape[0]))
        variances = np.empty_like(values)
        for part in _budget_slices(cdf.shape[0], cum.size):
            p_high = cdf[part].take(cum, axis=1)  # P(C_b), (budgets, resamples, blocks)
            values[:, part] = np.einsum("kij,ij->ik", p_high, falls) - cdf[part, 0] * means[:, :1]
            terms = slope[part].take(cum, axis=1)
            terms *= falls
            # R_b = the sum of the terms from b up: all terms, less the cumulative sum, plus the own term.
            influence = terms - np.cumsum(terms, axis=2)
            influence += terms.sum(axis=2, keepdims=True)
            centre = np.einsum("ij,kij->ki", share, influence)
            influence -= centre[..., None]
            variance = np.einsum("ij,kij->ki", share, influence * influence)
            if ties:  # the block's weight D_b = P(C_b) - P(C_{b-1}), per share of draws
                weight = np.empty_like(p_high)
                np.subtract(p_high[..., 0], cdf[part, :1], out=weight[..., 0])
                np.subtract(p_high[..., 1:], p_high[..., :-1], out=weight[..., 1:])
                weight /= share_floor
                variance += np.einsum("ij,kij->ki", spread, weight * weight)
            variances[:, part] = variance.T
        return values + self._offset, np.sqrt(variances / m)

    def estimate(self, cdf: np.ndarray) -> np.ndarray:
        """Boo_n of the data itself (every run drawn once), one value per budget."""
        return self.boo_n(np.arange(self.m)[None, :], cdf)[0]

    def leave_one_out(self, runs: np.ndarray) -> np.ndarray:
        """Run indices of the jackknife samples that leave out ``runs`` (one row each, m - 1 columns)."""
        kept = np.arange(self.m - 1)[None, :]
        return kept + (kept >= runs[:, None])


def _cdf_table(m: int, budgets: np.ndarray, estimator: Estimator) -> np.ndarray:
    """P(k), k = 0..m, one row per budget (see :func:`boontrack.estimators.best_of_n_cdf`)."""
    return best_of_n_cdf(m, np.asarray(budgets), estimator)


def _slope_table(m: int, budgets: np.ndarray, estimator: Estimator) -> np.ndarray:
    """``g(k/m) = dP/du`` at u = k/m, k = 0..m, one row per budget: the slope the influence function uses.

    For V, ``P(k) = (k/m)^n`` and g is exactly ``n (k/m)^(n-1)``. U and W are functions of m as well as of
    the run weights; their slope is the central difference ``m (P(k+1) - P(k-1)) / 2`` (one-sided at the ends),
    which tends to V's as m grows (all three estimate the same functional).
    """
    if estimator == "V":
        n = np.asarray(budgets, dtype=np.float64)[:, None]
        return n * np.power(np.arange(m + 1)[None, :] / m, n - 1.0)  # 0^0 = 1: g = 1 for the mean
    p = _cdf_table(m, budgets, estimator)
    return m * np.gradient(p, axis=1)


def _falls(means: np.ndarray) -> np.ndarray:
    """``mean_b - mean_{b+1}`` along the blocks of each resample (``mean_{B+1} = 0``), for sums by parts."""
    falls = means.copy()
    falls[:, :-1] -= means[:, 1:]
    return falls


def _budget_slices(budgets: int, per_budget: int) -> list[slice]:
    """Budgets in groups whose (budgets, resamples, blocks) arrays hold at most ``_CACHE_ELEMENTS`` values."""
    step = max(1, _CACHE_ELEMENTS // max(per_budget, 1))
    return [slice(k, k + step) for k in range(0, budgets, step)]


def _batch_sizes(n_resamples: int, runs: int, elements: int | None = None) -> list[int]:
    """Resamples per batch, batches of about ``elements`` (default ``_BATCH_ELEMENTS``) runs x resamples."""
    size = max(_MIN_BATCH, (elements or _BATCH_ELEMENTS) // runs)
    full, rest = divmod(n_resamples, size)
    return [size] * full + ([rest] if rest else [])


def _draw_indices(rng: np.random.Generator, m: int, size: int) -> np.ndarray:
    return rng.integers(0, m, size=(size, m), dtype=np.int32)


def _bootstrap_indices(rng: np.random.Generator, m: int, n_resamples: int):
    """Run indices of the resamples, batch by batch."""
    for size in _batch_sizes(n_resamples, m):
        yield _draw_indices(rng, m, size)


def _jackknife_indices(runs: _RankedRuns):
    """Run indices of the leave-one-out samples (row i leaves out run i), batch by batch."""
    step = max(_MIN_BATCH, _BATCH_ELEMENTS // runs.m)
    for start in range(0, runs.m, step):
        yield runs.leave_one_out(np.arange(start, min(runs.m, start + step)))


def _smoothed_boo_n(
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
    h_val = _scott_bandwidth(val)
    h_test = None if test is None else _scott_bandwidth(test)
    offset = float(np.median(val if test is None else test))  # as in _RankedRuns: exact for constant scores
    out = np.empty((n_resamples, cdf.shape[0]))
    done = 0
    positions = np.arange(m)
    for size in _batch_sizes(n_resamples, 2 * m, _CACHE_ELEMENTS):  # sorted per batch: keep it in cache
        idx = _draw_indices(rng, m, size)
        v = val[idx] + h_val * rng.standard_normal((size, m))
        t = v if test is None else test[idx] + h_test * rng.standard_normal((size, m))
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


def _scott_bandwidth(x: np.ndarray) -> float:
    """Scott's rule for a Gaussian kernel in one dimension: sd * m^(-1/5); exactly 0 for constant scores."""
    return float(x.std(ddof=1)) * x.size ** (-0.2) if np.ptp(x) > 0 else 0.0


# ----------------------------------------------------------------------------------------------------------
# Intervals


def _percentile_interval(dist: np.ndarray, confidence_level: float) -> tuple[float, float]:
    alpha = 1.0 - confidence_level
    low, high = np.quantile(dist, [alpha / 2, 1 - alpha / 2])
    return float(low), float(high)


def _bca_interval(
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


def _standard_error(dist: np.ndarray) -> np.ndarray:
    """Standard deviation (ddof=1) along axis 0; NaN for one resample. Centred first, so that a constant
    distribution gives exactly 0 rather than a rounding residue."""
    if dist.shape[0] < 2:
        return np.full(dist.shape[1:], math.nan)
    return (dist - dist[0]).std(axis=0, ddof=1)


def _studentized_interval(resampled: _Resampled, confidence_level: float) -> tuple[np.ndarray, np.ndarray]:
    """Symmetric bootstrap-t interval (Hall 1988; Efron & Tibshirani 1993, §12.5), one per budget.

    ``est +- q se``, where q is the ``confidence_level`` quantile of the resamples' ``|est* - est| / se*`` and
    se the delta-method standard error on the data. The symmetric form covered 94-95 % where the equal-tailed
    one covered 91-92 % (normal scores, m = 10-20, n = 5-10, 1,000 sweeps each): Boo_n's downward bias
    and its skewness leave the truth above an equal-tailed interval too often. The interval is cut to
    :func:`_plausible_range`, which it may otherwise leave on long-tailed scores; when more than
    ``1 - confidence_level`` of the resamples are degenerate (se* = 0: every draw had the same test score)
    q is unbounded and the interval is that range.
    """
    return _symmetric_bounds(resampled, np.quantile(np.abs(resampled.studentized), confidence_level, axis=0))


def _symmetric_bounds(resampled: _Resampled, quantile: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``est +- quantile * se`` per budget, cut to the plausible range (an unbounded quantile gives it)."""
    half = np.minimum(quantile, _UNBOUNDED) * resampled.standard_error
    low, high = resampled.plausible
    return np.maximum(resampled.estimate - half, low), np.minimum(resampled.estimate + half, high)


def _intervals(resampled: _Resampled, confidence_level: float, method: str) -> tuple[np.ndarray, np.ndarray]:
    """Interval ends for each budget (column of the bootstrap distribution)."""
    if method == "studentized":
        return _studentized_interval(resampled, confidence_level)
    dist = resampled.dist
    low, high = np.empty(dist.shape[1]), np.empty(dist.shape[1])
    for k in range(dist.shape[1]):
        if method == "bca":
            low[k], high[k] = _bca_interval(
                dist[:, k], float(resampled.estimate[k]), resampled.jackknife[:, k], confidence_level
            )
        else:
            low[k], high[k] = _percentile_interval(dist[:, k], confidence_level)
    return low, high


def _trustworthy(budgets: np.ndarray, m: int) -> np.ndarray:
    """Budgets where a band can be trusted: n <= m / 2 (the rule and its measurements: :class:`CurveBand`)."""
    return budgets <= _TRUSTED_SHARE * m


def _simultaneous_band(
    resampled: _Resampled, confidence_level: float, method: str, trustworthy: np.ndarray
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
        return _symmetric_bounds(resampled, np.full(resampled.estimate.size, quantile))
    scale = _standard_error(resampled.dist)
    scaled = _studentize(resampled.dist - resampled.estimate, scale)[:, over & (scale > 0)]
    critical = np.quantile(np.abs(scaled).max(axis=1), confidence_level) if scaled.shape[1] else 0.0
    half = np.nan_to_num(critical * scale)  # one resample: no scale, the band is the estimate
    return resampled.estimate - half, resampled.estimate + half


# ----------------------------------------------------------------------------------------------------------
# Public functions


def _few_runs_message(
    m: int, budgets: np.ndarray | None = None, test: np.ndarray | None = None, maximize: bool = True
) -> str | None:
    """:func:`_few_runs_messages` in one message, or None."""
    return "; ".join(_few_runs_messages(m, budgets, test, maximize)) or None


def _few_runs_messages(
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
    if m < _FEW_RUNS_INTERVAL:
        reasons.append(
            f"only {m} run{'' if m == 1 else 's'}: 95 % intervals covered 83-92 % at 4-6 runs and 93-96 % at 8 "
            "(studentized; percentile 76-88 %)"
        )
    if budgets is not None and budgets.max() > _TRUSTED_SHARE * m and m > 1:
        reasons.append(
            f"n = {int(budgets.max())} is above m / 2 = {m / 2:g}: intervals there are wide (studentized, 2.6-7.7x "
            "the percentile width) or under-cover (percentile bands 43-67 %)"
        )
    skew = _better_side_skewness(test, maximize) if test is not None and 2 < m <= _TAIL_RUNS else 0.0
    if skew > _LONG_TAIL_SKEWNESS:
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


def _warn_data(
    val: np.ndarray, test: np.ndarray, stacklevel: int, budgets: np.ndarray | None = None, maximize: bool = True
) -> None:
    for message in _few_runs_messages(val.size, budgets, test, maximize):
        warnings.warn(message, FewRunsWarning, stacklevel=stacklevel + 1)
    if np.ptp(test) == 0:
        warnings.warn(
            "all test scores are equal: every resample gives the same value and the interval is a point",
            ConstantScoresWarning,
            stacklevel=stacklevel + 1,
        )


def _options_iv(confidence_level: Any, n_resamples: Any, method: Any, rng: Any):
    level = as_probability(confidence_level, "confidence_level")
    method = as_choice(method, "method", CI_METHODS)
    return level, as_count(n_resamples, "n_resamples"), method, as_rng(rng)


def _bca_budget_iv(method: str, m: int, budgets: np.ndarray, estimator: str) -> None:
    """BCa's jackknife evaluates the statistic on m - 1 runs."""
    if method != "bca":
        return
    if m < 2:
        raise ValueError(f"`method`='bca' needs at least 2 runs for its jackknife, got {m}")
    if estimator == "U" and budgets.max() > m - 1:
        raise ValueError(
            f"`method`='bca' with estimator 'U' needs n <= m - 1 = {m - 1} (the jackknife leaves one run "
            f"out), got n = {int(budgets.max())}; use method='percentile'"
        )


def _curve_distribution(
    val: np.ndarray,
    test: np.ndarray,
    test_given: bool,
    budgets: np.ndarray,
    estimator: Estimator,
    maximize: bool,
    n_resamples: int,
    method: str,
    rng: np.random.Generator,
) -> _Resampled:
    """The estimates, the bootstrap distribution and what the method needs besides (see :class:`_Resampled`)."""
    m = val.size
    runs = _RankedRuns(val, test, maximize)
    rows = _cdf_table(m, budgets, estimator)
    estimate = runs.estimate(rows)
    jackknife = standard_error = studentized = None
    if method == "smoothed":
        dist = _smoothed_boo_n(val, test if test_given else None, maximize, rows, rng, n_resamples)
    elif method == "studentized":
        slope = _slope_table(m, budgets, estimator)
        standard_error = runs.boo_n_studentized(np.arange(m)[None, :], rows, slope)[1][0]
        dist, resample_se = _studentized_distribution(runs, rows, slope, rng, n_resamples)
        studentized = _studentize(dist[: resample_se.shape[0]] - estimate, resample_se)
    else:
        dist = np.concatenate([runs.boo_n(i, rows) for i in _bootstrap_indices(rng, m, n_resamples)])
    if method == "bca":
        rows_loo = _cdf_table(m - 1, budgets, estimator)
        jackknife = np.concatenate([runs.boo_n(i, rows_loo) for i in _jackknife_indices(runs)])
    return _Resampled(estimate, dist, jackknife, standard_error, studentized, _plausible_range(test, maximize))


def _plausible_range(test: np.ndarray, maximize: bool) -> tuple[float, float]:
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


def _studentized_distribution(
    runs: _RankedRuns, rows: np.ndarray, slope: np.ndarray, rng: np.random.Generator, n_resamples: int
) -> tuple[np.ndarray, np.ndarray]:
    """Boo_n of every resample (B, budgets) and the standard error of the first ones (B_t, budgets).

    The standard error costs one pass over the tie blocks per budget and resample, where Boo_n alone is one
    matrix product for all budgets. When ``m x budgets`` exceeds ``_STUDENTIZED_WORK`` (1,000 runs at 200
    budgets, 10,000 at 20), only the first ``_STUDENTIZED_RESAMPLES`` resamples are studentized; the others
    still give the bootstrap distribution. The resamples are those of every other method.
    """
    wanted = n_resamples
    if runs.m * rows.shape[0] > _STUDENTIZED_WORK:
        wanted = min(n_resamples, _STUDENTIZED_RESAMPLES)
    values, errors, done = [], [], 0
    for indices in _bootstrap_indices(rng, runs.m, n_resamples):
        split = min(indices.shape[0], max(0, wanted - done))
        if split:
            value, error = runs.boo_n_studentized(indices[:split], rows, slope)
            values.append(value)
            errors.append(error)
        if split < indices.shape[0]:
            values.append(runs.boo_n(indices[split:], rows))
        done += indices.shape[0]
    return np.concatenate(values), np.concatenate(errors)


def _studentize(difference: np.ndarray, standard_error: np.ndarray) -> np.ndarray:
    """``difference / standard_error``; 0 / 0 is 0 and x / 0 is +-_UNBOUNDED (finite, so quantiles stay finite)."""
    positive = standard_error > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = difference / np.where(positive, standard_error, 1.0)
    return np.where(positive, ratio, np.sign(difference) * _UNBOUNDED)


def _bootstrap_result(resampled: _Resampled, confidence_level, method, n_resamples) -> BootstrapResult:
    """The result at the one budget of ``resampled``."""
    low, high = _intervals(resampled, confidence_level, method)
    dist = resampled.dist[:, 0]
    return BootstrapResult(
        estimate=float(resampled.estimate[0]),
        confidence_interval=ConfidenceInterval(float(low[0]), float(high[0])),
        standard_error=float(_standard_error(resampled.dist)[0]),
        bootstrap_distribution=dist,
        method=method,
        confidence_level=confidence_level,
        n_resamples=n_resamples,
    )


def _boo_n_ci_iv(val, test, n, estimator, maximize, confidence_level, n_resamples, method, rng):
    v, t = as_val_test(val, test)
    budgets, scalar = as_budgets(n)
    if not scalar:
        raise ValueError(f"`n` must be a single budget (use boo_n_curve_ci for several), got {n!r}")
    estimator = as_choice(estimator, "estimator", ESTIMATORS)
    maximize = as_flag(maximize, "maximize")
    level, n_resamples, method, rng = _options_iv(confidence_level, n_resamples, method, rng)
    _warn_or_raise_budget(budgets, v.size, estimator)
    _bca_budget_iv(method, v.size, budgets, estimator)
    _warn_data(v, t, stacklevel=3, budgets=budgets, maximize=maximize)
    return v, t, budgets, estimator, maximize, level, n_resamples, method, rng


def boo_n_ci(
    val: Any,
    test: Any = None,
    *,
    n: int = 5,
    estimator: Estimator = "V",
    maximize: bool = True,
    confidence_level: float = 0.95,
    n_resamples: int = 9999,
    method: Method = "studentized",
    rng: Any = None,
) -> BootstrapResult:
    r"""Boo_n with a bootstrap confidence interval over runs.

    Bajgar et al. (2018): the estimate is eq. 7 (with the V, U or W weights of :func:`boontrack.boo_n`) and
    the interval the bootstrap of Appendix D.1, resampling (validation, test) pairs of runs together.

    Parameters
    ----------
    val, test : array_like
        Validation and test scores, one per run; ``test=None`` means test = val.
    n : int
        Budget.
    estimator : {"V", "U", "W"}
    maximize : bool
        Whether a higher validation score is better.
    confidence_level : float
        In (0, 1).
    n_resamples : int
        Number of bootstrap resamples B.
    method : {"studentized", "percentile", "bca", "smoothed"}
        ``"studentized"`` (default): symmetric bootstrap-t (Hall 1988; Efron & Tibshirani 1993, ch. 12),
        ``est +- q se`` with q the quantile of ``|est* - est| / se*`` over the resamples and se, se* the
        delta-method standard errors of the L-statistic on the data and on each resample (its empirical
        influence function, one reverse cumulative sum per resample: no inner bootstrap, no jackknife). Its
        coverage, measured on populations with a known Boo_n (:mod:`boontrack.simulate`;
        ``tests/benchmarks/bench_coverage.py``, 1,000 sweeps per cell), is 92-96 % for nominal 95 % on
        normal and beta-binomial scores at m = 10-100 and n <= m/2, where the percentile interval covers
        83-95 %, at 1.0-2.6x the percentile width (median). No method covers on a long right tail
        (log-normal scores, n = 5-10: 81-87 % studentized, 66-82 % percentile at m = 20-50): the sample has
        not seen the tail. ``"percentile"``: quantiles of the bootstrap distribution. ``"bca"``:
        bias-corrected and accelerated (Efron 1987), acceleration from the leave-one-out jackknife. ``"smoothed"``: percentile interval of a
        Gaussian-kernel smoothed bootstrap (Scott's bandwidth per column), as the paper uses for
        best-single-model figures (footnote 11); the estimate stays the plain one.
    rng : int or numpy.random.Generator, optional
        Source of randomness; the same seed gives the same result. The global RNG is never used.

    Returns
    -------
    BootstrapResult

    Raises
    ------
    ValueError
        Bad scores, ``n`` not a single integer >= 1, ``estimator="U"`` with ``n > m`` (or ``n > m - 1`` with
        BCa), ``confidence_level`` outside (0, 1), ``n_resamples`` < 1, an unknown ``method``.

    Warns
    -----
    FewRunsWarning
        Fewer than 8 runs, ``n > m / 2``, or test scores with a long tail on the better side (skewness above 1,
        up to 100 runs): intervals under-cover or are very wide there (measured numbers in the message).
    ConstantScoresWarning
        Constant test scores: the interval collapses to the estimate.
    ExtrapolationWarning
        ``n > m`` with V or W.

    Examples
    --------
    >>> from boontrack.resampling import boo_n_ci
    >>> res = boo_n_ci([0.70, 0.72, 0.71, 0.69, 0.73, 0.68, 0.70, 0.74, 0.71, 0.72], n=3, rng=0)
    >>> res.confidence_interval.low <= res.estimate <= res.confidence_interval.high
    True
    """
    v, t, budgets, estimator, maximize, level, n_resamples, method, rng = _boo_n_ci_iv(
        val, test, n, estimator, maximize, confidence_level, n_resamples, method, rng
    )
    resampled = _curve_distribution(v, t, test is not None, budgets, estimator, maximize, n_resamples, method, rng)
    return _bootstrap_result(resampled, level, method, n_resamples)


def _default_budgets_iv(m: Any, estimator: Any, method: Any) -> tuple[int, str, str]:
    return as_budget(m, "m"), as_choice(estimator, "estimator", ESTIMATORS), as_choice(method, "method", CI_METHODS)


def default_budgets(m: int, *, estimator: Estimator = "V", method: Method = "studentized") -> np.ndarray:
    """The budgets of a curve band when none are given: every n for m <= 200, else 200 log-spaced ones.

    For the studentized method, whose per-resample standard errors cost ``m`` per budget and resample, the
    count is ``200,000 / m`` beyond m = 1,000 runs (at least 24): 20 log-spaced budgets cost at m = 10,000
    what 200 cost at m = 1,000. Log-spaced budgets are the distinct rounded points of a geometric grid from
    1 to the largest budget, the grid made just fine enough to give the count; they always include 1 and the
    largest budget. That is m,
    except for U with BCa, whose jackknife evaluates U on m - 1 runs, where it stops at m - 1.
    """
    m, estimator, method = _default_budgets_iv(m, estimator, method)
    count = _MAX_DEFAULT_BUDGETS
    if method == "studentized":
        count = min(count, max(_MIN_STUDENTIZED_BUDGETS, _STUDENTIZED_WORK // m))
    if estimator == "U" and method == "bca" and m > 1:
        m -= 1
    if m <= count:
        return np.arange(1, m + 1)
    points = count
    while True:
        budgets = np.unique(np.round(np.geomspace(1, m, points)).astype(np.int64))
        if budgets.size >= count:
            return budgets
        points += count - budgets.size


def _boo_n_curve_ci_iv(val, test, n, estimator, maximize, confidence_level, n_resamples, method, rng):
    v, t = as_val_test(val, test)
    estimator = as_choice(estimator, "estimator", ESTIMATORS)
    maximize = as_flag(maximize, "maximize")
    level, n_resamples, method, rng = _options_iv(confidence_level, n_resamples, method, rng)
    if n is None:
        budgets = default_budgets(v.size, estimator=estimator, method=method)
    else:
        budgets = np.unique(as_budgets(n)[0])
    _warn_or_raise_budget(budgets, v.size, estimator)
    _bca_budget_iv(method, v.size, budgets, estimator)
    _warn_data(v, t, stacklevel=3, maximize=maximize)  # budgets above m / 2: the band flags them
    return v, t, budgets, estimator, maximize, level, n_resamples, method, rng


def boo_n_curve_ci(
    val: Any,
    test: Any = None,
    *,
    n: Any = None,
    estimator: Estimator = "V",
    maximize: bool = True,
    confidence_level: float = 0.95,
    n_resamples: int = 9999,
    method: Method = "studentized",
    rng: Any = None,
) -> CurveBand:
    """Pointwise and simultaneous bootstrap bands for the curve n -> Boo_n (the expected-validation curve with
    ``test=None``).

    Every budget uses the same resamples, so each resample is a whole curve. ``CurveBand.low``/``high`` is a
    pointwise band (each budget's own interval, not a band for the whole curve);
    ``simultaneous_low``/``simultaneous_high`` is a sup-t band for the whole curve; ``trustworthy`` flags
    the budgets n <= m/2 (see :class:`CurveBand`). The cost grows as ``n_resamples x (tie blocks) x len(n)``
    (times a pass per budget for the studentized method), so evaluate a band at up to ~200 budgets: that is
    what the default does (fewer for the studentized method beyond 1,000 runs, :func:`default_budgets`).

    Parameters
    ----------
    val, test : array_like
        As in :func:`boo_n_ci`.
    n : int or sequence of int, optional
        Budgets (sorted and made distinct in the result). ``None``: :func:`default_budgets`, i.e. every n
        from 1 to m when m <= 200, else 200 log-spaced budgets including 1 and m (up to m - 1 for U with
        BCa, whose jackknife has m - 1 runs). ``CurveBand.n`` says which.
    estimator, maximize, confidence_level, n_resamples, method, rng
        As in :func:`boo_n_ci`.

    Returns
    -------
    CurveBand

    Raises
    ------
    ValueError
        As :func:`boo_n_ci`.
    """
    v, t, budgets, estimator, maximize, level, n_resamples, method, rng = _boo_n_curve_ci_iv(
        val, test, n, estimator, maximize, confidence_level, n_resamples, method, rng
    )
    resampled = _curve_distribution(v, t, test is not None, budgets, estimator, maximize, n_resamples, method, rng)
    low, high = _intervals(resampled, level, method)
    trustworthy = _trustworthy(budgets, v.size)
    simultaneous_low, simultaneous_high = _simultaneous_band(resampled, level, method, trustworthy)
    return CurveBand(
        n=budgets,
        estimate=resampled.estimate,
        low=low,
        high=high,
        standard_error=_standard_error(resampled.dist),
        confidence_level=level,
        method=method,
        n_resamples=n_resamples,
        bootstrap_distribution=resampled.dist,
        simultaneous_low=simultaneous_low,
        simultaneous_high=simultaneous_high,
        trustworthy=trustworthy,
    )


def _mean_ci_iv(scores, confidence_level, n_resamples, method, rng):
    s = as_scores(scores, "scores")
    level, n_resamples, method, rng = _options_iv(confidence_level, n_resamples, method, rng)
    _bca_budget_iv(method, s.size, np.array([1]), "V")
    _warn_data(s, s, stacklevel=3, budgets=np.array([1]))
    return s, level, n_resamples, method, rng


def mean_ci(
    scores: Any,
    *,
    confidence_level: float = 0.95,
    n_resamples: int = 9999,
    method: Method = "studentized",
    rng: Any = None,
) -> BootstrapResult:
    """Bootstrap confidence interval of the mean score.

    The mean is Boo_1 (Bajgar et al. 2018, eq. 7 with n = 1), so this is :func:`boo_n_ci` with ``n=1`` and
    ``test=None``: the same resamples, methods and warnings.

    Parameters
    ----------
    scores : array_like
        One score per run.
    confidence_level, n_resamples, method, rng
        As in :func:`boo_n_ci`.

    Returns
    -------
    BootstrapResult
    """
    s, level, n_resamples, method, rng = _mean_ci_iv(scores, confidence_level, n_resamples, method, rng)
    resampled = _curve_distribution(s, s, False, np.array([1]), "V", True, n_resamples, method, rng)
    return _bootstrap_result(resampled, level, method, n_resamples)
