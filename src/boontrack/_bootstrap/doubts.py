"""When a number is doubtful, and what a sweep cannot see.

The measured rules for when an interval is doubtful (few runs, a budget above m / 2), as warnings with what was
measured (:func:`few_runs_messages`) and as short marks (:func:`doubts`); and what m runs rule out and what they do
not (:func:`unseen_rate`, :func:`top_runs`).

Both rules depend on m and n alone. A rule on the runs' scores was tried and removed: test scores skewed towards
the better side (sample skewness above 1) did not tell the sweeps whose intervals miss. Over the coverage suite
(``tests/benchmarks/bench_coverage.py --flags-only``, 500 sweeps per cell, with ``"studentized-u"``, the default
then) the flagged sweeps covered 93.9 % and the others 94.2 % (the synthetic populations), 97.0 % and 95.4 % (the
published tables); on log-normal scores, where it misses most, the flagged sweeps covered 89.9 % and the others
73.0 %: a sweep that shows its long tail is the better placed to bound it. What a sweep cannot show is said by
:func:`unseen_rate` instead.
"""

from __future__ import annotations

import math

import numpy as np

from boontrack._bootstrap.intervals import TRUSTED_SHARE
from boontrack.estimators import Estimator, best_of_n_cdf

#: A kind of run that shows up in a sweep with at least this probability is ruled out when none did.
SEEN = 0.95
#: The share of Boo_n's weight whose runs :func:`top_runs` counts.
TOP_SHARE = 0.5
#: Runs below which the intervals of one group (and of a difference, for the smaller group) under-cover
#: whatever the budget (measured: see :func:`few_runs_message`).
FEW_RUNS_INTERVAL = 8
#: The doubts of :func:`doubts`, in a few words each.
FEW_RUNS, ABOVE_HALF = f"fewer than {FEW_RUNS_INTERVAL} runs", "n > m/2"
#: What was measured where each doubt applies (see :func:`few_runs_messages`): said by its warning, and beside
#: its mark.
DOUBT_MEASURED = {
    FEW_RUNS: "95 % intervals covered 92-98 % at 4-8 runs (default method; percentile 75-88 %)",
    ABOVE_HALF: "intervals there are wide (the default, 4.1-11.9x the percentile width) or under-cover (percentile "
    "42-65 %)",
}


def few_runs_message(m: int, budgets: np.ndarray | None = None) -> str | None:
    """:func:`few_runs_messages` in one message, or None."""
    return "; ".join(few_runs_messages(m, budgets)) or None


def few_runs_messages(m: int, budgets: np.ndarray | None = None) -> list[str]:
    """Why intervals on these runs may under-cover or be very wide, from measured coverage (:mod:`boontrack.simulate`).

    Two keys, each with what was measured for nominal 95 % (default method / percentile, 1,000 sweeps per cell;
    ``tests/benchmarks/bench_coverage.py --doubts-only``): fewer than 8 runs (92-98 % / 75-88 % at m = 4-8, normal
    and 200-example accuracies); a budget above m / 2 (the trust rule of :class:`CurveBand`: 96-100 % at 4.1-11.9x
    the percentile width / 42-65 % on the validation curve, m = 10-50).
    """
    reasons = []
    if m < FEW_RUNS_INTERVAL:
        reasons.append(f"only {m} run{'' if m == 1 else 's'}: {DOUBT_MEASURED[FEW_RUNS]}")
    if budgets is not None and budgets.max() > TRUSTED_SHARE * m and m > 1:
        reasons.append(f"n = {int(budgets.max())} is above m / 2 = {m / 2:g}: {DOUBT_MEASURED[ABOVE_HALF]}")
    return reasons


def doubts(m: int, budget: int) -> tuple[str, ...]:
    """Why the interval of Boo_n at ``budget`` on ``m`` runs is doubtful, in a few words each (the rules of
    :func:`few_runs_messages`, which says what was measured); empty when it is not."""
    reasons = []
    if m < FEW_RUNS_INTERVAL:
        reasons.append(FEW_RUNS)
    if budget > TRUSTED_SHARE * m and m > 1:
        reasons.append(ABOVE_HALF)
    return tuple(reasons)


def unseen_rate(m: int) -> float:
    """The rate per run above which a kind of run would have shown up among m runs with probability
    :data:`SEEN`: ``1 - 0.05^(1/m)``, about 3/m (the rule of three). Rarer kinds may be absent from them."""
    return -math.expm1(math.log1p(-SEEN) / m)


def top_runs(m: int, budget: int, estimator: Estimator = "V") -> tuple[int, float]:
    """(k, share): the fewest best runs that carry at least :data:`TOP_SHARE` of Boo_n's weight at ``budget``,
    and the share they carry (ties left aside). Boo_n rests on them: what they lack, it lacks."""
    cdf = best_of_n_cdf(m, np.array([min(budget, m) if estimator == "U" else budget]), estimator)[0]
    carried = 1.0 - cdf[::-1]  # carried[k]: the weight of the best k runs
    k = int(np.argmax(carried >= TOP_SHARE - 1e-12))
    return k, float(carried[k])
