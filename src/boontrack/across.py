r"""Aggregates across the tasks of a benchmark, with stratified bootstrap intervals.

Experimental (docs/api/index.md, "Stability"): imported from ``boontrack.across``, not from ``boontrack``; its
results will gain fields as the command line and the reports take it up (issue 51), and may change in a minor
release.

An approach (a *group*) is run several times (seeds, trials) on each *task* of a benchmark (GLUE's tasks, a suite
of datasets, Atari games). :func:`across_tasks` summarizes each group over the whole benchmark with the aggregates
of Agarwal et al. (2021), defined as their library rliable defines them so that the numbers can be checked, and
with the mean over tasks of Boo_n (Bajgar et al. 2018). With x the (normalized) test score of a run:

| aggregate | definition, per group |
|---|---|
| ``mean`` | mean over tasks of the task's mean of x over its runs |
| ``median`` | median over tasks of the same per-task means |
| ``iqm`` | interquartile mean of x over the runs of every task pooled: ``scipy.stats.trim_mean(x, 0.25)``, the mean of the pooled scores left when ``int(0.25 N)`` are cut from each end |
| ``optimality_gap`` | mean over the pooled runs of ``max(gamma - x, 0)`` (``max(x - gamma, 0)`` when lower is better): how far the runs fall short of the target ``gamma`` |
| ``boo_n`` | mean over tasks of the task's Boo_n (eq. 7 of Bajgar et al. with the V, U or W weights of :func:`boontrack.boo_n`), on normalized test scores, at each budget n: the curve over n |
| ``profile`` | share of the pooled runs whose x is better than tau (``x > tau``; ``x < tau`` when lower is better), over a grid of tau (the score distribution's performance profile) |

and between two groups A and B: the differences of ``mean``, ``iqm`` and ``boo_n``, and the probability of
improvement, the mean over tasks of ``P(x_A > x_B) + 0.5 P(x_A = x_B)`` for a random run of each on the task (the
Mann–Whitney U statistic over ``m_A m_B``; ``<`` for ``>`` when lower is better).

The mean and the median weigh tasks equally; the IQM, the optimality gap and the profiles pool runs, so a task
with more runs weighs more there (as in rliable). Normalization (``(x - low) / (high - low)`` per task) puts tasks
of different scales on one scale; it is linear, so the Boo_n of normalized scores is the normalized Boo_n, and it
keeps the direction of the metric (``low < high`` is required).

**Intervals** come from the stratified bootstrap (Agarwal et al. 2021): each resample draws, for every task and
group, as many runs as the cell has, with replacement, from that cell's runs; tasks are kept, and groups are
resampled independently of each other, except on a task where every group ran the same distinct seeds and
``seed`` says so: there a resample draws seeds and takes every group's run of each (paired by seed), so that a
seed's luck the groups share cancels in their differences (the studentized differences keep the independent
groups' standard error, which the pivot's resamples calibrate). Every aggregate and difference of a resample is
computed from the same draws. The normalization constants are those of the data in every resample (they are not
re-estimated).

rliable's percentile interval (the quantiles ``(1 - level) / 2`` and ``(1 + level) / 2`` of the resamples) is too
narrow with few runs per task: a cell of m runs resamples with ``(m - 1) / m`` of its own variance, whatever the
number of tasks. So each interval below says, in its ``method``, what it is:

| aggregate | ``method`` | interval |
|---|---|---|
| ``mean``, ``optimality_gap``, their differences | ``"studentized"`` | stratified bootstrap-t: ``estimate - t_hi se`` to ``estimate - t_lo se``, t_lo and t_hi the ``(1 - level) / 2`` and ``(1 + level) / 2`` quantiles of the resamples' ``(estimate* - estimate) / se*``, ``se^2 = sum_c w_c^2 s_c^2 / m_c`` over the cells (s_c^2 the cell's variance, ``ddof=1``, of its runs or of a resample's draws; w_c = 1 / tasks for the mean, m_c / N for the gap) |
| ``iqm``, its difference | ``"studentized"`` | the same, se by the delta method: the draws winsorized at the kept places' ends, ``se^2 = sum_c (m_c / N)^2 s_c^2(W) / m_c / kept^2`` |
| ``boo_n``, its difference | ``"studentized-u"`` | the same, centred on the mean over tasks of Tang et al.'s unbiased U, the pivot ``(U* - V) / se*`` (V, Boo_n of the runs, is what U of a resample is unbiased for), se by the delta method of :mod:`boontrack.resampling` cell by cell; widened to hold the estimate when it is V's or W's; **refused** (``"refused"``, NaN ends, :attr:`AcrossTasks.refused` and a warning saying why) at a budget n above 2m/3, m the fewest runs of a task |
| ``prob_improvement`` | ``"studentized"`` | the same, se by DeLong et al. (1988): on each task ``s_a^2 / m_a + s_b^2 / m_b``, s_a^2 the variance (``ddof=1``) of a's runs' placements among b's (the share of b's runs each beats, ties half) and s_b^2 of b's among a's, summed over tasks over T^2; cut to [0, 1] |
| ``median``, ``profile`` | ``"percentile"`` | rliable's percentile interval (the profiles' bands pointwise): not studentized |

The studentized intervals are cut to the range of the group's scores (of a difference: of two runs' differences),
which only binds when the pivot is unbounded (more resamples with se* = 0 than a tail holds: a task of two runs).

Measured (``python tests/benchmarks/bench_across_coverage.py --replications 500 --n 2,3,5 --seed S``: 5, 20
and 50 tasks of 3, 5 and 10 runs, 999 resamples; the methods chosen on seed 0 with normal and beta scores, then
run on seed 1 with those and with skew-normal scores, a family held out), the 95 % intervals covered:

| aggregate | 3 runs per task | 5 runs | 10 runs |
|---|---|---|---|
| mean, seed 0 (percentile before) | 94.2-98.0 % (83.6-89.6 %) | 93.2-96.8 % (89.0-94.6 %) | 94.8-97.2 % (91.8-95.0 %) |
| IQM, seed 0 (percentile before) | 95.6-98.0 % (84.0-90.6 %) | 93.2-96.8 % (89.0-93.4 %) | 93.4-96.8 % (91.8-94.6 %) |
| Boo_n at n <= 2m/3, seed 0 (n = 2, 3, 5; percentile V before) | 92.6-98.0 % (0.8-76.0 %) | 93.0-97.8 % (0.2-85.6 %) | 93.4-95.8 % (11.4-91.8 %) |
| mean, seed 1, held out: normal, beta, skew-normal (percentile) | 94.4-96.6 % (81.0-89.4 %) | 93.0-97.4 % (89.6-92.0 %) | 93.2-96.6 % (91.8-94.4 %) |
| IQM, seed 1, held out (percentile) | 94.6-96.6 % (79.4-91.2 %) | 93.6-97.0 % (87.4-93.2 %) | 93.6-96.2 % (91.4-95.0 %) |
| Boo_n at n <= 2m/3, seed 1, held out (Boo_2 percentile V) | 95.4-98.6 % (0.6-78.4 %) | 93.6-97.8 % (5.6-83.6 %) | 93.4-96.8 % (25.2-90.0 %) |

Boo_n at n = m covered 91.0-99.2 % (seed 0) with intervals 2-7 times as wide as at n = 2m/3 over 5 tasks; above
m, U is undefined. One cell was below 93 %: Boo_2 over 50 tasks of 3 normal runs, seed 0, 92.6 +- 1.2 %; none on
seed 1. Above 97.5 %: the aggregate Boo_n at 3 runs per task (up to 98.6 %, widened to hold V's estimate), the mean
and the IQM over 5 tasks of 3 runs on seed 0 (98.0 %). There the pivot of a resample of 3 runs is heavy-tailed: the
Welch t interval measured beside the mean covered 97.2 % at 0.88 times the width on those normal scores, and
94.0-97.0 % over all seed 1 cells (the bootstrap-t 93.0-97.4 %). Each cell's Monte Carlo standard error is about
1 %.

Between two groups, and the rest of one group's aggregates (``python tests/benchmarks/bench_across_pairs.py
--replications 400 --tasks 5,20``: B drawn as A, seed 0, normal, beta and skew-normal scores, 18 cells; and with
``--families normal,beta --shift 0.02 --seed 1``, B better by 0.02, 12 cells; 3, 5 and 10 runs per task over 5
and 20 tasks, 999 resamples), the 95 % intervals covered:

| aggregate | B drawn as A (18 cells) | B better by 0.02 (12 cells) |
|---|---|---|
| Δmean | 91.0-97.0 % (one below 93 %: skew-normal, 20 tasks of 5 runs) | 94.0-97.0 % |
| ΔIQM | 93.5-98.0 % | 93.0-97.0 % |
| ΔBoo_2 | 92.2-97.5 % (92.2, 92.8 %: skew-normal 20 x 5, normal 5 x 5) | 94.2-97.8 % |
| P(A > B), studentized (percentile before, 8 normal cells) | 93.5-99.5 % (89.0-95.5 %) | 93.8-99.0 % |
| optimality gap | 92.5-97.5 % (92.5 %: skew-normal, 20 tasks of 3 runs) | 93.5-97.5 % |
| median, percentile | 75.2-97.2 % | 74.0-96.8 % |
| profile at the mixture's median, percentile | 76.2-97.5 % | 73.5-96.2 % |

P(A > B) covers 98.5-99.5 % over 5 tasks of 3 or 5 runs, where a task's 3 x 3 pairs give it few values; from 20
tasks or 10 runs 93.5-97.0 %. The four cells below 93 % (91.0-92.8 %, each within 1.5 Monte Carlo standard errors of
93 %) are skew-normal scores bar one: a long lower tail, which 3 or 5 runs of a task rarely show, as a single
sweep's interval of the mean misses more on a long left tail (docs/statistics/intervals.md). The median and the profiles stay percentile intervals and cover as the mean's
percentile interval did (at 3 runs per task 74-86 %; the profile 93-97 % from 10 runs): the median is also biased
(the median of noisy task means is not the median of the tasks' true means; bias up to 0.7 of its spread), which
no interval of it mends, so read the mean or the IQM; the profile's band is a picture of the spread, not a test.
Each cell's Monte Carlo standard error is about 1.1 %.

Paired by seed (``bench_across_pairs.py --replications 300 --families normal --tasks 5,20 --paired``, run i of
each task seed i in both groups; ``--seed-share 0.8``: a seed's effect, shared by the groups, holds 80 % of each
score's variance; 6 cells each): where the seeds share 80 %, B drawn as A or better by 0.01, Δmean covered 92.3-97.3 %,
its interval 0.45-0.48 times as wide as with the groups drawn apart on the same sweeps (which covered 99.7-100 %,
better by 0.01, seed 1), ΔIQM 92.3-97.0 %, ΔBoo_2
90.7-97.3 % (four cells below 93 %, 90.7-92.3 %, at 3 and 5 runs a task), P(A > B) 98.7-100 % (its DeLong variance
takes the groups as independent: as wide as drawn apart). Where the seeds share nothing (normal and beta, 9 cells),
pairing changed nothing measurable: Δmean 93.3-96.7 %, ΔIQM 93.3-98.0 %, ΔBoo_2 93.3-97.7 %, P(A > B) 95.0-99.3 %.

On the published run tables of ``../shared/data`` as the tasks (``python tests/benchmarks/bench_across_tables.py
--replications 400``: each table one task's population, m runs per task drawn from it with replacement, for two
groups drawn alike; Boo_2), the 95 % intervals covered:

| benchmark | runs per task | mean, IQM, gap | Boo_2 | Δmean, ΔIQM, ΔBoo_2 | P(A > B) |
|---|---|---|---|---|---|
| all 20 tables as 20 tasks | 3, 5, 10 | 95.2-98.2 % | 94.5-96.8 % | 94.5-96.5 % | 93.5-96.0 % |
| five kinds of task (CBT, CIFAR-100, SST-5 CNN, SciTail, BiDAF) | 3 | 90.8-91.2 % | 95.8 % | 93.2-98.0 % | 98.2 % |
| the same | 5 | 90.8-94.2 % | 91.2 % | 97.0-98.5 % | 98.0 % |
| the same | 10 | 98.8-99.0 % | 98.0 % | 96.0-97.2 % | 94.2 % |

The cells below 93 % are one group's aggregates over the five tasks, where one task carries the spread: BiDAF's F1
(from 0.03 to 0.77, its runs in two clusters, failed and trained) holds 86 % of the variance of the mean over the
five tasks, so its 3 or 5 runs decide the interval, and 3 or 5 draws of two clusters often show one. A task
holding most of a group's variance (over 5 tasks, more than 60 %) with fewer than 10 runs is said in a warning,
with these figures.

A resample is used only through its counts (how often each run is drawn), as in :mod:`boontrack.resampling`: the
aggregates are sums over runs weighted by counts, so no resample is sorted. The runs are put in a canonical order
(by group, task, validation score, test score) before they are drawn, so the same runs and seed give the same
numbers in any input order; resamples are drawn in memory-bounded batches, one after the other from the same
generator, so the batch size does not change them.

References
----------
Agarwal, Schwarzer, Castro, Courville & Bellemare (2021). Deep reinforcement learning at the edge of the
statistical precipice. NeurIPS.

DeLong, DeLong & Clarke-Pearson (1988). Comparing the areas under two or more correlated receiver operating
characteristic curves: a nonparametric approach. Biometrics 44(3).
Bajgar, Kadlec & Kleindienst (2018). A boo(n) for evaluating architecture performance. ICML.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any, Literal, NamedTuple

import numpy as np

from boontrack._bootstrap import RankedRuns, bootstrap_standard_error, percentile_interval
from boontrack._bootstrap.intervals import UNBOUNDED, studentize
from boontrack._bootstrap.kernels import slope_of
from boontrack._collector import warn
from boontrack._validation import (
    as_budgets,
    as_choice,
    as_count,
    as_flag,
    as_probability,
    as_rng,
    as_scores,
)
from boontrack.choices import ESTIMATORS, NORMALIZATIONS
from boontrack.estimators import Estimator, best_of_n_cdf, warn_or_raise_budget
from boontrack.exceptions import FewRunsWarning
from boontrack.resampling import BootstrapResult, ConfidenceInterval
from boontrack.vocabulary import name as _named
from boontrack.vocabulary import setting as _setting

__all__ = [
    "AcrossTasks",
    "GroupAggregates",
    "GroupComparison",
    "Normalize",
    "PerformanceProfile",
    "across_tasks",
]

Normalize = Literal["none", "min-max"]
#: The interval methods of :class:`~boontrack.resampling.BootstrapResult`'s ``method`` (see the module docstring):
#: the stratified bootstrap-t of the mean, the IQM, the optimality gap and their differences; the same centred on
#: Tang et al.'s unbiased U, for the aggregate Boo_n; the percentile interval (rliable's default) of the median
#: and the profiles; no interval, where none was measured to cover. The probability of improvement's is studentized.
STUDENTIZED, STUDENTIZED_U, PERCENTILE, REFUSED = "studentized", "studentized-u", "percentile", "refused"
#: Which ends of the studentized pivot's distribution the intervals take (:func:`studentized_ends`).
TAILS = "equal-tailed"
#: The aggregate Boo_n's interval is refused at a budget above this share of the fewest runs on a task: measured
#: to cover up to it, not at n = m (below).
MOST_SHARE = Fraction(2, 3)
#: Points of the default grid of tau of the performance profiles.
PROFILE_POINTS = 51
#: Runs per task below which the intervals were not measured (the coverage script starts at 3).
FEW_RUNS_PER_TASK = 3
#: Said by the warnings (``tests/benchmarks/bench_across_coverage.py``; see the module docstring).
MEASURED_FEW_RUNS = (
    "the intervals were measured at 3-10 runs per task (95 % studentized intervals of the mean and the IQM covered "
    "93.2-98.0 % there), not below: with 2 runs, half of a task's resamples have no spread"
)
MEASURED_BOO_N = (
    "the estimate is Boo_n with the V or W weights, biased low at few runs where the best of n rises with n, a "
    "bias that adds up over the tasks (up to 4 standard deviations of the estimate measured over 50 tasks of 3 "
    "runs): its interval is centred on the unbiased U and widened to hold the estimate"
)
#: What was measured where the aggregate Boo_n's interval is refused (``tests/benchmarks/bench_across_coverage.py``,
#: seed 0, 500 replications a cell, normal and beta scores, 5-50 tasks).
MEASURED_REFUSED = (
    "95 % studentized-u intervals covered 91.0-99.2 % at n = m (3 and 5 runs per task) and were 2-7x as wide as at "
    "n = 2m/3 over 5 tasks; above m, U is undefined and its stand-in covered 85.6-96.6 %; at n <= 2m/3 they covered "
    "92.6-98.0 %"
)
#: A task holding more of the variance of a group's mean over T tasks than halfway from its equal share 1/T to
#: all of it, ``(1 + 1/T) / 2`` (over 5 tasks 60 %), with fewer than DOMINANT_RUNS runs, is said to decide its
#: intervals (:func:`_dominant_task`).
DOMINANT_RUNS = 10
#: What was measured where one task dominates (``tests/benchmarks/bench_across_tables.py``, 400 replications).
MEASURED_DOMINANT = (
    "on five published run tables where BiDAF's F1, in two clusters, held 86 % of the variance, the 95 % intervals "
    "of the mean and the IQM covered 90.8-94.2 % at 3 and 5 runs a task, 98.8-99.0 % at 10"
)
#: Resamples x runs per batch: bounds each (resamples, runs) working array to 8 MB of float64 (the studentized
#: intervals' pass holds about a dozen).
_BATCH_ELEMENTS = 1 << 20


@dataclass(frozen=True)
class PerformanceProfile:
    """The share of a group's pooled runs whose normalized score is better than tau, over a grid of tau
    (Agarwal et al. 2021, §4.1, the score distribution; better is ``x > tau``, or ``x < tau`` when lower is
    better), with a pointwise percentile band of the stratified bootstrap.

    Attributes
    ----------
    tau
        The grid, increasing.
    share, low, high
        Aligned with ``tau``: the share on the data and its band (each tau on its own: pointwise, not a band for
        the whole profile).
    bootstrap_distribution
        The profile on each resample, shape ``(n_resamples, len(tau))``.
    """

    tau: np.ndarray
    share: np.ndarray
    low: np.ndarray
    high: np.ndarray
    bootstrap_distribution: np.ndarray


@dataclass(frozen=True)
class GroupAggregates:
    """One group's aggregates over the tasks (see the module's table), each with its interval.

    Attributes
    ----------
    group
        The group's label.
    mean, median, iqm, optimality_gap
        :class:`~boontrack.resampling.BootstrapResult`; its ``method`` says which interval (the module's table:
        ``"studentized"``, the median's ``"percentile"``).
    boo_n
        Budget n -> the mean over tasks of the normalized Boo_n at n: the aggregate's curve over the budgets asked,
        each with a ``"studentized-u"`` interval, or ``"refused"`` (NaN ends) above 2m/3 (see
        :attr:`AcrossTasks.refused`).
    profile
        The performance profile.
    task_means
        The mean normalized score of each task, aligned with :attr:`AcrossTasks.tasks`.
    task_boo_n
        Budget n -> the normalized Boo_n of each task, aligned with :attr:`AcrossTasks.tasks`.
    """

    group: Any
    mean: BootstrapResult
    median: BootstrapResult
    iqm: BootstrapResult
    optimality_gap: BootstrapResult
    boo_n: dict[int, BootstrapResult]
    profile: PerformanceProfile
    task_means: np.ndarray
    task_boo_n: dict[int, np.ndarray]


@dataclass(frozen=True)
class GroupComparison:
    """Group ``a`` against group ``b`` across the tasks, on the same resamples as their aggregates.

    Attributes
    ----------
    a, b
        The groups' labels.
    mean_difference, iqm_difference
        Aggregate of ``a`` minus aggregate of ``b``, with studentized intervals.
    boo_n_difference
        Budget n -> aggregate Boo_n of ``a`` minus that of ``b``.
    prob_improvement
        The probability of improvement of ``a`` over ``b``: the mean over tasks of ``P(x_a > x_b) + 0.5
        P(x_a = x_b)`` (better for worse when lower is better), with a studentized interval (DeLong's variance).
        0.5 is no difference.
    task_prob_improvement
        The same on each task, aligned with :attr:`AcrossTasks.tasks`.
    """

    a: Any
    b: Any
    mean_difference: BootstrapResult
    iqm_difference: BootstrapResult
    boo_n_difference: dict[int, BootstrapResult]
    prob_improvement: BootstrapResult
    task_prob_improvement: np.ndarray

    def reversed(self) -> GroupComparison:
        """``b`` against ``a``: the differences negated, the probability of improvement ``1 - p``."""
        return GroupComparison(
            a=self.b,
            b=self.a,
            mean_difference=_mirrored(self.mean_difference, -1.0, 0.0),
            iqm_difference=_mirrored(self.iqm_difference, -1.0, 0.0),
            boo_n_difference={k: _mirrored(v, -1.0, 0.0) for k, v in self.boo_n_difference.items()},
            prob_improvement=_mirrored(self.prob_improvement, -1.0, 1.0),
            task_prob_improvement=1.0 - self.task_prob_improvement,
        )


@dataclass(frozen=True)
class AcrossTasks:
    """What :func:`across_tasks` computes.

    Attributes
    ----------
    groups, tasks
        The labels, sorted (``numpy.unique``'s order).
    runs
        Runs per group and task, shape ``(len(groups), len(tasks))``.
    normalization
        ``(low, high)`` of each task (rows aligned with ``tasks``), or None when the scores are not normalized.
    maximize
        Whether a higher score is better.
    gamma
        The target of the optimality gap.
    n
        The budgets of the aggregate Boo_n.
    aggregates
        Group label -> :class:`GroupAggregates`.
    comparisons
        ``(a, b)`` -> :class:`GroupComparison`, for every pair with ``a`` before ``b`` in ``groups``
        (:meth:`compare` gives either orientation).
    confidence_level, n_resamples
        As requested.
    refused
        ``"boo_n[n]"`` -> why that aggregate Boo_n (and its differences) has no interval, in numbers; empty when
        every interval was given. Each is also a :class:`~boontrack.exceptions.FewRunsWarning`.
    paired
        Per task, aligned with ``tasks``: whether the groups' runs were drawn paired by seed (``seed``).
    """

    groups: tuple[Any, ...]
    tasks: tuple[Any, ...]
    runs: np.ndarray
    normalization: np.ndarray | None
    maximize: bool
    gamma: float
    n: tuple[int, ...]
    aggregates: dict[Any, GroupAggregates]
    comparisons: dict[tuple[Any, Any], GroupComparison]
    confidence_level: float
    n_resamples: int
    refused: dict[str, str] = field(default_factory=dict)
    paired: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))

    def compare(self, a: Any, b: Any) -> GroupComparison:
        """Group ``a`` against group ``b``, in that orientation."""
        if (a, b) in self.comparisons:
            return self.comparisons[(a, b)]
        if (b, a) in self.comparisons:
            return self.comparisons[(b, a)].reversed()
        raise ValueError(f"no comparison of groups {a!r} and {b!r}: the groups are {list(self.groups)!r}")


def _mirrored(result: BootstrapResult, sign: float, shift: float) -> BootstrapResult:
    """``shift + sign * result``, its interval's ends swapped when the sign is negative."""
    ends = (shift + sign * result.confidence_interval.low, shift + sign * result.confidence_interval.high)
    return replace(
        result,
        estimate=shift + sign * result.estimate,
        confidence_interval=ConfidenceInterval(min(ends), max(ends)),
        bootstrap_distribution=shift + sign * result.bootstrap_distribution,
    )


# ----------------------------------------------------------------------------------------------------------
# The runs in canonical order


@dataclass(frozen=True)
class _Layout:
    """The runs sorted by group, task, validation score and test score (worst to best), with the index arrays
    that turn a resample's counts (one per run, in this order) into every aggregate without a sort.

    A cell is one (group, task); cells are contiguous, group after group, each group's tasks in order. Because
    every resample draws exactly ``m_c`` runs in cell c, a cumulative count over the runs minus the runs before
    a cell (or group) is the cumulative count within it.
    """

    groups: int
    tasks: int
    maximize: bool
    x: np.ndarray  # normalized test score per run
    val: np.ndarray  # validation score per run (the test score when there is none)
    better: np.ndarray  # x oriented so that higher is better (-x when lower is better)
    cell_starts: np.ndarray  # first run of each cell (cell = group * tasks + task)
    cell_sizes: np.ndarray
    run_cell: np.ndarray  # cell of each run
    group_starts: np.ndarray
    group_sizes: np.ndarray
    # IQM: each group's runs sorted by x, and the trimmed ranks of each run's group
    iqm_order: np.ndarray
    iqm_cut: np.ndarray  # per run (in iqm order): int(0.25 N_g)
    iqm_keep_end: np.ndarray  # per run: N_g - int(0.25 N_g)
    # Boo_n: tie blocks of validation score within each cell
    block_starts: np.ndarray
    block_cell: np.ndarray
    cell_first_block: np.ndarray
    # P tables of every cell side by side, for the cells' sizes: P_c(k) at cdf_offset[c] + k
    cdf_offset: np.ndarray
    # Drawing (:func:`_draw_counts`): each run's column draws slot ``run_slot`` (a number below ``slot_sizes``),
    # which ``drawn_position[cell start + number]`` turns into a position in the run's cell. A task whose groups
    # share their seeds (``paired``) has one slot per seed rank for every group, the number its seed's rank.
    run_slot: np.ndarray
    slot_sizes: np.ndarray
    drawn_position: np.ndarray
    paired: np.ndarray  # per task


def _layout(
    x: np.ndarray,
    val: np.ndarray,
    task_index: np.ndarray,
    group_index: np.ndarray,
    groups: int,
    tasks: int,
    up: bool,
    seed_index: np.ndarray | None = None,
) -> _Layout:
    """The runs of the validated arguments in canonical order, with their index arrays; ``seed_index``: each run's
    seed (integer codes), which pairs the groups' runs on a task where every group has the same distinct seeds."""
    sign = 1.0 if up else -1.0
    order = np.lexsort((sign * x, sign * val, task_index, group_index))
    cell = (group_index * tasks + task_index)[order]
    sizes = np.bincount(cell, minlength=groups * tasks)
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    drawing = _drawing(cell, sizes, starts, groups, tasks, None if seed_index is None else seed_index[order])
    x_sorted, val_sorted = x[order], val[order]
    group_sizes = sizes.reshape(groups, tasks).sum(axis=1)
    group_starts = np.concatenate(([0], np.cumsum(group_sizes)[:-1]))
    run_group = group_index[order]
    # IQM: stable sort by x inside each group (the groups stay in order: their index is the primary key)
    iqm_order = np.lexsort((x_sorted, run_group))
    cut = (0.25 * group_sizes).astype(np.int64)  # int(0.25 * N), scipy.stats.trim_mean's lowercut
    new_block = np.r_[True, (cell[1:] != cell[:-1]) | (val_sorted[1:] != val_sorted[:-1])]
    block_starts = np.flatnonzero(new_block)
    block_cell = cell[block_starts]
    cell_first_block = np.searchsorted(block_cell, np.arange(groups * tasks))
    return _Layout(
        groups=groups,
        tasks=tasks,
        maximize=up,
        x=x_sorted,
        val=val_sorted,
        better=sign * x_sorted,
        cell_starts=starts,
        cell_sizes=sizes,
        run_cell=cell,
        group_starts=group_starts,
        group_sizes=group_sizes,
        iqm_order=iqm_order,
        iqm_cut=cut[run_group[iqm_order]],
        iqm_keep_end=(group_sizes - cut)[run_group[iqm_order]],
        block_starts=block_starts,
        block_cell=block_cell,
        cell_first_block=cell_first_block,
        cdf_offset=np.concatenate(([0], np.cumsum(sizes + 1)[:-1])),
        **drawing,
    )


def _drawing(
    cell: np.ndarray, sizes: np.ndarray, starts: np.ndarray, groups: int, tasks: int, seeds: np.ndarray | None
) -> dict[str, np.ndarray]:
    """The drawing fields of :class:`_Layout` for runs in canonical order (``cell`` and ``seeds`` per run).

    Unpaired, run j's column draws its own slot, a position in its cell (the draws of :func:`_draw_counts` are
    then exactly those of independent cells). On a paired task, the i-th run of every group's cell draws the same
    slot, a seed rank, and each group takes its run of that seed: the groups' draws share their seeds."""
    runs = cell.size
    within = np.arange(runs) - starts[cell]
    run_slot, slot_sizes, drawn_position = np.arange(runs), sizes[cell], within.copy()
    paired = np.zeros(tasks, dtype=bool)
    if seeds is None or groups < 2:
        return {"run_slot": run_slot, "slot_sizes": slot_sizes, "drawn_position": drawn_position, "paired": paired}
    for t in range(tasks):  # the data's indices only (once per call), not a loop over resamples
        cells = [g * tasks + t for g in range(groups)]
        held = [np.sort(seeds[starts[c] : starts[c] + sizes[c]]) for c in cells]
        distinct = all(np.unique(h).size == h.size for h in held)
        paired[t] = distinct and all(np.array_equal(held[0], h) for h in held[1:])
        if not paired[t]:
            continue
        for c in cells:  # rank k of the task's sorted seeds -> the cell's run with that seed
            mine = seeds[starts[c] : starts[c] + sizes[c]]
            drawn_position[starts[c] + np.searchsorted(held[0], mine)] = np.arange(sizes[c])
            run_slot[starts[c] : starts[c] + sizes[c]] = starts[cells[0]] + np.arange(sizes[c])
    # slots numbered 0..S-1 in the order of their runs (a paired slot's: the first group's), so that an unpaired
    # layout draws exactly as independent cells
    used, run_slot = np.unique(run_slot, return_inverse=True)
    return {"run_slot": run_slot, "slot_sizes": sizes[cell[used]], "drawn_position": drawn_position, "paired": paired}


def _cdf_tables(layout: _Layout, budgets: np.ndarray, estimator: Estimator) -> np.ndarray:
    """``P_c(k)`` for every cell c and k = 0..m_c, side by side, one row per budget (computed once per size)."""
    tables = {int(m): best_of_n_cdf(int(m), budgets, estimator) for m in np.unique(layout.cell_sizes)}
    return np.concatenate([tables[int(m)] for m in layout.cell_sizes], axis=1)


@dataclass(frozen=True)
class _PairIndex:
    """For groups a and b: where each run of a falls among b's runs of the same task, sorted by score."""

    a: int
    b: int
    b_order: np.ndarray  # b's runs (global positions) sorted by task, then by the oriented score
    below: np.ndarray  # per run of a: position in b_order of the first run of b of the task scoring >= it
    not_above: np.ndarray  # ... and of the first scoring > it
    task_start: np.ndarray  # per run of a: position in b_order of the first run of b on its task
    b_size: np.ndarray  # per run of a: b's runs on its task


def _pair_index(layout: _Layout, a: int, b: int) -> _PairIndex:
    tasks = layout.tasks
    b_runs = np.arange(layout.group_starts[b], layout.group_starts[b] + layout.group_sizes[b])
    b_task = layout.run_cell[b_runs] - b * tasks
    b_order = b_runs[np.lexsort((layout.better[b_runs], b_task))]
    a_runs = np.arange(layout.group_starts[a], layout.group_starts[a] + layout.group_sizes[a])
    a_task = layout.run_cell[a_runs] - a * tasks
    b_cells = b * tasks + np.arange(tasks)
    task_start = (layout.cell_starts[b_cells] - layout.group_starts[b])[a_task]
    below = np.empty(a_runs.size, dtype=np.int64)
    not_above = np.empty(a_runs.size, dtype=np.int64)
    for t in range(tasks):  # the data's indices only (once per pair), not a loop over resamples
        mine = a_task == t
        theirs = layout.better[b_order[task_start[mine][0] : task_start[mine][0] + layout.cell_sizes[b_cells[t]]]]
        below[mine] = task_start[mine] + np.searchsorted(theirs, layout.better[a_runs[mine]], side="left")
        not_above[mine] = task_start[mine] + np.searchsorted(theirs, layout.better[a_runs[mine]], side="right")
    return _PairIndex(a, b, b_order, below, not_above, task_start, layout.cell_sizes[b_cells][a_task])


# ----------------------------------------------------------------------------------------------------------
# Aggregates of resamples, from their counts


def _draw_counts(layout: _Layout, rng: np.random.Generator, size: int) -> np.ndarray:
    """Counts of ``size`` stratified resamples, shape ``(size, runs)``: each cell's m_c draws are the cell's
    columns of ``rng.integers(0, slot_sizes, size=(size, slots))`` through the layout's slots (positions within
    the cell; on a paired task, seed ranks shared by the groups: :func:`_drawing`)."""
    runs = layout.x.size
    start = layout.cell_starts[layout.run_cell]
    slots = rng.integers(0, layout.slot_sizes, size=(size, layout.slot_sizes.size))
    positions = layout.drawn_position[start + slots[:, layout.run_slot]]
    drawn = positions + start + runs * np.arange(size)[:, None]
    return np.bincount(drawn.ravel(), minlength=size * runs).reshape(size, runs).astype(np.float64)


def _task_means(layout: _Layout, counts: np.ndarray) -> np.ndarray:
    """Per resample, group and task: the mean of the drawn scores, shape ``(resamples, groups, tasks)``."""
    sums = np.add.reduceat(counts * layout.x, layout.cell_starts, axis=1)
    return (sums / layout.cell_sizes).reshape(-1, layout.groups, layout.tasks)


def _iqm(layout: _Layout, counts: np.ndarray) -> np.ndarray:
    """Per resample and group: the interquartile mean of the pooled draws, shape ``(resamples, groups)``.

    With the group's runs sorted by x, run i's copies fill the places ``[C_{i-1}, C_i)`` of the sorted resample
    (C the cumulative counts within the group); the trimmed mean keeps places ``[cut, N - cut)``, so run i counts
    with the overlap of the two ranges.
    """
    ordered = counts[:, layout.iqm_order]
    starts_of_group = np.repeat(layout.group_starts, layout.group_sizes)
    end = np.cumsum(ordered, axis=1) - starts_of_group
    begin = end - ordered
    kept = np.clip(np.minimum(end, layout.iqm_keep_end) - np.maximum(begin, layout.iqm_cut), 0.0, None)
    sums = np.add.reduceat(kept * layout.x[layout.iqm_order], layout.group_starts, axis=1)
    return sums / (layout.group_sizes - 2 * (0.25 * layout.group_sizes).astype(np.int64))


def _pooled_mean(layout: _Layout, counts: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Per resample and group: the mean of ``values`` (one per run) over the pooled draws."""
    return np.add.reduceat(counts * values, layout.group_starts, axis=1) / layout.group_sizes


def _task_boo_n(layout: _Layout, counts: np.ndarray, cdf: np.ndarray) -> np.ndarray:
    """Per budget, resample, group and task: Boo_n of the draws, shape ``(budgets, resamples, groups, tasks)``.

    Eq. 7 with the tie rule, on counts (:mod:`boontrack.resampling`): tie block b of a cell holds the ranks
    ``C_{b-1} + 1 .. C_b`` of the resample (C its cumulative draws within the cell), weight ``P(C_b) - P(C_{b-1})``,
    and the mean of its drawn test scores.
    """
    drawn = np.add.reduceat(counts, layout.block_starts, axis=1)
    sums = np.add.reduceat(counts * layout.x, layout.block_starts, axis=1)
    means = np.divide(sums, drawn, out=np.zeros_like(sums), where=drawn > 0)
    end = (np.cumsum(drawn, axis=1) - layout.cell_starts[layout.block_cell]).astype(np.int64)
    at = layout.cdf_offset[layout.block_cell] + end
    out = np.empty((cdf.shape[0], counts.shape[0], layout.groups, layout.tasks))
    for k, table in enumerate(cdf):  # budgets: a handful
        weights = table[at] - table[at - drawn.astype(np.int64)]
        out[k] = np.add.reduceat(weights * means, layout.cell_first_block, axis=1).reshape(
            -1, layout.groups, layout.tasks
        )
    return out


def _cell_moments(layout: _Layout, counts: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per resample and cell: the mean of the drawn ``values`` (one per run, or one row per resample) and their
    variance with ``ddof=1`` (0 in a cell of one run), shape ``(resamples, cells)`` each.

    The values are centred on each cell's mean on the data first, so that the sums of squares keep the digits of
    the spread rather than of the scores' level."""
    centre = np.add.reduceat(layout.x, layout.cell_starts) / layout.cell_sizes
    shifted = values - centre[layout.run_cell]
    sums = np.add.reduceat(counts * shifted, layout.cell_starts, axis=1)
    squares = np.add.reduceat(counts * shifted * shifted, layout.cell_starts, axis=1)
    m = layout.cell_sizes
    spread = np.maximum(squares - sums * sums / m, 0.0) / np.maximum(m - 1, 1)
    return sums / m + centre, np.where(m > 1, spread, 0.0)


def _mean_error(layout: _Layout, counts: np.ndarray, values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Per resample and group: the variance of ``sum_c weights_c mean_c(values)`` over the group's cells, as
    estimated from the draws: ``sum_c weights_c^2 s_c^2 / m_c`` (s_c^2 the cell's variance, ``ddof=1``), shape
    ``(resamples, groups)``. The mean over tasks has ``weights = 1 / tasks``; a mean over the pooled runs
    (the optimality gap) ``m_c / N_g``."""
    _, spread = _cell_moments(layout, counts, values)
    terms = weights**2 * spread / layout.cell_sizes
    return terms.reshape(-1, layout.groups, layout.tasks).sum(axis=2)


def _iqm_error(layout: _Layout, counts: np.ndarray) -> np.ndarray:
    """Per resample and group: the variance of the IQM of the pooled draws by the delta method, stratified by
    cell, shape ``(resamples, groups)``.

    The influence of a run on the trimmed mean is its score winsorized at the kept places' ends, ``W = clip(x,
    x_(cut), x_(N - cut - 1))`` of the pooled sorted draws, over the share kept ``(N - 2 cut) / N`` (Huber 1981):
    runs are drawn within cells, so the variance is ``sum_c (m_c / N)^2 s_c^2(W) / m_c / kept^2``, s_c^2(W) the
    variance of the cell's winsorized draws (``ddof=1``)."""
    ordered = counts[:, layout.iqm_order]
    starts_of_group = np.repeat(layout.group_starts, layout.group_sizes)
    end = np.cumsum(ordered, axis=1) - starts_of_group
    # the run at sorted place p is the first whose cumulative count passes p: the runs before it end at or below p
    low_place = np.add.reduceat(end <= layout.iqm_cut, layout.group_starts, axis=1)
    high_place = np.add.reduceat(end <= layout.iqm_keep_end - 1, layout.group_starts, axis=1)
    ranked = layout.x[layout.iqm_order]
    low, high = ranked[layout.group_starts + low_place], ranked[layout.group_starts + high_place]
    run_group = layout.run_cell // layout.tasks
    winsorized = np.clip(layout.x, low[:, run_group], high[:, run_group])
    _, spread = _cell_moments(layout, counts, winsorized)
    group_of_cell = np.arange(layout.groups * layout.tasks) // layout.tasks
    share = layout.cell_sizes / layout.group_sizes[group_of_cell]
    kept = (layout.group_sizes - 2 * (0.25 * layout.group_sizes).astype(np.int64)) / layout.group_sizes
    terms = share**2 * spread / layout.cell_sizes
    return terms.reshape(-1, layout.groups, layout.tasks).sum(axis=2) / kept**2


def _task_boo_n_error(
    layout: _Layout, counts: np.ndarray, cdf: np.ndarray, slope: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Per budget, resample, group and task: Boo_n of the draws with the weights ``cdf`` (as :func:`_task_boo_n`)
    and the variance of that estimate by the nonparametric delta method, shape ``(budgets, resamples, groups,
    tasks)`` each.

    The formula of :meth:`boontrack._bootstrap.RankedRuns.boo_n_studentized`, cell by cell: run i of tie block b
    has influence ``L_i = R_b + (D_b / q_b) (t_i - mean_b)``, ``R_b = sum_{b' >= b} g(Q_b') (mean_b' -
    mean_{b'+1})`` over the cell's blocks from b up (g = ``slope``, Q_b the draws in blocks up to b, D_b the
    block's weight and q_b its share of the draws), and the variance is ``sum_i p_i (L_i - Lbar)^2 / m``.
    """
    centre = np.add.reduceat(layout.x, layout.cell_starts) / layout.cell_sizes
    shifted = layout.x - centre[layout.run_cell]
    drawn = np.add.reduceat(counts, layout.block_starts, axis=1)
    sums = np.add.reduceat(counts * shifted, layout.block_starts, axis=1)
    squares = np.add.reduceat(counts * shifted * shifted, layout.block_starts, axis=1)
    means = np.divide(sums, drawn, out=np.zeros_like(sums), where=drawn > 0)
    end = (np.cumsum(drawn, axis=1) - layout.cell_starts[layout.block_cell]).astype(np.int64)
    at = layout.cdf_offset[layout.block_cell] + end
    before = at - drawn.astype(np.int64)
    m = layout.cell_sizes[layout.block_cell].astype(np.float64)
    share = drawn / m
    blocks = layout.block_starts.size
    cell_end = np.append(layout.cell_first_block[1:], blocks)  # one past each cell's last block
    last = np.zeros(blocks, dtype=bool)
    last[cell_end - 1] = True
    following = np.concatenate((means[:, 1:], np.zeros((means.shape[0], 1))), axis=1)
    falls = means - np.where(last, 0.0, following)
    spread = np.maximum(squares - sums * means, 0.0) / m / np.square(np.maximum(share, 1.0 / m))
    shape = (-1, layout.groups, layout.tasks)
    values = np.empty((cdf.shape[0], counts.shape[0], layout.groups, layout.tasks))
    variances = np.empty_like(values)
    for k in range(cdf.shape[0]):  # budgets: a handful
        weights = cdf[k][at] - cdf[k][before]
        values[k] = (np.add.reduceat(weights * means, layout.cell_first_block, axis=1) + centre).reshape(shape)
        terms = slope[k][at] * falls
        above = np.concatenate((np.cumsum(terms[:, ::-1], axis=1)[:, ::-1], np.zeros((terms.shape[0], 1))), axis=1)
        influence = above[:, :-1] - above[:, cell_end[layout.block_cell]]  # R_b: the cell's terms from b up
        mean_influence = np.add.reduceat(share * influence, layout.cell_first_block, axis=1)
        deviation = influence - mean_influence[:, layout.block_cell]
        variance = np.add.reduceat(share * deviation**2 + spread * weights**2, layout.cell_first_block, axis=1)
        variances[k] = (variance / layout.cell_sizes).reshape(shape)
    return values, variances


def _placements(layout: _Layout, pair: _PairIndex, counts: np.ndarray) -> np.ndarray:
    """Per resample and run of group a: the share of b's draws on the run's task that it beats, ties counted
    half (the run's placement among them, DeLong et al. 1988), shape ``(resamples, runs of a)``.

    A drawn run of a beats the draws of b below it and ties those equal to it: with b's runs sorted by score
    within the task and D the cumulative counts, those are differences of D at the positions of the data.
    """
    b_counts = counts[:, pair.b_order]
    cumulative = np.concatenate((np.zeros((counts.shape[0], 1)), np.cumsum(b_counts, axis=1)), axis=1)
    beaten = cumulative[:, pair.below] - cumulative[:, pair.task_start]
    tied = cumulative[:, pair.not_above] - cumulative[:, pair.below]
    return (beaten + 0.5 * tied) / pair.b_size


def _group_counts(layout: _Layout, counts: np.ndarray, g: int) -> tuple[np.ndarray, np.ndarray]:
    """Group g's columns of ``counts`` and the first column of each of its cells among them."""
    start = layout.group_starts[g]
    cells = layout.cell_starts[g * layout.tasks + np.arange(layout.tasks)] - start
    return counts[:, start : start + layout.group_sizes[g]], cells


def _placement_moments(layout: _Layout, pair: _PairIndex, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per resample and task: the mean of group a's drawn placements among b's draws, ``P(x_a > x_b) + 0.5
    P(x_a = x_b)`` over the draws of a and b on the task, and their variance (``ddof=1``, 0 for a single run)."""
    a_counts, a_cells = _group_counts(layout, counts, pair.a)
    sizes = layout.cell_sizes[pair.a * layout.tasks + np.arange(layout.tasks)]
    places = _placements(layout, pair, counts)
    sums = np.add.reduceat(a_counts * places, a_cells, axis=1)
    squares = np.add.reduceat(a_counts * places * places, a_cells, axis=1)
    spread = np.maximum(squares - sums * sums / sizes, 0.0) / np.maximum(sizes - 1, 1)
    return sums / sizes, np.where(sizes > 1, spread, 0.0)


def _prob_improvement(
    layout: _Layout, pair: _PairIndex, reverse: _PairIndex, counts: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Per resample: the probability of improvement (the mean over tasks of the Mann–Whitney statistic over
    ``m_a m_b``) and its variance by DeLong et al. (1988): on each task ``s_a^2 / m_a + s_b^2 / m_b``, with s_a^2
    the variance of a's placements among b's draws (``pair``) and s_b^2 of b's among a's (``reverse``); over T
    tasks the sum over T^2."""
    tasks = np.arange(layout.tasks)
    m_a, m_b = (layout.cell_sizes[g * layout.tasks + tasks] for g in (pair.a, pair.b))
    per_task, spread_a = _placement_moments(layout, pair, counts)
    spread_b = _placement_moments(layout, reverse, counts)[1]
    return per_task.mean(axis=1), (spread_a / m_a + spread_b / m_b).sum(axis=1) / layout.tasks**2


def _profiles(layout: _Layout, counts: np.ndarray, thresholds: np.ndarray) -> np.ndarray:
    """Per resample, group and tau: the share of the pooled draws better than tau."""
    out = np.empty((counts.shape[0], layout.groups, thresholds.size))
    for g in range(layout.groups):  # groups: a handful
        runs = slice(layout.group_starts[g], layout.group_starts[g] + layout.group_sizes[g])
        better = (layout.better[runs, None] > thresholds[None, :]).astype(np.float64)
        out[:, g] = counts[:, runs] @ better / layout.group_sizes[g]
    return out


class _Unbiased(NamedTuple):
    """What the studentized-u intervals of the aggregate Boo_n need: U's weights and their slope, cells side by
    side as :func:`_cdf_tables` (U at ``min(n, m_c)`` in a cell of fewer runs than n, where it is undefined and
    the interval is refused)."""

    cdf: np.ndarray
    slope: np.ndarray


def _unbiased_tables(layout: _Layout, budgets: np.ndarray) -> _Unbiased:
    tables = {}
    for m in np.unique(layout.cell_sizes):
        cdf = best_of_n_cdf(int(m), np.minimum(budgets, m), "U")
        tables[int(m)] = cdf, slope_of(cdf)
    sizes = layout.cell_sizes
    return _Unbiased(
        np.concatenate([tables[int(m)][0] for m in sizes], axis=1),
        np.concatenate([tables[int(m)][1] for m in sizes], axis=1),
    )


def _errors(
    layout: _Layout,
    counts: np.ndarray,
    unbiased: _Unbiased,
    gap_values: np.ndarray,
    gap_weights: np.ndarray,
    pairs: list[tuple[_PairIndex, _PairIndex]],
) -> dict[str, np.ndarray]:
    """What the studentized intervals need of each resample (or of the data, with every count 1): the variances
    of the mean over tasks, the optimality gap and the IQM, per group; U over tasks and its variance, per
    budget and group; the probability of improvement and its variance, per pair of groups (each with its
    reverse)."""
    boo_u, boo_var = _task_boo_n_error(layout, counts, unbiased.cdf, unbiased.slope)
    tasks = layout.tasks
    return {
        "mean_var": _mean_error(layout, counts, layout.x, np.full(layout.cell_sizes.size, 1.0 / tasks)),
        "optimality_gap_var": _mean_error(layout, counts, gap_values, gap_weights),
        "iqm_var": _iqm_error(layout, counts),
        "boo_u": boo_u.mean(axis=3).transpose(1, 0, 2),  # (resamples, budgets, groups)
        "boo_var": boo_var.sum(axis=3).transpose(1, 0, 2) / tasks**2,
        **_per_pair(counts.shape[0], [_prob_improvement(layout, pair, reverse, counts) for pair, reverse in pairs]),
    }


def _per_pair(size: int, results: list[tuple[np.ndarray, np.ndarray]]) -> dict[str, np.ndarray]:
    """The probability of improvement and its variance of each pair, one column per pair (none with one group)."""
    probability, variance = (np.array([r[k] for r in results]).reshape(len(results), size).T for k in (0, 1))
    return {"prob_improvement": probability, "prob_improvement_var": variance}


def _resampled(
    layout: _Layout,
    cdf: np.ndarray,
    pairs: list[tuple[_PairIndex, _PairIndex]],
    thresholds: np.ndarray,
    gap_values: np.ndarray,
    n_resamples: int,
    rng: np.random.Generator,
    batch_elements: int = _BATCH_ELEMENTS,
    unbiased: _Unbiased | None = None,
    gap_weights: np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """Every aggregate on ``n_resamples`` stratified resamples, drawn in batches (resamples along axis 0), and,
    given ``unbiased`` and ``gap_weights``, what their studentized intervals need (:func:`_errors`)."""
    per_batch = max(1, batch_elements // max(layout.x.size, cdf.shape[0] * layout.block_starts.size))
    parts: dict[str, list[np.ndarray]] = {}
    done = 0
    while done < n_resamples:
        size = min(per_batch, n_resamples - done)
        counts = _draw_counts(layout, rng, size)
        means = _task_means(layout, counts)
        batch = {
            "mean": means.mean(axis=2),
            "median": np.median(means, axis=2),
            "iqm": _iqm(layout, counts),
            "optimality_gap": _pooled_mean(layout, counts, gap_values),
            "boo_n": _task_boo_n(layout, counts, cdf).mean(axis=3).transpose(1, 0, 2),  # (resamples, budgets, groups)
            "profile": _profiles(layout, counts, thresholds),
        }
        if unbiased is not None and gap_weights is not None:  # the probability of improvement with its variance
            batch.update(_errors(layout, counts, unbiased, gap_values, gap_weights, pairs))
        else:
            batch.update(_per_pair(size, [_prob_improvement(layout, pair, back, counts) for pair, back in pairs]))
        for key, value in batch.items():
            parts.setdefault(key, []).append(value)
        done += size
    return {key: np.concatenate(value, axis=0) for key, value in parts.items()}


# ----------------------------------------------------------------------------------------------------------
# Validation


def _labels(values: Any, name: str, size: int) -> tuple[np.ndarray, tuple[Any, ...]]:
    """Integer codes of the labels (in sorted order of the labels) and the labels; ValueError naming ``name``."""
    try:
        raw = np.asarray(values)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{_named(name)} must be a 1-D sequence of labels: {exc}") from None
    if raw.ndim != 1 or raw.size != size:
        raise ValueError(
            f"{_named(name)} must be 1-D with one label per score ({size}), got an array of shape {raw.shape}"
        )
    if raw.dtype.kind in "US" and not isinstance(values, np.ndarray):
        # numpy turns a list of text and numbers into text (1 becomes "1"): refused rather than converted
        kinds = {str if isinstance(v, (str, bytes)) else type(v) for v in values}
        if len(kinds) > 1:
            raise ValueError(
                f"{_named(name)} must hold labels of one kind (all text, or all numbers), got "
                f"{', '.join(sorted(k.__name__ for k in kinds))}"
            )
    if raw.dtype.kind == "f" and np.isnan(raw).any():
        raise ValueError(
            f"{_named(name)} holds a missing label (NaN) at position {int(np.flatnonzero(np.isnan(raw))[0])}"
        )
    if raw.dtype == object:
        missing = next((i for i, v in enumerate(raw) if v is None or (isinstance(v, float) and math.isnan(v))), None)
        if missing is not None:
            raise ValueError(f"{_named(name)} holds a missing label ({raw[missing]!r}) at position {missing}")
    try:
        labels, codes = np.unique(raw, return_inverse=True)
    except TypeError as exc:  # labels that do not sort together (1 and "a")
        raise ValueError(
            f"{_named(name)} must hold labels of one kind that sort (all text, or all numbers): {exc}"
        ) from None
    return codes.reshape(-1).astype(np.int64), tuple(labels.tolist())


def _normalization(normalize: Any, x: np.ndarray, task_index: np.ndarray, tasks: tuple[Any, ...]) -> np.ndarray | None:
    """``(low, high)`` per task, or None for no normalization."""
    if isinstance(normalize, str):
        as_choice(normalize, "normalize", NORMALIZATIONS)
        if normalize == "none":
            return None
        low = np.full(len(tasks), np.inf)
        high = np.full(len(tasks), -np.inf)
        np.minimum.at(low, task_index, x)
        np.maximum.at(high, task_index, x)
        flat = np.flatnonzero(low == high)
        if flat.size:
            raise ValueError(
                f"{_named('normalize')}='min-max' needs scores that differ on each task; every run of task "
                f"{tasks[flat[0]]!r} scored {low[flat[0]]:g}: give that task's reference scores as a mapping "
                "task -> (low, high)"
            )
        return np.stack((low, high), axis=1)
    if not isinstance(normalize, Mapping):
        raise ValueError(
            f"{_named('normalize')} must be 'none', 'min-max' or a mapping task -> (low, high), got {normalize!r}"
        )
    table = np.empty((len(tasks), 2))
    for t, label in enumerate(tasks):
        if label not in normalize:
            raise ValueError(f"{_named('normalize')} has no reference scores (low, high) for task {label!r}")
        pair = normalize[label]
        try:
            low, high = pair
        except (TypeError, ValueError):
            raise ValueError(f"{_named('normalize')}[{label!r}] must be a pair (low, high), got {pair!r}") from None
        ends = []
        for end in (low, high):
            if isinstance(end, bool) or not isinstance(end, (numbers.Real, np.floating)) or not math.isfinite(end):
                raise ValueError(
                    f"{_named('normalize')}[{label!r}] must be two finite numbers (low, high), got {pair!r}"
                )
            ends.append(float(end))
        if not ends[0] < ends[1]:
            # high < low would turn the scale over, and with it which way is better: say so with `maximize`
            raise ValueError(f"{_named('normalize')}[{label!r}] must have low < high, got {pair!r}")
        table[t] = ends
    return table


def _gamma(gamma: Any, maximize: bool) -> float:
    if gamma is None:
        return 1.0 if maximize else 0.0
    if isinstance(gamma, bool) or not isinstance(gamma, (numbers.Real, np.floating)) or not math.isfinite(gamma):
        raise ValueError(f"{_named('gamma')} must be a finite number or None, got {gamma!r}")
    return float(gamma)


def _across_tasks_iv(
    scores,
    task,
    group,
    maximize,
    validation,
    normalize,
    gamma,
    n,
    estimator,
    tau,
    confidence_level,
    n_resamples,
    rng,
    seed=None,
):
    x = as_scores(scores, "scores")
    maximize = as_flag(maximize, "maximize")
    task_index, tasks = _labels(task, "task", x.size)
    group_index, groups = _labels(group, "group", x.size)
    seed_index = None if seed is None else _labels(seed, "seed", x.size)[0]
    runs = np.zeros((len(groups), len(tasks)), dtype=np.int64)
    np.add.at(runs, (group_index, task_index), 1)
    empty = np.argwhere(runs == 0)
    if empty.size:
        g, t = empty[0]
        raise ValueError(
            f"group {groups[g]!r} has no runs on task {tasks[t]!r} ({len(empty)} such pairs in all): every group "
            f"needs runs on every task (`task` and `group` label each score)"
        )
    if validation is None:
        val = x
    else:
        val = as_scores(validation, "validation")
        if val.size != x.size:
            raise ValueError(f"{_named('validation')} must have one score per run ({x.size}), got {val.size}")
    table = _normalization(normalize, x, task_index, tasks)
    estimator = as_choice(estimator, "estimator", ESTIMATORS)
    budgets = np.unique(as_budgets(n)[0])
    warn_or_raise_budget(budgets, int(runs.min()), estimator)
    if tau is not None:
        tau = np.unique(as_scores(tau, "tau"))
    level = as_probability(confidence_level, "confidence_level")
    return (
        x,
        val,
        task_index,
        tasks,
        group_index,
        groups,
        runs,
        maximize,
        table,
        _gamma(gamma, maximize),
        budgets,
        estimator,
        tau,
        level,
        as_count(n_resamples, "n_resamples"),
        as_rng(rng),
        seed_index,
    )


# ----------------------------------------------------------------------------------------------------------
# The public function


def across_tasks(
    scores: Any,
    *,
    task: Any,
    group: Any,
    maximize: bool,
    validation: Any = None,
    normalize: Normalize | Mapping[Any, tuple[float, float]] = "none",
    gamma: float | None = None,
    n: Any = 5,
    estimator: Estimator = "V",
    tau: Any = None,
    confidence_level: float = 0.95,
    n_resamples: int = 9999,
    rng: Any = None,
    seed: Any = None,
) -> AcrossTasks:
    r"""Aggregates of each group over the tasks of a benchmark, and comparisons of the groups, with stratified
    bootstrap intervals (Agarwal et al. 2021; Bajgar et al. 2018).

    See the module docstring for the definitions: mean and median over tasks of the per-task mean, the IQM and
    the optimality gap of the pooled runs, the mean over tasks of Boo_n at each budget, the performance profile,
    and between groups the differences and the probability of improvement. All are computed on the normalized
    test scores; every group must have at least one run on every task.

    Parameters
    ----------
    scores : array_like
        The test score of each run (its final score; the score compared).
    task, group : array_like
        Labels of each run's task and group (approach), aligned with ``scores``: text or numbers, one kind per
        array. A tidy table gives them as columns: ``across_tasks(df["score"], task=df["task"],
        group=df["method"], maximize=True)``.
    maximize : bool
        Whether a higher score is better. Required: the probability of improvement, the optimality gap, the
        profiles and Boo_n depend on it, and no direction is assumed.
    validation : array_like, optional
        The validation score of each run, aligned with ``scores``: Boo_n picks the best of n runs by it and
        reports that run's test score. None: Boo_n is the expected best of n test scores themselves
        (:func:`boontrack.boo_n` with ``test=None``), an optimistic figure (the best is chosen on the score it
        reports). The other aggregates use ``scores`` only.
    normalize : {"none", "min-max"} or mapping
        ``"none"``: the scores as they are. ``"min-max"``: ``(x - low) / (high - low)`` with low and high the
        lowest and highest score of the task over the runs of every group (each task then spans [0, 1]). A
        mapping task -> ``(low, high)`` (reference scores, e.g. a random and a human score, ``low < high``):
        the same with those, for every task.
    gamma : float, optional
        The optimality gap's target: the gap is the mean of ``max(gamma - x, 0)`` (``max(x - gamma, 0)`` when
        lower is better). None: 1 when higher is better and 0 otherwise, the best end of min-max normalized
        scores (rliable's gamma = 1).
    n : int or sequence of int
        The budgets of the aggregate Boo_n (its curve over n with several). A budget above a task's number of runs
        extrapolates (V, W; :class:`~boontrack.exceptions.ExtrapolationWarning`) or is refused (U).
    estimator : {"V", "U", "W"}
        As in :func:`boontrack.boo_n`.
    tau : array_like, optional
        The grid of the performance profiles; None: 51 points evenly over the range of the normalized scores.
    confidence_level : float
        In (0, 1).
    n_resamples : int
        Stratified bootstrap resamples (rliable's default is 50,000). Where the bootstrap distribution is near
        normal, B resamples give each end of a 95 % interval a Monte Carlo standard error of
        ``sqrt(0.025 * 0.975 / B) / phi(1.96)`` standard deviations: 1.4 % of the half-width at 9,999.
    rng : int or numpy.random.Generator, optional
        Source of randomness; the same seed and runs give the same result in any order. The global RNG is never
        used.
    seed : array_like, optional
        The seed of each run, aligned with ``scores``. On a task where every group ran the same distinct seeds,
        a resample draws seeds and takes every group's run of each (the groups paired by seed, as
        :func:`boontrack.compare_approaches` pairs runs): a seed's luck shared by the groups cancels in their
        differences. Other tasks, and every task without ``seed``, draw each group's runs on their own.
        :attr:`AcrossTasks.paired` says which tasks were paired.

    Returns
    -------
    AcrossTasks

    Raises
    ------
    ValueError
        Bad or non-finite scores, labels not aligned with them or missing, a group without runs on a task, a
        ``normalize`` that is not one of the above (a task without reference scores, ``low >= high``, a task
        whose scores are all equal under ``"min-max"``), a bad ``gamma``, ``n``, ``estimator``, ``tau``,
        ``confidence_level``, ``n_resamples`` or ``rng``; ``estimator="U"`` with n above a task's runs. Each
        names the parameter.

    Warns
    -----
    FewRunsWarning
        A task with a single run in a group: the bootstrap cannot see that task's spread. Fewer than 3 runs on a
        task (not measured). A task holding most of a group's variance of the mean over the tasks (more than
        halfway from its equal share to all of it) with fewer than 10 runs: its runs decide the intervals. A budget above 1 with the V or W estimator (its bias
        adds up over the tasks). A budget above 2m/3, whose aggregate Boo_n's interval is refused, with what was
        measured there.
    ExtrapolationWarning
        A budget above a task's number of runs (V, W).

    References
    ----------
    Agarwal, Schwarzer, Castro, Courville & Bellemare (2021). Deep reinforcement learning at the edge of the
    statistical precipice. NeurIPS.

    Examples
    --------
    >>> import numpy as np
    >>> from boontrack.across import across_tasks
    >>> i = np.arange(10)  # 10 seeds per task; task a is close, task b is not
    >>> scores = np.r_[0.70 + 0.01 * i, 0.50 + 0.01 * i, 0.695 + 0.01 * i, 0.40 + 0.01 * i]
    >>> res = across_tasks(
    ...     scores,
    ...     task=np.tile(np.repeat(["a", "b"], 10), 2),
    ...     group=np.repeat(["new", "old"], 20),
    ...     maximize=True,
    ...     n=1,
    ...     n_resamples=999,
    ...     rng=0,
    ... )
    >>> round(res.aggregates["new"].mean.estimate, 4)  # (0.745 + 0.545) / 2
    0.645
    >>> round(res.compare("new", "old").prob_improvement.estimate, 4)  # (55/100 + 100/100) / 2
    0.775
    """
    (
        x_raw,
        val,
        task_index,
        tasks,
        group_index,
        groups,
        runs,
        maximize,
        table,
        gamma,
        budgets,
        estimator,
        tau,
        level,
        n_resamples,
        rng,
        seed_index,
    ) = _across_tasks_iv(
        scores,
        task,
        group,
        maximize,
        validation,
        normalize,
        gamma,
        n,
        estimator,
        tau,
        confidence_level,
        n_resamples,
        rng,
        seed,
    )
    single = np.argwhere(runs == 1)
    if single.size:
        g, t = single[0]
        warn(
            f"group {groups[g]!r} has a single run on task {tasks[t]!r} ({len(single)} such pairs in all): the "
            "stratified bootstrap cannot see that task's spread, and holds its score fixed in every resample",
            FewRunsWarning,
            stacklevel=2,
        )
    smallest = int(runs.min())
    if smallest < FEW_RUNS_PER_TASK:
        warn(f"{smallest} runs on a task: {MEASURED_FEW_RUNS}", FewRunsWarning, stacklevel=2)
    if budgets.max() > 1 and estimator != "U":
        # the way out named as the caller writes it: estimator='U' in Python, --estimator U on the command line
        said = f"Boo_n across {len(tasks)} tasks: {MEASURED_BOO_N}; {_setting('estimator', 'U')} reports U"
        warn(said, FewRunsWarning, stacklevel=2)
    x = x_raw if table is None else (x_raw - table[task_index, 0]) / (table[task_index, 1] - table[task_index, 0])
    layout = _layout(x, val, task_index, group_index, len(groups), len(tasks), maximize, seed_index)
    dominant = _dominant_task(layout)
    if dominant is not None:
        g, t, share = dominant
        warn(
            f"task {tasks[t]!r} holds {share:.0%} of the variance of group {groups[g]!r}'s mean over the tasks, "
            f"with {runs[g, t]} runs: those runs decide its intervals, and a few runs of a task whose runs fall in "
            f"clusters often show one cluster ({MEASURED_DOMINANT})",
            FewRunsWarning,
            stacklevel=2,
        )
    sign = 1.0 if maximize else -1.0
    if tau is None:
        tau = np.linspace(x.min(), x.max(), PROFILE_POINTS) if np.ptp(x) > 0 else np.array([x.min()])
    gap_values = np.maximum(sign * gamma - layout.better, 0.0)
    gap_weights = layout.cell_sizes / np.repeat(layout.group_sizes, len(tasks))
    pairs = [
        (_pair_index(layout, a, b), _pair_index(layout, b, a))
        for a in range(len(groups))
        for b in range(a + 1, len(groups))
    ]
    unbiased = _unbiased_tables(layout, budgets)

    estimates = _estimates(layout, budgets, estimator, [pair for pair, _ in pairs], sign * tau, gap_values)
    on_data = _errors(layout, np.ones((1, x.size)), unbiased, gap_values, gap_weights, pairs)
    reference = _task_boo_n(layout, np.ones((1, x.size)), _cdf_tables(layout, budgets, "V"))[:, 0].mean(axis=2)
    dist = _resampled(
        layout,
        _cdf_tables(layout, budgets, estimator),
        pairs,
        sign * tau,
        gap_values,
        n_resamples,
        rng,
        unbiased=unbiased,
        gap_weights=gap_weights,
    )
    refusals = _refusals(budgets, runs, groups, tasks)
    ranges = {
        key: (np.minimum.reduceat(values, layout.group_starts), np.maximum.reduceat(values, layout.group_starts))
        for key, values in (("x", layout.x), ("optimality_gap", gap_values))
    }

    def result(
        estimate: float, distribution: np.ndarray, pivot: _PivotParts | None = None, refused: str | None = None
    ) -> BootstrapResult:
        if refused is not None:
            low, high, method = math.nan, math.nan, REFUSED
        elif pivot is None:
            (low, high), method = percentile_interval(distribution, level), PERCENTILE
        else:
            low, high = pivot.interval(level)
            low, high, method = min(low, estimate), max(high, estimate), pivot.method
        return BootstrapResult(
            estimate=float(estimate),
            confidence_interval=ConfidenceInterval(low, high),
            standard_error=float(bootstrap_standard_error(distribution[:, None])[0]),
            bootstrap_distribution=distribution,
            method=method,
            confidence_level=level,
            n_resamples=n_resamples,
        )

    def pivot(name: str, a: int, b: int | None = None, j: int | None = None) -> _PivotParts:
        """The studentized parts of aggregate ``name`` of group a (minus group b's), at budget j for Boo_n."""
        if name == "boo_n":
            centre, error = on_data["boo_u"][0, j], on_data["boo_var"][0, j]
            centres, errors, ref = dist["boo_u"][:, j], dist["boo_var"][:, j], reference[j]
            method = STUDENTIZED_U
        else:
            centre, error, ref = estimates[name], on_data[f"{name}_var"][0], estimates[name]
            centres, errors = dist[name], dist[f"{name}_var"]
            method = STUDENTIZED
        lowest, highest = ranges["optimality_gap" if name == "optimality_gap" else "x"]
        if b is None:
            span = (lowest[a], highest[a])
            return _PivotParts(centre[a], error[a], ref[a], centres[:, a], errors[:, a], method, span)
        return _PivotParts(
            centre[a] - centre[b],
            error[a] + error[b],
            ref[a] - ref[b],
            centres[:, a] - centres[:, b],
            errors[:, a] + errors[:, b],
            method,
            (lowest[a] - highest[b], highest[a] - lowest[b]),
        )

    def improvement_pivot(p: int) -> _PivotParts:
        """The studentized parts of the probability of improvement of pair p (DeLong's variance), cut to [0, 1]."""
        estimate = float(estimates["prob_improvement"][p].mean())
        centres, errors = dist["prob_improvement"][:, p], dist["prob_improvement_var"][:, p]
        return _PivotParts(
            estimate, on_data["prob_improvement_var"][0, p], estimate, centres, errors, STUDENTIZED, (0, 1)
        )

    quantiles = [(1 - level) / 2, (1 + level) / 2]
    boo_estimates = estimates["boo_n"].mean(axis=2)  # the mean over tasks, (budgets, groups)
    aggregates = {}
    for g, label in enumerate(groups):
        profile_dist = dist["profile"][:, g]
        low, high = np.quantile(profile_dist, quantiles, axis=0)
        aggregates[label] = GroupAggregates(
            group=label,
            mean=result(estimates["mean"][g], dist["mean"][:, g], pivot("mean", g)),
            median=result(estimates["median"][g], dist["median"][:, g]),
            iqm=result(estimates["iqm"][g], dist["iqm"][:, g], pivot("iqm", g)),
            optimality_gap=result(
                estimates["optimality_gap"][g], dist["optimality_gap"][:, g], pivot("optimality_gap", g)
            ),
            boo_n={
                int(k): result(
                    boo_estimates[j, g], dist["boo_n"][:, j, g], pivot("boo_n", g, j=j), refusals.get(int(k))
                )
                for j, k in enumerate(budgets)
            },
            profile=PerformanceProfile(tau, estimates["profile"][g], low, high, profile_dist),
            task_means=estimates["task_means"][g],
            task_boo_n={int(k): estimates["boo_n"][j, g] for j, k in enumerate(budgets)},
        )
    # the difference of two groups' estimates, and of their resamples (drawn apart, or paired by seed)
    comparisons = {}
    for p, (pair, _) in enumerate(pairs):
        a, b = pair.a, pair.b
        comparisons[(groups[a], groups[b])] = GroupComparison(
            a=groups[a],
            b=groups[b],
            mean_difference=result(
                estimates["mean"][a] - estimates["mean"][b],
                dist["mean"][:, a] - dist["mean"][:, b],
                pivot("mean", a, b),
            ),
            iqm_difference=result(
                estimates["iqm"][a] - estimates["iqm"][b], dist["iqm"][:, a] - dist["iqm"][:, b], pivot("iqm", a, b)
            ),
            boo_n_difference={
                int(k): result(
                    boo_estimates[j, a] - boo_estimates[j, b],
                    dist["boo_n"][:, j, a] - dist["boo_n"][:, j, b],
                    pivot("boo_n", a, b, j),
                    refusals.get(int(k)),
                )
                for j, k in enumerate(budgets)
            },
            prob_improvement=result(
                estimates["prob_improvement"][p].mean(), dist["prob_improvement"][:, p], improvement_pivot(p)
            ),
            task_prob_improvement=estimates["prob_improvement"][p],
        )
    for message in refusals.values():
        warn(message, FewRunsWarning, stacklevel=2)
    return AcrossTasks(
        groups=groups,
        tasks=tasks,
        runs=runs,
        normalization=table,
        maximize=maximize,
        gamma=gamma,
        n=tuple(int(k) for k in budgets),
        aggregates=aggregates,
        comparisons=comparisons,
        confidence_level=level,
        n_resamples=n_resamples,
        refused={f"boo_n[{k}]": message for k, message in refusals.items()},
        paired=layout.paired.copy(),
    )


@dataclass(frozen=True)
class _PivotParts:
    """A studentized interval's parts: ``centre`` and its variance ``error`` on the data, the ``reference`` the
    resamples' centres are compared with, and the resamples' ``centres`` and variances ``errors``."""

    centre: float
    error: float
    reference: float
    centres: np.ndarray
    errors: np.ndarray
    method: str
    #: The range of the group's scores (of a difference: of the differences of two runs), where the interval is cut.
    span: tuple[float, float]

    def interval(self, level: float) -> tuple[float, float]:
        """``centre - t_hi se`` to ``centre - t_lo se`` (see :data:`TAILS`), t the quantiles of the resamples'
        pivot ``(centre* - reference) / se*``, cut to :attr:`span`: an end whose quantile is unbounded (more
        resamples with se* = 0 than the tail holds: few runs, tied scores) stops there."""
        pivot = studentize(self.centres - self.reference, np.sqrt(self.errors))
        low, high = studentized_ends(self.centre, math.sqrt(self.error), pivot, level, TAILS)
        return max(low, float(self.span[0])), min(high, float(self.span[1]))


def studentized_ends(centre: float, error: float, pivot: np.ndarray, level: float, tails: str) -> tuple[float, float]:
    """The bootstrap-t interval from the pivot's resamples: ``"equal-tailed"``, ``centre - t_hi se`` to ``centre -
    t_lo se`` with ``t_lo`` and ``t_hi`` its ``(1 - level) / 2`` and ``(1 + level) / 2`` quantiles;
    ``"symmetric"``, ``centre +- q se`` with q the ``level`` quantile of ``|pivot|``; ``"farther"``, each end the
    farther of the two."""
    t_lo, t_hi = np.quantile(pivot, [(1 - level) / 2, (1 + level) / 2])
    q = float(np.quantile(np.abs(pivot), level))
    if tails == "equal-tailed":
        below, above = t_hi, -t_lo
    elif tails == "symmetric":
        below = above = q
    else:
        below, above = max(q, t_hi), max(q, -t_lo)
    ends = []
    for reach, side in ((below, -1.0), (above, 1.0)):
        ends.append(side * math.inf if reach >= UNBOUNDED / 2 else float(centre + side * reach * error))
    return ends[0], ends[1]


def _refusals(budgets: np.ndarray, runs: np.ndarray, groups: tuple, tasks: tuple) -> dict[int, str]:
    """Budget -> why its aggregate Boo_n has no interval (see :data:`MOST_SHARE`)."""
    smallest = int(runs.min())
    g, t = np.argwhere(runs == smallest)[0]
    out = {}
    for k in budgets:
        if k > 1 and k > MOST_SHARE * smallest:
            out[int(k)] = (
                f"no interval for the aggregate Boo_{int(k)}: group {groups[g]!r} has {smallest} runs on task "
                f"{tasks[t]!r}, and n = {int(k)} is above 2m/3 = {float(MOST_SHARE * smallest):.3g}: "
                f"{MEASURED_REFUSED}"
            )
    return out


def _estimates(
    layout: _Layout,
    budgets: np.ndarray,
    estimator: Estimator,
    pairs: list[_PairIndex],
    thresholds: np.ndarray,
    gap_values: np.ndarray,
) -> dict[str, Any]:
    """The aggregates on the data, each computed directly from its definition (not from the resampling kernels,
    which the tests compare with these)."""
    xs = layout.x
    cells = [xs[s : s + m] for s, m in zip(layout.cell_starts, layout.cell_sizes)]
    task_means = np.array([c.mean() for c in cells]).reshape(layout.groups, layout.tasks)
    iqm = np.empty(layout.groups)
    for g in range(layout.groups):
        pooled = np.sort(xs[layout.group_starts[g] : layout.group_starts[g] + layout.group_sizes[g]])
        cut = int(0.25 * pooled.size)
        iqm[g] = pooled[cut : pooled.size - cut].mean()
    boo = np.empty((budgets.size, layout.groups * layout.tasks))
    for c, (s, m) in enumerate(zip(layout.cell_starts, layout.cell_sizes)):
        # the core's evaluation of Boo_n on the runs themselves, without boo_n's validation and warnings per cell:
        # the budgets were checked once, against the smallest cell
        ranked = RankedRuns(layout.val[s : s + m], xs[s : s + m], layout.maximize)
        boo[:, c] = ranked.estimate(best_of_n_cdf(int(m), budgets, estimator))
    prob = np.empty((len(pairs), layout.tasks))
    for p, pair in enumerate(pairs):
        for t in range(layout.tasks):
            mine = layout.better[_cell(layout, pair.a, t)]
            theirs = layout.better[_cell(layout, pair.b, t)]
            prob[p, t] = ((mine[:, None] > theirs[None, :]) + 0.5 * (mine[:, None] == theirs[None, :])).mean()
    profile = np.array(
        [
            (
                layout.better[layout.group_starts[g] : layout.group_starts[g] + layout.group_sizes[g], None]
                > thresholds
            ).mean(axis=0)
            for g in range(layout.groups)
        ]
    )
    return {
        "task_means": task_means,
        "mean": task_means.mean(axis=1),
        "median": np.median(task_means, axis=1),
        "iqm": iqm,
        "optimality_gap": np.add.reduceat(gap_values, layout.group_starts) / layout.group_sizes,
        "boo_n": boo.reshape(budgets.size, layout.groups, layout.tasks),
        "prob_improvement": prob,
        "profile": profile,
    }


def _dominant_task(layout: _Layout) -> tuple[int, int, float] | None:
    """(group, task, share) of the task with the largest share of a group's variance of the mean over the tasks
    (``s_t^2 / m_t`` over their sum, ``ddof=1``), where that share is above ``(1 + 1/T) / 2`` (see
    :data:`DOMINANT_RUNS`) and the task has 3 (:data:`FEW_RUNS_PER_TASK`) to :data:`DOMINANT_RUNS` - 1 runs; None
    where no task does."""
    _, spread = _cell_moments(layout, np.ones((1, layout.x.size)), layout.x)
    parts = (spread[0] / layout.cell_sizes).reshape(layout.groups, layout.tasks)
    totals = parts.sum(axis=1, keepdims=True)
    shares = np.divide(parts, totals, out=np.zeros_like(parts), where=totals > 0)
    sizes = layout.cell_sizes.reshape(layout.groups, layout.tasks)
    few = (sizes >= FEW_RUNS_PER_TASK) & (sizes < DOMINANT_RUNS)  # below 3 runs, the few runs' warning speaks
    candidates = np.where(few & (shares > (1 + 1 / layout.tasks) / 2), shares, 0.0)
    if not candidates.any():
        return None
    g, t = np.unravel_index(np.argmax(candidates), candidates.shape)
    return int(g), int(t), float(candidates[g, t])


def _cell(layout: _Layout, g: int, t: int) -> slice:
    c = g * layout.tasks + t
    return slice(layout.cell_starts[c], layout.cell_starts[c] + layout.cell_sizes[c])
