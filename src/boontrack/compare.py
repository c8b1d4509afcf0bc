"""Comparing the score distributions of two approaches (Reimers & Gurevych 2018, §7).

Two approaches A and B are compared through their runs, not through one run each: the difference in Boo_n and
in mean score with bootstrap intervals, Welch's t-test (their "Evaluation 3": expected test score), the
Mann–Whitney U test with the probability that a run of A beats a run of B ("Evaluation 4"), and the Wilcoxon
signed-rank test when runs of A and B are paired by seed. :func:`adjust_pvalues` corrects for many
comparisons (e.g. every approach against a baseline).

The scores compared are test scores (validation scores when no test scores are given); Boo_n uses the
validation scores to pick the best run and reports its test score.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from scipy import stats

from boontrack._validation import (
    as_budget,
    as_choice,
    as_count,
    as_flag,
    as_probability,
    as_rng,
    as_scores,
    as_val_test,
)
from boontrack.estimators import Estimator, _warn_or_raise_budget
from boontrack.exceptions import ConstantScoresWarning, FewRunsWarning
from boontrack.resampling import (
    _FEW_RUNS,
    BootstrapResult,
    ConfidenceInterval,
    _batch_sizes,
    _cdf_table,
    _draw_indices,
    _percentile_interval,
    _RankedRuns,
    _standard_error,
)
from boontrack.spec import CORRECTIONS, ESTIMATORS

__all__ = [
    "Comparison",
    "MannWhitneyResult",
    "WelchResult",
    "WilcoxonResult",
    "adjust_pvalues",
    "boo_n_difference_ci",
    "compare_approaches",
    "independent_difference",
    "mann_whitney",
    "mean_difference_ci",
    "welch_test",
    "wilcoxon_signed_rank",
]


@dataclass(frozen=True)
class WelchResult:
    """Welch's unequal-variance t-test of mean(A) = mean(B) (two-sided)."""

    statistic: float
    pvalue: float
    df: float


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
    """Everything :func:`compare_approaches` computes for A versus B."""

    boo_n_difference: BootstrapResult
    mean_difference: BootstrapResult
    welch: WelchResult
    mann_whitney: MannWhitneyResult
    wilcoxon: WilcoxonResult | None


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


def _welch_test_iv(a, b):
    a, b = _two_samples_iv(a, b)
    if a.size < 2 or b.size < 2:
        raise ValueError(f"Welch's t-test needs at least 2 runs in each of `a` and `b`, got {a.size} and {b.size}")
    return a, b


def welch_test(a: Any, b: Any) -> WelchResult:
    """Welch's t-test (``scipy.stats.ttest_ind(a, b, equal_var=False)``), two-sided.

    Reimers & Gurevych (2018), §7, Evaluation 3: is the expected score of A different from B's? It assumes
    roughly normal scores (see :func:`boontrack.diagnostics.diagnose`). NaN when both samples are constant.
    """
    a, b = _welch_test_iv(a, b)
    with warnings.catch_warnings():
        # scipy's "precision loss" note on (nearly) constant samples: the NaN result says it already.
        warnings.filterwarnings("ignore", "Precision loss", RuntimeWarning)
        res = stats.ttest_ind(a, b, equal_var=False)
    return WelchResult(statistic=float(res.statistic), pvalue=float(res.pvalue), df=float(res.df))


def _mann_whitney_iv(a, b):
    return _two_samples_iv(a, b)


def mann_whitney(a: Any, b: Any) -> MannWhitneyResult:
    """Mann–Whitney U test (``scipy.stats.mannwhitneyu``, two-sided) with the probability of superiority.

    Reimers & Gurevych (2018), §7, Evaluation 4: is a run of A more likely to beat a run of B than the reverse?
    ``prob_superiority = U_A / (m_a m_b) = P(A > B) + 0.5 P(A = B)``.
    """
    a, b = _mann_whitney_iv(a, b)
    res = stats.mannwhitneyu(a, b, alternative="two-sided")
    u = float(res.statistic)
    return MannWhitneyResult(statistic=u, pvalue=float(res.pvalue), prob_superiority=u / (a.size * b.size))


def _wilcoxon_signed_rank_iv(a, b):
    a, b = _two_samples_iv(a, b)
    _paired_iv(a, b)
    return a, b


def wilcoxon_signed_rank(a: Any, b: Any) -> WilcoxonResult:
    """Wilcoxon signed-rank test of ``a - b`` (``scipy.stats.wilcoxon``, two-sided), for runs paired by seed.

    Raises
    ------
    ValueError
        ``a`` and ``b`` of different lengths.
    """
    a, b = _wilcoxon_signed_rank_iv(a, b)
    res = stats.wilcoxon(a, b)
    return WilcoxonResult(statistic=float(res.statistic), pvalue=float(res.pvalue))


# ----------------------------------------------------------------------------------------------------------
# Bootstrap intervals of differences


def _difference_distribution(
    runs_a: _RankedRuns,
    runs_b: _RankedRuns,
    budget: int,
    estimator: Estimator,
    paired: bool,
    n_resamples: int,
    rng: np.random.Generator,
) -> tuple[float, np.ndarray]:
    """Boo_n(A) - Boo_n(B) on the data and on each resample.

    Unpaired: A and B are resampled independently; per batch the indices of A are drawn, then those of B.
    Paired: one draw of run indices serves both, so a resample keeps the pairs (A_i, B_i) together.
    """
    rows_a = _cdf_table(runs_a.m, np.array([budget]), estimator)
    rows_b = _cdf_table(runs_b.m, np.array([budget]), estimator)
    estimate = float(runs_a.estimate(rows_a)[0] - runs_b.estimate(rows_b)[0])
    parts = []
    for size in _batch_sizes(n_resamples, runs_a.m + runs_b.m):
        indices_a = _draw_indices(rng, runs_a.m, size)
        indices_b = indices_a if paired else _draw_indices(rng, runs_b.m, size)
        parts.append(runs_a.boo_n(indices_a, rows_a)[:, 0] - runs_b.boo_n(indices_b, rows_b)[:, 0])
    return estimate, np.concatenate(parts)


def _warn_difference(a_test: np.ndarray, b_test: np.ndarray, stacklevel: int) -> None:
    if min(a_test.size, b_test.size) < _FEW_RUNS:
        warnings.warn(
            f"{a_test.size} runs of A and {b_test.size} of B: bootstrap intervals under-cover below "
            f"~{_FEW_RUNS} runs",
            FewRunsWarning,
            stacklevel=stacklevel + 1,
        )
    if np.ptp(a_test) == 0 and np.ptp(b_test) == 0:
        warnings.warn(
            "the test scores of A and of B are each constant: the interval of the difference is a point",
            ConstantScoresWarning,
            stacklevel=stacklevel + 1,
        )


def _difference_result(estimate, dist, level, n_resamples) -> BootstrapResult:
    low, high = _percentile_interval(dist, level)
    return BootstrapResult(
        estimate=estimate,
        confidence_interval=ConfidenceInterval(low, high),
        standard_error=float(_standard_error(dist)),
        bootstrap_distribution=dist,
        method="percentile",
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


def independent_difference(a: BootstrapResult, b: BootstrapResult) -> BootstrapResult:
    """Percentile bootstrap interval of A - B from bootstrap results of A and of B resampled independently.

    When A's and B's runs are independent (not paired by seed), resampling them independently is the bootstrap
    of the difference, so resample r of A minus resample r of B is a resample of A - B: the per-approach
    bootstraps already computed give the interval without drawing again. Results from a seed-paired design must
    be resampled jointly instead (:func:`boo_n_difference_ci` with ``paired=True``).

    Parameters
    ----------
    a, b : BootstrapResult
        From :func:`boontrack.boo_n_ci`, :func:`boontrack.mean_ci` or :meth:`boontrack.CurveBand.at`, with the
        same number of resamples, drawn from independent generators, and the same confidence level.
    """
    _independent_difference_iv(a, b)
    dist = a.bootstrap_distribution - b.bootstrap_distribution
    return _difference_result(a.estimate - b.estimate, dist, a.confidence_level, a.n_resamples)


def _resampling_iv(paired, confidence_level, n_resamples, rng):
    paired = as_flag(paired, "paired")
    level = as_probability(confidence_level, "confidence_level")
    return paired, level, as_count(n_resamples, "n_resamples"), as_rng(rng)


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
    a_val, b_val, a_test, b_test, n, estimator, maximize, paired, confidence_level, n_resamples, rng
):
    paired, level, n_resamples, rng = _resampling_iv(paired, confidence_level, n_resamples, rng)
    a_v, a_t, b_v, b_t = _approaches_iv(a_val, b_val, a_test, b_test, paired)
    budget = as_budget(n)
    estimator = as_choice(estimator, "estimator", ESTIMATORS)
    maximize = as_flag(maximize, "maximize")
    _warn_or_raise_budget(np.array([budget]), min(a_v.size, b_v.size), estimator)
    return a_v, a_t, b_v, b_t, budget, estimator, maximize, paired, level, n_resamples, rng


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
    confidence_level: float = 0.95,
    n_resamples: int = 9999,
    rng: Any = None,
) -> BootstrapResult:
    """Percentile bootstrap interval of Boo_n(A) - Boo_n(B) (Bajgar et al. 2018, eq. 7; Appendix D.1).

    Unpaired, the runs of A and of B are resampled independently. With ``paired=True`` run i of A and run i
    of B share a seed and are resampled together, which removes the seed-to-seed variation they share.

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
    confidence_level, n_resamples, rng
        As in :func:`boontrack.resampling.boo_n_ci`.

    Returns
    -------
    BootstrapResult
        ``method="percentile"``.
    """
    a_v, a_t, b_v, b_t, budget, estimator, maximize, paired, level, n_resamples, rng = _boo_n_difference_ci_iv(
        a_val, b_val, a_test, b_test, n, estimator, maximize, paired, confidence_level, n_resamples, rng
    )
    _warn_difference(a_t, b_t, stacklevel=2)
    estimate, dist = _difference_distribution(
        _RankedRuns(a_v, a_t, maximize), _RankedRuns(b_v, b_t, maximize), budget, estimator, paired, n_resamples, rng
    )
    return _difference_result(estimate, dist, level, n_resamples)


def _mean_difference_ci_iv(a, b, paired, confidence_level, n_resamples, rng):
    paired, level, n_resamples, rng = _resampling_iv(paired, confidence_level, n_resamples, rng)
    a, b = _two_samples_iv(a, b)
    if paired:
        _paired_iv(a, b)
    return a, b, paired, level, n_resamples, rng


def mean_difference_ci(
    a: Any,
    b: Any,
    *,
    paired: bool = False,
    confidence_level: float = 0.95,
    n_resamples: int = 9999,
    rng: Any = None,
) -> BootstrapResult:
    """Percentile bootstrap interval of mean(A) - mean(B); the mean is Boo_1, resampled as in
    :func:`boo_n_difference_ci`.

    Parameters
    ----------
    a, b : array_like
        Scores of the runs of A and of B.
    paired, confidence_level, n_resamples, rng
        As in :func:`boo_n_difference_ci`.

    Returns
    -------
    BootstrapResult
    """
    a, b, paired, level, n_resamples, rng = _mean_difference_ci_iv(a, b, paired, confidence_level, n_resamples, rng)
    _warn_difference(a, b, stacklevel=2)
    estimate, dist = _difference_distribution(
        _RankedRuns(a, a, True), _RankedRuns(b, b, True), 1, "V", paired, n_resamples, rng
    )
    return _difference_result(estimate, dist, level, n_resamples)


# ----------------------------------------------------------------------------------------------------------
# Everything at once


def _compare_approaches_iv(
    a_val, b_val, a_test, b_test, n, estimator, maximize, paired, confidence_level, n_resamples, rng
):
    # The building blocks validate the rest; this checks what the tests need and makes one Generator for all.
    paired, _, _, rng = _resampling_iv(paired, confidence_level, n_resamples, rng)
    _, a_t, _, b_t = _approaches_iv(a_val, b_val, a_test, b_test, paired)
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
    confidence_level: float = 0.95,
    n_resamples: int = 9999,
    rng: Any = None,
) -> Comparison:
    """Compare the score distributions of approaches A and B (Reimers & Gurevych 2018, §7).

    Parameters
    ----------
    a_val, b_val, a_test, b_test, n, estimator, maximize, paired, confidence_level, n_resamples, rng
        As in :func:`boo_n_difference_ci`. The tests and the mean difference use the test scores
        (the validation scores when there are none).

    Returns
    -------
    Comparison
        Boo_n and mean differences with percentile bootstrap intervals (one Generator feeds both, in that
        order), Welch's t-test, Mann–Whitney U, and the Wilcoxon signed-rank test when ``paired``.

    Raises
    ------
    ValueError
        Bad scores; test scores for only one approach; ``paired=True`` with different numbers of runs;
        Welch's test with fewer than 2 runs on a side; anything :func:`boo_n_difference_ci` refuses.
    """
    a_t, b_t, rng = _compare_approaches_iv(
        a_val, b_val, a_test, b_test, n, estimator, maximize, paired, confidence_level, n_resamples, rng
    )
    options = dict(paired=paired, confidence_level=confidence_level, n_resamples=n_resamples, rng=rng)
    boo = boo_n_difference_ci(a_val, b_val, a_test, b_test, n=n, estimator=estimator, maximize=maximize, **options)
    mean = mean_difference_ci(a_t, b_t, **options)
    return Comparison(
        boo_n_difference=boo,
        mean_difference=mean,
        welch=welch_test(a_t, b_t),
        mann_whitney=mann_whitney(a_t, b_t),
        wilcoxon=wilcoxon_signed_rank(a_t, b_t) if paired else None,
    )


# ----------------------------------------------------------------------------------------------------------
# Multiple comparisons


def _adjust_pvalues_iv(pvalues: Any, method: Any):
    try:
        p = np.asarray(pvalues, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"`pvalues` must be a 1-D sequence of numbers: {exc}") from None
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
