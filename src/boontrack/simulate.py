"""Populations whose Boo_n is known exactly, and the coverage of interval methods measured on them.

A :class:`Population` draws sweeps of m runs, a (validation, test) pair per run, and knows the target of every
estimator exactly: the expected test score of the best-validation run among n independent draws (Bajgar et
al. 2018, eq. 2-4; V, U and W all estimate this one number, Dodge et al. 2021, §3). :func:`coverage` draws
many sweeps from a population, computes the intervals of each method on every sweep, and reports how often
they contain that number and how wide they are: the measurement the default interval method is chosen by, and
the one behind :func:`coverage_check` on a user's own runs.

Truths, by population (Z_v, Z_t standard normal with correlation rho, so that
``E[Z_t | Z_v = z] = rho z``; ``phi_n(z) = n phi(z) Phi(z)^(n-1)`` the density of the best of n):

- ``normal``: ``mu + rho sd E[max of n N(0, 1)]`` (Bajgar et al. 2018, eq. 6).
- ``lognormal`` (long right tail), scores ``exp(sigma Z)``:
  ``exp(sigma^2 (1 - rho^2) / 2) int exp(sigma rho z) phi_n(z) dz``, by quadrature.
- ``left_skewed``, scores ``-exp(-sigma Z)``: the mirror image, ``-exp(...) int exp(-sigma rho z) phi_n(z) dz``.
- ``beta_binomial`` (ties), validation and test ``Binomial(trials, p) / trials`` given a run's
  ``p ~ Beta(a, b)``: ``sum_k (F(k)^n - F(k-1)^n) E[p | k]`` with F the beta-binomial CDF and
  ``E[p | k] = (a + k) / (a + b + trials)`` (ties in validation broken at random, Bajgar et al. 2018, §3.2).
- ``kernel``: a Gaussian-kernel smoothed fit of observed runs (each run's pair plus independent noise of
  Scott's bandwidth per column), ``int n F(v)^(n-1) (1/m) sum_i phi_h(v - v_i) t_i dv`` on a fine grid.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Literal, cast

import numpy as np
from scipy import integrate, special, stats

from boontrack._validation import as_budgets, as_choice, as_count, as_probability, as_rng, as_val_test
from boontrack.choices import CI_METHODS, ESTIMATORS
from boontrack.estimators import Estimator, expected_max_of
from boontrack.vocabulary import name as named

__all__ = [
    "BandCoverage",
    "ComparisonRate",
    "CoverageCell",
    "CoverageCheck",
    "EstimatorError",
    "Population",
    "RunsNeeded",
    "Study",
    "band_coverage",
    "comparison_rates",
    "coverage",
    "coverage_check",
    "estimator_errors",
    "format_study",
    "kernel_fit",
    "population",
    "sample_comparison",
    "study",
    "write_study",
]

PopulationName = Literal["normal", "lognormal", "left_skewed", "beta_binomial"]
POPULATIONS = ("normal", "lognormal", "left_skewed", "beta_binomial")

#: Points of the grid on which a kernel fit's truth is integrated (the trapezoid error is far below 1e-6 sd).
_KERNEL_GRID = 4001


@dataclass(frozen=True, eq=False)
class Population:
    """A population of runs: draws (validation, test) pairs and knows its Boo_n exactly.

    Build one with :func:`population` or :func:`kernel_fit`.

    Attributes
    ----------
    name
        ``"normal"``, ``"lognormal"``, ``"left_skewed"``, ``"beta_binomial"`` or ``"kernel"``.
    parameters
        The population's parameters by name (for a kernel fit: the bandwidths).
    """

    name: str
    parameters: dict[str, float]
    _runs: tuple[np.ndarray, np.ndarray] | None = field(default=None, repr=False)

    def sample(self, m: int, *, replications: int = 1, rng: Any = None) -> tuple[np.ndarray, np.ndarray]:
        """``replications`` sweeps of ``m`` runs: validation and test scores, each of shape (replications, m)."""
        m, replications, rng = as_count(m, "m"), as_count(replications, "replications"), as_rng(rng)
        p = self.parameters
        if self.name == "beta_binomial":
            chance = rng.beta(p["a"], p["b"], size=(replications, m))
            trials = int(p["trials"])
            return rng.binomial(trials, chance) / trials, rng.binomial(trials, chance) / trials
        if self.name == "kernel":
            assert self._runs is not None  # a fit keeps its runs
            val, test = self._runs
            pick = rng.integers(0, val.size, size=(replications, m))
            noise = rng.standard_normal((2, replications, m))
            return val[pick] + p["h_val"] * noise[0], test[pick] + p["h_test"] * noise[1]
        z_val, noise = rng.standard_normal((2, replications, m))
        rho = p["rho"]
        z_test = rho * z_val + math.sqrt(1.0 - rho * rho) * noise  # rho = 1: test = validation
        if self.name == "normal":
            return p["mean"] + p["sd"] * z_val, p["mean"] + p["sd"] * z_test
        sign = 1.0 if self.name == "lognormal" else -1.0
        return sign * np.exp(sign * p["sigma"] * z_val), sign * np.exp(sign * p["sigma"] * z_test)

    def boo_n(self, n: Any) -> float | np.ndarray:
        """The exact Boo_n (expected test score of the best-validation run of n draws), for one or more n."""
        budgets, scalar = as_budgets(n)
        values = np.array([self._boo_n(int(k)) for k in budgets])
        return float(values[0]) if scalar else values

    def _boo_n(self, n: int) -> float:
        p = self.parameters
        if self.name == "normal":
            return p["mean"] + p["rho"] * p["sd"] * float(expected_max_of(stats.norm(), n))
        if self.name in ("lognormal", "left_skewed"):
            sign = 1.0 if self.name == "lognormal" else -1.0
            sigma, rho = p["sigma"], p["rho"]
            return sign * math.exp(sigma * sigma * (1.0 - rho * rho) / 2.0) * _normal_best_mgf(sign * sigma * rho, n)
        if self.name == "beta_binomial":
            return _beta_binomial_boo_n(p["a"], p["b"], int(p["trials"]), n)
        assert self._runs is not None  # a fit keeps its runs
        return _kernel_boo_n(self._runs[0], self._runs[1], p["h_val"], p["h_test"], n)


def population(name: PopulationName, **parameters: float) -> Population:
    """A named population; parameters not given take the defaults below.

    Parameters
    ----------
    name : {"normal", "lognormal", "left_skewed", "beta_binomial"}
        ``normal``: ``rho=0.5, mean=0.0, sd=1.0``. ``lognormal`` (long right tail) and ``left_skewed`` (its
        mirror image): ``sigma=1.0, rho=0.5``. ``beta_binomial`` (scores on a grid, so validation ties):
        ``a=16.0, b=4.0, trials=50``.
    **parameters
        Overrides of the defaults.

    Examples
    --------
    >>> from boontrack.simulate import population
    >>> round(population("normal").boo_n(5), 6)  # 0.5 * E[max of 5 N(0, 1)]
    0.581482
    """
    name = cast(PopulationName, as_choice(name, "name", POPULATIONS))
    defaults = _DEFAULTS[name]
    unknown = set(parameters) - set(defaults)
    if unknown:
        raise ValueError(f"unknown parameter(s) {sorted(unknown)} for population {name!r}; known: {sorted(defaults)}")
    values = {**defaults, **{k: float(v) for k, v in parameters.items()}}
    if "rho" in values and not -1.0 <= values["rho"] <= 1.0:
        raise ValueError(f"`rho` must be in [-1, 1], got {values['rho']!r}")
    positive = [k for k in ("sd", "sigma", "a", "b", "trials") if k in values and not values[k] > 0]
    if positive:
        raise ValueError(f"`{positive[0]}` must be > 0, got {values[positive[0]]!r}")
    return Population(name, values)


_DEFAULTS: dict[str, dict[str, float]] = {
    "normal": {"rho": 0.5, "mean": 0.0, "sd": 1.0},
    "lognormal": {"sigma": 1.0, "rho": 0.5},
    "left_skewed": {"sigma": 1.0, "rho": 0.5},
    "beta_binomial": {"a": 16.0, "b": 4.0, "trials": 50.0},
}


def kernel_fit(val: Any, test: Any = None, *, maximize: bool = True) -> Population:
    """The Gaussian-kernel smoothed fit of observed runs, as a population (validation ranked higher-better).

    Each draw is a run picked at random with independent normal noise added to its validation and its test
    score, of Scott's bandwidth ``sd * m^(-1/5)`` per column (the smoothed bootstrap's kernel, Bajgar et al.
    2018, footnote 11). With ``maximize=False`` validation scores are negated, so the best is the highest.
    """
    from boontrack._bootstrap import scott_bandwidth

    v, t = as_val_test(val, test)
    v = v if maximize else -v
    h_val, h_test = scott_bandwidth(v), scott_bandwidth(t)
    return Population("kernel", {"h_val": h_val, "h_test": h_test}, (v.copy(), t.copy()))


def _normal_best_mgf(c: float, n: int) -> float:
    """E[exp(c Z_(n))] for the best of n standard normals, by quadrature in log space."""

    def integrand(z: float) -> float:
        return math.exp(c * z + math.log(n) + stats.norm.logpdf(z) + (n - 1) * special.log_ndtr(z))

    # The median of the best of n, Phi^-1(2^(-1/n)), shifted by the tilt c: the integrand's peak is near it.
    mode = float(-special.ndtri(-math.expm1(-math.log(2.0) / n))) + c
    value, _ = integrate.quad(integrand, mode - 14.0, mode + 14.0, points=[mode], limit=200, epsrel=1e-12)
    return float(value)


def _beta_binomial_boo_n(a: float, b: float, trials: int, n: int) -> float:
    k = np.arange(trials + 1)
    cdf = stats.betabinom(trials, a, b).cdf(k)
    below = np.concatenate(([0.0], cdf[:-1]))
    best = cdf**n - below**n  # P(best validation score = k / trials)
    return float(best @ ((a + k) / (a + b + trials)))


def _kernel_boo_n(val: np.ndarray, test: np.ndarray, h_val: float, h_test: float, n: int) -> float:
    if h_val == 0:  # one validation value: every draw ties, the best is a random run
        return float(test.mean())
    grid = np.linspace(val.min() - 9 * h_val, val.max() + 9 * h_val, _KERNEL_GRID)
    z = (grid[:, None] - val[None, :]) / h_val
    cdf = special.ndtr(z).mean(axis=1)
    weighted_density = (np.exp(-0.5 * z * z) @ test) / (val.size * h_val * math.sqrt(2 * math.pi))
    integrand = n * np.power(cdf, n - 1) * weighted_density
    return float(integrate.trapezoid(integrand, grid))


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


def _coverage_iv(pop, m, n, methods, estimator, confidence_level, replications, n_resamples, rng):
    if not isinstance(pop, Population):
        raise ValueError(f"`population` must be a boontrack.simulate.Population, got {pop!r}")
    m = as_count(m, "m")
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


def coverage(
    population: Population,
    *,
    m: int,
    n: Any = (1, 5, 10),
    methods: Any = ("studentized", "percentile"),
    estimator: Literal["V", "U", "W"] = "V",
    confidence_level: float = 0.95,
    replications: int = 500,
    n_resamples: int = 999,
    rng: Any = None,
) -> tuple[CoverageCell, ...]:
    """Coverage and median width of bootstrap intervals of Boo_n, measured on ``replications`` simulated sweeps.

    Every sweep of ``m`` runs is drawn from ``population``; on it, each method's interval of Boo_n at each
    budget (one band over the budgets, so the budgets share resamples, as in a summary) is compared with the
    population's exact Boo_n. Methods computed from the same resamples (``studentized`` and ``percentile``)
    share them, which makes their comparison paired.

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

    Returns
    -------
    tuple of CoverageCell
        One per (method, budget), methods in the order given, budgets ascending.
    """
    from boontrack._bootstrap import curve_distribution, interval_ends

    m, budgets, methods, estimator, level, replications, n_resamples, rng = _coverage_iv(
        population, m, n, methods, estimator, confidence_level, replications, n_resamples, rng
    )
    truth = np.asarray(population.boo_n(budgets.tolist()), dtype=np.float64)
    val, test = population.sample(m, replications=replications, rng=rng)
    # The percentile interval reads the studentized method's resamples: one resampling serves both.
    drawn = [x for x in methods if x != "percentile" or "studentized" not in methods]
    low = {x: np.empty((replications, budgets.size)) for x in methods}
    high = {x: np.empty((replications, budgets.size)) for x in methods}
    for r in range(replications):  # one sweep per iteration; everything inside is vectorised
        for method in drawn:
            resampled = curve_distribution(val[r], test[r], True, budgets, estimator, True, n_resamples, method, rng)
            low[method][r], high[method][r] = interval_ends(resampled, level, method)
            if method == "studentized" and "percentile" in methods:
                low["percentile"][r], high["percentile"][r] = interval_ends(resampled, level, "percentile")
    cells = []
    for method in methods:
        covered = (low[method] <= truth) & (truth <= high[method])
        rate = covered.mean(axis=0)
        widths = np.median(high[method] - low[method], axis=0)
        for k, budget in enumerate(budgets):
            cells.append(
                CoverageCell(
                    population=population.name,
                    m=m,
                    n=int(budget),
                    method=method,
                    estimator=estimator,
                    confidence_level=level,
                    truth=float(truth[k]),
                    coverage=float(rate[k]),
                    coverage_se=math.sqrt(rate[k] * (1.0 - rate[k]) / replications),
                    median_width=float(widths[k]),
                    replications=replications,
                    n_resamples=n_resamples,
                )
            )
    return tuple(cells)


#: Estimated coverage below which a coverage check warns.
DOUBTFUL_COVERAGE = 0.90
#: Above this many runs the coverage check is not simulated (see :func:`coverage_check`).
_CHECK_MAX_RUNS = 500


@dataclass(frozen=True)
class CoverageCheck:
    """The estimated actual coverage of the intervals of Boo_n computed on a set of runs.

    Attributes
    ----------
    n
        Budgets checked.
    coverage
        Estimated coverage at each budget (NaN when the check was skipped).
    confidence_level, method, replications, n_resamples
        What was simulated.
    skipped
        Why the check was not simulated, or None.
    """

    n: np.ndarray
    coverage: np.ndarray
    confidence_level: float
    method: str
    replications: int
    n_resamples: int
    skipped: str | None = None

    @property
    def doubtful(self) -> np.ndarray:
        """Per budget: whether the estimated coverage is below 90 % (False where not simulated)."""
        return np.nan_to_num(self.coverage, nan=1.0) < DOUBTFUL_COVERAGE

    def at(self, n: int) -> float:
        """The estimated coverage at budget n (NaN when the check was skipped)."""
        return float(self.coverage[int(np.flatnonzero(self.n == n)[0])])


def _coverage_check_iv(val, test, n, estimator, maximize, confidence_level, method, replications, n_resamples, rng):
    v, t = as_val_test(val, test)
    budgets = np.unique(as_budgets(n)[0])
    estimator = as_choice(estimator, "estimator", ESTIMATORS)
    if estimator == "U" and budgets.max() > v.size:
        raise ValueError(f"`n` = {int(budgets.max())} exceeds the number of runs m = {v.size}: U is undefined there")
    if not isinstance(maximize, bool):
        raise ValueError(f"`maximize` must be True or False, got {maximize!r}")
    return (
        v,
        t,
        budgets,
        estimator,
        maximize,
        as_probability(confidence_level, "confidence_level"),
        as_choice(method, "method", CI_METHODS),
        as_count(replications, "replications"),
        as_count(n_resamples, "n_resamples"),
        as_rng(rng),
    )


def coverage_check(
    val: Any,
    test: Any = None,
    *,
    n: Any = (1, 5, 10),
    estimator: Literal["V", "U", "W"] = "V",
    maximize: bool = True,
    confidence_level: float = 0.95,
    method: str = "studentized",
    replications: int = 200,
    n_resamples: int = 199,
    rng: Any = None,
) -> CoverageCheck:
    """Estimate how often the intervals of Boo_n computed on these runs contain the truth.

    The runs' Gaussian-kernel smoothed fit (:func:`kernel_fit`) stands in for the population: sweeps of the
    same size are drawn from it, the interval is computed on each (``method``, at every budget), and the share
    that contains the fit's exact Boo_n estimates the actual coverage (:func:`coverage`). A long tail in the
    runs shows up as an estimated coverage below nominal; a tail the runs have not seen cannot. With the
    defaults the estimate's standard error is about 1.5 points near 95 %, and it costs 200 bootstrap
    intervals of 199 resamples (0.3-0.6 s at m = 10-100, about 3 s at m = 500, three budgets).

    Not simulated above 500 runs (``skipped`` says so): the cost grows with m, and there the studentized
    interval covered within 2 points of nominal at n <= m/2 on normal and beta-binomial scores.

    Parameters
    ----------
    val, test : array_like
        The runs (``test=None``: test = validation).
    n, estimator, maximize, confidence_level, method
        As for the intervals being checked (:func:`boontrack.resampling.boo_n_curve_ci`).
    replications, n_resamples : int
        Simulated sweeps, and bootstrap resamples per interval.
    rng : int or numpy.random.Generator, optional

    Returns
    -------
    CoverageCheck

    Warns
    -----
    CoverageWarning
        An estimated coverage below 90 %.
    """
    import warnings

    from boontrack.exceptions import CoverageWarning

    v, t, budgets, estimator, maximize, level, method, replications, n_resamples, rng = _coverage_check_iv(
        val, test, n, estimator, maximize, confidence_level, method, replications, n_resamples, rng
    )
    options = dict(confidence_level=level, method=method, replications=replications, n_resamples=n_resamples)
    if v.size > _CHECK_MAX_RUNS or np.ptp(t) == 0:
        why = f"more than {_CHECK_MAX_RUNS} runs" if v.size > _CHECK_MAX_RUNS else "constant test scores"
        return CoverageCheck(budgets, np.full(budgets.size, math.nan), skipped=why, **options)
    fit = kernel_fit(v, t, maximize=maximize)
    cells = coverage(
        fit,
        m=v.size,
        n=budgets,
        methods=(method,),
        estimator=estimator,
        confidence_level=level,
        replications=replications,
        n_resamples=n_resamples,
        rng=rng,
    )
    result = CoverageCheck(budgets, np.array([c.coverage for c in cells]), **options)
    low = [f"Boo_{k} {100 * c:.0f} %" for k, c, bad in zip(budgets, result.coverage, result.doubtful) if bad]
    if low:
        warnings.warn(
            f"the {100 * level:g} % intervals are estimated to cover less than {100 * DOUBTFUL_COVERAGE:g} % "
            f"({', '.join(low)}; simulated from a smoothed fit of the {v.size} runs): the scores may have a "
            "long tail that the runs undersample",
            CoverageWarning,
            stacklevel=2,
        )
    return result


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
    method: str = "studentized",
    estimator: Literal["V", "U", "W"] = "V",
    confidence_level: float = 0.95,
    replications: int = 300,
    n_resamples: int = 999,
    rng: Any = None,
) -> BandCoverage:
    """Joint coverage of the pointwise and simultaneous bands of a curve over its trustworthy budgets (1..m/2).

    Parameters are as in :func:`coverage`; the budgets are every n from 1 to ``m // 2``.
    """
    from boontrack._bootstrap import curve_distribution, interval_ends, simultaneous_band, trusted_budgets

    m, budgets, (method,), estimator, level, replications, n_resamples, rng = _coverage_iv(
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
        resampled = curve_distribution(val[r], test[r], True, budgets, estimator, True, n_resamples, method, rng)
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
        ``"boo_<n> studentized"``, ``"boo_<n> percentile"``, ``"mean studentized"``, ``"mean percentile"``
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
) -> tuple[ComparisonRate, ...]:
    """Type-I error (``shift=0``) or power of the comparisons of two approaches, on simulated sweeps.

    Each replication draws A and B (:func:`sample_comparison`) and computes what a summary reports for the
    comparison (:mod:`boontrack.compare`): the intervals of Boo_n(A) - Boo_n(B) and of mean(A) - mean(B),
    studentized and percentile (one resampling serves both), and the headline tests of the design (paired t
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

    Returns
    -------
    tuple of ComparisonRate
        Boo_n studentized, Boo_n percentile, mean studentized, mean percentile, then the two tests.
    """
    import warnings

    from boontrack._bootstrap import BudgetGroup, difference_interval, percentile_interval

    m, budget, paired, shift, seed_share, level, replications, n_resamples, rng = _comparison_rates_iv(
        population, m, n, paired, shift, seed_share, confidence_level, replications, n_resamples, rng
    )
    a_val, a_test, b_val, b_test = sample_comparison(
        population, m, paired=paired, shift=shift, seed_share=seed_share, replications=replications, rng=rng
    )
    ends = np.empty((4, replications, 2))  # Boo_n studentized, Boo_n percentile, mean studentized, mean percentile
    for r in range(replications):  # one pair of sweeps per iteration; everything inside is vectorised
        for k, (budget_k, a_v, b_v) in enumerate(((budget, a_val[r], b_val[r]), (1, a_test[r], b_test[r]))):
            groups = BudgetGroup(a_v, a_test[r], True, budget_k, "V"), BudgetGroup(b_v, b_test[r], True, budget_k, "V")
            _, dist, interval = difference_interval(*groups, paired, "studentized", level, n_resamples, rng)
            ends[2 * k, r], ends[2 * k + 1, r] = interval, percentile_interval(dist, level)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # constant samples: NaN p-values, counted as no rejection
        if paired:
            tests = {
                "paired t": stats.ttest_rel(a_test, b_test, axis=1).pvalue,
                "wilcoxon": stats.wilcoxon(a_test, b_test, axis=1).pvalue,
            }
        else:
            tests = {
                "welch": stats.ttest_ind(a_test, b_test, equal_var=False, axis=1).pvalue,
                "mann-whitney": stats.mannwhitneyu(a_test, b_test, alternative="two-sided", axis=1).pvalue,
            }
    names = (f"boo_{budget} studentized", f"boo_{budget} percentile", "mean studentized", "mean percentile")
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


# ----------------------------------------------------------------------------------------------------------
# The study of Dodge et al. (2021), §3-4: estimator errors, interval coverage, and how many runs are needed


def _boo_n_rows(val: np.ndarray, test: np.ndarray, budgets: np.ndarray, estimator: str) -> np.ndarray:
    """Boo_n of every sweep (row) at every budget, (sweeps, budgets), with the tie rule of Bajgar et al. (§3.2).

    Rows are sorted by validation score (worst first); a run in a tie block of ranks ``start+1..end`` weighs
    ``(P(end) - P(start)) / (end - start)``, which averages the block's test scores (:func:`boontrack.boo_n`).
    """
    from boontrack.estimators import best_of_n_cdf

    rows, m = val.shape
    order = np.argsort(val, axis=1, kind="stable")
    v, t = np.take_along_axis(val, order, axis=1), np.take_along_axis(test, order, axis=1)
    rank = np.broadcast_to(np.arange(m), (rows, m))
    step = v[:, 1:] != v[:, :-1]
    start = np.maximum.accumulate(np.where(np.hstack([np.ones((rows, 1), bool), step]), rank, 0), axis=1)
    ends = np.where(np.hstack([step, np.ones((rows, 1), bool)]), rank + 1, m)
    end = np.minimum.accumulate(ends[:, ::-1], axis=1)[:, ::-1]
    cdf = best_of_n_cdf(m, budgets, cast(Estimator, estimator))  # (budgets, m + 1); one of ESTIMATORS
    weights = (cdf[:, end] - cdf[:, start]) / (end - start)  # (budgets, rows, m)
    return np.einsum("brm,rm->rb", weights, t)


def _gaussian_rows(val: np.ndarray, test: np.ndarray, budgets: np.ndarray) -> np.ndarray:
    """The Gaussian estimate of every sweep (Bajgar et al. 2018, eq. 6; :func:`boontrack.boo_n_gaussian`)."""
    centred_v, centred_t = val - val.mean(axis=1, keepdims=True), test - test.mean(axis=1, keepdims=True)
    sd_v, sd_t = centred_v.std(axis=1, ddof=1), centred_t.std(axis=1, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        rho = np.nan_to_num((centred_v * centred_t).sum(axis=1) / ((val.shape[1] - 1) * sd_v * sd_t))
    best = np.asarray(expected_max_of(stats.norm(), budgets.tolist()), dtype=np.float64)
    return test.mean(axis=1)[:, None] + (rho * sd_t)[:, None] * best[None, :]


@dataclass(frozen=True)
class EstimatorError:
    """Bias, variance and MSE of one estimator of Boo_n, over simulated sweeps (Dodge et al. 2021, §3).

    ``estimator`` is ``"V"``, ``"U"``, ``"W"`` or ``"gaussian"``; ``bias = mean(estimate) - truth``,
    ``variance`` the variance of the estimates (ddof=0), ``mse = bias^2 + variance``.
    """

    population: str
    m: int
    n: int
    estimator: str
    truth: float
    bias: float
    variance: float
    mse: float
    replications: int


def estimator_errors(
    population: Population, *, m: int, n: Any = (1, 5, 10), replications: int = 1000, rng: Any = None
) -> tuple[EstimatorError, ...]:
    """Bias, variance and MSE of the estimators V, U, W and the Gaussian one, on ``replications`` sweeps of m runs.

    One draw of sweeps serves every estimator (a paired comparison). U is left out at budgets above m.

    Returns
    -------
    tuple of EstimatorError
        By estimator (V, U, W, gaussian), then budget ascending.
    """
    m, budgets, _, _, _, replications, _, rng = _coverage_iv(
        population, m, n, ("studentized",), "V", 0.95, replications, 1, rng
    )
    truth = np.asarray(population.boo_n(budgets.tolist()), dtype=np.float64)
    val, test = population.sample(m, replications=replications, rng=rng)
    out = []
    for estimator in (*ESTIMATORS, "gaussian"):
        kept = budgets if estimator != "U" else budgets[budgets <= m]
        if not kept.size:
            continue
        estimates = (
            _gaussian_rows(val, test, kept) if estimator == "gaussian" else _boo_n_rows(val, test, kept, estimator)
        )
        bias = estimates.mean(axis=0) - truth[: kept.size]
        variance = estimates.var(axis=0)
        out += [
            EstimatorError(
                population.name,
                m,
                int(k),
                estimator,
                float(truth[j]),
                float(bias[j]),
                float(variance[j]),
                float(bias[j] ** 2 + variance[j]),
                replications,
            )
            for j, k in enumerate(kept)
        ]
    return tuple(out)


@dataclass(frozen=True)
class RunsNeeded:
    """How a quantity of interest changes with the number of runs m, and the smallest m that reaches a target.

    Attributes
    ----------
    quantity
        ``"median width"`` of the default (studentized) interval of Boo_n, or ``"power"`` of the studentized
        interval of Boo_n(A) - Boo_n(B) (seed-paired runs) at a true difference ``shift``.
    n
        The budget.
    target
        The width to reach (at most) or the power to reach (at least).
    m, value
        The numbers of runs tried and the quantity at each.
    m_needed
        The smallest m tried that reaches the target, or None.
    """

    quantity: str
    n: int
    target: float
    m: tuple[int, ...]
    value: tuple[float, ...]
    m_needed: int | None


def _reached(quantity: str, value: float, target: float) -> bool:
    return value <= target if quantity == "median width" else value >= target


def _runs_needed(quantity: str, n: int, target: float, measured: dict[int, float]) -> RunsNeeded:
    reached = [m for m, value in measured.items() if _reached(quantity, value, target)]
    return RunsNeeded(quantity, n, target, tuple(measured), tuple(measured.values()), min(reached, default=None))


@dataclass(frozen=True)
class Study:
    """The result of :func:`study`: estimator errors, interval coverage, and runs needed (when asked)."""

    population: str
    m: int
    errors: tuple[EstimatorError, ...]
    coverage: tuple[CoverageCell, ...]
    width: RunsNeeded | None
    power: RunsNeeded | None

    def rows(self) -> list[dict[str, Any]]:
        """Every number as one row per (section, ...): the CSV ``boontrack simulate --out`` writes."""
        rows = [
            {
                "section": "estimator",
                "m": e.m,
                "n": e.n,
                "name": e.estimator,
                "truth": e.truth,
                "bias": e.bias,
                "variance": e.variance,
                "mse": e.mse,
            }
            for e in self.errors
        ]
        rows += [
            {
                "section": "interval",
                "m": c.m,
                "n": c.n,
                "name": c.method,
                "truth": c.truth,
                "coverage": c.coverage,
                "coverage_se": c.coverage_se,
                "median_width": c.median_width,
            }
            for c in self.coverage
        ]
        for plan in (self.width, self.power):
            if plan is not None:
                rows += [
                    {
                        "section": f"runs needed: {plan.quantity}",
                        "m": m,
                        "n": plan.n,
                        "name": "target",
                        "target": plan.target,
                        "value": value,
                    }
                    for m, value in zip(plan.m, plan.value)
                ]
        return [{"population": self.population, **row} for row in rows]


#: Numbers of runs tried by "how many runs do I need".
PLAN_RUNS = (5, 10, 20, 50, 100, 200)


def _study_iv(pop, m, n, methods, width, shift, power, plan_runs, replications, n_resamples, rng):
    m, budgets, methods, _, level, replications, n_resamples, rng = _coverage_iv(
        pop, m, n, methods, "V", 0.95, replications, n_resamples, rng
    )
    for name, value in (("width", width), ("shift", shift)):
        if value is not None and not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
            raise ValueError(f"{named(name)} must be a number > 0, got {value!r}")
    power = as_probability(power, "power")
    plan = sorted({as_count(k, "plan_runs") for k in plan_runs})
    if (width is not None or shift is not None) and budgets.max() > min(plan):
        plan = [k for k in plan if k >= budgets.max()]
    return m, budgets, methods, width, shift, power, tuple(plan), replications, n_resamples, rng


def study(
    population: Population,
    *,
    m: int,
    n: Any = (1, 5, 10),
    methods: Any = CI_METHODS,
    width: float | None = None,
    shift: float | None = None,
    power: float = 0.8,
    plan_runs: Any = PLAN_RUNS,
    replications: int = 200,
    n_resamples: int = 499,
    rng: Any = None,
    progress: bool = False,
) -> Study:
    """Dodge et al. (2021), §3-4, on one population: how good are the estimates, the intervals, and m?

    - Estimators: bias, variance and MSE of V, U, W and the Gaussian estimate at m runs
      (:func:`estimator_errors`, ``5 x replications`` sweeps: they are cheap).
    - Intervals: coverage and median width of each method at m runs (:func:`coverage`).
    - With ``width``: the median width of the default interval of Boo_n at the largest budget for each m of
      ``plan_runs``, and the smallest m whose width is at most ``width``.
    - With ``shift``: the power of the studentized interval of Boo_n(A) - Boo_n(B) at the largest budget,
      seed-paired runs (:func:`comparison_rates`), A better by ``shift``, for each m of ``plan_runs``, and the
      smallest m reaching ``power``.

    Parameters
    ----------
    population : Population
    m : int
        Runs per sweep for the estimator and interval sections.
    n : int or sequence of int
        Budgets.
    methods : sequence of str
        Interval methods (:data:`boontrack.choices.CI_METHODS`).
    width, shift : float, optional
        Targets of "how many runs do I need".
    power : float
        The power to reach with ``shift``.
    plan_runs : sequence of int
        Numbers of runs tried (those below the largest budget are skipped).
    replications, n_resamples, rng
        As in :func:`coverage`.
    progress : bool
        A progress bar over the steps on stderr, only when stderr is a terminal.
    """
    from boontrack._progress import progress_bar

    m, budgets, methods, width, shift, power, plan, replications, n_resamples, rng = _study_iv(
        population, m, n, methods, width, shift, power, plan_runs, replications, n_resamples, rng
    )
    largest = int(budgets.max())
    common = dict(replications=replications, n_resamples=n_resamples, rng=rng)
    steps = [("errors", None), *(("coverage", x) for x in methods)]
    steps += [("width", k) for k in plan if width is not None] + [("power", k) for k in plan if shift is not None]
    errors: tuple[EstimatorError, ...] = ()
    cells: list[CoverageCell] = []
    widths: dict[int, float] = {}
    powers: dict[int, float] = {}
    with progress_bar(steps, enabled=progress, label="boontrack: simulating") as bar:
        for kind, arg in bar:
            if kind == "errors":
                errors = estimator_errors(population, m=m, n=budgets, replications=5 * replications, rng=rng)
            elif kind == "coverage":
                cells += coverage(population, m=m, n=budgets, methods=(arg,), **common)
            elif kind == "width":
                (cell,) = coverage(population, m=arg, n=largest, methods=("studentized",), **common)
                widths[arg] = cell.median_width
            else:
                rates = comparison_rates(population, m=arg, n=largest, paired=True, shift=shift, **common)
                powers[arg] = rates[0].rejection
    return Study(
        population=population.name,
        m=m,
        errors=errors,
        coverage=tuple(cells),
        width=None if width is None else _runs_needed("median width", largest, width, widths),
        power=None if shift is None else _runs_needed("power", largest, power, powers),
    )


def format_study(result: Study) -> str:
    """The terminal tables of a :class:`Study`: estimators, intervals, runs needed."""
    nominal = result.coverage[0].confidence_level if result.coverage else 0.95
    replications = result.coverage[0].replications if result.coverage else 0
    lines = [
        f"{result.population}: m = {result.m} runs, {replications} simulated sweeps per cell",
        "",
        "Estimators of Boo_n (Dodge et al. 2021, §3)",
        *_aligned(
            [["n", "estimator", "truth", "bias", "sd", "RMSE"]]
            + [
                [
                    str(e.n),
                    e.estimator,
                    f"{e.truth:.4g}",
                    f"{e.bias:+.3g}",
                    f"{math.sqrt(e.variance):.3g}",
                    f"{math.sqrt(e.mse):.3g}",
                ]
                for e in result.errors
            ]
        ),
        "",
        f"Intervals of Boo_n (estimator V), nominal {100 * nominal:g} %",
        *_aligned(
            [["n", "method", "coverage", "median width"]]
            + [
                [str(c.n), c.method, f"{100 * c.coverage:.1f} % ± {100 * c.coverage_se:.1f}", f"{c.median_width:.3g}"]
                for c in result.coverage
            ]
        ),
    ]
    for plan in (result.width, result.power):
        if plan is None:
            continue
        goal = "at most" if plan.quantity == "median width" else "at least"
        what = (
            f"median width of the Boo_{plan.n} interval"
            if plan.quantity == "median width"
            else f"power to tell two approaches apart by ΔBoo_{plan.n} (paired runs)"
        )
        verdict = (
            f"{plan.m_needed} runs" if plan.m_needed is not None else f"more than {max(plan.m)} runs (not reached)"
        )
        lines += ["", f"Runs needed: {what} {goal} {plan.target:g}: {verdict}"]
        lines += _aligned([["m", *map(str, plan.m)], [plan.quantity, *(f"{v:.3g}" for v in plan.value)]])
    return "\n".join(lines)


def _aligned(rows: list[list[str]]) -> list[str]:
    widths = [max(len(row[k]) for row in rows) for k in range(len(rows[0]))]
    return ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]


def write_study(result: Study, directory: Any, *, plots: bool = True) -> list[str]:
    """Write ``study.csv`` (:meth:`Study.rows`) and, with matplotlib, ``study.png`` into ``directory``.

    The plot shows the coverage of each interval method by budget against the nominal level and, when asked
    for, the runs-needed curves. Returns the paths written.
    """
    import importlib.util
    from pathlib import Path

    import pandas as pd

    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    written = [out / "study.csv"]
    pd.DataFrame(result.rows()).to_csv(written[0], index=False)
    if plots and importlib.util.find_spec("matplotlib") is not None:
        written.append(out / "study.png")
        _plot_study(result, written[-1])
    return [str(p) for p in written]


def _plot_study(result: Study, path: Any) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plans = [p for p in (result.width, result.power) if p is not None]
    fig, axes = plt.subplots(1, 1 + len(plans), figsize=(5.5 * (1 + len(plans)), 4), squeeze=False)
    ax = axes[0, 0]
    for method in dict.fromkeys(c.method for c in result.coverage):
        cells = [c for c in result.coverage if c.method == method]
        ax.errorbar(
            [c.n for c in cells],
            [c.coverage for c in cells],
            yerr=[2 * c.coverage_se for c in cells],
            marker="o",
            capsize=3,
            label=method,
        )
    if result.coverage:
        ax.axhline(result.coverage[0].confidence_level, color="grey", linestyle="--", label="nominal")
    ax.set(xlabel="budget n", ylabel="coverage", title=f"{result.population}, m = {result.m}")
    ax.legend(fontsize="small")
    for ax, plan in zip(axes[0, 1:], plans):
        ax.plot(plan.m, plan.value, marker="o")
        ax.axhline(plan.target, color="grey", linestyle="--", label="target")
        ax.set(xscale="log", xlabel="runs m", ylabel=plan.quantity, title=f"Boo_{plan.n}: runs needed")
        ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
