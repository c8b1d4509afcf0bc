"""Boo_n and expected-validation-performance estimators.

Runs i = 1..m have validation scores v_i and test scores t_i. Ranked by validation score from worst to best, the
expected test score of the best-validation run among n draws is ``sum_j w_j(n) * t_(j)``, where the weight of
rank j is ``P(j) - P(j - 1)`` and ``P(k)`` is the probability that the best of the n draws lies among the k
worst runs:

=========  ===================================  ======================================================
estimator  draws                                P(k)
=========  ===================================  ======================================================
``"V"``    n with replacement (strings)         (k/m)^n                    -- Bajgar et al. 2018, eq. 7;
                                                                              Dodge et al. 2021, eq. 2
``"U"``    n-subsets, no replacement            C(k, n) / C(m, n)          -- Dodge et al. 2021, eq. 3
``"W"``    multisets of size n                  C(k+n-1, n) / C(m+n-1, n)  -- Dodge et al. 2021, eq. 5
=========  ===================================  ======================================================

Runs tied in validation score share equally the weight of their block of ranks (Bajgar et al. 2018, §3.2),
which equals breaking the ties uniformly at random.

Numerics: ``P`` is never formed from powers of integers or from binomial coefficients. Each estimator has a
simple ratio ``rho_j = P(j - 1) / P(j)`` (``((j-1)/j)^n``, ``(j-n)/j``, ``(j-1)/(j+n-1)``), so
``log P(k) = sum_{j>k} log rho_j`` is a reverse cumulative sum of ``log1p`` terms: no overflow at any m or n,
and an absolute error in ``P`` near machine precision, which bounds the error of the estimate by
``eps * (max t - min t)`` (summation by parts). For large n, ``P`` underflows below ``exp(-40)`` outside the
top ``~40 (m + n) / n`` ranks, so a whole curve n = 1..N costs ``O(m log N)`` rather than ``O(m N)``.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

import numpy as np
from scipy import integrate, special, stats

from boontrack._validation import as_budgets, as_choice, as_flag, as_scores, as_val_test
from boontrack.exceptions import ConstantScoresWarning, ExtrapolationWarning
from boontrack.spec import ESTIMATORS

__all__ = ["Estimator", "boo_n", "boo_n_gaussian", "expected_max", "expected_max_of"]

Estimator = Literal["V", "U", "W"]

#: log P below which a rank's weight is negligible: exp(-40) ~ 4e-18 of the score range.
_LOG_NEGLIGIBLE = -40.0
#: Elements per working array when evaluating many budgets at once (bounds memory to ~16 MB an array).
_CHUNK_ELEMENTS = 2_000_000


@dataclass(frozen=True)
class RankBlocks:
    """Runs sorted worst to best by validation score, grouped into blocks of tied validation scores.

    Attributes
    ----------
    order
        Indices that sort the runs worst to best (stable, so ties keep input order).
    ends
        Cumulative run count at the end of each block (``ends[-1] == m``); block b holds sorted runs
        ``ends[b-1]:ends[b]``.
    """

    order: np.ndarray
    ends: np.ndarray

    @property
    def starts(self) -> np.ndarray:
        return np.concatenate(([0], self.ends[:-1]))

    def block_means(self, scores: np.ndarray) -> np.ndarray:
        """Mean of ``scores`` (unsorted, one per run) within each block."""
        sums = np.add.reduceat(scores[self.order], self.starts)
        return sums / np.diff(self.ends, prepend=0)


def rank_blocks(val: np.ndarray, *, maximize: bool) -> RankBlocks:
    """Sort runs worst to best by ``val`` and find the blocks of tied values."""
    key = val if maximize else -val
    order = np.argsort(key, kind="stable")
    sorted_key = key[order]
    ends = np.append(np.flatnonzero(sorted_key[1:] != sorted_key[:-1]) + 1, key.size)
    return RankBlocks(order=order, ends=ends.astype(np.int64))


def best_of_n_cdf(m: int, n: np.ndarray, estimator: Estimator, *, lo: int = 0) -> np.ndarray:
    """``P(k)`` for k = lo..m: probability that the best of n draws lies among the k worst of m runs.

    Parameters
    ----------
    m
        Number of runs.
    n
        Budgets, a 1-D int array; one row of the result per budget.
    estimator
        ``"V"``, ``"U"`` or ``"W"`` (see the module docstring).
    lo
        First k to return; ``P(k)`` for k < lo is not computed (callers skip ranks of negligible weight).

    Returns
    -------
    numpy.ndarray
        Shape ``(len(n), m - lo + 1)``; column ``k - lo`` holds ``P(k)``. Non-decreasing along each row,
        ``P(m) = 1``.
    """
    nn = np.asarray(n, dtype=np.float64)[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        if estimator == "V":
            # The product of the ratios has a closed form: log P(k) = n log(k/m), with k/m = 1 - (m-k)/m.
            k = np.arange(lo, m + 1, dtype=np.float64)[None, :]
            return np.exp(nn * np.log1p(-(m - k) / m))
        j = np.arange(lo + 1, m + 1, dtype=np.float64)[None, :]
        if estimator == "U":
            log_rho = np.where(j > nn, np.log1p(-nn / j), -np.inf)
        else:
            log_rho = np.log1p(-nn / (j + nn - 1.0))
    # log P(k) = sum_{j > k} log rho_j: a reverse cumulative sum, with log P(m) = 0.
    log_p = np.zeros((nn.shape[0], m - lo + 1))
    log_p[:, :-1] = np.cumsum(log_rho[:, ::-1], axis=1)[:, ::-1]
    return np.exp(log_p)


def _negligible_below(m: int, n: int) -> int:
    """A rank k with P(k) < exp(-40) for every estimator: only ranks above it carry weight.

    For all three estimators ``log rho_j <= -n / (m + n - 1)``, so the top ``K = 40 (m + n) / n`` ranks hold
    all but ``exp(-40)`` of the weight.
    """
    top = math.ceil(-_LOG_NEGLIGIBLE * (m + n) / n)
    return max(0, m - top)


def _budget_chunks(m: int, budgets: np.ndarray):
    """Split sorted budgets into chunks sharing one window of ranks, each within the memory budget."""
    i = 0
    while i < budgets.size:
        lo = _negligible_below(m, int(budgets[i]))
        width = m - lo + 1
        # Budgets up to 2x the first keep the window within 2x of what each needs.
        stop = int(np.searchsorted(budgets, 2.0 * budgets[i], side="right"))  # float: 2n overflows int64
        stop = min(stop, i + max(1, _CHUNK_ELEMENTS // width))
        yield lo, slice(i, stop)
        i = stop


def _expected_best(blocks: RankBlocks, block_values: np.ndarray, budgets: np.ndarray, estimator: Estimator):
    """sum_b (P(end_b) - P(start_b)) * block_values_b for each budget (any order, repeats allowed)."""
    m = int(blocks.ends[-1])
    unique, inverse = np.unique(budgets, return_inverse=True)
    out = np.empty(unique.size)
    starts, ends = blocks.starts, blocks.ends
    for lo, chunk in _budget_chunks(m, unique):
        p = best_of_n_cdf(m, unique[chunk], estimator, lo=lo)
        first = int(np.searchsorted(ends, lo, side="right"))  # first block ending above lo
        s = np.maximum(starts[first:], lo) - lo
        weights = p[:, ends[first:] - lo] - p[:, s]
        out[chunk] = weights @ block_values[first:]
    return out[inverse]


def _warn_or_raise_budget(budgets: np.ndarray, m: int, estimator: str) -> None:
    """U cannot draw more runs than there are; V and W extrapolate, with a warning.

    Called from the validation helper of a public function, so the warning points at that function's caller.
    """
    too_big = budgets[budgets > m]
    if not too_big.size:
        return
    if estimator == "U":
        raise ValueError(
            f"`n` = {int(too_big.max())} exceeds the number of runs m = {m}: the U estimator draws without "
            "replacement and is undefined for n > m (use V or W to extrapolate)"
        )
    warnings.warn(
        f"n = {int(too_big.max())} > m = {m} runs: estimator {estimator} extrapolates beyond the data",
        ExtrapolationWarning,
        stacklevel=4,
    )


def _boo_n_iv(val: Any, test: Any, n: Any, estimator: Any, maximize: Any):
    v, t = as_val_test(val, test)
    budgets, scalar = as_budgets(n)
    estimator = as_choice(estimator, "estimator", ESTIMATORS)
    maximize = as_flag(maximize, "maximize")
    _warn_or_raise_budget(budgets, v.size, estimator)
    return v, t, budgets, scalar, estimator, maximize


def boo_n(
    val: Any,
    test: Any = None,
    *,
    n: Any = 5,
    estimator: Estimator = "V",
    maximize: bool = True,
) -> float | np.ndarray:
    r"""Expected test score of the best-validation run among n draws (Boo_n).

    The non-parametric estimator of Bajgar et al. (2018), eq. 7, for ``estimator="V"``; the unbiased
    estimator of Tang et al. (2020) (Dodge et al. 2021, eq. 3) for ``"U"``; the multiset estimator of Dodge et
    al. (2021), eq. 5, for ``"W"``:

    .. math:: \widehat{\mathrm{Boo}}_n = \sum_{j=1}^m \left(P(j) - P(j-1)\right) t_{(j)}

    with runs ranked worst to best by validation score and ``P`` as in the module docstring. Runs tied in
    validation score share the weight of their block of ranks equally (§3.2).

    Parameters
    ----------
    val : array_like
        Validation scores, one per run; the best run is chosen by these.
    test : array_like, optional
        Test scores of the same runs, reported for the chosen run. ``None`` means ``test = val``: Boo_n is
        then the expected best validation score (the expected-validation-performance curve).
    n : int or sequence of int
        Budget(s): the number of runs drawn. ``n = 1`` gives the mean of ``test``.
    estimator : {"V", "U", "W"}
        How the n runs are drawn from the m observed: with replacement, without, or as multisets.
    maximize : bool
        Whether a higher validation score is better. The test score is reported as it is either way.

    Returns
    -------
    float or numpy.ndarray
        A float for scalar ``n``; an array aligned with ``n`` for a sequence.

    Raises
    ------
    ValueError
        Non-finite or empty scores, ``val``/``test`` of different lengths, ``n`` not an integer >= 1, an
        unknown ``estimator``, or ``estimator="U"`` with ``n > m``.

    Warns
    -----
    ExtrapolationWarning
        ``n > m`` with V or W.

    References
    ----------
    Bajgar, Kadlec & Kleindienst (2018). A boo(n) for evaluating architecture performance. ICML.
    Dodge, Gururangan, Card, Schwartz & Smith (2021). Expected validation performance and estimation of a
    random variable's maximum. Findings of EMNLP.

    Examples
    --------
    >>> from boontrack import boo_n
    >>> boo_n([0.70, 0.72, 0.71, 0.69], [0.68, 0.71, 0.70, 0.69], n=2)
    0.6975
    """
    v, t, budgets, scalar, estimator, maximize = _boo_n_iv(val, test, n, estimator, maximize)
    blocks = rank_blocks(v, maximize=maximize)
    result = _expected_best(blocks, blocks.block_means(t), budgets, estimator)
    return float(result[0]) if scalar else result


def expected_max(
    scores: Any,
    n: Any = None,
    *,
    estimator: Estimator = "V",
    maximize: bool = True,
) -> np.ndarray:
    """Expected-validation-performance curve: the expected best of n scores, for each n.

    Dodge et al. (2019); estimators V, U, W as in Dodge et al. (2021), eqs. 2, 3 and 5. For
    ``maximize=False`` it is the expected minimum.

    Parameters
    ----------
    scores : array_like
        Validation scores, one per run (hyperparameter assignment).
    n : int or sequence of int, optional
        Budgets; ``None`` means every n from 1 to ``len(scores)``.
    estimator : {"V", "U", "W"}
    maximize : bool

    Returns
    -------
    numpy.ndarray
        The curve, aligned with ``n`` (an array of one value for a scalar ``n``).
    """
    s = as_scores(scores, "scores")
    budgets = np.arange(1, s.size + 1) if n is None else np.atleast_1d(n)
    return np.atleast_1d(boo_n(s, None, n=budgets, estimator=estimator, maximize=maximize))


@lru_cache(maxsize=4096)
def _expected_max_std_normal(n: int) -> float:
    """E[max of n iid N(0, 1)] by quadrature of n z phi(z) Phi(z)^(n-1) (Bajgar et al. 2018, eq. 8-9).

    The integrand is evaluated in log space (``log_ndtr``) so that large n neither overflows nor loses the
    narrow peak; the interval covers every z where the density of the maximum exceeds exp(-60).
    """
    if n == 1:
        return 0.0

    def density(z):
        return np.exp(math.log(n) + stats.norm.logpdf(z) + (n - 1) * special.log_ndtr(z))

    # The maximum's mode is near Phi^-1(1 - 1/n) and its spread is below 1: +-12 holds all the mass.
    mode = float(-special.ndtri(1.0 / n))
    lo, hi = mode - 12.0, mode + 12.0
    value, _ = integrate.quad(lambda z: z * density(z), lo, hi, points=[mode], limit=200, epsabs=1e-13)
    return float(value)


def _boo_n_gaussian_iv(val: Any, test: Any, n: Any, maximize: Any):
    v, t = as_val_test(val, test)
    if v.size < 2:
        raise ValueError(f"`val` needs at least 2 runs to estimate a standard deviation, got {v.size}")
    budgets, scalar = as_budgets(n)
    return v, t, budgets, scalar, as_flag(maximize, "maximize")


def boo_n_gaussian(val: Any, test: Any = None, *, n: Any = 5, maximize: bool = True) -> float | np.ndarray:
    r"""Parametric Boo_n under a bivariate Gaussian model of (validation, test) scores.

    Bajgar et al. (2018), eq. 6 (derived in Appendix A.2, eq. 11):

    .. math:: \mathrm{Boo}_n = \hat\mu_{test} + \hat\rho\,\hat\sigma_{test}\,\overline{\mathrm{Boo}}_n(\mathcal N(0,1))

    with the sample mean, the sample standard deviation (``ddof=1``) and Pearson's correlation. With
    ``test=None``, ``rho = 1``. For ``maximize=False`` the best run has the lowest validation score, so the
    correlation enters with the opposite sign. The estimate is only as good as the Gaussian model: check it
    with :func:`boontrack.diagnose` (Anderson–Darling).

    Parameters
    ----------
    val, test : array_like
        As in :func:`boo_n`; at least 2 runs.
    n : int or sequence of int
    maximize : bool

    Returns
    -------
    float or numpy.ndarray

    Warns
    -----
    ConstantScoresWarning
        Constant validation scores: the choice among runs is random, so the estimate is the mean test score.
    """
    v, t, budgets, scalar, maximize = _boo_n_gaussian_iv(val, test, n, maximize)
    if np.ptp(v) == 0:
        warnings.warn(
            "all validation scores are equal: the best-validation run is a random one, Boo_n = mean test",
            ConstantScoresWarning,
            stacklevel=2,
        )
        rho = 0.0
    elif np.ptp(t) == 0:
        rho = 0.0
    else:
        rho = 1.0 if test is None else float(np.corrcoef(v, t)[0, 1])
    sign = 1.0 if maximize else -1.0
    c = np.array([_expected_max_std_normal(int(k)) for k in budgets])
    result = t.mean() + sign * rho * t.std(ddof=1) * c
    return float(result[0]) if scalar else result


def _expected_max_of_iv(dist: Any, n: Any):
    if not isinstance(getattr(dist, "dist", None), (stats.rv_continuous, stats.rv_discrete)):
        raise ValueError(
            f"`dist` must be a frozen scipy.stats distribution such as scipy.stats.norm(0, 1), got {dist!r}"
        )
    budgets, scalar = as_budgets(n)
    return budgets, scalar, isinstance(dist.dist, stats.rv_discrete)


def expected_max_of(dist: Any, n: Any) -> float | np.ndarray:
    r"""Boo_n of a distribution: the expected maximum of n iid draws.

    Continuous case, Bajgar et al. (2018), eq. 2:

    .. math:: \overline{\mathrm{Boo}}_n = \int x\, n f(x) F^{n-1}(x)\,dx ,

    by quadrature with the density of the maximum evaluated in log space, split at the maximum's median so the
    peak is never missed however large n is.

    Discrete case, eq. 4, summed as ``x_lo + sum_{x >= x_lo} (1 - F(x)^n)`` over the (integer) support,
    truncated where the remaining tail is below 1e-16.

    Parameters
    ----------
    dist : scipy.stats frozen distribution
        E.g. ``scipy.stats.norm(0.8, 0.01)`` or ``scipy.stats.binom(100, 0.7)``.
    n : int or sequence of int

    Returns
    -------
    float or numpy.ndarray
    """
    budgets, scalar, discrete = _expected_max_of_iv(dist, n)
    one = _discrete_expected_max if discrete else _continuous_expected_max
    result = np.array([one(dist, int(k)) for k in budgets])
    return float(result[0]) if scalar else result


def _continuous_expected_max(dist: Any, n: int) -> float:
    def x_times_density_of_max(x: float) -> float:
        log_density = math.log(n) + dist.logpdf(x) + (n - 1) * dist.logcdf(x)
        return x * math.exp(log_density) if np.isfinite(log_density) else 0.0

    # Median of the maximum: F(x) = 2^(-1/n), taken from the upper tail to keep precision for large n.
    median = float(dist.isf(-math.expm1(-math.log(2.0) / n)))
    low, high = dist.support()
    total = 0.0
    for a, b in ((low, median), (median, high)):
        part, _ = integrate.quad(x_times_density_of_max, a, b, limit=200, epsabs=1e-13, epsrel=1e-12)
        total += part
    return float(total)


def _discrete_expected_max(dist: Any, n: int) -> float:
    tail = 1e-16 / n
    lo = float(dist.ppf(tail))
    # scipy's isf gives nan or inf for tails this small on unbounded supports (poisson, geom): start lower and
    # double the distance from the bulk until n * P(X > hi) is below the tail.
    with np.errstate(all="ignore"):
        hi = float(dist.isf(tail))
    if not np.isfinite(hi):
        hi = float(dist.isf(1e-12))
        while n * dist.sf(hi) > 1e-16:
            hi = lo + 2.0 * (hi - lo)
    x = np.arange(lo, hi + 1.0)
    # P(max > x) = 1 - F(x)^n, from log F for precision in the upper tail.
    exceed = -np.expm1(n * dist.logcdf(x))
    return float(lo + exceed.sum())
