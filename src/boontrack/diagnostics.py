"""Diagnostics that come with every summary: is there enough data, and which estimator is safe?

Bajgar et al. (2018) recommend the Gaussian parametric Boo_n (eq. 6) only when the scores look normal
(Appendix C: an Anderson–Darling test), and its quality depends on the validation–test correlation; the
bootstrap intervals of :mod:`boontrack.resampling` under-cover with fewer than 8 runs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from boontrack._bootstrap import few_runs_message
from boontrack._special import log_ndtr
from boontrack._validation import as_budget, as_val_test
from boontrack.estimators import average_ranks

__all__ = ["Diagnostics", "diagnose"]

#: Stephens' (1974) 5% critical value of the Anderson–Darling statistic for a normal with estimated mean and
#: variance, before the small-sample factor 1 / (1 + 0.75/m + 2.25/m^2) (as in scipy.stats.anderson).
_AD_CRITICAL_5PCT = 0.752


@dataclass(frozen=True)
class Diagnostics:
    """Descriptive statistics and warnings for one set of runs.

    Attributes
    ----------
    runs
        Number of runs m.
    ties
        Runs minus the number of distinct validation scores.
    mean, sd, median, iqr, min, max
        Of the test scores (validation scores without test). ``sd`` uses ``ddof=1`` (NaN for one run).
    spearman_val_test
        Spearman's rank correlation between validation and test scores; None without test scores or when
        either is constant.
    normality_statistic, normality_critical_5pct, normal
        Anderson–Darling test of normality of the test scores: the statistic, the 5% critical value, and
        whether the statistic is below it. The statistic is NaN (and ``normal`` False) for constant scores or
        a single run.
    warnings
        Plain-language warnings: few runs, constant scores, budget larger than the number of runs.
    n
        The budget the warnings were checked against, if one was given.
    """

    runs: int
    ties: int
    mean: float
    sd: float
    median: float
    iqr: float
    min: float
    max: float
    spearman_val_test: float | None
    normality_statistic: float
    normality_critical_5pct: float
    normal: bool
    warnings: tuple[str, ...]
    n: int | None = None


def _diagnose_iv(val: Any, test: Any, n: Any):
    v, t = as_val_test(val, test)
    return v, t, None if n is None else as_budget(n)


def _anderson_darling(scores: np.ndarray) -> tuple[float, float]:
    """Anderson–Darling statistic against a fitted normal, and its 5% critical value."""
    m = scores.size
    critical = _AD_CRITICAL_5PCT / (1.0 + 0.75 / m + 2.25 / m**2)
    if m < 2 or np.ptp(scores) == 0:
        return math.nan, critical
    # scipy.stats.anderson(scores, dist="norm")'s statistic by its own formula: importing scipy.stats would cost
    # every summary about a second.
    w = (np.sort(scores) - scores.mean()) / scores.std(ddof=1)
    weights = (2.0 * np.arange(1, m + 1) - 1.0) / m
    return float(-m - np.sum(weights * (log_ndtr(w) + log_ndtr(-w)[::-1]))), critical


def _spearman(v: np.ndarray, t: np.ndarray) -> float:
    """Spearman's rank correlation (``scipy.stats.spearmanr``): Pearson's correlation of the average ranks."""
    return float(np.corrcoef(average_ranks(v), average_ranks(t))[0, 1])


def _sample_sd(t: np.ndarray) -> float:
    """Standard deviation with ddof=1: exactly 0 for constant scores (no rounding residue), NaN for one run."""
    if t.size < 2:
        return math.nan
    return 0.0 if np.ptp(t) == 0 else float(t.std(ddof=1))


def equal_scores_message(test_given: bool) -> str:
    """What equal reported scores (the test scores, else the validation scores) do to every interval: the one
    warning of a summary that says so (:attr:`boontrack.summary.GroupSummary.interval_limits`)."""
    scores = "test" if test_given else "validation"
    return (
        f"all {scores} scores are equal: every interval is a point, which cannot show how far other runs may score "
        "from it, and rank statistics are undefined"
    )


def _warnings(v: np.ndarray, t: np.ndarray, test_given: bool, n: int | None) -> tuple[str, ...]:
    m = v.size
    found = []
    few_runs = few_runs_message(m)
    if few_runs:
        found.append(few_runs)
    if m > 1 and np.ptp(v) == 0:
        found.append("all validation scores are equal: the best-validation run is a random one")
    if m > 1 and np.ptp(t) == 0:
        found.append(equal_scores_message(test_given))
    if n is not None and n > m:
        found.append(f"n = {n} exceeds the number of runs m = {m}: the U estimator is undefined, V and W extrapolate")
    return tuple(found)


def diagnose(val: Any, test: Any = None, *, n: Any = None) -> Diagnostics:
    """Diagnostics of a set of runs: size, ties, spread, validation–test correlation, normality, warnings.

    Parameters
    ----------
    val, test : array_like
        Validation and test scores, one per run; ``test=None`` means test = val.
    n : int, optional
        The budget that will be reported; a warning says when it exceeds the number of runs.

    Returns
    -------
    Diagnostics

    Raises
    ------
    ValueError
        Non-finite or empty scores, ``val``/``test`` of different lengths, ``n`` not an integer >= 1.

    References
    ----------
    Bajgar, Kadlec & Kleindienst (2018), §3.2 (eq. 6) and Appendix C; Stephens (1974), EDF statistics for
    goodness of fit, JASA 69(347).

    Examples
    --------
    >>> from boontrack.diagnostics import diagnose
    >>> d = diagnose([0.70, 0.72, 0.72, 0.69], [0.68, 0.71, 0.70, 0.69], n=5)
    >>> d.runs, d.ties
    (4, 1)
    >>> d.warnings[0]
    'only 4 runs: 95 % intervals covered 92-98 % at 4-8 runs (default method; percentile 75-88 %)'
    """
    v, t, n = _diagnose_iv(val, test, n)
    m = v.size
    q25, median, q75 = np.percentile(t, [25, 50, 75])
    spearman = None
    if test is not None and np.ptp(v) > 0 and np.ptp(t) > 0:
        spearman = _spearman(v, t)
    statistic, critical = _anderson_darling(t)
    return Diagnostics(
        runs=m,
        ties=m - np.unique(v).size,
        mean=math.fsum(t) / m,  # correctly rounded: constant scores give their value exactly
        sd=_sample_sd(t),
        median=float(median),
        iqr=float(q75 - q25),
        min=float(t.min()),
        max=float(t.max()),
        spearman_val_test=spearman,
        normality_statistic=statistic,
        normality_critical_5pct=critical,
        normal=bool(statistic < critical),
        warnings=_warnings(v, t, test is not None, n),
        n=n,
    )
