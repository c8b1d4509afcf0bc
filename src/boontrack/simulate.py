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
from typing import Any, Literal

import numpy as np
from scipy import integrate, special, stats

from boontrack._validation import as_budgets, as_choice, as_count, as_probability, as_rng, as_val_test
from boontrack.estimators import expected_max_of
from boontrack.spec import CI_METHODS, ESTIMATORS

__all__ = [
    "BandCoverage",
    "CoverageCell",
    "CoverageCheck",
    "Population",
    "band_coverage",
    "coverage",
    "coverage_check",
    "kernel_fit",
    "population",
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
        return _kernel_boo_n(*self._runs, p["h_val"], p["h_test"], n)


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
    name = as_choice(name, "name", POPULATIONS)
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
    from boontrack.resampling import _scott_bandwidth

    v, t = as_val_test(val, test)
    v = v if maximize else -v
    h_val, h_test = _scott_bandwidth(v), _scott_bandwidth(t)
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
        raise ValueError(f"`n` = {int(budgets.max())} exceeds `m` = {m}: U is undefined there")
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
        Interval methods (:data:`boontrack.spec.CI_METHODS`).
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
    from boontrack.resampling import _curve_distribution, _intervals

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
            resampled = _curve_distribution(
                val[r], test[r], True, budgets, estimator, True, n_resamples, method, rng
            )
            low[method][r], high[method][r] = _intervals(resampled, level, method)
            if method == "studentized" and "percentile" in methods:
                low["percentile"][r], high["percentile"][r] = _intervals(resampled, level, "percentile")
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
    from boontrack.resampling import _curve_distribution, _intervals, _simultaneous_band, _trustworthy

    m, budgets, (method,), estimator, level, replications, n_resamples, rng = _coverage_iv(
        population, m, np.arange(1, max(1, m // 2) + 1), (method,), estimator, confidence_level, replications,
        n_resamples, rng,
    )  # fmt: skip
    truth = np.asarray(population.boo_n(budgets.tolist()), dtype=np.float64)
    trusted = _trustworthy(budgets, m)
    val, test = population.sample(m, replications=replications, rng=rng)
    pointwise, simultaneous, ratios = np.empty(replications, bool), np.empty(replications, bool), []
    for r in range(replications):  # one sweep per iteration; everything inside is vectorised
        resampled = _curve_distribution(val[r], test[r], True, budgets, estimator, True, n_resamples, method, rng)
        low, high = _intervals(resampled, level, method)
        sim_low, sim_high = _simultaneous_band(resampled, level, method, trusted)
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
