"""How the reports state a summary's across-tasks part (:attr:`boontrack.summary.Summary.across_tasks`): its
heading, the table of each approach's aggregates and the table of the comparisons across the tasks, as cells of
text that the terminal table, ``report.md``, ``report.html`` and a comparison's Markdown lay out (and escape)
each their own way, so that each says the same figures."""

from __future__ import annotations

from typing import TYPE_CHECKING

from boontrack._report_text import interval_text, number_text

if TYPE_CHECKING:
    from boontrack.summary import AcrossTasksSummary, AggregateInterval, Summary

__all__ = ["INTERVAL_METHODS", "across_heading", "aggregate_table", "aggregate_text", "comparison_table"]

#: How each normalization is said.
_NORMALIZED = {
    "none": "as they are",
    "min-max": "min-max normalized per task (each task's lowest to highest score over every group as 0 to 1)",
    "reference": "normalized per task by the reference scores given (low as 0, high as 1)",
}


def aggregate_text(interval: AggregateInterval) -> str:
    """An aggregate and its interval, or the estimate and "(no interval)" where the interval was refused."""
    if interval.method == "refused":
        return f"{number_text(interval.estimate)} (no interval)"
    return interval_text(interval)


def across_heading(summary: Summary) -> str:
    """One sentence: the tasks, the scale of the scores, what the aggregates are and their intervals."""
    across = _across(summary)
    spec = summary.spec
    column = spec.task_column or across.task_column  # as the user named it (``task``, not ``tags.task``)
    paired = len(across.paired_tasks)
    return (
        f"Across {len(across.tasks)} tasks ({column}: {', '.join(across.tasks)}): {summary.metric} scores "
        f"{_NORMALIZED[across.normalize]}; per group, the mean and median over tasks of the per-task mean, the IQM "
        f"and the optimality gap (below {across.gamma:g}) of the pooled runs and the mean over tasks of Boo_n; "
        f"{spec.confidence_level * 100:g} % stratified bootstrap intervals, {across.n_resamples:,} resamples"
        + (f", runs paired by seed on {paired} of {len(across.tasks)} tasks." if paired else ".")
    )


def aggregate_table(across: AcrossTasksSummary) -> tuple[list[str], list[list[str]]]:
    """Header and rows, one per approach: runs, mean, median, IQM, optimality gap and Boo_n at each budget."""
    header = ["group", "runs", "mean", "median", "IQM", "optimality gap", *(f"Boo_{n}" for n in across.n)]
    rows = [
        [
            a.approach,
            str(a.runs),
            *(aggregate_text(x) for x in (a.mean, a.median, a.iqm, a.optimality_gap)),
            *(aggregate_text(a.boo_n[n]) for n in across.n),
        ]
        for a in across.aggregates
    ]
    return header, rows


def comparison_table(across: AcrossTasksSummary) -> tuple[list[str], list[list[str]]]:
    """Header and rows, one per comparison: ΔIQM, Δmean, ΔBoo_n at each budget and P(group > vs)."""
    header = ["group", "vs", "ΔIQM", "Δmean", *(f"ΔBoo_{n}" for n in across.n), "P(group > vs)"]
    rows = [
        [
            c.group,
            c.baseline,
            aggregate_text(c.iqm_difference),
            aggregate_text(c.mean_difference),
            *(aggregate_text(c.boo_n_difference[n]) for n in across.n),
            aggregate_text(c.prob_improvement),
        ]
        for c in across.comparisons
    ]
    return header, rows


#: Which interval each figure has (:mod:`boontrack.across`), and what P(group > vs) is.
INTERVAL_METHODS = (
    "Intervals: the mean, the IQM, the optimality gap, their differences and P(group > vs), studentized "
    "stratified bootstrap; Boo_n and its difference, studentized around the unbiased U (no interval above 2m/3, m "
    "the fewest runs of a task: see the warnings); the median, percentile. P(group > vs) is the mean over the "
    "tasks of the chance that a run of the group beats a run of vs (ties count half): 0.5 is no difference."
)


def _across(summary: Summary) -> AcrossTasksSummary:
    if summary.across_tasks is None:
        raise ValueError("the summary has no across-tasks part: it was made without a task column")
    return summary.across_tasks
