"""The measured rules for when an interval is doubtful: few runs, a budget above m / 2, a long tail."""

from __future__ import annotations

import numpy as np

from boontrack._bootstrap.intervals import TRUSTED_SHARE

#: Runs below which the intervals of one group (and of a difference, for the smaller group) under-cover
#: whatever the budget (measured: see :func:`few_runs_message`).
FEW_RUNS_INTERVAL = 8
#: Skewness of the test scores towards the better side above which the runs are said to have a long tail,
#: checked up to TAIL_RUNS runs (where it was measured); a normal sample of 10-20 exceeds it 2-4 % of the time.
LONG_TAIL_SKEWNESS = 1.0
TAIL_RUNS = 100


def few_runs_message(
    m: int, budgets: np.ndarray | None = None, test: np.ndarray | None = None, maximize: bool = True
) -> str | None:
    """:func:`few_runs_messages` in one message, or None."""
    return "; ".join(few_runs_messages(m, budgets, test, maximize)) or None


def few_runs_messages(
    m: int, budgets: np.ndarray | None = None, test: np.ndarray | None = None, maximize: bool = True
) -> list[str]:
    """Why intervals on these runs may under-cover, from measured coverage (:mod:`boontrack.simulate`).

    Three keys, each with what was measured for nominal 95 % (studentized / percentile, normal scores unless
    said): fewer than 8 runs (83-92 % / 76-83 % at m = 4-6; 93-96 % / 83-88 % at m = 8); a budget above m / 2
    (the trust rule of :class:`CurveBand`); test scores skewed towards the better end (sample skewness above
    1, for m <= 100: log-normal scores gave 81-87 % / 66-82 % at m = 20-50 and n = 5-10, and no resampling
    method sees a tail the runs have not sampled).
    """
    reasons = []
    if m < FEW_RUNS_INTERVAL:
        reasons.append(
            f"only {m} run{'' if m == 1 else 's'}: 95 % intervals covered 83-92 % at 4-6 runs and 93-96 % at 8 "
            "(studentized; percentile 76-88 %)"
        )
    if budgets is not None and budgets.max() > TRUSTED_SHARE * m and m > 1:
        reasons.append(
            f"n = {int(budgets.max())} is above m / 2 = {m / 2:g}: intervals there are wide (studentized, 2.6-7.7x "
            "the percentile width) or under-cover (percentile bands 43-67 %)"
        )
    skew = _better_side_skewness(test, maximize) if test is not None and 2 < m <= TAIL_RUNS else 0.0
    if skew > LONG_TAIL_SKEWNESS:
        reasons.append(
            f"test scores skewed towards better scores (skewness {skew:.1f}): on such long tails 95 % intervals "
            "covered 81-87 % (studentized; percentile 66-82 %)"
        )
    return reasons


def _better_side_skewness(test: np.ndarray, maximize: bool) -> float:
    """Sample skewness (biased, g1) of the test scores, positive when the long tail is on the better side."""
    centred = test - test.mean()
    spread = np.mean(centred**2)
    if spread == 0:
        return 0.0
    skew = float(np.mean(centred**3) / spread**1.5)
    return skew if maximize else -skew
