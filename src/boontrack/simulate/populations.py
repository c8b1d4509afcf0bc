"""Populations of runs whose Boo_n is known exactly.

A :class:`Population` draws sweeps of m runs, a (validation, test) pair per run, and knows the target of every
estimator exactly: the expected test score of the best-validation run among n independent draws (Bajgar et
al. 2018, eq. 2-4; V, U and W all estimate this one number, Dodge et al. 2021, §3).

Truths, by population (Z_v, Z_t standard normal with correlation rho, so that
``E[Z_t | Z_v = z] = rho z``; ``phi_n(z) = n phi(z) Phi(z)^(n-1)`` the density of the best of n):

- ``normal``: ``mu + rho sd E[max of n N(0, 1)]`` (Bajgar et al. 2018, eq. 6).
- ``lognormal`` (long right tail), scores ``exp(sigma Z)``:
  ``exp(sigma^2 (1 - rho^2) / 2) int exp(sigma rho z) phi_n(z) dz``, by quadrature.
- ``left_skewed``, scores ``ceiling - scale exp(-sigma Z)``: the mirror image, below a ceiling,
  ``ceiling - scale exp(...) int exp(-sigma rho z) phi_n(z) dz``.
- ``diverged``: a run diverges with probability ``share`` (its scores fall ``gap`` s.d. below the others',
  modes so far apart that they never overlap), else it is ``normal``. With K ~ Binomial(n, 1 - share) good
  runs among n: ``sum_k P(K = k) (mu + rho sd E[max of k]) + share^n (mu - gap sd + rho sd E[max of n])``.
- ``beta_binomial`` (ties), validation and test ``Binomial(trials, p) / trials`` given a run's
  ``p ~ Beta(a, b)``: ``sum_k (F(k)^n - F(k-1)^n) E[p | k]`` with F the beta-binomial CDF and
  ``E[p | k] = (a + k) / (a + b + trials)`` (ties in validation broken at random, Bajgar et al. 2018, §3.2).
- ``finite``: the runs of a table drawn with replacement (:func:`finite_population`); Boo_n is the V estimate
  of the whole table, the expected test score of the best of n runs drawn from it (Bajgar et al. 2018, eq. 7).
- ``kernel``: a Gaussian-kernel smoothed fit of observed runs (each run's pair plus independent noise of
  Scott's bandwidth per column), ``int n F(v)^(n-1) (1/m) sum_i phi_h(v - v_i) t_i dv`` on a fine grid.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Literal, cast

import numpy as np
from scipy import integrate, special, stats

from boontrack._validation import as_budgets, as_choice, as_count, as_rng, as_val_test
from boontrack.estimators import boo_n, expected_max_of

PopulationName = Literal["normal", "lognormal", "left_skewed", "beta_binomial", "diverged"]
POPULATIONS = ("normal", "lognormal", "left_skewed", "beta_binomial", "diverged")

#: Points of the grid on which a kernel fit's truth is integrated (the trapezoid error is far below 1e-6 sd).
_KERNEL_GRID = 4001


@dataclass(frozen=True, eq=False)
class Population:
    """A population of runs: draws (validation, test) pairs and knows its Boo_n exactly.

    Build one with :func:`population` or :func:`kernel_fit`.

    Attributes
    ----------
    name
        ``"normal"``, ``"lognormal"``, ``"left_skewed"``, ``"beta_binomial"``, ``"diverged"``, ``"finite"`` or
        ``"kernel"``.
    parameters
        The population's parameters by name (for a kernel fit: the bandwidths; for a finite one: none).
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
        if self.name in ("kernel", "finite"):
            assert self._runs is not None  # a fit or a table keeps its runs
            val, test = self._runs
            pick = rng.integers(0, val.size, size=(replications, m))
            if self.name == "finite":
                return val[pick], test[pick]
            noise = rng.standard_normal((2, replications, m))
            return val[pick] + p["h_val"] * noise[0], test[pick] + p["h_test"] * noise[1]
        z_val, noise = rng.standard_normal((2, replications, m))
        rho = p["rho"]
        z_test = rho * z_val + math.sqrt(1.0 - rho * rho) * noise  # rho = 1: test = validation
        if self.name == "normal":
            return p["mean"] + p["sd"] * z_val, p["mean"] + p["sd"] * z_test
        if self.name == "diverged":
            fall = np.where(rng.random((replications, m)) < p["share"], p["gap"], 0.0)
            return p["mean"] + p["sd"] * (z_val - fall), p["mean"] + p["sd"] * (z_test - fall)
        if self.name == "lognormal":
            return np.exp(p["sigma"] * z_val), np.exp(p["sigma"] * z_test)
        top, scale = p["ceiling"], p["scale"]
        return top - scale * np.exp(-p["sigma"] * z_val), top - scale * np.exp(-p["sigma"] * z_test)

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
            value = sign * math.exp(sigma * sigma * (1.0 - rho * rho) / 2.0) * _normal_best_mgf(sign * sigma * rho, n)
            return value if self.name == "lognormal" else p["ceiling"] + p["scale"] * value
        if self.name == "beta_binomial":
            return _beta_binomial_boo_n(p["a"], p["b"], int(p["trials"]), n)
        if self.name == "diverged":
            return _diverged_boo_n(p["share"], p["gap"], p["rho"], p["mean"], p["sd"], n)
        assert self._runs is not None  # a fit or a table keeps its runs
        val, test = self._runs
        if self.name == "finite":
            return float(boo_n(val, test, n=n))
        return _kernel_boo_n(val, test, p["h_val"], p["h_test"], n)


def population(name: PopulationName, **parameters: float) -> Population:
    """A named population; parameters not given take the defaults below.

    Parameters
    ----------
    name : {"normal", "lognormal", "left_skewed", "beta_binomial", "diverged"}
        ``normal``: ``rho=0.5, mean=0.0, sd=1.0``. ``lognormal`` (long right tail): ``sigma=1.0, rho=0.5``;
        ``left_skewed`` (its mirror image below a ceiling): the same and ``ceiling=0.0, scale=1.0``.
        ``beta_binomial`` (scores on a grid, so validation ties): ``a=16.0, b=4.0, trials=50``. ``diverged``
        (normal runs, a share of which diverge): ``share=0.15, gap=20.0`` and the normal's parameters.
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
    if "share" in values and not 0.0 <= values["share"] < 1.0:
        raise ValueError(f"`share` must be in [0, 1), got {values['share']!r}")
    positive = [k for k in ("sd", "sigma", "a", "b", "trials", "scale", "gap") if k in values and not values[k] > 0]
    if positive:
        raise ValueError(f"`{positive[0]}` must be > 0, got {values[positive[0]]!r}")
    return Population(name, values)


_DEFAULTS: dict[str, dict[str, float]] = {
    "normal": {"rho": 0.5, "mean": 0.0, "sd": 1.0},
    "lognormal": {"sigma": 1.0, "rho": 0.5},
    "left_skewed": {"sigma": 1.0, "rho": 0.5, "ceiling": 0.0, "scale": 1.0},
    "beta_binomial": {"a": 16.0, "b": 4.0, "trials": 50.0},
    "diverged": {"share": 0.15, "gap": 20.0, "rho": 0.5, "mean": 0.0, "sd": 1.0},
}


def finite_population(val: Any, test: Any = None, *, maximize: bool = True) -> Population:
    """The runs of a table as a population: sweeps draw its runs with replacement (validation ranked
    higher-better; with ``maximize=False`` validation scores are negated).

    Its Boo_n is exactly the V estimate of the whole table, ties shared as in :func:`boontrack.boo_n`.
    """
    v, t = as_val_test(val, test)
    return Population("finite", {}, ((v if maximize else -v).copy(), t.copy()))


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


def _diverged_boo_n(share: float, gap: float, rho: float, mean: float, sd: float, n: int) -> float:
    good = np.arange(1, n + 1)
    best = np.asarray(expected_max_of(stats.norm(), good.tolist()), dtype=np.float64)
    some_good = stats.binom.pmf(good, n, 1.0 - share) @ (mean + rho * sd * best)
    return float(some_good + share**n * (mean - gap * sd + rho * sd * best[-1]))


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
