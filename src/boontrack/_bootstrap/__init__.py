"""The bootstrap's machinery, shared by the resampling, comparison, diagnostics and simulation modules.

One job per module:

- :mod:`~boontrack._bootstrap.threads`: the batches of resamples, and groups, evaluated on threads, BLAS on one
  thread;
- :mod:`~boontrack._bootstrap.kernels`: runs ranked into tie blocks, resamples drawn in batches and counted,
  Boo_n (and its standard error) evaluated on them;
- :mod:`~boontrack._bootstrap.intervals`: the interval methods of one group, and the sup-t bands;
- :mod:`~boontrack._bootstrap.differences`: intervals of a difference between two groups;
- :mod:`~boontrack._bootstrap.doubts`: the measured rules for when an interval is doubtful.

The formulas and the choice of the default method are described in :mod:`boontrack.resampling`, the public
face of this package. Nothing here validates its input: the public functions do.
"""

from boontrack._bootstrap.differences import (
    BudgetGroup,
    difference_interval,
    difference_intervals,
    difference_range,
    studentized_difference,
)
from boontrack._bootstrap.doubts import few_runs_message, few_runs_messages
from boontrack._bootstrap.intervals import (
    Resampled,
    bootstrap_standard_error,
    curve_distribution,
    interval_ends,
    percentile_interval,
    simultaneous_band,
    trusted_budgets,
)
from boontrack._bootstrap.kernels import RankedRuns, scott_bandwidth
from boontrack._bootstrap.threads import (
    available_cpus,
    evaluate_batches,
    evaluate_groups,
    thread_count,
    using_threads,
)

__all__ = [
    "BudgetGroup",
    "RankedRuns",
    "Resampled",
    "available_cpus",
    "bootstrap_standard_error",
    "curve_distribution",
    "difference_interval",
    "difference_intervals",
    "difference_range",
    "evaluate_batches",
    "evaluate_groups",
    "few_runs_message",
    "few_runs_messages",
    "interval_ends",
    "percentile_interval",
    "scott_bandwidth",
    "simultaneous_band",
    "studentized_difference",
    "thread_count",
    "trusted_budgets",
    "using_threads",
]
