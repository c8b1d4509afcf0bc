"""Comparing the score distributions of two approaches (Reimers & Gurevych 2018, §7).

Two approaches A and B are compared through their runs, not through one run each: the difference in Boo_n and
in mean score with bootstrap intervals, a t-test of the expected test score (their "Evaluation 3") and a rank
test with the probability that a run of A beats a run of B ("Evaluation 4"). Which tests is a matter of design:
when run i of A and run i of B share a seed (paired runs), the paired t-test and the Wilcoxon signed-rank test,
and the difference intervals resample pairs; otherwise Welch's t-test and the Mann–Whitney U test, and the
intervals resample A and B independently. With paired runs the unpaired tests ignore the seed-to-seed variation
A and B share: under the null they rejected 0.5-2.7 % at a nominal 5 %, and they lost power (m = 10 with a real
shift: Welch 0.095, Wilcoxon signed-rank 0.317). :func:`adjust_pvalues` corrects for many comparisons (e.g.
every approach against a baseline).

The difference intervals are studentized (bootstrap-t) by default, like the single-group intervals of
:mod:`boontrack.resampling`: each resample's difference is divided by its delta-method standard error, the
root of the sum of the two squared standard errors for independent groups, and for pairs the standard error of
the pairs' influence values (influence on A minus influence on B). Measured on null populations (A and B drawn
alike, 1,000 replications per cell, ``tests/benchmarks/bench_compare.py``), the 95 % interval of a difference in
Boo_5 excluded 0 in 3.1-6.0 % of normal and beta-binomial cases at m = 10-50 runs per approach (percentile:
5.8-9.7 %), and in 1.8-2.7 % on skewed scores, where the t-tests are conservative too.

The scores compared are test scores (validation scores when no test scores are given); Boo_n uses the
validation scores to pick the best run and reports its test score.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from boontrack._bootstrap import (
    BudgetGroup,
    bootstrap_standard_error,
    difference_interval,
    difference_intervals,
    difference_range,
    few_runs_messages,
    studentized_difference,
)
from boontrack._bootstrap.intervals import STUDENTIZED_METHODS
from boontrack._bootstrap.scales import difference_scale
from boontrack._collector import warn
from boontrack._special import ndtr, student_t_isf, student_t_sf
from boontrack._validation import (
    as_bounds,
    as_budget,
    as_choice,
    as_count,
    as_flag,
    as_probability,
    as_real_array,
    as_rng,
    as_scores,
    as_val_test,
)
from boontrack.choices import CORRECTIONS, ESTIMATORS
from boontrack.estimators import Estimator, average_ranks, scaled_to_unit, warn_or_raise_budget
from boontrack.exceptions import ConstantScoresWarning, FewRunsWarning
from boontrack.resampling import BootstrapResult, ConfidenceInterval

__all__ = [
    "Comparison",
    "DifferenceMethod",
    "MannWhitneyResult",
    "PairedTResult",
    "WelchResult",
    "WilcoxonResult",
    "adjust_pvalues",
    "boo_n_difference_ci",
    "compare_approaches",
    "independent_difference",
    "mann_whitney",
    "mean_difference_ci",
    "paired_t_test",
    "welch_test",
    "wilcoxon_signed_rank",
]


@dataclass(frozen=True)
class WelchResult:
    """Welch's unequal-variance t-test of mean(A) = mean(B) (two-sided), with the t-interval of mean(A) - mean(B)
    at the ``confidence_level`` the test was given (the interval excludes 0 exactly when ``pvalue`` < 1 - level).
    """

    statistic: float
    pvalue: float
    df: float
    confidence_interval: ConfidenceInterval | None = None
    standard_error: float = math.nan


@dataclass(frozen=True)
class PairedTResult:
    """Paired t-test of mean(A - B) = 0 over runs paired by seed (two-sided), with the t-interval of mean(A - B)
    at the ``confidence_level`` the test was given (the interval excludes 0 exactly when ``pvalue`` < 1 - level).
    """

    statistic: float
    pvalue: float
    df: float
    confidence_interval: ConfidenceInterval | None = None
    standard_error: float = math.nan


@dataclass(frozen=True)
class MannWhitneyResult:
    """Mann–Whitney U test (two-sided); ``statistic`` is U of A, ``prob_superiority`` = U / (m_a m_b).

    ``prob_superiority`` is P(A > B) + 0.5 P(A = B) for a random run of each.
    """

    statistic: float
    pvalue: float
    prob_superiority: float


@dataclass(frozen=True)
class WilcoxonResult:
    """Wilcoxon signed-rank test of the paired differences A - B (two-sided)."""

    statistic: float
    pvalue: float


@dataclass(frozen=True)
class Comparison:
    """Everything :func:`compare_approaches` computes for A versus B.

    The headline tests (:attr:`headline`) are ``paired_t`` and ``wilcoxon`` for paired runs, ``welch`` and
    ``mann_whitney`` otherwise; ``paired_t`` and ``wilcoxon`` are None for unpaired runs. Welch and
    Mann–Whitney are computed either way (``mann_whitney.prob_superiority`` is the effect size of both designs).
    """

    boo_n_difference: BootstrapResult
    mean_difference: BootstrapResult
    welch: WelchResult
    mann_whitney: MannWhitneyResult
    wilcoxon: WilcoxonResult | None
    paired_t: PairedTResult | None = None

    @property
    def headline(self) -> dict[str, Any]:
        """The right tests for the design, by name: a t-test of the means, then a rank test."""
        if self.paired_t is not None:
            return {"paired_t": self.paired_t, "wilcoxon": self.wilcoxon}
        return {"welch": self.welch, "mann_whitney": self.mann_whitney}


# ----------------------------------------------------------------------------------------------------------
# Classical tests


def _two_samples_iv(a: Any, b: Any) -> tuple[np.ndarray, np.ndarray]:
    return as_scores(a, "a"), as_scores(b, "b")


def _paired_iv(a: np.ndarray, b: np.ndarray) -> None:
    if a.size != b.size:
        raise ValueError(
            f"paired runs need the same number of runs in `a` and `b` (run i of each shares a seed), "
            f"got {a.size} and {b.size}"
        )


def _welch_test_iv(a, b, confidence_level):
    a, b = _two_samples_iv(a, b)
    if a.size < 2 or b.size < 2:
        raise ValueError(f"Welch's t-test needs at least 2 runs in each of `a` and `b`, got {a.size} and {b.size}")
    return a, b, as_probability(confidence_level, "confidence_level")


def welch_test(a: Any, b: Any, *, confidence_level: float = 0.95) -> WelchResult:
    """Welch's t-test (``scipy.stats.ttest_ind(a, b, equal_var=False)``), two-sided, and its t-interval of
    mean(A) - mean(B) (scipy's ``.confidence_interval(confidence_level)``).

    Reimers & Gurevych (2018), §7, Evaluation 3: is the expected score of A different from B's? It assumes
    roughly normal scores (see :func:`boontrack.diagnostics.diagnose`). NaN when both samples are constant (the
    interval is then the difference itself). Computed as scipy computes it, with Student's t from
    :mod:`boontrack._special`: importing ``scipy.stats`` would cost a summary about a second of CPU,
    ``scipy.special`` a third of one (tested equal to scipy's to 1e-12).
    """
    a, b, level = _welch_test_iv(a, b, confidence_level)

    share_a, share_b = a.var(ddof=1) / a.size, b.var(ddof=1) / b.size
    with np.errstate(divide="ignore", invalid="ignore"):
        df = (share_a + share_b) ** 2 / (share_a**2 / (a.size - 1) + share_b**2 / (b.size - 1))
        statistic = (a.mean() - b.mean()) / np.sqrt(share_a + share_b)
    df = 1.0 if math.isnan(df) else float(df)  # no variance: any df gives the same p (scipy's choice)
    pvalue = 2.0 * student_t_sf(abs(statistic), df)
    error = math.sqrt(share_a + share_b)
    return WelchResult(float(statistic), float(pvalue), df, _t_interval(a.mean() - b.mean(), error, df, level), error)


def _t_interval(centre: float, error: float, df: float, level: float) -> ConfidenceInterval:
    """``centre -+ t_{df, (1 + level) / 2} error``: the interval a two-sided t-test of level ``1 - level`` inverts."""
    reach = student_t_isf((1.0 - level) / 2.0, df) * error
    return ConfidenceInterval(float(centre - reach), float(centre + reach))


def _mann_whitney_iv(a, b):
    return _two_samples_iv(a, b)


def mann_whitney(a: Any, b: Any) -> MannWhitneyResult:
    """Mann–Whitney U test (``scipy.stats.mannwhitneyu``, two-sided) with the probability of superiority.

    Reimers & Gurevych (2018), §7, Evaluation 4: is a run of A more likely to beat a run of B than the reverse?
    ``prob_superiority = U_A / (m_a m_b) = P(A > B) + 0.5 P(A = B)``. The p-value is scipy's ``method="auto"``:
    exact when one sample has at most 8 runs and no score is tied (:func:`_exact_u_tail`), else the normal
    approximation with scipy's tie and continuity corrections; computed here without importing scipy (tested
    equal to scipy's to 1e-12).
    """
    a, b = _mann_whitney_iv(a, b)

    scores = np.concatenate([a, b])
    u = float(average_ranks(scores)[: a.size].sum()) - a.size * (a.size + 1) / 2
    larger = max(u, a.size * b.size - u)
    ties = np.unique(scores, return_counts=True)[1].astype(np.float64)
    if min(a.size, b.size) <= EXACT_MANN_WHITNEY_RUNS and ties.max() == 1:
        pvalue = 2.0 * _exact_u_tail(round(larger), a.size, b.size)
    else:
        n = scores.size
        spread = np.sqrt(a.size * b.size / 12 * ((n + 1) - np.sum(ties**3 - ties) / (n * (n - 1))))
        with np.errstate(divide="ignore", invalid="ignore"):
            z = (larger - a.size * b.size / 2 - 0.5) / spread  # continuity-corrected, as scipy
        pvalue = 2.0 * float(ndtr(-z))
    return MannWhitneyResult(
        statistic=u, pvalue=float(np.clip(pvalue, 0.0, 1.0)), prob_superiority=u / (a.size * b.size)
    )


#: Runs in the smaller sample up to which the Mann–Whitney p-value is exact when no score is tied (scipy's rule).
EXACT_MANN_WHITNEY_RUNS = 8


def _exact_u_tail(u: int, m_a: int, m_b: int) -> float:
    """P(U >= u) for samples of ``m_a`` and ``m_b`` runs without ties under the null hypothesis.

    The number of orderings with U = k is the coefficient of q^k in the Gaussian binomial coefficient
    ``[N, s]_q = prod_{i=1..s} (1 - q^(N-s+i)) / (1 - q^i)`` (N = m_a + m_b, s the smaller size): s products
    and s divisions of polynomials of degree s (N - s), each one pass. The counts are Python integers: in
    floating point the products' cancellations lost the far tail (8 runs above 3,000: 6e-20 for 1.2e-23).
    """
    small, n = min(m_a, m_b), m_a + m_b
    size = small * (n - small) + 1
    counts = np.zeros(size, dtype=object)
    counts[0] = 1
    for i in range(1, small + 1):
        shift = n - small + i
        counts[shift:] -= counts[: max(0, size - shift)].copy()  # times (1 - q^shift), cut at the degree
        # divided by (1 - q^i): a running sum over every i-th coefficient, the i residues side by side
        by_residue = np.concatenate([counts, np.zeros(-size % i, dtype=object)]).reshape(-1, i)
        counts = np.cumsum(by_residue, axis=0).ravel()[:size]
    return int(counts[u:].sum()) / int(counts.sum())  # exact integers, one rounding


def _paired_t_test_iv(a, b, confidence_level):
    a, b = _two_samples_iv(a, b)
    _paired_iv(a, b)
    if a.size < 2:
        raise ValueError(f"the paired t-test needs at least 2 pairs of runs, got {a.size}")
    return a, b, as_probability(confidence_level, "confidence_level")


def paired_t_test(a: Any, b: Any, *, confidence_level: float = 0.95) -> PairedTResult:
    """Paired t-test of ``a - b`` (``scipy.stats.ttest_rel(a, b)``), two-sided, for runs paired by seed, and its
    t-interval of mean(A - B) (scipy's ``.confidence_interval(confidence_level)``).

    Reimers & Gurevych (2018), §7, Evaluation 3 with a shared seed: the seed's effect on both runs cancels in
    the difference, so the test sees the approach's effect against the spread of the differences only. NaN when
    every difference is 0; when every difference is the same other value, the statistic is infinite and p = 0
    (the interval is then that difference). Computed as scipy computes it, with Student's t from
    :mod:`boontrack._special`, as :func:`welch_test` is.

    Raises
    ------
    ValueError
        ``a`` and ``b`` of different lengths, fewer than 2 pairs, or a ``confidence_level`` outside (0, 1).
    """
    a, b, level = _paired_t_test_iv(a, b, confidence_level)
    gaps = a - b
    unit = scaled_to_unit(gaps)  # the statistic is scale-free: tiny differences must not underflow
    with np.errstate(divide="ignore", invalid="ignore"):
        statistic = float(unit.mean() / (unit.std(ddof=1) / math.sqrt(unit.size)))
    df = float(gaps.size - 1)
    pvalue = 2.0 * student_t_sf(abs(statistic), df)
    error = float(gaps.std(ddof=1) / math.sqrt(gaps.size))
    return PairedTResult(statistic, float(pvalue), df, _t_interval(gaps.mean(), error, df, level), error)


def _wilcoxon_signed_rank_iv(a, b):
    a, b = _two_samples_iv(a, b)
    _paired_iv(a, b)
    return a, b


#: Pairs up to which scipy's Wilcoxon test enumerates every sign flip when the differences hold ties or zeros.
EXACT_FLIP_PAIRS = 13


def wilcoxon_pvalues(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Two-sided p-values of ``scipy.stats.wilcoxon(a, b, axis=1)``, one per row, computed alike but faster.

    With ties or zeros among the differences of at most ``EXACT_FLIP_PAIRS`` pairs, scipy takes the exact
    permutation test over all 2^m sign flips, evaluating the statistic once per flip and row in Python (about
    a millisecond each: 2 minutes for 400 rows of 10 pairs). The flips leave ``|d|`` and so its ranks
    unchanged; the statistic of every flip (the rank sum of the positive differences, zeros dropped) is one
    matrix product, exact in floating point (sums of half-integers), and the p-value is counted as scipy does.
    Otherwise scipy's own result is returned.
    """
    from scipy import stats  # deferred: ~1 s to import, and only the tests need it

    d = a - b
    m = d.shape[1]
    magnitude = np.where(d == 0, np.inf, np.abs(d))  # zeros rank above every other difference and count nowhere
    ordered = np.sort(magnitude, axis=1)
    tied = np.any((ordered[:, 1:] == ordered[:, :-1]) & np.isfinite(ordered[:, 1:]))
    if m > EXACT_FLIP_PAIRS or not (tied or np.any(d == 0)):
        return stats.wilcoxon(a, b, axis=1).pvalue
    ranks = stats.rankdata(magnitude, axis=1)
    positive, negative = ranks * (d > 0), ranks * (d < 0)
    observed = positive.sum(axis=1)
    flips = (np.arange(2**m)[:, None] >> np.arange(m)) & 1  # row k flips the pairs of k's binary digits
    null = observed[:, None] + (negative - positive) @ flips.T  # (rows, flips)
    tolerance = np.abs(np.finfo(np.float64).eps * 100 * observed)[:, None]  # scipy's, for equal statistics
    below = np.count_nonzero(null <= observed[:, None] + tolerance, axis=1) / 2**m
    above = np.count_nonzero(null >= observed[:, None] - tolerance, axis=1) / 2**m
    return np.clip(2 * np.minimum(below, above), 0.0, 1.0)


def wilcoxon_signed_rank(a: Any, b: Any) -> WilcoxonResult:
    """Wilcoxon signed-rank test of ``a - b`` (``scipy.stats.wilcoxon``, two-sided), for runs paired by seed.
    When every difference is 0, p = 1 up to ``EXACT_FLIP_PAIRS`` pairs (scipy's exact test), else NaN.

    Raises
    ------
    ValueError
        ``a`` and ``b`` of different lengths.
    """
    a, b = _wilcoxon_signed_rank_iv(a, b)
    from scipy import stats  # deferred: ~1 s to import, and only these tests need it

    d = a - b
    nonzero = d[d != 0]
    magnitude = np.sort(np.abs(nonzero))
    exact_flips = d.size <= EXACT_FLIP_PAIRS and (nonzero.size < d.size or np.any(magnitude[1:] == magnitude[:-1]))
    if not exact_flips or nonzero.size == 0:
        with warnings.catch_warnings():
            # every difference 0: scipy's normal approximation divides 0 by 0, which the NaN p-value says already
            warnings.filterwarnings("ignore", "invalid value encountered", RuntimeWarning)
            res = stats.wilcoxon(a, b)
        return WilcoxonResult(statistic=float(res.statistic), pvalue=float(res.pvalue))
    # scipy's exact sign-flip test, without its Python loop over the 2^m flips (seconds at 13 pairs): the same
    # statistic, min(R+, R-) over the ranks of the nonzero |d|, and the same p-value
    ranks = stats.rankdata(np.abs(nonzero))
    statistic = min(ranks[nonzero > 0].sum(), ranks[nonzero < 0].sum())
    return WilcoxonResult(statistic=float(statistic), pvalue=float(wilcoxon_pvalues(a[None, :], b[None, :])[0]))


# ----------------------------------------------------------------------------------------------------------
# Bootstrap intervals of differences


DifferenceMethod = Literal["studentized-u", "studentized", "percentile"]
#: The interval method of a difference of two groups' results of a method (others: their own): a difference is
#: symmetric (:func:`boontrack._bootstrap.studentized_difference`), and the calibrated level is one group's.
DIFFERENCE_OF = {"studentized-u-farther": "studentized-u", "studentized-u-calibrated": "studentized-u"}
DIFFERENCE_METHODS = ("studentized-u", "studentized", "percentile")


def _warn_difference(a_test: np.ndarray, b_test: np.ndarray, budgets: Sequence[int], stacklevel: int) -> None:
    """The single-group reasons to doubt an interval (:func:`boontrack._bootstrap.few_runs_messages`) at the
    ``budgets``, for the smaller group, and a warning when both groups are constant."""
    for message in few_runs_messages(min(a_test.size, b_test.size), np.array(budgets)):
        warn(f"{a_test.size} runs of A and {b_test.size} of B: {message}", FewRunsWarning, stacklevel=stacklevel + 1)
    if np.ptp(a_test) == 0 and np.ptp(b_test) == 0:
        warn(
            "the test scores of A and of B are each constant: the interval of the difference is a point",
            ConstantScoresWarning,
            stacklevel=stacklevel + 1,
        )


def _difference_result(estimate, dist, interval, method, level, n_resamples) -> BootstrapResult:
    return BootstrapResult(
        estimate=estimate,
        confidence_interval=ConfidenceInterval(float(interval[0]), float(interval[1])),
        standard_error=float(bootstrap_standard_error(dist)),
        bootstrap_distribution=dist,
        method=method,
        confidence_level=level,
        n_resamples=n_resamples,
    )


def _independent_difference_iv(a, b):
    for name, result in (("a", a), ("b", b)):
        if not isinstance(result, BootstrapResult):
            raise ValueError(f"`{name}` must be a BootstrapResult, got {type(result).__name__}")
    if a.bootstrap_distribution.shape != b.bootstrap_distribution.shape:
        raise ValueError(
            f"`a` and `b` must have as many resamples: {a.bootstrap_distribution.size} and "
            f"{b.bootstrap_distribution.size}"
        )
    if a.confidence_level != b.confidence_level:
        raise ValueError(f"`a` and `b` differ in confidence_level: {a.confidence_level} and {b.confidence_level}")
    for name, result in (("a", a), ("b", b)):
        if result.method in STUDENTIZED_METHODS and result.studentized_errors is None:
            raise ValueError(
                f"`{name}` is studentized but carries no standard errors (studentized_errors is None): pass a result "
                "of boo_n_ci, mean_ci or CurveBand.at"
            )


def independent_difference(a: BootstrapResult, b: BootstrapResult) -> BootstrapResult:
    """Interval of A - B from bootstrap results of A and of B resampled independently, without drawing again.

    When A's and B's runs are independent (not paired by seed), resample r of A minus resample r of B is a
    resample of A - B: that is the bootstrap distribution of the result. The interval depends on the method of
    ``a`` and ``b``:

    - both ``"studentized-u"``, both ``"studentized-u-calibrated"`` (whose level is one group's: the difference
      is ``"studentized-u"``'s), or both ``"studentized"``: the studentized interval of the difference,
      ``d +- q sqrt(se_A^2 + se_B^2)`` with d the difference of the centres and q the ``confidence_level``
      quantile of ``|d* - r| / sqrt(se_A*^2 + se_B*^2)`` over the resamples (r the difference of the
      references; see :class:`boontrack.resampling.StudentizedErrors`, which the results keep), on the scale of
      the difference's bounds, widened to hold the estimate and cut to where A - B can plausibly lie: the
      interval :func:`boo_n_difference_ci` gives unpaired, from these resamples instead of new ones. Both
      ``"studentized-u-k-of-m"``: the same from their resamples of k runs, a k-out-of-m interval of the
      difference: over-cautious (type-I error 1.5-4.9 % at nominal 5 %, and less power than
      ``"studentized-u"``'s; ``tests/benchmarks/bench_compare.py --groups``), so an analysis resamples such
      groups for :func:`boo_n_difference_ci`'s ``"studentized-u"`` interval instead.
    - otherwise: the percentile interval of the differences of the resamples.

    Results from a seed-paired design must be resampled jointly instead (:func:`boo_n_difference_ci` with
    ``paired=True``).

    Parameters
    ----------
    a, b : BootstrapResult
        From :func:`boontrack.boo_n_ci`, :func:`boontrack.mean_ci` or :meth:`boontrack.CurveBand.at`, with the
        same number of resamples, drawn from independent generators, and the same confidence level.

    Returns
    -------
    BootstrapResult
        The method of ``a`` and ``b`` when both are the same studentized one (``"studentized-u"`` for two
        calibrated ones), else ``"percentile"``.
    """
    _independent_difference_iv(a, b)
    return independent_differences([a], [b])[0]


def independent_differences(a: Sequence[BootstrapResult], b: Sequence[BootstrapResult]) -> list[BootstrapResult]:
    """:func:`independent_difference` of each pair ``(a[k], b[k])``, results of the same two groups at several
    budgets (checked by the caller), their intervals computed together: an analysis that compares many groups pays
    one pass over the resamples per pair of groups, not one per budget. Groups that drew different numbers of
    resamples (``n_resamples="auto"``) are differenced over the first ones of both (a prefix of a resampling is
    a resampling)."""
    level, method = a[0].confidence_level, a[0].method
    count = min(a[0].n_resamples, b[0].n_resamples)
    dist = _stacked(a, "bootstrap_distribution", count) - _stacked(b, "bootstrap_distribution", count)
    estimates = _stacked(a, "estimate") - _stacked(b, "estimate")
    if any(x.method != method for x in (*a, *b)) or method not in STUDENTIZED_METHODS:
        lows, highs = np.quantile(dist, [(1 - level) / 2, (1 + level) / 2], axis=0)
        method = "percentile"
    else:
        errors_a = [x.studentized_errors for x in a]
        errors_b = [x.studentized_errors for x in b]
        first = min(len(x.resample_standard_errors) for x in (*errors_a, *errors_b))  # type: ignore[union-attr]
        on_data = (
            estimates,
            _stacked(errors_a, "centre") - _stacked(errors_b, "centre"),
            _stacked(errors_a, "reference") - _stacked(errors_b, "reference"),
            np.hypot(_stacked(errors_a, "standard_error"), _stacked(errors_b, "standard_error")),
        )
        centres = _stacked(errors_a, "resample_centres", first) - _stacked(errors_b, "resample_centres", first)
        resample_errors = np.hypot(
            _stacked(errors_a, "resample_standard_errors", first), _stacked(errors_b, "resample_standard_errors", first)
        )
        first_a, first_b = errors_a[0], errors_b[0]
        assert first_a is not None and first_b is not None  # studentized results keep their standard errors
        lows, highs = studentized_difference(
            on_data,
            centres,
            resample_errors,
            difference_range(first_a.plausible_range, first_b.plausible_range),
            difference_scale(first_a.bounds, first_b.bounds),
            level,
        )
        method = DIFFERENCE_OF.get(method, method)
    return [
        _difference_result(float(estimates[k]), dist[:, k], (lows[k], highs[k]), method, level, count)
        for k in range(dist.shape[1])
    ]


def _stacked(items: Sequence[Any], field: str, rows: int | None = None) -> np.ndarray:
    """``field`` of each item side by side: a value per item, or the first ``rows`` of an array per item as a
    column."""
    parts = [getattr(item, field) for item in items]
    if np.ndim(parts[0]) == 0:
        return np.array(parts, dtype=np.float64)
    return np.stack([part[:rows] for part in parts], axis=1)


def _resampling_iv(paired, method, confidence_level, n_resamples, rng):
    paired = as_flag(paired, "paired")
    method = as_choice(method, "method", DIFFERENCE_METHODS)
    level = as_probability(confidence_level, "confidence_level")
    return paired, method, level, as_count(n_resamples, "n_resamples"), as_rng(rng)


def _approaches_iv(a_val, b_val, a_test, b_test, paired):
    """Validated (val, test) of A and B; test given for both or neither, equal lengths when paired."""
    if (a_test is None) != (b_test is None):
        raise ValueError(
            "give test scores for both approaches or neither: `a_test` is "
            f"{'missing' if a_test is None else 'given'} but `b_test` is {'missing' if b_test is None else 'given'}"
        )
    try:
        a_v, a_t = as_val_test(a_val, a_test)
    except ValueError as exc:
        raise ValueError(f"approach A: {exc}") from None
    try:
        b_v, b_t = as_val_test(b_val, b_test)
    except ValueError as exc:
        raise ValueError(f"approach B: {exc}") from None
    if paired:
        _paired_iv(a_v, b_v)
    return a_v, a_t, b_v, b_t


def _boo_n_difference_ci_iv(
    a_val, b_val, a_test, b_test, n, estimator, maximize, paired, method, confidence_level, n_resamples, rng, bounds
):
    """Validated arguments; ``n`` is a sequence of budgets (one for the public function)."""
    paired, method, level, n_resamples, rng = _resampling_iv(paired, method, confidence_level, n_resamples, rng)
    a_v, a_t, b_v, b_t = _approaches_iv(a_val, b_val, a_test, b_test, paired)
    budgets = tuple(as_budget(k) for k in n)
    estimator = as_choice(estimator, "estimator", ESTIMATORS)
    maximize = as_flag(maximize, "maximize")
    warn_or_raise_budget(np.array(budgets), min(a_v.size, b_v.size), estimator)
    bounds = as_bounds(bounds, a_t), as_bounds(bounds, b_t)
    return a_v, a_t, b_v, b_t, budgets, estimator, maximize, paired, method, level, n_resamples, rng, bounds


def _boo_n_differences(
    a_v, a_t, b_v, b_t, budgets, estimator, maximize, paired, method, level, n_resamples, rng, bounds
) -> list[BootstrapResult]:
    """The intervals of Boo_n(A) - Boo_n(B) at each of the ``budgets``, from validated arguments, every budget
    on the same resamples (one draw; each budget's interval is the one that budget alone gets from the same
    generator)."""
    groups = (
        BudgetGroup(a_v, a_t, maximize, np.array(budgets), estimator, method, bounds[0]),
        BudgetGroup(b_v, b_t, maximize, np.array(budgets), estimator, method, bounds[1]),
    )
    estimates, dist, intervals = difference_intervals(*groups, paired, method, level, n_resamples, rng)
    return [
        _difference_result(float(estimate), np.ascontiguousarray(dist[:, k]), interval, method, level, n_resamples)
        for k, (estimate, interval) in enumerate(zip(estimates, intervals))
    ]


def boo_n_difference_ci(
    a_val: Any,
    b_val: Any,
    a_test: Any = None,
    b_test: Any = None,
    *,
    n: int = 5,
    estimator: Estimator = "V",
    maximize: bool = True,
    paired: bool = False,
    method: DifferenceMethod = "studentized-u",
    confidence_level: float = 0.95,
    n_resamples: int = 9999,
    rng: Any = None,
    bounds: tuple[float | None, float | None] | None = None,
) -> BootstrapResult:
    """Bootstrap interval of Boo_n(A) - Boo_n(B) (Bajgar et al. 2018, eq. 7; Appendix D.1).

    Unpaired, the runs of A and of B are resampled independently. With ``paired=True`` run i of A and run i
    of B share a seed and are resampled together, which removes the seed-to-seed variation they share.
    The studentized interval divides each resample's difference by its delta-method standard error:
    ``sqrt(se_A*^2 + se_B*^2)`` unpaired, the standard error of the pairs' influence values paired (see the
    module docstring for its measured type-I error).

    Parameters
    ----------
    a_val, b_val : array_like
        Validation scores of the runs of A and of B.
    a_test, b_test : array_like, optional
        Their test scores; both or neither.
    n, estimator, maximize
        As in :func:`boontrack.boo_n`.
    paired : bool
        Runs aligned by seed (same length required).
    method : {"studentized-u", "studentized", "percentile"}
        Interval method: the studentized ones as for one group (:func:`boontrack.resampling.boo_n_ci`), on the
        difference of the groups' centres.
    confidence_level, n_resamples, rng, bounds
        As in :func:`boontrack.resampling.boo_n_ci`; the bounds of each group's test scores, so that the
        difference lies in ``[low_A - high_B, high_A - low_B]``.

    Returns
    -------
    BootstrapResult
    """
    validated = _boo_n_difference_ci_iv(
        a_val,
        b_val,
        a_test,
        b_test,
        (n,),
        estimator,
        maximize,
        paired,
        method,
        confidence_level,
        n_resamples,
        rng,
        bounds,
    )
    a_v, a_t, b_v, b_t, budgets = validated[:5]
    _warn_difference(a_t, b_t, budgets, stacklevel=2)
    return _boo_n_differences(*validated)[0]


def _mean_difference_ci_iv(a, b, paired, method, confidence_level, n_resamples, rng, bounds):
    paired, method, level, n_resamples, rng = _resampling_iv(paired, method, confidence_level, n_resamples, rng)
    a, b = _two_samples_iv(a, b)
    if paired:
        _paired_iv(a, b)
    return a, b, paired, method, level, n_resamples, rng, (as_bounds(bounds, a), as_bounds(bounds, b))


def mean_difference_ci(
    a: Any,
    b: Any,
    *,
    paired: bool = False,
    method: DifferenceMethod = "studentized-u",
    confidence_level: float = 0.95,
    n_resamples: int = 9999,
    rng: Any = None,
    bounds: tuple[float | None, float | None] | None = None,
) -> BootstrapResult:
    """Bootstrap interval of mean(A) - mean(B); the mean is Boo_1, resampled as in :func:`boo_n_difference_ci`.

    Studentized, a resample's standard error is ``sqrt(s_A*^2 / m_A + s_B*^2 / m_B)`` unpaired and
    ``s_D* / sqrt(m)`` paired (``s`` the resample's standard deviation with ddof=0, D the differences).

    Parameters
    ----------
    a, b : array_like
        Scores of the runs of A and of B.
    paired, method, confidence_level, n_resamples, rng, bounds
        As in :func:`boo_n_difference_ci`.

    Returns
    -------
    BootstrapResult
    """
    a, b, paired, method, level, n_resamples, rng, (bounds_a, bounds_b) = _mean_difference_ci_iv(
        a, b, paired, method, confidence_level, n_resamples, rng, bounds
    )
    _warn_difference(a, b, (1,), stacklevel=2)
    groups = BudgetGroup(a, a, True, 1, "V", method, bounds_a), BudgetGroup(b, b, True, 1, "V", method, bounds_b)
    estimate, dist, interval = difference_interval(*groups, paired, method, level, n_resamples, rng)
    return _difference_result(estimate, dist, interval, method, level, n_resamples)


# ----------------------------------------------------------------------------------------------------------
# Everything at once


def _compare_approaches_iv(
    a_val, b_val, a_test, b_test, n, estimator, maximize, paired, method, confidence_level, n_resamples, rng
):
    # The building blocks validate the rest; this checks what the tests need and makes one Generator for all.
    paired, _, _, _, rng = _resampling_iv(paired, method, confidence_level, n_resamples, rng)
    _, a_t, _, b_t = _approaches_iv(a_val, b_val, a_test, b_test, paired)
    if paired and np.all(a_t == b_t):
        warn(
            "every pair of A and B has the same test score: the paired t-test has no statistic (NaN)",
            ConstantScoresWarning,
            stacklevel=3,
        )
    return a_t, b_t, rng


def compare_approaches(
    a_val: Any,
    b_val: Any,
    a_test: Any = None,
    b_test: Any = None,
    *,
    n: int = 5,
    estimator: Estimator = "V",
    maximize: bool = True,
    paired: bool = False,
    method: DifferenceMethod = "studentized-u",
    confidence_level: float = 0.95,
    n_resamples: int = 9999,
    rng: Any = None,
    bounds: tuple[float | None, float | None] | None = None,
) -> Comparison:
    """Compare the score distributions of approaches A and B (Reimers & Gurevych 2018, §7).

    Parameters
    ----------
    a_val, b_val, a_test, b_test, n, estimator, maximize, paired, method, confidence_level, n_resamples, rng, bounds
        As in :func:`boo_n_difference_ci`. The tests and the mean difference use the test scores
        (the validation scores when there are none).

    Returns
    -------
    Comparison
        Boo_n and mean differences with bootstrap intervals (one Generator feeds both, in that order), Welch's
        t-test, Mann–Whitney U, and when ``paired`` the paired t-test and the Wilcoxon signed-rank test (then
        the headline tests, :attr:`Comparison.headline`). The t-tests carry their t-intervals of the mean
        difference, which summaries report as Δmean (docs/statistics/comparing.md: more power at m = 10 than
        the bootstrap interval, as rarely wrong).

    Raises
    ------
    ValueError
        Bad scores; test scores for only one approach; ``paired=True`` with different numbers of runs;
        Welch's test with fewer than 2 runs on a side; anything :func:`boo_n_difference_ci` refuses.
    """
    comparison, _ = compare_at_budgets(
        a_val,
        b_val,
        a_test,
        b_test,
        n=(n,),
        estimator=estimator,
        maximize=maximize,
        paired=paired,
        method=method,
        confidence_level=confidence_level,
        n_resamples=n_resamples,
        rng=rng,
        bounds=bounds,
    )
    return comparison


def compare_at_budgets(
    a_val: Any,
    b_val: Any,
    a_test: Any = None,
    b_test: Any = None,
    *,
    n: Sequence[int],
    estimator: Estimator = "V",
    maximize: bool = True,
    paired: bool = False,
    method: DifferenceMethod = "studentized-u",
    confidence_level: float = 0.95,
    n_resamples: int = 9999,
    rng: Any = None,
    bounds: tuple[float | None, float | None] | None = None,
) -> tuple[Comparison, dict[int, BootstrapResult]]:
    """:func:`compare_approaches` at several budgets ``n`` (with one, what it computes): the comparison at the
    largest, and the difference in Boo_n at each budget, every budget on one draw of resamples; each budget's
    difference is the one :func:`boo_n_difference_ci` gives that budget with the same generator.
    """
    arguments = (a_val, b_val, a_test, b_test, tuple(n), estimator, maximize, paired, method, confidence_level)
    a_t, b_t, rng = _compare_approaches_iv(*arguments, n_resamples, rng)
    validated = _boo_n_difference_ci_iv(*arguments, n_resamples, rng, bounds)
    _, a_boo_test, _, b_boo_test, budgets = validated[:5]
    _warn_difference(a_boo_test, b_boo_test, budgets, stacklevel=2)
    differences = dict(zip(budgets, _boo_n_differences(*validated)))
    # the mean difference draws after the differences in Boo_n, from the same generator
    mean = mean_difference_ci(
        a_t,
        b_t,
        paired=paired,
        method=method,
        confidence_level=confidence_level,
        n_resamples=n_resamples,
        rng=rng,
        bounds=bounds,
    )
    comparison = Comparison(
        boo_n_difference=differences[max(differences)],
        mean_difference=mean,
        welch=welch_test(a_t, b_t, confidence_level=confidence_level),
        mann_whitney=mann_whitney(a_t, b_t),
        wilcoxon=wilcoxon_signed_rank(a_t, b_t) if paired else None,
        paired_t=paired_t_test(a_t, b_t, confidence_level=confidence_level) if paired else None,
    )
    return comparison, differences


# ----------------------------------------------------------------------------------------------------------
# Multiple comparisons


def _adjust_pvalues_iv(pvalues: Any, method: Any):
    p = as_real_array(pvalues, "pvalues")
    if p.ndim != 1 or p.size == 0:
        raise ValueError(f"`pvalues` must be a non-empty 1-D sequence, got shape {p.shape}")
    bad = np.flatnonzero(~((p >= 0) & (p <= 1)))  # NaN fails both comparisons
    if bad.size:
        raise ValueError(f"`pvalues` must lie in [0, 1]; position {bad[0]} is {float(p[bad[0]])!r}")
    return p, as_choice(method, "method", CORRECTIONS)


def adjust_pvalues(pvalues: Any, *, method: Literal["holm", "bh"] = "holm") -> np.ndarray:
    """P-values adjusted for multiple comparisons, in the input order.

    ``"holm"``: Holm (1979) step-down, controls the family-wise error rate:
    ``p~_(i) = max_{j <= i} min(1, (k - j + 1) p_(j))``. ``"bh"``: Benjamini & Hochberg (1995) step-up,
    controls the false discovery rate: ``p~_(i) = min_{j >= i} min(1, k p_(j) / j)``. Both are monotone in
    the raw p-values. Reject the hypotheses whose adjusted p-value is at most the level.

    Raises
    ------
    ValueError
        Empty input, or a p-value that is NaN or outside [0, 1] (naming its position).

    Examples
    --------
    >>> from boontrack.compare import adjust_pvalues
    >>> adjust_pvalues([0.01, 0.04, 0.03, 0.005], method="holm").round(4).tolist()
    [0.03, 0.06, 0.06, 0.02]
    >>> adjust_pvalues([0.01, 0.04, 0.03, 0.005], method="bh").round(4).tolist()
    [0.02, 0.04, 0.04, 0.02]
    """
    p, method = _adjust_pvalues_iv(pvalues, method)
    k = p.size
    order = np.argsort(p, kind="stable")
    ranked = p[order]
    rank = np.arange(1, k + 1)
    if method == "holm":
        adjusted = np.maximum.accumulate((k - rank + 1) * ranked)
    else:
        adjusted = np.minimum.accumulate((k / rank * ranked)[::-1])[::-1]
    out = np.empty(k)
    out[order] = np.minimum(adjusted, 1.0)
    return out
