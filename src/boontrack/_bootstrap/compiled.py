"""The bootstrap's passes compiled with numba (the ``fast`` extra), when numba is installed.

These passes of :class:`boontrack._bootstrap.kernels.RankedRuns` and of the paired differences are compiled:

- the studentized evaluation (:meth:`~boontrack._bootstrap.kernels.RankedRuns.boo_n_studentized`): Boo_n and its
  standard error for every resample and budget from the resample's counts per tie block. In numpy that is
  several passes over (budgets, resamples, blocks) arrays; compiled, two passes per resample over the blocks,
  each block's terms added to every budget at once;
- the counting (:meth:`~boontrack._bootstrap.kernels.RankedRuns.block_totals`): each resample's draws counted and
  their test scores summed per tie block, in one pass over the draws, where numpy needs a gather, a
  ``bincount`` per total and offsets to keep the resamples apart (3-5x faster; measured per draw at 100 to
  10,000 runs), and with it the evaluation of Boo_n alone (:meth:`~boontrack._bootstrap.kernels.RankedRuns.boo_n`):
  one pass over the blocks per resample that adds each block's term to every budget at once, reading P with the
  budgets along its rows (1.4-2x faster than numpy's gather and ``einsum`` at 100 to 100,000 runs), and each
  run's influence for the standard error of a paired difference
  (:meth:`~boontrack._bootstrap.differences.BudgetGroup.influences`).

The draws stay numpy's, so the resamples are the same; the numpy passes stay the reference (they agree to
rounding: tested to 1e-12 relative). A compiled pass runs only when numba can be imported, the work is large
enough to pay for loading it (:data:`MIN_WORK`, :data:`MIN_DRAWS`), and ``BOONTRACK_KERNEL`` is not ``numpy``
(which forces the numpy passes). The work is the call's own, or that of the whole computation it is part of
(:func:`computation`): an analysis of ten groups of 10,000 runs draws 10^9 runs, which repays loading numba once
for every group, although each group's 10^8 draws alone would not; ten groups of 60 runs studentize 3.6 x 10^8
elements, which repay it, where one such group alone (3.6 x 10^7) does not. The choice depends on the computation's inputs
alone, never on what ran before in the process, so the same inputs give the same numbers.

numba's cache of the compiled code goes to ``NUMBA_CACHE_DIR`` when set, else to
``$XDG_CACHE_HOME/boontrack/numba`` (or ``~/.cache/boontrack/numba``), never into the installed package: when
that directory cannot be written, or numba was imported before boontrack could name it, the code is compiled
without a cache.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import os
import sys
import threading
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

import numpy as np

#: Environment variable: ``numpy`` forces the numpy kernels even where numba is installed.
KERNEL_VARIABLE = "BOONTRACK_KERNEL"
#: Blocks x budgets x resamples of a studentized distribution below which the numpy pass runs: loading numba and
#: its cached code costs 0.6-0.9 s of CPU once per process, and compiled the studentized pass saves 10-11 ns of
#: the numpy pass's 12-15 ns per element (one group of 60 and of 100 runs, default curve, 9,999 resamples), so
#: 8 x 10^7 elements repay loading it. At 3 x 10^7, a summary of one group of 60 runs loaded numba and cost 2.1 s
#: of CPU against 1.5 s with numpy's passes.
MIN_WORK = 8 * 10**7
#: Runs drawn by a bootstrap distribution from which its draws are counted compiled even when its studentized pass
#: is not: numpy counts a draw in 5-15 ns, the compiled pass in 2-3.5 ns, so 10^8 draws repay loading numba.
MIN_DRAWS = 10**8
#: Runs drawn at once by the compiled drawing (:func:`_draw_count_loops`): their positions stay in cache while
#: they are counted.
DRAW_CHUNK = 1 << 14


def _studentized_loops(
    counts: np.ndarray,
    sums: np.ndarray,
    squares: np.ndarray,
    ties: bool,
    cdf_by_draws: np.ndarray,
    slope_by_draws: np.ndarray,
    values: np.ndarray,
    variances: np.ndarray,
) -> None:  # pragma: no cover - run compiled; the equality test runs it compiled and in Python
    """The loops of the studentized pass: ``values`` and ``variances`` (resamples, budgets), filled in place from
    each resample's draws, sums of test scores and, with ``ties``, sums of their squares per block.

    The sums of the numpy pass, with the budgets innermost: ``cdf_by_draws`` and ``slope_by_draws`` are P and its
    slope with one row per number of draws (the tables transposed), so that one row serves every budget. Per
    resample, one pass over the blocks from the best down adds each block's term to Boo_n and to its R_b, and,
    with ties, the spread term of the block above (whose weight needs this block's P). The weighted variance of
    R_b is updated in the same pass (West's 1979 update of the mean and the sum of squared deviations: within
    6e-13 of a long-double two-pass sum at 9,500 runs, two passes within 2e-13; the plain sum of squares minus the
    squared mean would lose the digits of the scores' level). Blocks without draws are skipped: their
    weight is 0, and summed by parts the blocks around them give the same terms (a third of the blocks of a
    resample without ties). Keeping each block's R_b for a second pass over the blocks, as before, took 1.2-2x
    as long (minimum of 7 calls, 300 to 100,000 runs, 200 to 98,000 tie blocks, 23 to 41 budgets).
    """
    resamples, blocks = counts.shape
    budgets = cdf_by_draws.shape[1]
    width = cdf_by_draws.shape[0] - 1  # draws per resample
    total = np.empty(budgets)
    mean = np.empty(budgets)
    above = np.empty(budgets)  # P(C) of the block above, for its weight D = P(C) - P(C below)
    for i in range(resamples):
        for k in range(budgets):
            values[i, k] = 0.0
            variances[i, k] = 0.0
            total[k] = 0.0
            mean[k] = 0.0
        drawn = width  # C_b: the draws in blocks up to b
        seen = 0.0  # the share of draws in the blocks from the best down to b
        mean_above = 0.0
        spread_above = -1.0  # none above yet
        for b in range(blocks - 1, -1, -1):  # R_b: the sum of the terms from b up
            count = counts[i, b]
            if count == 0:
                continue
            block_mean = sums[i, b] / count
            fall = block_mean - mean_above
            share = count / width
            seen += share
            step = share / seen
            for k in range(budgets):
                values[i, k] += cdf_by_draws[drawn, k] * fall
                total[k] += slope_by_draws[drawn, k] * fall
                deviation = total[k] - mean[k]
                mean[k] += step * deviation
                variances[i, k] += share * deviation * (total[k] - mean[k])
            if ties:  # the spread inside the block, sum_i c_i (t_i - mean_b)^2 / m, per share^2
                if spread_above >= 0.0:
                    for k in range(budgets):
                        weight = above[k] - cdf_by_draws[drawn, k]
                        variances[i, k] += spread_above * weight * weight
                for k in range(budgets):
                    above[k] = cdf_by_draws[drawn, k]
                spread_above = max(squares[i, b] - sums[i, b] * block_mean, 0.0) / width / (share * share)
            drawn -= count
            mean_above = block_mean
        for k in range(budgets):
            values[i, k] -= cdf_by_draws[0, k] * mean_above  # mean_above: the lowest block's
            if spread_above >= 0.0:  # the lowest block's weight P(C) - P(0)
                weight = above[k] - cdf_by_draws[0, k]
                variances[i, k] += spread_above * weight * weight


def _count_loops(
    positions: np.ndarray,
    first: int,
    block_of: np.ndarray,
    test: np.ndarray,
    counts: np.ndarray,
    sums: np.ndarray,
    squares: np.ndarray,
    with_squares: bool,
) -> None:  # pragma: no cover - run compiled; the equality test runs it compiled and in Python
    """The counting pass: the resamples ``positions`` (rows of unsigned positions) counted into the rows of the
    totals from ``first`` on: per resample and tie block, the draws, the sum of their test scores and,
    ``with_squares``, of their squares, filled in place.

    Each block's sums add the draws in the order they were drawn, as numpy's weighted ``bincount`` does. The
    positions are unsigned so that indexing by them needs no check for negative indices (1.5-2x faster).
    Compiled on its own (the resamples drawn before) and inside :func:`_draw_count_loops` (:func:`counting_kernel`).
    """
    rows, width = positions.shape
    blocks = counts.shape[1]
    for r in range(rows):
        i = first + r
        for b in range(blocks):
            counts[i, b] = 0
            sums[i, b] = 0.0
        if with_squares:
            for b in range(blocks):
                squares[i, b] = 0.0
        for j in range(width):
            position = positions[r, j]
            b = block_of[position]
            score = test[position]
            counts[i, b] += 1
            sums[i, b] += score
            if with_squares:
                squares[i, b] += score * score


def _draw_count_loops(
    rng: np.random.Generator,
    m: int,
    block_of: np.ndarray,
    test: np.ndarray,
    counts: np.ndarray,
    sums: np.ndarray,
    squares: np.ndarray,
    with_squares: bool,
) -> None:  # pragma: no cover - run compiled; the equality test runs it compiled and in Python
    """The counting pass (:func:`_count_loops`) of one resample of m runs per row of the totals, drawn here from
    ``rng``: the draws of ``rng.integers(0, m, size=(len(counts), m), dtype=np.int32)``, the same numbers in the
    same order (drawn unsigned, as the counting takes them), the generator left in the same state (numba's
    ``Generator`` follows numpy's algorithm; checked where the kernel is loaded, :func:`_draws_agree`). They are
    drawn :data:`DRAW_CHUNK` at a time and counted while in cache, where drawing a batch with numpy writes its
    positions out and the counting reads them back (3.1-3.5 ns a draw against 4.2-4.7 ns, at 10,000 runs).
    """
    resamples = counts.shape[0]
    rows = max(1, DRAW_CHUNK // m)
    for first in range(0, resamples, rows):
        size = min(rows, resamples - first)
        positions = rng.integers(0, m, size * m, dtype=np.uint32).reshape((size, m))
        _count_loops(positions, first, block_of, test, counts, sums, squares, with_squares)


def _boo_n_loops(
    counts: np.ndarray, sums: np.ndarray, cdf_by_draws: np.ndarray, values: np.ndarray
) -> None:  # pragma: no cover - run compiled; the equality test runs it compiled and in Python
    """The evaluation of Boo_n alone: ``values`` (resamples, budgets), filled in place from each resample's draws
    and sums of test scores per block, summed by parts as :meth:`~boontrack._bootstrap.kernels.RankedRuns.boo_n`
    does, ``cdf_by_draws`` being P with one row per number of draws (the transpose of the P table), so that a
    block's term reaches every budget from one row. A block without draws counts with mean 0, whose terms cancel
    in the sum by parts: skipping it, as :func:`_studentized_loops` does, made this lighter pass 1.1-1.2x slower
    with many blocks and few budgets (1,000 and 9,500 runs without ties, 24-40 budgets; a branch the processor
    cannot predict, for a few multiplications), faster only with 200 budgets."""
    resamples, blocks = counts.shape
    budgets = cdf_by_draws.shape[1]
    width = cdf_by_draws.shape[0] - 1  # draws per resample
    for i in range(resamples):
        row = values[i]
        for k in range(budgets):
            row[k] = 0.0
        drawn = width  # C_b: the draws in blocks up to b
        mean_above = 0.0
        for b in range(blocks - 1, -1, -1):
            count = counts[i, b]
            block_mean = sums[i, b] / max(count, 1)  # 0 without draws: a term that cancels in the sum by parts
            fall = block_mean - mean_above
            for k in range(budgets):
                row[k] += cdf_by_draws[drawn, k] * fall
            drawn -= count
            mean_above = block_mean
        for k in range(budgets):
            row[k] -= cdf_by_draws[0, k] * mean_above  # mean_above: the lowest block's


def _influence_loops(
    counts: np.ndarray,
    order: np.ndarray,
    starts: np.ndarray,
    ranked_test: np.ndarray,
    block_of: np.ndarray,
    test: np.ndarray,
    cdf: np.ndarray,
    slope: np.ndarray,
    influences: np.ndarray,
) -> None:  # pragma: no cover - run compiled; the equality test runs it compiled and in Python
    """Each run's empirical influence on one group's centre, per budget and resample: ``influences`` (budgets,
    resamples, runs), filled in place from the per-run draw ``counts`` (resamples, runs; runs in the order
    given), as :meth:`boontrack._bootstrap.differences.BudgetGroup.influences` computes it: run i in tie block b
    has ``L_i = ratio_b t_i + level_b - ratio_b mean_b``. ``order``, ``starts`` and ``ranked_test`` are the
    group's ranking, the positions where its tie blocks start and its shifted test scores in that ranking;
    ``block_of`` and ``test`` are each run's block and shifted test score in the order given."""
    resamples, m = counts.shape
    blocks = starts.size
    drawn = np.empty(blocks, dtype=np.int64)
    below = np.empty(blocks, dtype=np.int64)
    means = np.empty(blocks)
    shares = np.empty(blocks)
    ratios = np.empty(blocks)
    levels = np.empty(blocks)
    for i in range(resamples):
        total = 0
        for b in range(blocks):
            end = starts[b + 1] if b + 1 < blocks else m
            count = 0
            score = 0.0
            for position in range(starts[b], end):
                times = counts[i, order[position]]
                count += times
                score += times * ranked_test[position]
            below[b] = total
            total += count
            drawn[b] = count
            means[b] = score / max(count, 1)
            shares[b] = max(count / m, 1.0 / m)
        for k in range(cdf.shape[0]):
            above = 0.0  # the steps of the blocks above b: sum over b' > b of mean_b' (g(C_b') - g(C_b'-1))
            for b in range(blocks - 1, -1, -1):
                high = below[b] + drawn[b]
                ratios[b] = (cdf[k, high] - cdf[k, below[b]]) / shares[b]
                levels[b] = means[b] * slope[k, high] + above - ratios[b] * means[b]
                above += means[b] * (slope[k, high] - slope[k, below[b]])
            for j in range(m):
                b = block_of[j]
                influences[k, i, j] = ratios[b] * test[j] + levels[b]


def _writable_cache_directory() -> str | None:
    """``NUMBA_CACHE_DIR``, else boontrack's directory under the user's cache; None when it cannot be written
    (numba would then fall back to a directory beside this file)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    directory = Path(os.environ.get("NUMBA_CACHE_DIR") or Path(base) / "boontrack" / "numba")
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return str(directory) if os.access(directory, os.W_OK) else None


#: Held while a kernel is loaded: see :func:`_once`.
_LOADING = threading.RLock()


Loaded = TypeVar("Loaded")


def _once(loader: Callable[[], Loaded]) -> Callable[[], Loaded]:
    """``loader``, called once however many threads ask for it at the same time, its result kept
    (``cache_clear`` forgets it). ``functools.cache`` alone lets two threads that ask at once both call it: groups
    summarized side by side each loaded the studentized kernel, with numba's cached code read (or the code
    compiled) twice."""
    cached = functools.cache(loader)

    @functools.wraps(loader)
    def guarded() -> Loaded:
        with _LOADING:  # reentrant: a kernel's loader asks for numba's
            return cached()

    guarded.cache_clear = cached.cache_clear  # type: ignore[attr-defined]
    return guarded


@_once
def _numba() -> tuple[Any, bool] | None:
    """numba, imported once with its cache in a directory the user can write, and whether it caches; or None
    (numba absent, or ``BOONTRACK_KERNEL=numpy``)."""
    if os.environ.get(KERNEL_VARIABLE, "").lower() == "numpy" or importlib.util.find_spec("numba") is None:
        return None
    directory = None if "numba" in sys.modules else _writable_cache_directory()
    if directory is not None:
        os.environ["NUMBA_CACHE_DIR"] = directory  # read by numba when imported
    import numba

    return numba, bool(numba.config.CACHE_DIR) and directory is not None  # never beside this file, in the package


def _compiled(loops: Callable[..., None]) -> Callable[..., None] | None:
    """``loops`` compiled, or None (numba absent, or ``BOONTRACK_KERNEL=numpy``)."""
    loaded = _numba()
    if loaded is None:
        return None
    numba, cache = loaded
    compiled: Any = numba.njit(cache=cache, nogil=True)(loops)
    return compiled


@_once
def studentized_kernel() -> Callable[..., None] | None:
    """The compiled :func:`_studentized_loops`, or None (numba absent, or ``BOONTRACK_KERNEL=numpy``)."""
    return _compiled(_studentized_loops)


class Counting(NamedTuple):
    """The compiled counting (:func:`_count_loops`), evaluation of Boo_n alone (:func:`_boo_n_loops`) and
    influence of each run of a resample of pairs (:func:`_influence_loops`); and the drawing with the counting
    (:func:`_draw_count_loops`), None where its draws would not be numpy's."""

    block_totals: Callable[..., None]
    boo_n: Callable[..., None]
    influences: Callable[..., None]
    drawn_totals: Callable[..., None] | None


@_once
def counting_kernel() -> Counting | None:
    """The compiled :class:`Counting`, or None (numba absent, or ``BOONTRACK_KERNEL=numpy``)."""
    if _numba() is None:
        return None
    from numba.extending import register_jitable

    register_jitable(_count_loops)  # callable from the compiled drawing, compiled into it
    count, boo_n, influences, drawing = (
        _compiled(loops) for loops in (_count_loops, _boo_n_loops, _influence_loops, _draw_count_loops)
    )
    assert count and boo_n and influences and drawing  # numba is loaded
    return Counting(count, boo_n, influences, drawing if _draws_agree(drawing) else None)


def _draws_agree(draw_count: Callable[..., None]) -> bool:
    """Whether ``draw_count`` (:func:`_draw_count_loops`) draws numpy's numbers and leaves the generator as numpy
    does, on a few resamples of a few sizes (a numba whose ``Generator`` drew otherwise would change the
    resamples: the drawing is then numpy's)."""
    for m in (1, 7, 1000):
        rows = 3 + DRAW_CHUNK // m
        ours, theirs = np.random.default_rng(m), np.random.default_rng(m)
        counts = np.empty((rows, m), dtype=np.intp)
        sums = np.empty((rows, m))
        draw_count(ours, m, np.arange(m, dtype=np.uintp), np.zeros(m), counts, sums, sums, False)
        drawn = theirs.integers(0, m, size=(rows, m), dtype=np.int32) + np.arange(0, rows * m, m)[:, None]
        expected = np.bincount(drawn.ravel(), minlength=rows * m).reshape(rows, m)
        if not np.array_equal(counts, expected) or ours.integers(1 << 62) != theirs.integers(1 << 62):
            return False
    return True


class Work(NamedTuple):
    """The work of a whole computation (:func:`computation`): the runs it draws in all, and the elements
    (runs x budgets x studentized resamples) its studentized passes evaluate in all."""

    draws: int = 0
    studentized: int = 0


#: The work outside any computation.
_NO_WORK = Work()
#: The work of the computation under way (see :func:`computation`).
_COMPUTATION: ContextVar[Work] = ContextVar("boontrack_computation", default=_NO_WORK)


@contextlib.contextmanager
def computation(work: Work) -> Iterator[None]:
    """Inside the block, every bootstrap is part of a computation of this much ``work`` (the groups of an
    analysis): when it repays loading numba (:data:`MIN_DRAWS`, :data:`MIN_WORK`), every pass runs compiled,
    however small."""
    token = _COMPUTATION.set(work)
    try:
        yield
    finally:
        _COMPUTATION.reset(token)


def _paid() -> bool:
    """Whether the computation under way repays loading numba (:func:`computation`)."""
    work = _COMPUTATION.get()
    return work.draws >= MIN_DRAWS or work.studentized >= MIN_WORK


def compiled_pass(work: int) -> Callable[..., None] | None:
    """The compiled pass for a call of ``work`` blocks x budgets x resamples, or None for the numpy pass."""
    return studentized_kernel() if work >= MIN_WORK or _paid() else None


def compiled_counting(draws: int, *, loaded: bool = False) -> Counting | None:
    """The compiled counting for a distribution of ``draws`` runs drawn, or None for numpy's: where numba is
    ``loaded`` for its studentized pass anyway, or the draws (the call's) or its computation
    (:func:`computation`) repay loading it (:data:`MIN_DRAWS`)."""
    return counting_kernel() if loaded or draws >= MIN_DRAWS or _paid() else None
