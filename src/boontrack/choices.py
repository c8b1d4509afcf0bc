"""The values boontrack's options take: estimators, interval methods, comparisons, picks and default budgets.

The estimator core (:mod:`boontrack.estimators`, :mod:`boontrack.resampling`, :mod:`boontrack.compare`) and the
layers above it (:class:`boontrack.spec.Spec`, the command line) read them here, so that the core takes nothing
from the layers above. This module imports only :mod:`typing`.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "CI_METHODS",
    "STUDY_CI_METHODS",
    "COMPARE_MODES",
    "CORRECTIONS",
    "DEFAULT_BUDGETS",
    "DEFAULT_CI_METHOD",
    "ESTIMATORS",
    "GATE_QUANTITIES",
    "NORMALIZATIONS",
    "PICKS",
    "PICK_SPELLINGS",
]

ESTIMATORS = ("V", "U", "W")
COMPARE_MODES = ("baseline", "all-pairs")
CORRECTIONS = ("holm", "bh")
#: The interval method of every summary and function unless another is asked for.
DEFAULT_CI_METHOD: Final = "studentized-u-farther"
CI_METHODS = (
    DEFAULT_CI_METHOD,
    "studentized-u",
    "studentized-u-k-of-m",
    "studentized-u-calibrated",
    "studentized",
    "percentile",
    "bca",
    "smoothed",
)
#: The interval methods a simulation study measures unless told: all but the calibrated one, whose second-level
#: bootstrap costs 3.5-10 times the others' per simulated sweep (name it to include it).
STUDY_CI_METHODS = tuple(method for method in CI_METHODS if method != "studentized-u-calibrated")
PICKS = ("last", "best_val_step")
#: Spellings of a pick -> the pick: the command line's ``best-val-step`` and Python's ``best_val_step``.
PICK_SPELLINGS = {"last": "last", "best-val-step": "best_val_step", "best_val_step": "best_val_step"}
#: The budgets reported when none are asked for, each where a group has enough runs for it.
DEFAULT_BUDGETS = (1, 5, 10)
#: How scores of several tasks are put on one scale (:func:`boontrack.across.across_tasks`'s ``normalize``; reference
#: scores per task are the third way).
NORMALIZATIONS = ("none", "min-max")
#: The aggregate differences across tasks a gate can decide on (``boontrack compare --gate-on``): the IQM, Boo_n
#: at the largest budget, the mean, the probability of improvement.
GATE_QUANTITIES = ("iqm", "boo-n", "mean", "prob-improvement")
