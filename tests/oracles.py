"""Exact oracles for the expected test score of the best-validation run among n draws.

Two independent constructions, both in exact rational arithmetic (:class:`fractions.Fraction`):

* :func:`enumerated_run_weights` enumerates every equally likely draw of n runs out of m -- every string with
  replacement (``itertools.product``, estimator V), every n-subset (``itertools.combinations``, U), every
  multiset of size n (``itertools.combinations_with_replacement``, W) -- and gives each drawn run its probability
  of being the chosen one. Ties in validation score among the drawn runs are broken uniformly at random among
  the distinct tied runs (a run drawn twice is still one candidate), which is what a uniformly random strict
  order of the tied runs, fixed before drawing, implies. Feasible for m, n up to about 7 and 5.
* :func:`closed_form_rank_weights` and :func:`tie_shared_run_weights` write the closed-form weights of the
  papers (Bajgar et al. 2018, eq. 7; Dodge et al. 2021, eqs. 2, 3, 5) with exact integers, and give runs tied in
  validation score an equal share of the total weight of their block of ranks (Bajgar et al. 2018, §3.2).
  Feasible for m in the thousands.

Both return one weight per run (in input order) summing to 1; :func:`expected_test_of_best` applies them.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from fractions import Fraction

__all__ = [
    "DRAWS",
    "closed_form_rank_weights",
    "enumerated_run_weights",
    "exact_boo_n",
    "expected_test_of_best",
    "ranked",
    "ranked_pairs",
    "tie_shared_run_weights",
]

#: How each estimator draws n of the m runs (every draw equally likely).
DRAWS = {
    "V": lambda runs, n: itertools.product(runs, repeat=n),
    "U": itertools.combinations,
    "W": itertools.combinations_with_replacement,
}


def enumerated_run_weights(val: Sequence[float], n: int, estimator: str, *, maximize: bool = True) -> list[Fraction]:
    """Probability that each run is the best-validation run among n draws, by enumerating every draw."""
    m = len(val)
    weights = [Fraction(0)] * m
    draws = 0
    for draw in DRAWS[estimator](range(m), n):
        draws += 1
        candidates = set(draw)
        best = (max if maximize else min)(val[i] for i in candidates)
        tied = [i for i in candidates if val[i] == best]
        for i in tied:
            weights[i] += Fraction(1, len(tied))
    if draws == 0:
        raise ValueError(f"no draws of n = {n} from m = {m} runs with estimator {estimator}")
    return [w / draws for w in weights]


def closed_form_rank_weights(m: int, n: int, estimator: str) -> list[Fraction]:
    """Weight of ranks j = 1..m (worst to best) without ties, from the papers' closed forms."""
    if estimator == "V":  # Bajgar et al. 2018, eq. 7
        return [Fraction(j**n - (j - 1) ** n, m**n) for j in range(1, m + 1)]
    if estimator == "U":  # Dodge et al. 2021, eq. 3 (Tang et al. 2020)
        return [Fraction(math.comb(j - 1, n - 1), math.comb(m, n)) for j in range(1, m + 1)]
    if estimator == "W":  # Dodge et al. 2021, eq. 5
        total = math.comb(m + n - 1, n)
        return [Fraction(math.comb(j + n - 1, n) - math.comb(j + n - 2, n), total) for j in range(1, m + 1)]
    raise ValueError(f"unknown estimator {estimator!r}")


def tie_shared_run_weights(
    val: Sequence[float], rank_weights: Sequence[Fraction], *, maximize: bool = True
) -> list[Fraction]:
    """Per-run weights: runs tied in validation share equally the weight of their block of ranks (§3.2)."""
    # Rank worst to best; a run's block is every run with the same validation score.
    worst_first = sorted(range(len(val)), key=lambda i: val[i], reverse=not maximize)
    weights = [Fraction(0)] * len(val)
    start = 0
    while start < len(worst_first):
        stop = start
        while stop < len(worst_first) and val[worst_first[stop]] == val[worst_first[start]]:
            stop += 1
        share = sum(rank_weights[start:stop], Fraction(0)) / (stop - start)
        for i in worst_first[start:stop]:
            weights[i] = share
        start = stop
    return weights


def expected_test_of_best(weights: Sequence[Fraction], test: Sequence[float]) -> Fraction:
    """sum_i w_i t_i, exactly (each float test score converted exactly)."""
    return sum((w * Fraction(t) for w, t in zip(weights, test, strict=True)), Fraction(0))


def exact_boo_n(
    val: Sequence[float],
    test: Sequence[float] | None,
    n: int,
    estimator: str,
    *,
    maximize: bool = True,
    enumerate_draws: bool = True,
) -> Fraction:
    """Exact Boo_n by enumeration (default) or by the closed-form weights with the paper's tie rule."""
    test = val if test is None else test
    if enumerate_draws:
        weights = enumerated_run_weights(val, n, estimator, maximize=maximize)
    else:
        ranks = closed_form_rank_weights(len(val), n, estimator)
        weights = tie_shared_run_weights(val, ranks, maximize=maximize)
    return expected_test_of_best(weights, test)


def ranked(val: Sequence[float], test: Sequence[float], maximize: bool = True):
    """The runs in the order the bootstrap's draws index them (documented in :mod:`boontrack.resampling`): worst
    to best by validation score, runs tied in it worst to best by test score. Sorted here with Python's sort of
    key tuples, independently of the library's ``numpy.lexsort``."""
    import numpy as np

    sign = 1.0 if maximize else -1.0
    order = sorted(range(len(val)), key=lambda i: (sign * float(val[i]), sign * float(test[i])))
    return np.asarray(val)[order], np.asarray(test)[order]


def ranked_pairs(a_val, a_test, b_val=None, b_test=None):
    """Pairs of runs in the order paired draws index them: sorted by A's validation score, A's test score, B's
    validation score, B's test score, ascending (for mean differences, pass A's and B's scores alone)."""
    import numpy as np

    arrays = [np.asarray(x) for x in (a_val, a_test, b_val, b_test) if x is not None]
    if len(arrays) == 2:  # means: each group's scores are its validation and test scores
        arrays = [arrays[0], arrays[0], arrays[1], arrays[1]]
    order = sorted(range(len(arrays[0])), key=lambda i: tuple(float(x[i]) for x in arrays))
    return tuple(x[order] for x in arrays)
