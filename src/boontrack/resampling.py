"""Bootstrap confidence intervals for Boo_n, expected-validation curves and the mean.

The bootstrap resamples runs, keeping each run's (validation, test) pair together (Bajgar et al. 2018,
Appendix D.1). Resample r of a batch of ``b`` resamples is row r of
``rng.integers(0, m, size=(b, m), dtype=numpy.int32)``: positions in the runs ranked worst to best by
validation score, runs tied in it worst to best by test score. The ranking is canonical, so the resamples, and
every number computed from them, do not depend on the order the runs are given in. Batches follow each other
in the generator's stream, so the resamples do not depend on the batch size or the number of threads, and
they are the resamples ``scipy.stats.bootstrap(..., paired=True, rng=seed)`` draws from the runs given in
that ranking: with the same seed both give the same bootstrap distribution and intervals (the tests check it).

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
blocks per budget; :meth:`boontrack._bootstrap.RankedRuns.boo_n_studentized`), and each end reaches as far as the
farther of the symmetric and the equal-tailed bootstrap-t's. It was chosen by its measured coverage and width on
populations with a known Boo_n (:mod:`boontrack.simulate`, ``tests/benchmarks/bench_coverage.py``). A curve's
band studentizes the resamples at a grid of its budgets and interpolates the reaches between them
(:func:`boontrack._bootstrap.intervals.pivot_columns`), and ``n_resamples="auto"`` draws as many resamples as
the ends' precision needs (:mod:`boontrack._bootstrap.precision`).

Resamples are processed in batches of about 2^22 draws (16 MB), counted in cache-sized chunks, so memory
stays bounded and ``n_resamples`` is limited only by time. The batches are drawn in order in the calling
thread and evaluated on every CPU the process may use (threads: the kernels are numpy operations that release
the GIL; :func:`boontrack.analysis.analyze` and ``boontrack summarize --threads`` set how many). The kernels
run BLAS with one thread. The machinery lives in :mod:`boontrack._bootstrap`, shared with the comparisons.
Every function takes ``rng`` (an int seed or a ``numpy.random.Generator``) and never touches the global random
state.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, cast

import numpy as np

from boontrack._bootstrap import (
    Resampled,
    bootstrap_standard_error,
    curve_distribution,
    few_runs_messages,
    interval_ends,
    simultaneous_band,
    trusted_budgets,
)
from boontrack._bootstrap.precision import AUTO, FIRST_RESAMPLES, until_precise
from boontrack._bootstrap.scales import UNBOUNDED_RANGE
from boontrack._collector import warn
from boontrack._validation import (
    as_bounds,
    as_budget,
    as_budgets,
    as_choice,
    as_flag,
    as_probability,
    as_resamples,
    as_rng,
    as_scores,
    as_val_test,
)
from boontrack.choices import CI_METHODS, DEFAULT_CI_METHOD, ESTIMATORS
from boontrack.estimators import Estimator, warn_or_raise_budget
from boontrack.exceptions import ConstantScoresWarning, FewRunsWarning

__all__ = [
    "BootstrapResult",
    "ConfidenceInterval",
    "CurveBand",
    "Method",
    "StudentizedErrors",
    "boo_n_ci",
    "boo_n_curve_ci",
    "default_budgets",
    "mean_ci",
]

Method = Literal[
    "studentized-u-farther",
    "studentized-u",
    "studentized-u-k-of-m",
    "studentized-u-calibrated",
    "studentized",
    "percentile",
    "bca",
    "smoothed",
]

#: Default number of budgets of a curve band.
_MAX_DEFAULT_BUDGETS = 200


@dataclass(frozen=True)
class ConfidenceInterval:
    """A two-sided confidence interval."""

    low: float
    high: float


@dataclass(frozen=True)
class StudentizedErrors:
    """What a studentized interval is made of, kept so that independent results can be differenced.

    The interval is ``centre +- q standard_error`` (on the scale of ``bounds``), q the quantile of
    ``|resample_centres - reference| / resample_standard_errors``. Floats in a :class:`BootstrapResult`, one
    value per budget in a :class:`CurveBand`.

    Attributes
    ----------
    centre, standard_error
        The interval's centre on the data (the estimate for ``"studentized"``, the unbiased U for
        ``"studentized-u"``) and its delta-method standard error.
    reference
        What the resamples' centres are compared with: the estimate for ``"studentized"``, V (Boo_n of the runs
        themselves) for ``"studentized-u"``.
    resample_centres, resample_standard_errors
        The centre and its standard error on each of the first resamples (all of them, unless the work bound of
        the studentized methods cut them to 1,999), shape ``(B_t,)``, or ``(B_t, len(columns))`` in a band.
    plausible_range
        Where the statistic can plausibly lie (the interval is cut to it): from the worst observed test score
        to the best one plus the whole range, inside the bounds.
    bounds
        The scores' bounds, infinite where there is none.
    columns
        In a band, the budgets (indices into its ``n``) whose resamples are studentized: its own and a grid of
        others, the reaches of the rest interpolated between them; None in a single result.
    """

    centre: Any
    standard_error: Any
    reference: Any
    resample_centres: np.ndarray
    resample_standard_errors: np.ndarray
    plausible_range: tuple[float, float]
    bounds: tuple[float, float] = UNBOUNDED_RANGE
    columns: np.ndarray | None = None

    def at(self, k: int) -> StudentizedErrors | None:
        """The errors of budget column ``k`` of a band's, as a single result carries them; None where the band's
        resamples were not studentized (a budget whose reaches were interpolated)."""
        assert self.columns is not None  # a band's errors
        where = np.flatnonzero(self.columns == k)
        if not where.size:
            return None
        return StudentizedErrors(
            float(self.centre[k]),
            float(self.standard_error[k]),
            float(self.reference[k]),
            self.resample_centres[:, int(where[0])],
            self.resample_standard_errors[:, int(where[0])],
            self.plausible_range,
            self.bounds,
        )


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
    studentized_errors
        With a studentized method: what the interval is made of (see :class:`StudentizedErrors`), which
        :func:`boontrack.compare.independent_difference` needs; else None.
    bounds
        The scores' bounds the interval respects (declared, or [0, 1] when every test score lies in it);
        infinite where there is none.
    """

    estimate: float
    confidence_interval: ConfidenceInterval
    standard_error: float
    bootstrap_distribution: np.ndarray
    method: str
    confidence_level: float
    n_resamples: int
    studentized_errors: StudentizedErrors | None = None
    bounds: tuple[float, float] = UNBOUNDED_RANGE


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
    meant to hold the whole curve at once (the default method's reaches on each side as far as its intervals
    do: see :func:`boo_n_ci`). Measured over n = 1..m/2 (normal scores, ties and published tables,
    m = 20 and 50, 1,000 sweeps each; ``tests/benchmarks/bench_coverage.py --bands-only``), the default method's
    simultaneous band held the whole curve in 94.0-96.9 % of sweeps (90.0 % on the CIFAR-100 table at m = 50,
    whose decisive runs a sweep may lack) at 1.6-2.3x its pointwise width; percentile bands held the validation
    curve in 77-81 %.

    ``trustworthy`` is False at budgets ``n > m / 2``. There, measured on the validation curve of normal scores
    (333 sweeps per cell, n = m/2 + 1 .. m, m = 10-50), percentile intervals covered 42-65 % and the default
    ones, though they covered 96-100 %, were 4.1-11.9x as wide; beyond m (extrapolation) they are wider
    still. For n <= m/2 the default intervals covered 94.3-97.4 % on normal scores at m = 10-100 (see
    :mod:`boontrack.simulate` and the README's coverage table). Draw and report the band there as doubtful.

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
    studentized_errors
        With a studentized method: what the intervals are made of, one column per budget (see
        :class:`StudentizedErrors`); else None.
    bounds
        The scores' bounds the bands respect, as in :class:`BootstrapResult`.
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
    studentized_errors: StudentizedErrors | None = None
    bounds: tuple[float, float] = UNBOUNDED_RANGE

    def at(self, n: int) -> BootstrapResult:
        """The interval of Boo_n at one budget of the band, as :func:`boo_n_ci` would give it on these resamples
        (with a studentized method: at a budget whose pivot the band resampled; at the others its reaches are
        interpolated, and ``studentized_errors`` is None)."""
        matches = np.flatnonzero(self.n == n)
        if not matches.size:
            raise ValueError(f"`n` = {n!r} is not a budget of this band (budgets {self.n.min()}..{self.n.max()})")
        k = int(matches[0])
        errors = self.studentized_errors
        return BootstrapResult(
            estimate=float(self.estimate[k]),
            confidence_interval=ConfidenceInterval(float(self.low[k]), float(self.high[k])),
            standard_error=float(self.standard_error[k]),
            bootstrap_distribution=self.bootstrap_distribution[:, k],
            method=self.method,
            confidence_level=self.confidence_level,
            n_resamples=self.n_resamples,
            studentized_errors=None if errors is None else errors.at(k),
            bounds=self.bounds,
        )


def _studentized_errors(resampled: Resampled) -> StudentizedErrors | None:
    """What a studentized result keeps of its resamples; None for other methods."""
    pivot = resampled.pivot
    if pivot is None:
        return None
    scale = resampled.scale
    return StudentizedErrors(
        pivot.centre,
        pivot.standard_error,
        pivot.reference,
        pivot.resample_centre,
        pivot.resample_standard_error,
        resampled.plausible,
        (scale.low, scale.high),
        pivot.columns,
    )


# ----------------------------------------------------------------------------------------------------------
# Public functions


def _warn_data(val: np.ndarray, test: np.ndarray, stacklevel: int, budgets: np.ndarray | None = None) -> None:
    for message in few_runs_messages(val.size, budgets):
        warn(message, FewRunsWarning, stacklevel=stacklevel + 1)
    if np.ptp(test) == 0:
        warn(
            "all test scores are equal: every resample gives the same value and the interval is a point",
            ConstantScoresWarning,
            stacklevel=stacklevel + 1,
        )


def _options_iv(confidence_level: Any, n_resamples: Any, method: Any, rng: Any):
    level = as_probability(confidence_level, "confidence_level")
    method = as_choice(method, "method", CI_METHODS)
    return level, as_resamples(n_resamples), method, as_rng(rng)


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


def _resampled(
    v: np.ndarray,
    t: np.ndarray,
    test_given: bool,
    budgets: np.ndarray,
    estimator: Estimator,
    maximize: bool,
    n_resamples: int | str,
    method: str,
    rng: np.random.Generator,
    bounds: tuple[float, float],
    level: float,
    reported: np.ndarray | None = None,
) -> Resampled:
    """:func:`~boontrack._bootstrap.curve_distribution` of checked arguments; ``n_resamples="auto"``: in rounds,
    until the ends of the intervals at the ``reported`` budgets are precise, or at every trustworthy budget when
    None (:func:`boontrack._bootstrap.precision.until_precise`)."""

    def draw(count: int, drawn: int = 0) -> Resampled:
        return curve_distribution(
            v, t, test_given, budgets, estimator, maximize, count, method, rng, bounds, reported, drawn=drawn
        )

    if n_resamples != AUTO:
        count = int(n_resamples)
        if reported is None or count <= FIRST_RESAMPLES:
            return draw(count)
        # the band's reaches from the first resamples, the intervals read from them all (as "auto" draws them)
        return draw(FIRST_RESAMPLES).extended(draw(count - FIRST_RESAMPLES, FIRST_RESAMPLES))
    read = reported
    if read is None:
        trusted = trusted_budgets(budgets, v.size)
        read = trusted if trusted.any() else None
    return until_precise(draw, level, method, read)


def _bootstrap_result(resampled: Resampled, confidence_level, method) -> BootstrapResult:
    """The result at the one budget of ``resampled``."""
    low, high = interval_ends(resampled, confidence_level, method)
    dist = resampled.dist[:, 0]
    errors = _studentized_errors(resampled)
    return BootstrapResult(
        estimate=float(resampled.estimate[0]),
        confidence_interval=ConfidenceInterval(float(low[0]), float(high[0])),
        standard_error=float(bootstrap_standard_error(resampled.dist)[0]),
        bootstrap_distribution=dist,
        method=method,
        confidence_level=confidence_level,
        n_resamples=resampled.resamples,
        studentized_errors=None if errors is None else errors.at(0),
        bounds=(resampled.scale.low, resampled.scale.high),
    )


def _boo_n_ci_iv(val, test, n, estimator, maximize, confidence_level, n_resamples, method, rng, bounds):
    v, t = as_val_test(val, test)
    budgets, scalar = as_budgets(n)
    if not scalar:
        raise ValueError(f"`n` must be a single budget (use boo_n_curve_ci for several), got {n!r}")
    estimator = as_choice(estimator, "estimator", ESTIMATORS)
    maximize = as_flag(maximize, "maximize")
    level, n_resamples, method, rng = _options_iv(confidence_level, n_resamples, method, rng)
    warn_or_raise_budget(budgets, v.size, estimator)
    _bca_budget_iv(method, v.size, budgets, estimator)
    _warn_data(v, t, stacklevel=3, budgets=budgets)
    return v, t, budgets, estimator, maximize, level, n_resamples, method, rng, as_bounds(bounds, t)


def boo_n_ci(
    val: Any,
    test: Any = None,
    *,
    n: int = 5,
    estimator: Estimator = "V",
    maximize: bool = True,
    confidence_level: float = 0.95,
    n_resamples: int | Literal["auto"] = "auto",
    method: Method = DEFAULT_CI_METHOD,
    rng: Any = None,
    bounds: tuple[float, float] | None = None,
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
    n_resamples : int or "auto"
        Number of bootstrap resamples B. ``"auto"`` (default): as many as keep the Monte Carlo standard error of
        each end of the interval below 5 % of its reach (its distance from the centre), drawn in rounds of 999
        then 1,000 more, at most 9,999 (:mod:`boontrack._bootstrap.precision`); ``BootstrapResult.n_resamples``
        says how many.
    method : {"studentized-u-farther", "studentized-u", "studentized-u-k-of-m", "studentized-u-calibrated", "studentized", "percentile", "bca", "smoothed"}
        ``"studentized-u-farther"`` (default): bootstrap-t (Hall 1988; Efron & Tibshirani 1993, ch. 12) around
        the unbiased estimator U, ``U - max(q, t_hi) se`` to ``U + max(q, -t_lo) se``, se U's delta-method
        standard error on the data (its empirical influence function, one reverse cumulative sum: no inner
        bootstrap, no jackknife), q the ``confidence_level`` quantile of ``|U* - V| / se*`` over the resamples
        and t_lo, t_hi the ``(1 - confidence_level) / 2`` and ``(1 + confidence_level) / 2`` quantiles of
        ``(U* - V) / se*``: each end as far as the farther of the symmetric and the equal-tailed bootstrap-t's.
        V, Boo_n of the runs, is the truth of the population the resamples are drawn from. Where the scores have
        a long tail the pivot has one on the same side, and the equal-tailed end carries it where the truth lies
        when a sweep has missed the population's best. Widened to hold the reported estimate if it must.
        ``"studentized-u"``: the symmetric ``U +- q se`` alone. ``"studentized-u-k-of-m"``: the default's ends
        with q, t_lo and t_hi from resamples of k < m runs (the k-out-of-m bootstrap: Bickel, Götze & van Zwet
        1997), k = max(m/2, 1.5 n, 5) and at most m, the first k draws of each resample: wider, for scores with a
        long tail on the better side. ``"studentized"``: ``"studentized-u"``'s pivot centred on the reported
        estimator. With bounds, all of these are computed on the logit scale of the bounds and mapped back.
        Coverage measured on populations with a known Boo_n (:mod:`boontrack.simulate`;
        ``tests/benchmarks/bench_coverage.py``, 1,000 sweeps per cell, 330 cells; docs/statistics/intervals.md):
        the default covers the median cell 96.1 %, 307 cells at least 93 % and 61 more than 97.5 %, at a median
        1.06x the width of the narrowest method measured that covers 93 % in the cell; 94.3-97.4 % on normal
        scores at m = 10-100 and n <= m/2. It covers less than 93 % where a kind of run is absent from more than
        7 % of sweeps (a failure mode, a table's decisive runs: the sample has not seen it, and no method covers
        there) and on a long right tail (log-normal: 88.0-92.9 %, where ``"studentized-u-k-of-m"`` covers
        93.3-96.2 % at 1.11-1.65x the width).
        ``"studentized-u-calibrated"``: ``"studentized-u"``'s interval on the same resamples, at a level
        calibrated by a second-level bootstrap (Beran 1987; Hall & Martin 1988; 249 resamples with 39 resamples
        each), never below ``confidence_level``. On 400 sweeps per cell it raised the cells where
        ``"studentized-u"`` covers below 93 % by 0-4 points (log-normal, n = 5-10: 88-93 %), widened the others
        by 1-19 %, and costs up to twice the CPU time. Its band is ``"studentized-u"``'s.
        ``"percentile"``: quantiles of the bootstrap distribution. ``"bca"``:
        bias-corrected and accelerated (Efron 1987), acceleration from the leave-one-out jackknife.
        ``"smoothed"``: percentile interval of a
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
        Fewer than 8 runs, or ``n > m / 2``: intervals under-cover or are very wide there (measured numbers in the
        message).
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
    v, t, budgets, estimator, maximize, level, n_resamples, method, rng, bounds = _boo_n_ci_iv(
        val, test, n, estimator, maximize, confidence_level, n_resamples, method, rng, bounds
    )
    resampled = _resampled(
        v, t, test is not None, budgets, estimator, maximize, n_resamples, method, rng, bounds, level
    )
    return _bootstrap_result(resampled, level, method)


def _default_budgets_iv(m: Any, estimator: Any, method: Any) -> tuple[int, Estimator, Method]:
    checked_estimator = cast(Estimator, as_choice(estimator, "estimator", ESTIMATORS))
    return as_budget(m, "m"), checked_estimator, cast(Method, as_choice(method, "method", CI_METHODS))


def default_budgets(m: int, *, estimator: Estimator = "V", method: Method = DEFAULT_CI_METHOD) -> np.ndarray:
    """The budgets of a curve band when none are given: every n for m <= 200, else 200 log-spaced ones.

    Log-spaced budgets are the distinct rounded points of a geometric grid from 1 to the largest budget, the grid
    made just fine enough to give the count; they always include 1 and the largest budget. That is m, except for
    U with BCa, whose jackknife evaluates U on m - 1 runs, where it stops at m - 1. A studentized band resamples
    its pivot at about 10 of them whatever their number (:func:`boontrack._bootstrap.intervals.pivot_columns`).
    """
    m, estimator, method = _default_budgets_iv(m, estimator, method)
    if estimator == "U" and method == "bca" and m > 1:
        m -= 1
    if m <= _MAX_DEFAULT_BUDGETS:
        return np.arange(1, m + 1)
    points = _MAX_DEFAULT_BUDGETS
    while True:
        budgets = np.unique(np.round(np.geomspace(1, m, points)).astype(np.int64))
        if budgets.size >= _MAX_DEFAULT_BUDGETS:
            return budgets
        points += _MAX_DEFAULT_BUDGETS - budgets.size


def _boo_n_curve_ci_iv(val, test, n, estimator, maximize, confidence_level, n_resamples, method, rng, bounds):
    v, t = as_val_test(val, test)
    estimator = as_choice(estimator, "estimator", ESTIMATORS)
    maximize = as_flag(maximize, "maximize")
    level, n_resamples, method, rng = _options_iv(confidence_level, n_resamples, method, rng)
    if n is None:
        budgets = default_budgets(v.size, estimator=estimator, method=method)
    else:
        budgets = np.unique(as_budgets(n)[0])
    warn_or_raise_budget(budgets, v.size, estimator)
    _bca_budget_iv(method, v.size, budgets, estimator)
    _warn_data(v, t, stacklevel=3)  # budgets above m / 2: the band flags them
    return v, t, budgets, estimator, maximize, level, n_resamples, method, rng, as_bounds(bounds, t)


def boo_n_curve_ci(
    val: Any,
    test: Any = None,
    *,
    n: Any = None,
    estimator: Estimator = "V",
    maximize: bool = True,
    confidence_level: float = 0.95,
    n_resamples: int | Literal["auto"] = "auto",
    method: Method = DEFAULT_CI_METHOD,
    rng: Any = None,
    bounds: tuple[float, float] | None = None,
) -> CurveBand:
    """Pointwise and simultaneous bootstrap bands for the curve n -> Boo_n (the expected-validation curve with
    ``test=None``).

    Every budget uses the same resamples, so each resample is a whole curve. ``CurveBand.low``/``high`` is a
    pointwise band (each budget's own interval, not a band for the whole curve);
    ``simultaneous_low``/``simultaneous_high`` is a sup-t band for the whole curve; ``trustworthy`` flags
    the budgets n <= m/2 (see :class:`CurveBand`). The cost grows as ``n_resamples x (tie blocks) x len(n)``
    (times a pass per budget for the studentized method), so evaluate a band at up to ~200 budgets: that is
    what the default does (fewer for the studentized method beyond 200 runs, :func:`default_budgets`).

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
    checked = _boo_n_curve_ci_iv(val, test, n, estimator, maximize, confidence_level, n_resamples, method, rng, bounds)
    return _curve_band(*checked, test_given=test is not None)


def summary_band(
    val: Any,
    test: Any,
    reported: Any,
    *,
    n: Any,
    estimator: Estimator,
    maximize: bool,
    confidence_level: float,
    n_resamples: int | str,
    method: Method,
    rng: Any,
    bounds: tuple[float, float] | None,
) -> CurveBand:
    """:func:`boo_n_curve_ci` for a summary, which reports Boo_n's bootstrap distribution at the ``reported``
    budgets only (a subset of ``n``; the others are drawn as a curve).

    With a studentized method the band's intervals need the statistic on no resample (they come from the
    pivot), so it is evaluated at the reported budgets alone: at the others ``bootstrap_distribution`` holds NaN
    (beyond the studentized resamples, whose values come with their standard errors) and ``standard_error`` is
    NaN. That spares a fifth of the work of ten groups of 1,000 runs. Other methods evaluate every budget.
    """
    checked = _boo_n_curve_ci_iv(val, test, n, estimator, maximize, confidence_level, n_resamples, method, rng, bounds)
    return _curve_band(*checked, test_given=test is not None, reported=np.isin(checked[2], reported))


def _curve_band(
    v: np.ndarray,
    t: np.ndarray,
    budgets: np.ndarray,
    estimator: Estimator,
    maximize: bool,
    level: float,
    n_resamples: int | str,
    method: Method,
    rng: np.random.Generator,
    bounds: tuple[float, float],
    *,
    test_given: bool,
    reported: np.ndarray | None = None,
) -> CurveBand:
    """The band of checked arguments; ``reported``: see :func:`summary_band` (None: every budget)."""
    resampled = _resampled(
        v, t, test_given, budgets, estimator, maximize, n_resamples, method, rng, bounds, level, reported
    )
    low, high = interval_ends(resampled, level, method)
    trustworthy = trusted_budgets(budgets, v.size)
    simultaneous_low, simultaneous_high = simultaneous_band(resampled, level, method, trustworthy)
    return CurveBand(
        n=budgets,
        estimate=resampled.estimate,
        low=low,
        high=high,
        standard_error=bootstrap_standard_error(resampled.dist),
        confidence_level=level,
        method=method,
        n_resamples=resampled.resamples,
        bootstrap_distribution=resampled.dist,
        simultaneous_low=simultaneous_low,
        simultaneous_high=simultaneous_high,
        trustworthy=trustworthy,
        studentized_errors=_studentized_errors(resampled),
        bounds=bounds,
    )


def _mean_ci_iv(scores, confidence_level, n_resamples, method, rng, bounds):
    s = as_scores(scores, "scores")
    level, n_resamples, method, rng = _options_iv(confidence_level, n_resamples, method, rng)
    _bca_budget_iv(method, s.size, np.array([1]), "V")
    _warn_data(s, s, stacklevel=3, budgets=np.array([1]))
    return s, level, n_resamples, method, rng, as_bounds(bounds, s)


def mean_ci(
    scores: Any,
    *,
    confidence_level: float = 0.95,
    n_resamples: int | Literal["auto"] = "auto",
    method: Method = DEFAULT_CI_METHOD,
    rng: Any = None,
    bounds: tuple[float, float] | None = None,
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
    s, level, n_resamples, method, rng, bounds = _mean_ci_iv(scores, confidence_level, n_resamples, method, rng, bounds)
    resampled = _resampled(s, s, False, np.array([1]), "V", True, n_resamples, method, rng, bounds, level)
    return _bootstrap_result(resampled, level, method)
