"""The coverage of interval methods, and the error rates of comparisons, measured on populations.

:func:`coverage` draws many sweeps from a :class:`~boontrack.simulate.populations.Population`, computes the
intervals of each method on every sweep, and reports how often they contain the population's Boo_n and how
wide they are: the measurement the default interval method is chosen by. :func:`band_coverage` does the same
for a whole curve's bands, :func:`comparison_rates` for the type-I error and power of comparisons.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from scipy import stats

from boontrack._validation import as_bounds, as_budgets, as_choice, as_count, as_probability, as_rng
from boontrack.choices import CI_METHODS, DEFAULT_CI_METHOD, ESTIMATORS
from boontrack.compare import DIFFERENCE_METHODS, wilcoxon_pvalues
from boontrack.simulate.populations import Population
from boontrack.vocabulary import name as named


@dataclass(frozen=True)
class CoverageCell:
    """The measured coverage of one interval method on one population, m and n.

    Attributes
    ----------
    population, m, n, method, estimator, confidence_level
        What was measured.
    truth
        The population's exact Boo_n.
    coverage
        Share of the replications whose interval contains ``truth``.
    coverage_se
        Its binomial standard error, ``sqrt(c (1 - c) / replications)``.
    median_width
        Median interval width over the replications.
    replications, n_resamples
        Number of simulated sweeps, and of bootstrap resamples per interval.
    """

    population: str
    m: int
    n: int
    method: str
    estimator: str
    confidence_level: float
    truth: float
    coverage: float
    coverage_se: float
    median_width: float
    replications: int
    n_resamples: int


def coverage_iv(pop, m, n, methods, estimator, confidence_level, replications, n_resamples, rng):
    if not isinstance(pop, Population):
        raise ValueError(f"`population` must be a boontrack.simulate.Population, got {pop!r}")
    m = as_count(m, "m")
    if m < 2:
        raise ValueError(f"{named('m')} must be at least 2: an interval needs the spread of 2 runs, got {m}")
    budgets = np.unique(as_budgets(n)[0])
    estimator = as_choice(estimator, "estimator", ESTIMATORS)
    if estimator == "U" and budgets.max() > m:
        raise ValueError(f"{named('n')} = {int(budgets.max())} exceeds {named('m')} = {m}: U is undefined there")
    methods = tuple(as_choice(x, "methods", CI_METHODS) for x in ((methods,) if isinstance(methods, str) else methods))
    if not methods:
        raise ValueError("`methods` is empty")
    level = as_probability(confidence_level, "confidence_level")
    return (
        m,
        budgets,
        methods,
        estimator,
        level,
        as_count(replications, "replications"),
        as_count(n_resamples, "n_resamples"),
        as_rng(rng),
    )


@dataclass(frozen=True, eq=False)
class SweepIntervals:
    """The intervals of every simulated sweep, which :func:`coverage` summarises.

    Kept whole so that the sweeps can be summarised in other ways too: the coverage among the sweeps that hold
    (or lack) some kind of run (:meth:`cells` with ``sweeps``), or how a figure computed on each sweep predicts
    its misses.

    Attributes
    ----------
    population, m, estimator, confidence_level, n_resamples
        What was simulated.
    budgets, truth
        The budgets and the population's exact Boo_n at each.
    val, test
        The sweeps' runs, shape (replications, m).
    low, high
        Per method, the interval ends of each sweep, shape (replications, budgets).
    """

    population: str
    m: int
    estimator: str
    confidence_level: float
    n_resamples: int
    budgets: np.ndarray
    truth: np.ndarray
    val: np.ndarray
    test: np.ndarray
    low: dict[str, np.ndarray]
    high: dict[str, np.ndarray]

    def covered(self, method: str) -> np.ndarray:
        """Whether each sweep's interval holds the truth, shape (replications, budgets)."""
        return (self.low[method] <= self.truth) & (self.truth <= self.high[method])

    def cells(self, sweeps: np.ndarray | None = None) -> tuple[CoverageCell, ...]:
        """Coverage and median width per (method, budget) over the sweeps selected by the boolean ``sweeps``
        (all by default)."""
        chosen = np.ones(self.val.shape[0], bool) if sweeps is None else np.asarray(sweeps, bool)
        count = int(chosen.sum())
        cells = []
        for method in self.low:
            rate = self.covered(method)[chosen].mean(axis=0) if count else np.full(self.budgets.size, np.nan)
            widths = np.median((self.high[method] - self.low[method])[chosen], axis=0) if count else rate
            cells += [
                CoverageCell(
                    population=self.population,
                    m=self.m,
                    n=int(budget),
                    method=method,
                    estimator=self.estimator,
                    confidence_level=self.confidence_level,
                    truth=float(self.truth[k]),
                    coverage=float(rate[k]),
                    coverage_se=math.sqrt(rate[k] * (1.0 - rate[k]) / count) if count else math.nan,
                    median_width=float(widths[k]),
                    replications=count,
                    n_resamples=self.n_resamples,
                )
                for k, budget in enumerate(self.budgets)
            ]
        return tuple(cells)


def sweep_intervals(
    population: Population,
    *,
    m: int,
    n: Any = (1, 5, 10),
    methods: Any = (DEFAULT_CI_METHOD, "percentile"),
    estimator: Literal["V", "U", "W"] = "V",
    confidence_level: float = 0.95,
    replications: int = 500,
    n_resamples: int = 999,
    rng: Any = None,
    bounds: Any = None,
) -> SweepIntervals:
    """The intervals of Boo_n of each method on ``replications`` sweeps of ``m`` runs drawn from ``population``.

    Parameters are those of :func:`coverage`.
    """
    from boontrack._bootstrap import curve_distribution, interval_ends

    m, budgets, methods, estimator, level, replications, n_resamples, rng = coverage_iv(
        population, m, n, methods, estimator, confidence_level, replications, n_resamples, rng
    )
    truth = np.asarray(population.boo_n(budgets.tolist()), dtype=np.float64)
    val, test = population.sample(m, replications=replications, rng=rng)
    servers = _shared_resampling(methods)
    low = {x: np.empty((replications, budgets.size)) for x in methods}
    high = {x: np.empty((replications, budgets.size)) for x in methods}
    for r in range(replications):  # one sweep per iteration; everything inside is vectorised
        runs = val[r], test[r], True, budgets, estimator, True, n_resamples
        for drawn, served in servers.items():
            resampled = curve_distribution(*runs, drawn, rng, as_bounds(bounds, test[r]))
            for method in served:
                low[method][r], high[method][r] = interval_ends(resampled, level, method)
    return SweepIntervals(population.name, m, estimator, level, n_resamples, budgets, truth, val, test, low, high)


#: The methods whose intervals a method's resampling gives too: the percentile interval reads a studentized
#: method's resamples, and the calibrated method's resamples are ``"studentized-u"``'s (with its pivot).
_SERVED_BY = {
    "studentized-u-calibrated": ("studentized-u", "percentile"),
    "studentized-u": ("percentile",),
    "studentized-u-farther": ("studentized-u", "percentile"),
    "studentized-u-k-of-m": ("percentile",),
    "studentized": ("percentile",),
}


#: The studentized interval methods of a difference (:func:`boontrack.compare.boo_n_difference_ci`), which the
#: replicated comparisons compute.
_DIFFERENCE_STUDENTIZED = tuple(method for method in DIFFERENCE_METHODS if method != "percentile")


def _shared_resampling(methods: tuple[str, ...]) -> dict[str, list[str]]:
    """The methods to resample for, each with the methods its resampling gives (itself first): one resampling
    per sweep serves every method it can, so that they are compared on the same resamples."""
    drawn = [x for x in methods if not any(x in _SERVED_BY.get(y, ()) for y in methods)]
    servers = {x: [x] for x in drawn}
    for method in methods:
        if method not in servers:
            servers[next(x for x in drawn if method in _SERVED_BY.get(x, ()))].append(method)
    return servers


def coverage(
    population: Population,
    *,
    m: int,
    n: Any = (1, 5, 10),
    methods: Any = (DEFAULT_CI_METHOD, "percentile"),
    estimator: Literal["V", "U", "W"] = "V",
    confidence_level: float = 0.95,
    replications: int = 500,
    n_resamples: int = 999,
    rng: Any = None,
    bounds: Any = None,
) -> tuple[CoverageCell, ...]:
    """Coverage and median width of bootstrap intervals of Boo_n, measured on ``replications`` simulated sweeps.

    Every sweep of ``m`` runs is drawn from ``population``; on it, each method's interval of Boo_n at each
    budget (one band over the budgets, so the budgets share resamples, as in a summary) is compared with the
    population's exact Boo_n. Methods computed from the same resamples (a studentized one and ``percentile``;
    ``"studentized-u-calibrated"`` and ``"studentized-u"``) share them, which makes their comparison paired.

    Parameters
    ----------
    population : Population
    m : int
        Runs per sweep.
    n : int or sequence of int
        Budgets.
    methods : str or sequence of str
        Interval methods (:data:`boontrack.choices.CI_METHODS`).
    estimator : {"V", "U", "W"}
    confidence_level : float
    replications : int
        Number of simulated sweeps; the coverage's standard error is about ``sqrt(0.05 * 0.95 / replications)``.
    n_resamples : int
        Bootstrap resamples per interval.
    rng : int or numpy.random.Generator, optional
        Draws the sweeps and every resample.
    bounds : pair or None
        The scores' bounds, as in :func:`boontrack.resampling.boo_n_ci`; None: [0, 1] for a sweep whose test
        scores all lie in it, as a summary does.

    Returns
    -------
    tuple of CoverageCell
        One per (method, budget), methods in the order given, budgets ascending.
    """
    return sweep_intervals(
        population,
        m=m,
        n=n,
        methods=methods,
        estimator=estimator,
        confidence_level=confidence_level,
        replications=replications,
        n_resamples=n_resamples,
        rng=rng,
        bounds=bounds,
    ).cells()


@dataclass(frozen=True)
class BandCoverage:
    """How often a curve's whole band, over budgets n = 1..m/2, contains the true curve.

    Attributes
    ----------
    population, m, method, confidence_level, replications, n_resamples
        What was measured.
    budgets
        The budgets the band spans (1..m/2, the trustworthy ones).
    pointwise, simultaneous
        Share of sweeps whose pointwise band, and whose simultaneous (sup-t) band, holds the truth at every
        budget at once.
    width_ratio
        Median over sweeps of the median, over budgets, of simultaneous width / pointwise width.
    """

    population: str
    m: int
    method: str
    confidence_level: float
    budgets: tuple[int, ...]
    pointwise: float
    simultaneous: float
    width_ratio: float
    replications: int
    n_resamples: int


def band_coverage(
    population: Population,
    *,
    m: int,
    method: str = DEFAULT_CI_METHOD,
    estimator: Literal["V", "U", "W"] = "V",
    confidence_level: float = 0.95,
    replications: int = 300,
    n_resamples: int = 999,
    rng: Any = None,
    bounds: Any = None,
) -> BandCoverage:
    """Joint coverage of the pointwise and simultaneous bands of a curve over its trustworthy budgets (1..m/2).

    Parameters are as in :func:`coverage`; the budgets are every n from 1 to ``m // 2``.
    """
    from boontrack._bootstrap import curve_distribution, interval_ends, simultaneous_band, trusted_budgets

    m, budgets, (method,), estimator, level, replications, n_resamples, rng = coverage_iv(
        population,
        m,
        np.arange(1, max(1, m // 2) + 1),
        (method,),
        estimator,
        confidence_level,
        replications,
        n_resamples,
        rng,
    )
    truth = np.asarray(population.boo_n(budgets.tolist()), dtype=np.float64)
    trusted = trusted_budgets(budgets, m)
    val, test = population.sample(m, replications=replications, rng=rng)
    pointwise, simultaneous, ratios = np.empty(replications, bool), np.empty(replications, bool), []
    for r in range(replications):  # one sweep per iteration; everything inside is vectorised
        runs = val[r], test[r], True, budgets, estimator, True, n_resamples, method, rng
        resampled = curve_distribution(*runs, as_bounds(bounds, test[r]))
        low, high = interval_ends(resampled, level, method)
        sim_low, sim_high = simultaneous_band(resampled, level, method, trusted)
        pointwise[r] = np.all((low <= truth) & (truth <= high))
        simultaneous[r] = np.all((sim_low <= truth) & (truth <= sim_high))
        with np.errstate(divide="ignore", invalid="ignore"):
            ratios.append(np.nanmedian((sim_high - sim_low) / (high - low)))
    return BandCoverage(
        population=population.name,
        m=m,
        method=method,
        confidence_level=level,
        budgets=tuple(int(k) for k in budgets),
        pointwise=float(pointwise.mean()),
        simultaneous=float(simultaneous.mean()),
        width_ratio=float(np.median(ratios)),
        replications=replications,
        n_resamples=n_resamples,
    )


@dataclass(frozen=True)
class ComparisonRate:
    """How often one interval or test of a comparison rejects "no difference", on simulated pairs of sweeps.

    Attributes
    ----------
    population, m, n, paired, shift, confidence_level, replications, n_resamples
        What was measured: A and B of ``m`` runs each, A shifted by ``shift`` (0: the null).
    statistic
        ``"boo_<n> <method>"``, ``"boo_<n> percentile"``, ``"mean <method>"``, ``"mean percentile"``
        (the interval excludes 0), or a test at level ``1 - confidence_level``: ``"paired t"``, ``"wilcoxon"``
        (paired), ``"welch"``, ``"mann-whitney"`` (unpaired).
    rejection
        Share of the replications that reject: the type-I error when ``shift`` is 0, else the power.
    rejection_se
        Its binomial standard error.
    median_width
        Median interval width (NaN for a test).
    """

    population: str
    m: int
    n: int
    paired: bool
    shift: float
    statistic: str
    confidence_level: float
    rejection: float
    rejection_se: float
    median_width: float
    replications: int
    n_resamples: int


def sample_comparison(
    population: Population,
    m: int,
    *,
    paired: bool,
    shift: float = 0.0,
    seed_share: float = 0.5,
    replications: int = 1,
    rng: Any = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Sweeps of approaches A and B: (a_val, a_test, b_val, b_test), each of shape (replications, m).

    Unpaired, A and B are independent sweeps of ``population``. Paired, run i of A and of B share a seed: with
    S, X, Y three independent sweeps, ``A = w S + (1 - w) X`` and ``B = w S + (1 - w) Y`` (``w = seed_share``,
    validation and test alike), so A and B have the same distribution and a pair's correlation is
    ``w^2 / (w^2 + (1 - w)^2)`` (0.5 at the default; scores on a grid stay on a grid, so ties stay). A's
    validation and test scores are then raised by ``shift``: Boo_n(A) - Boo_n(B) is exactly ``shift`` at
    every n, and so is the difference in means.
    """
    rng = as_rng(rng)
    if paired:
        (s_val, s_test), (x_val, x_test), (y_val, y_test) = (
            population.sample(m, replications=replications, rng=rng) for _ in range(3)
        )
        w = seed_share
        a_val, a_test = w * s_val + (1 - w) * x_val, w * s_test + (1 - w) * x_test
        b_val, b_test = w * s_val + (1 - w) * y_val, w * s_test + (1 - w) * y_test
    else:
        (a_val, a_test), (b_val, b_test) = (population.sample(m, replications=replications, rng=rng) for _ in range(2))
    return a_val + shift, a_test + shift, b_val, b_test


def _comparison_rates_iv(pop, m, n, paired, shift, seed_share, confidence_level, replications, n_resamples, rng):
    if not isinstance(pop, Population):
        raise ValueError(f"`population` must be a boontrack.simulate.Population, got {pop!r}")
    m = as_count(m, "m")
    budget = as_count(n, "n")
    if budget > m:
        raise ValueError(f"{named('n')} = {budget} exceeds {named('m')} = {m}")
    if not isinstance(paired, bool):
        raise ValueError(f"`paired` must be True or False, got {paired!r}")
    if not (isinstance(shift, (int, float)) and math.isfinite(shift)):
        raise ValueError(f"`shift` must be a finite number, got {shift!r}")
    if not (isinstance(seed_share, (int, float)) and 0.0 <= seed_share < 1.0):
        raise ValueError(f"`seed_share` must be in [0, 1), got {seed_share!r}")
    return (
        m,
        budget,
        paired,
        float(shift),
        float(seed_share),
        as_probability(confidence_level, "confidence_level"),
        as_count(replications, "replications"),
        as_count(n_resamples, "n_resamples"),
        as_rng(rng),
    )


def comparison_rates(
    population: Population,
    *,
    m: int,
    n: int = 5,
    paired: bool = True,
    shift: float = 0.0,
    seed_share: float = 0.5,
    confidence_level: float = 0.95,
    replications: int = 500,
    n_resamples: int = 999,
    rng: Any = None,
    method: str = "studentized-u",
) -> tuple[ComparisonRate, ...]:
    """Type-I error (``shift=0``) or power of the comparisons of two approaches, on simulated sweeps.

    Each replication draws A and B (:func:`sample_comparison`) and computes what a summary reports for the
    comparison (:mod:`boontrack.compare`): the intervals of Boo_n(A) - Boo_n(B) and of mean(A) - mean(B),
    by the studentized ``method`` and percentile (one resampling serves both), and the headline tests of the design (paired t
    and Wilcoxon signed-rank, or Welch and Mann-Whitney) at level ``1 - confidence_level``. An interval
    rejects when it excludes 0.

    Parameters
    ----------
    population : Population
    m : int
        Runs per approach.
    n : int
        Budget of the Boo_n difference.
    paired : bool
        Runs paired by seed (see :func:`sample_comparison`) and compared as pairs.
    shift : float
        The true difference A - B, in Boo_n at every n and in mean.
    seed_share : float
        The seed's share of a paired run (:func:`sample_comparison`).
    confidence_level, replications, n_resamples, rng
        As in :func:`coverage`.
    method : {"studentized-u", "studentized"}
        The studentized interval method of the differences.

    Returns
    -------
    tuple of ComparisonRate
        Boo_n by ``method``, Boo_n percentile, mean by ``method``, mean percentile, then the two tests.
    """
    import warnings

    from boontrack.simulate.replicated import difference_ends

    m, budget, paired, shift, seed_share, level, replications, n_resamples, rng = _comparison_rates_iv(
        population, m, n, paired, shift, seed_share, confidence_level, replications, n_resamples, rng
    )
    method = as_choice(method, "method", _DIFFERENCE_STUDENTIZED)
    a_val, a_test, b_val, b_test = sample_comparison(
        population, m, paired=paired, shift=shift, seed_share=seed_share, replications=replications, rng=rng
    )
    ends = np.empty((4, replications, 2))  # Boo_n by method, Boo_n percentile, mean by method, mean percentile
    for k, (budget_k, a_v, b_v) in enumerate(((budget, a_val, b_val), (1, a_test, b_test))):
        # every replication at once, as one difference_interval per replication would (the summary's rule)
        ends[2 * k], ends[2 * k + 1] = difference_ends(
            (a_v, a_test), (b_v, b_test), budget_k, paired, method, level, n_resamples, rng
        )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # constant samples: NaN p-values, counted as no rejection
        if paired:
            tests = {
                "paired t": stats.ttest_rel(a_test, b_test, axis=1).pvalue,
                "wilcoxon": wilcoxon_pvalues(a_test, b_test),
            }
        else:
            tests = {
                "welch": stats.ttest_ind(a_test, b_test, equal_var=False, axis=1).pvalue,
                "mann-whitney": stats.mannwhitneyu(a_test, b_test, alternative="two-sided", axis=1).pvalue,
            }
    names = (f"boo_{budget} {method}", f"boo_{budget} percentile", f"mean {method}", "mean percentile")
    rejected = {name: (ends[k, :, 0] > 0) | (ends[k, :, 1] < 0) for k, name in enumerate(names)}
    widths = {name: float(np.median(ends[k, :, 1] - ends[k, :, 0])) for k, name in enumerate(names)}
    rejected.update({name: np.nan_to_num(p, nan=1.0) < 1.0 - level for name, p in tests.items()})
    common = dict(population=population.name, m=m, n=budget, paired=paired, shift=shift, confidence_level=level)
    return tuple(
        ComparisonRate(
            **common,
            statistic=name,
            rejection=float(hits.mean()),
            rejection_se=math.sqrt(hits.mean() * (1.0 - hits.mean()) / replications),
            median_width=widths.get(name, math.nan),
            replications=replications,
            n_resamples=n_resamples,
        )
        for name, hits in rejected.items()
    )
