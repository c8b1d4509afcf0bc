"""Boo_n and expected-validation-performance estimators.

Runs i = 1..m have validation scores v_i and test scores t_i. Ranked by validation score from worst to best, the
expected test score of the best-validation run among n draws is ``sum_j w_j(n) * t_(j)``, where the weight of
rank j is ``P(j) - P(j - 1)`` and ``P(k)`` is the probability that the best of the n draws lies among the k
worst runs:

| estimator | the n runs are drawn         | P(k)                      | source                                              |
|-----------|------------------------------|---------------------------|-----------------------------------------------------|
| ``"V"``   | with replacement (sequences) | (k/m)^n                   | Bajgar et al. 2018, eq. 7; Dodge et al. 2021, eq. 2 |
| ``"U"``   | as n-subsets, no replacement | C(k, n) / C(m, n)         | Dodge et al. 2021, eq. 3                            |
| ``"W"``   | as multisets of size n       | C(k+n-1, n) / C(m+n-1, n) | Dodge et al. 2021, eq. 5                            |

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

from boontrack._collector import warn
from boontrack._validation import as_budgets, as_choice, as_flag, as_scores, as_val_test
from boontrack.choices import ESTIMATORS
from boontrack.exceptions import AccuracyWarning, ConstantScoresWarning, ExtrapolationWarning

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
        ranked = scores[self.order]
        means = np.add.reduceat(ranked, self.starts) / np.diff(self.ends, prepend=0)
        # A mean of equal values can round an ulp away from them (3 x / 3 != x): it lies within its block's values.
        return np.clip(means, np.minimum.reduceat(ranked, self.starts), np.maximum.reduceat(ranked, self.starts))


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
    """sum_b (P(end_b) - P(start_b)) * block_values_b for each budget (any order, repeats allowed).

    Summed by parts, ``sum_b P(end_b) (value_b - value_{b+1}) - P(start_first) value_first``: P is taken at the
    block ends only, and without a copy where no two runs in the window tie (the ends are then consecutive).
    """
    m = int(blocks.ends[-1])
    unique, inverse = np.unique(budgets, return_inverse=True)
    out = np.empty(unique.size)
    starts, ends = blocks.starts, blocks.ends
    for lo, chunk in _budget_chunks(m, unique):
        p = best_of_n_cdf(m, unique[chunk], estimator, lo=lo)
        first = int(np.searchsorted(ends, lo, side="right"))  # first block ending above lo
        values = block_values[first:]
        columns = ends[first:] - lo
        at_ends = p[:, columns[0] : columns[-1] + 1] if columns[-1] - columns[0] == columns.size - 1 else p[:, columns]
        # value_b - value_{b+1} is exactly 0 between equal values: equal scores give exactly their value.
        steps = values - np.append(values[1:], 0.0)
        out[chunk] = at_ends @ steps - p[:, max(int(starts[first]), lo) - lo] * values[0]
    # A weighted mean (weights >= 0 summing to 1): where rounding of the weights steps an ulp past the values'
    # range (equal test scores gave their value less 1e-16), it is the range's end.
    return np.clip(out[inverse], block_values.min(), block_values.max())


def warn_or_raise_budget(budgets: np.ndarray, m: int, estimator: str) -> None:
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
    warn(
        f"n = {int(too_big.max())} > m = {m} runs: estimator {estimator} extrapolates beyond the data",
        ExtrapolationWarning,
        stacklevel=4,
    )


def _boo_n_iv(val: Any, test: Any, n: Any, estimator: Any, maximize: Any):
    v, t = as_val_test(val, test)
    budgets, scalar = as_budgets(n)
    estimator = as_choice(estimator, "estimator", ESTIMATORS)
    maximize = as_flag(maximize, "maximize")
    warn_or_raise_budget(budgets, v.size, estimator)
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
    0.7
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
def _expected_max_std_normal(n: int) -> tuple[float, str | None]:
    """E[max of n iid N(0, 1)] (Bajgar et al. 2018, eq. 2; 1.162964 for n = 5, 1.538753 for n = 10).

    With the quadrature's note when it missed its accuracy (not seen for any n up to 2^63).
    """
    from boontrack._special import ndtri  # deferred: boo_n alone never needs it

    values, unreached = _expected_max_by_quantiles(ndtri, lambda p: -ndtri(p), np.array([n]))
    return float(values[0]), unreached


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
    correlation enters with the opposite sign.

    The estimate is only as good as the Gaussian model, and it is not the safe choice at small m. On skewed
    scores its bias is as large as its standard deviation and does not shrink as m grows (Monte Carlo,
    ``tests/benchmarks/bench_estimator_properties.py``; scores of s.d. 0.02, m = 10 to 50 runs, n = 5 and 10):
    +3.7e-3 to +15e-3 when a few runs lie far below the rest (left-skewed, as validation scores with failed
    runs), where its RMSE is 1.8 to 39 times that of the U estimator; -1e-3 to -13e-3 when a few lie far
    above (right-skewed). The Anderson–Darling verdict of :func:`boontrack.diagnose` does not guard against
    this at small m: it calls 42 to 78 % of such samples normal at m = 10, and 9 to 53 % at m = 20. Prefer
    :func:`boo_n` unless the scores are known to be close to normal, where the Gaussian estimate gains little
    (its RMSE is 0.9 to 1.0 times the best of V, U and W).

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
        warn(
            "all validation scores are equal: the best-validation run is a random one, Boo_n = mean test",
            ConstantScoresWarning,
            stacklevel=2,
        )
        rho = 0.0
    elif np.ptp(t) == 0:
        rho = 0.0
    elif test is None:
        rho = 1.0
    else:  # deviations scaled first: those below 1e-154 would square to 0 and give 0 / 0
        rho = float(np.corrcoef(scaled_to_unit(v - v.mean()), scaled_to_unit(t - t.mean()))[0, 1])
    sign = 1.0 if maximize else -1.0
    constants = [_expected_max_std_normal(int(k)) for k in budgets]
    for _, unreached in constants:
        if unreached is not None:  # never silent, however unlikely
            warn(f"E[max of n N(0, 1)]: {unreached}", AccuracyWarning, stacklevel=2)
    c = np.array([value for value, _ in constants])
    result = t.mean() + sign * rho * t.std(ddof=1) * c
    return float(result[0]) if scalar else result


def average_ranks(x: np.ndarray) -> np.ndarray:
    """Ranks 1..m, ties given their average rank (``scipy.stats.rankdata``'s default)."""
    order = np.argsort(x, kind="stable")
    ordered = x[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    bounds = np.r_[starts, x.size]
    average = (bounds[:-1] + bounds[1:] + 1) / 2.0  # a tie on 0-based places s..e-1 holds ranks s+1..e
    ranks = np.empty(x.size)
    ranks[order] = np.repeat(average, np.diff(bounds))
    return ranks


def scaled_to_unit(x: np.ndarray) -> np.ndarray:
    """``x`` times the power of two that brings its largest magnitude into [0.5, 1) (exact; zeros as they are), so
    that a scale-free statistic of tiny values (a correlation, a t statistic) does not underflow."""
    largest = np.max(np.abs(x))
    return np.ldexp(x, -np.frexp(largest)[1]) if largest > 0 else x


#: Tanh-sinh nodes reach |t| <= asinh(700 / pi): there w and 1 - w are still >= e^-700, normal floats.
_TANH_SINH_T_MAX = math.asinh(700.0 / math.pi)
#: Finest tanh-sinh level, step 2^-10 (about 12,600 nodes); quantile functions of scipy's distributions
#: converge by level 4 to 7.
_TANH_SINH_MAX_LEVEL = 10
#: dw/dt below which a node's quantile may be unreliable and is skipped when scipy returns inf or nan for it.
_NEGLIGIBLE_WEIGHT = 1e-100
#: Target accuracy of an expected maximum, relative to the integral of |Q(w^(1/n))| (rounding is ~1e-15 of it).
_EXPECTED_MAX_RTOL = 1e-12
#: Discrete supports are summed until the probability left out is below 2^-60 ~ 8.7e-19 ...
_DISCRETE_TAIL = 2.0**-60
#: ... or until this many support points, beyond which the sum is cut short with a warning ...
_DISCRETE_MAX_POINTS = 2**24
#: ... in chunks of up to this many points (2 MiB an array).
_DISCRETE_CHUNK = 2**18


def _tanh_sinh_nodes(level: int) -> np.ndarray:
    """Nodes t of tanh-sinh level ``level`` that earlier levels lack (step 2^-level, |t| <= T_MAX)."""
    h = 2.0**-level
    top = math.floor(_TANH_SINH_T_MAX / h)
    k = np.arange(-top, top + 1)
    return (k if level == 0 else k[k % 2 == 1]) * h


def _tanh_sinh_terms(ppf, isf, t: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Q(w^(1/n)) dw/dt at the nodes ``t`` (columns) for the budgets ``n`` (rows), with w = 1 / (1 + e^-s).

    s = pi sinh(t). Both ends are exact: log w = -log1p(e^-s) and, at the top, the tail probability
    1 - u = -expm1(log(w) / n) goes to ``isf``, so u = w^(1/n) is never rounded to 1 before the quantile is
    taken. A node whose 1 - u underflows to 0 (u = 1 in floating point, weight below 1e-300) is left out.
    """
    s = math.pi * np.sinh(t)
    dw_dt = math.pi * np.cosh(t) / (4.0 * np.cosh(s / 2.0) ** 2)
    log_u = -np.log1p(np.exp(-s))[None, :] / n[:, None]
    tail = -np.expm1(log_u)
    upper = log_u >= -math.log(2.0)
    kept = tail > 0
    q = np.zeros_like(log_u)
    q[upper & kept] = isf(tail[upper & kept])
    q[~upper] = ppf(np.exp(log_u[~upper]))
    # Where dw/dt < 1e-100 the tail probability is below ~1e-100, and some of scipy's quantile functions give
    # inf or nan there (t's ppf(1e-300) is +inf): such a node adds nothing. Elsewhere a non-finite quantile
    # propagates, and the quadrature reports that it did not converge.
    q[~np.isfinite(q) & (dw_dt < _NEGLIGIBLE_WEIGHT)[None, :]] = 0.0
    return q * dw_dt


def _expected_max_by_quantiles(ppf, isf, budgets: np.ndarray) -> tuple[np.ndarray, str | None]:
    """E[max of n draws] = integral_0^1 Q(w^(1/n)) dw for each budget, by tanh-sinh quadrature.

    Eq. 2 with x = Q(u) and then w = u^n, the CDF of the maximum: the maximum is uniform in w, so the integrand
    has no peak however large n is, and the mass near the top of the support is resolved by the quantile
    function itself (an infinite density there is a flat Q). What remains are the ends w -> 0 and w -> 1, where
    Q may be infinite or have infinite slope; the double-exponential substitution w = 1 / (1 + exp(-pi sinh t))
    converges exponentially in the number of nodes for such end-point singularities.

    Each level halves the step and adds the new nodes; a budget is done when two successive levels agree to
    ``_EXPECTED_MAX_RTOL`` of the integral of |Q| (the error of the finer level is then far smaller, as each
    level roughly doubles the correct digits).

    Returns
    -------
    values
        One per budget.
    unreached
        None, or a sentence saying which budgets missed the target accuracy and by how much.
    """
    n = budgets.astype(np.float64)
    sums = np.zeros(n.size)  # sum over the nodes so far of Q dw/dt, per budget
    sizes = np.zeros(n.size)  # the same with |Q|: the scale the accuracy is relative to
    values = np.full(n.size, np.nan)
    changes = np.full(n.size, np.inf)
    open_ = np.arange(n.size)
    with np.errstate(invalid="ignore", over="ignore"):
        for level in range(_TANH_SINH_MAX_LEVEL + 1):
            h = 2.0**-level
            terms = _tanh_sinh_terms(ppf, isf, _tanh_sinh_nodes(level), n[open_])
            sums[open_] += terms.sum(axis=1)
            sizes[open_] += np.abs(terms).sum(axis=1)
            estimate = h * sums[open_]
            if level >= 3:
                changes[open_] = np.abs(estimate - values[open_])
            values[open_] = estimate
            done = np.isfinite(sizes[open_]) & (changes[open_] <= _EXPECTED_MAX_RTOL * h * sizes[open_])
            open_ = open_[~done]
            if not open_.size:
                return values, None
    relative = changes[open_] / (2.0**-_TANH_SINH_MAX_LEVEL * sizes[open_])
    worst = open_[np.nanargmax(relative)] if np.isfinite(relative).any() else open_[0]
    return values, (
        f"quadrature did not reach a relative accuracy of {_EXPECTED_MAX_RTOL:g} for n = {int(budgets[worst])}"
        f"{'' if open_.size == 1 else f' and {open_.size - 1} other budget(s)'} (last change "
        f"{changes[worst]:.3g}, value {values[worst]:.12g}); the maximum may have no finite mean (a heavy upper "
        "tail) or a density that jumps inside the support (a kink in the quantile function)"
    )


def _sample_expected_max(dist: Any, budgets: np.ndarray) -> tuple[np.ndarray, str | None]:
    """Exact eq. 4 over the finite support of ``rv_discrete(values=...)``, frozen (with its ``loc``) or not.

    Summed by parts, ``x_1 + sum_i (x_{i+1} - x_i) (1 - F(x_i)^n)``: every term is non-negative.
    """
    sample = dist if hasattr(dist, "xk") else dist.dist
    loc = 0.0 if sample is dist else float(dist.kwds.get("loc", dist.args[0] if dist.args else 0.0))
    x = np.asarray(sample.xk, dtype=np.float64) + loc
    pk = np.asarray(sample.pk, dtype=np.float64)
    # scipy accepts probabilities that sum to 1 only within a tolerance: normalise, so that F ends at 1.
    sf = np.cumsum(pk[:0:-1])[::-1] / pk.sum()  # P(X > x_i) for i < K, summed from the top for precision
    cdf = np.cumsum(pk[:-1]) / pk.sum()
    exceed = -np.expm1(budgets.astype(np.float64)[:, None] * _log_cdf(cdf, sf)[None, :])  # P(max > x_i)
    return x[0] + exceed @ np.diff(x), None


def _last_lattice_point(holds, start: float) -> float:
    """The largest lattice point x with ``holds(x)``, for ``holds`` true far below and false far above.

    Steps out from ``start`` (a lattice point) doubling, then bisects: about 2 log2(distance) scalar calls.
    The search goes no further than ``_DISCRETE_MAX_POINTS`` from ``start``.
    """
    going_up = holds(start)
    sign = 1.0 if going_up else -1.0
    reached, width = 0.0, 1.0  # holds(start + sign * reached) == going_up
    while holds(start + sign * width) == going_up and width <= _DISCRETE_MAX_POINTS:
        reached, width = width, 2.0 * width
    ends = (start + sign * reached, start + sign * width)  # holds is going_up at the first, not at the second
    true, false = ends if going_up else ends[::-1]
    while false - true > 1.0:  # holds(true) and not holds(false)
        middle = true + math.floor((false - true) / 2.0)
        true, false = (middle, false) if holds(middle) else (true, middle)
    return true


def _log_cdf(cdf: np.ndarray, sf: np.ndarray) -> np.ndarray:
    """log F from whichever of F and 1 - F is the smaller, so that F^n keeps its precision at large n."""
    with np.errstate(divide="ignore"):
        return np.where(sf < 0.5, np.log1p(-np.clip(sf, 0.0, 0.5)), np.log(cdf))


class _LatticeCdf:
    """F and 1 - F on consecutive chunks of a scipy discrete distribution's integer lattice, from ``lo`` up.

    Where scipy has the distribution's own ``cdf`` and ``sf`` (binom, poisson, ...: incomplete beta and gamma
    functions, accurate in both tails; their pmf is not, ~1e-9 relative for poisson(1e6)), those are used, and
    ``lo`` is where F(x - 1)^n falls below 2^-60 for the smallest budget. Otherwise (betabinom, zipf, ...)
    scipy's own cdf is its pmf summed from the bottom of the support, one sum per point; here the pmf is summed
    once, chunk after chunk, which gives the same numbers in linear rather than quadratic time.
    """

    def __init__(self, dist: Any, smallest_budget: float):
        from scipy import stats

        self.dist = dist
        self.closed_form = type(dist.dist)._cdf is not stats.rv_discrete._cdf
        self.low, self.high = (float(end) for end in dist.support())
        self.below = 0.0  # running F at the end of the previous chunk (summed pmf)
        if not self.closed_form:
            self.lo = self.low
            return

        def negligible_below(x: float) -> bool:  # F(x - 1)^n < 2^-60
            point = np.array([x - 1.0])
            return smallest_budget * float(_log_cdf(dist.cdf(point), dist.sf(point))[0]) < math.log(_DISCRETE_TAIL)

        self.lo = max(self.low, _last_lattice_point(negligible_below, float(dist.ppf(0.5))))

    def chunk(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """F(x) and 1 - F(x) at the next consecutive lattice points ``x``."""
        if self.closed_form:
            return self.dist.cdf(x), self.dist.sf(x)
        cdf = self.below + np.cumsum(self.dist.pmf(x))
        self.below = float(cdf[-1])
        return cdf, 1.0 - cdf

    def done(self, x: float, sf: float, largest_budget: float) -> bool:
        """Whether the lattice points above x add less than 2^-60 to every budget's sum (or nothing at all)."""
        if x >= self.high:
            return True
        # A summed pmf cannot resolve 1 - F below its rounding: stop there, as scipy's own sf would.
        return bool(largest_budget * sf < _DISCRETE_TAIL or (not self.closed_form and sf < 4.0 * np.finfo(float).eps))


def _lattice_expected_max(dist: Any, budgets: np.ndarray) -> tuple[np.ndarray, str | None]:
    """Eq. 4 over the integer lattice of a frozen scipy discrete distribution, summed by parts.

    ``E[max] = lo + sum_{x >= lo} P(max > x)``, P(max > x) = 1 - F(x)^n, from ``lo`` (:class:`_LatticeCdf`;
    the neglected F(x)^n below it are under 2^-60 and fall off further) up to where n P(X > x) falls below
    2^-60, in chunks that grow to ``_DISCRETE_CHUNK`` points: vectorised, in bounded memory.
    """
    n = budgets.astype(np.float64)[:, None]
    lattice = _LatticeCdf(dist, float(n.min()))
    total = np.zeros(budgets.size)
    start, size = lattice.lo, 1024
    while start - lattice.lo < _DISCRETE_MAX_POINTS:
        x = start + np.arange(min(size, lattice.high - start + 1.0, lattice.lo + _DISCRETE_MAX_POINTS - start))
        cdf, sf = lattice.chunk(x)
        total += -np.expm1(n * _log_cdf(cdf, sf)[None, :]).sum(axis=1)
        if lattice.done(x[-1], float(sf[-1]), float(n.max())):
            return lattice.lo + total, None
        start, size = start + x.size, min(2 * size, _DISCRETE_CHUNK)
    return lattice.lo + total, (
        f"the sum over the support stopped after {start - lattice.lo:,.0f} points, at x = {start - 1:g}, where "
        f"the maximum still exceeds x with probability up to {min(float(n.max() * dist.sf(start - 1)), 1.0):.3g}"
    )


def _continuous_expected_max(dist: Any, budgets: np.ndarray) -> tuple[np.ndarray, str | None]:
    """Eq. 2 for a frozen continuous scipy distribution, through its quantile functions."""
    return _expected_max_by_quantiles(dist.ppf, dist.isf, budgets)


def _describe(dist: Any) -> str:
    """``norm(0.8, scale=0.01)``: the distribution as it was built, for messages."""
    base = getattr(dist, "dist", dist)
    if hasattr(base, "xk"):
        return f"rv_discrete(values=<{base.xk.size} points>)"
    arguments = [repr(a) for a in getattr(dist, "args", ())]
    arguments += [f"{k}={v!r}" for k, v in getattr(dist, "kwds", {}).items()]
    return f"{base.name or type(base).__name__}({', '.join(arguments)})"


def _expected_max_of_iv(dist: Any, n: Any):
    from scipy import stats  # deferred: boo_n never needs scipy.stats

    base = getattr(dist, "dist", dist)  # a frozen distribution's family; dist itself otherwise
    frozen = base is not dist
    if isinstance(base, stats.rv_discrete) and hasattr(base, "xk"):  # rv_discrete(values=...), frozen or not
        method = _sample_expected_max
    elif frozen and isinstance(base, stats.rv_discrete):
        method = _lattice_expected_max
    elif frozen and isinstance(base, stats.rv_continuous):
        method = _continuous_expected_max
    else:
        raise ValueError(
            "`dist` must be a frozen scipy.stats distribution such as scipy.stats.norm(0, 1) or "
            f"scipy.stats.binom(100, 0.7), or a scipy.stats.rv_discrete(values=...), got {dist!r}"
        )
    if frozen:
        _check_moments(dist)
    budgets, scalar = as_budgets(n)
    return method, budgets, scalar


def _check_moments(dist: Any) -> None:
    """ValueError naming ``dist`` when its parameters are invalid (``norm(0, 0)``: scipy answers NaN
    everywhere) or it has no finite mean (Cauchy, Pareto with b <= 1): a quadrature would return a number
    for an expectation that does not exist. Refused even where the maximum of several draws has a mean (a
    heavy lower tail only): scipy's mean does not say which tail is heavy."""
    base = dist.dist
    shapes, _, scale = base._parse_args(*dist.args, **dist.kwds)
    if not (np.all(base._argcheck(*shapes)) and np.all(np.asarray(scale) > 0)):
        raise ValueError(f"`dist` = {_describe(dist)} has invalid parameters (scipy gives NaN for it)")
    with warnings.catch_warnings():  # a mean found by numerical integration may warn on its own
        warnings.simplefilter("ignore")
        mean = float(dist.mean())
    if not np.isfinite(mean):
        raise ValueError(
            f"`dist` = {_describe(dist)} has no finite mean (scipy gives {mean}): the expected maximum of n "
            "draws is infinite or undefined"
        )


def expected_max_of(dist: Any, n: Any) -> float | np.ndarray:
    r"""Boo_n of a distribution: the expected maximum of n iid draws.

    Continuous case, Bajgar et al. (2018), eq. 2, written over the quantile function Q and then over
    :math:`w = u^n`, the CDF of the maximum:

    .. math:: \overline{\mathrm{Boo}}_n = \int x\, n f(x) F^{n-1}(x)\,dx
              = \int_0^1 Q(u)\, n u^{n-1}\,du = \int_0^1 Q\left(w^{1/n}\right) dw ,

    by tanh-sinh quadrature, with the top of the support reached through ``dist.isf`` of the tail
    probability :math:`1 - w^{1/n}` computed without cancellation. The maximum is uniform in w, so there is no
    peak to miss at any n, and an infinite density at either end of the support is no difficulty. The
    quadrature refines until two levels agree to 1e-12 of E|max|; the finer level it returns is then accurate
    to rounding (within a few 1e-16 relative of mpmath for the normal, beta, exponential and Student
    distributions, n from 1 to 10^6), for any n up to 2^63 - 1.

    Discrete case, eq. 4, summed by parts as :math:`x_1 + \sum_i (x_{i+1} - x_i)(1 - F(x_i)^n)`: exactly over
    the finite support of ``scipy.stats.rv_discrete(values=...)``, and over the integer lattice of a frozen
    scipy discrete distribution (``binom``, ``poisson``, ...) from where F exceeds 2^-60 to where
    n P(X > x) falls below it, in one vectorised sum.

    Parameters
    ----------
    dist : scipy.stats frozen distribution or scipy.stats.rv_discrete(values=...)
        E.g. ``scipy.stats.norm(0.8, 0.01)``, ``scipy.stats.beta(0.5, 0.5)``, ``scipy.stats.binom(100, 0.7)`` or
        ``scipy.stats.rv_discrete(values=([0.70, 0.72, 0.75], [0.2, 0.5, 0.3]))``. A continuous distribution
        needs its ``ppf`` and ``isf``; scipy's own have them in closed form or by special functions.
    n : int or sequence of int

    Returns
    -------
    float or numpy.ndarray
        Always within the support of ``dist``.

    Raises
    ------
    ValueError
        ``dist`` is not one of the above, has invalid parameters (``norm(0, 0)``) or no finite mean (Cauchy,
        Pareto with b <= 1), or ``n`` is not an integer >= 1.

    Warns
    -----
    AccuracyWarning
        The quadrature did not converge (the density jumps inside the support, which makes the quantile function
        kink: a histogram, a mixture with gaps), or a discrete support too long to sum was cut short; the value
        returned is the best estimate.

    Examples
    --------
    >>> import scipy.stats
    >>> from boontrack import expected_max_of
    >>> round(expected_max_of(scipy.stats.norm(0, 1), 5), 6)
    1.162964
    >>> expected_max_of(scipy.stats.rv_discrete(values=([0, 1], [0.5, 0.5])), 2)
    0.75
    """
    method, budgets, scalar = _expected_max_of_iv(dist, n)
    unique, inverse = np.unique(budgets, return_inverse=True)
    values, unreached = method(dist, unique)
    if unreached is not None:
        warn(f"expected_max_of({_describe(dist)}): {unreached}", AccuracyWarning, stacklevel=2)
    low, high = dist.support()
    result = np.clip(values, float(low), float(high))[inverse]
    return float(result[0]) if scalar else result
