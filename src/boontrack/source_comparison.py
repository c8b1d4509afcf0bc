"""The result of a comparison of sources (:class:`SourceComparison`, its :class:`Gate`) and what is shown and
written of it: the Markdown of a pull request's comment (:func:`to_markdown`), each metric's curves as SVG files
(:func:`curve_files`), and the metrics and files of its run in a tracker (:func:`comparison_outputs`).

:mod:`boontrack.sources` joins the sources and computes the comparison, and serves these names; this module is the
comparison's own renderer beside :mod:`boontrack.reports` (a summary's), whose tables and wording it shares. It
imports nothing heavy at import time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from boontrack.backends import SummaryOutputs
    from boontrack.summary import ComparisonSummary, Summary

__all__ = ["Gate", "SourceComparison", "comparison_outputs", "curve_files", "to_markdown"]


@dataclass(frozen=True)
class Gate:
    """The verdict of a required claim: every source (group by group) against the first.

    The claim holds for one comparison when its interval of ΔBoo_n (at the largest budget both sides report) lies
    wholly on the good side of the threshold in the metric's direction: above 0 (``better``) or above ``-margin``
    (``not-worse``) when higher is better, below 0 or ``margin`` when lower is better. With several comparisons
    (groups, sources, metrics) every one must hold; the one whose decisive interval end came closest to failing
    (or failed furthest), relative to its interval's width, is reported.
    """

    require: Literal["better", "not-worse"]
    margin: float
    passed: bool
    #: The metric of the comparison that decided (the reported one: the test metric, else the validation metric).
    metric: str
    #: The comparison that decided: its group (in the joined table) and baseline labels.
    group: str
    baseline: str
    #: The difference that decided, e.g. ``ΔBoo_10``, and the interval end that decided (low or high).
    quantity: str
    end: Literal["low", "high"]
    bound: float
    threshold: float
    #: One line saying which number decided and why.
    verdict: str


@dataclass(frozen=True)
class SourceComparison:
    """The result of :func:`compare_sources`: the labels, the analysis of the joined runs per metric and the
    gate."""

    #: The sources' labels, the baseline first.
    labels: tuple[str, ...]
    #: The analysis of all runs, grouped by :data:`SIDE_COLUMN` (and the groups within each source), one per
    #: metric in the order given; with several metrics the p-values are adjusted over all their comparisons.
    summaries: tuple[Summary, ...]
    #: The verdict, when a claim was required.
    gate: Gate | None = None
    #: What ``write_to`` found: ``"updated"`` (written) or ``"unchanged"`` (it held this comparison already);
    #: None without ``write_to``.
    written: Literal["updated", "unchanged"] | None = None
    #: The sources' change tokens bound together, asked before their runs were read when the comparison is
    #: written (``write_to``), None otherwise or where a source offers none: written beside the comparison's
    #: fingerprint, as a summary's token is (:func:`boontrack.pipeline.publish`).
    change_token: str | None = field(default=None, repr=False, compare=False)

    @property
    def metrics(self) -> tuple[str, ...]:
        """The metrics compared (each summary's reported metric), in order."""
        return tuple(summary.metric for summary in self.summaries)

    @property
    def summary(self) -> Summary:
        """The analysis of the one metric compared; with several, ValueError (see :attr:`summaries`)."""
        if len(self.summaries) != 1:
            raise ValueError(f"{len(self.summaries)} metrics were compared ({', '.join(self.metrics)}): see summaries")
        return self.summaries[0]

    @property
    def comparisons(self) -> tuple[ComparisonSummary, ...]:
        """Each source against the first (group by group) for the one metric compared: differences are
        ``group - baseline``."""
        return self.summary.comparisons


def to_markdown(result: SourceComparison, *, svg: bool = False) -> str:
    """A compact report for a pull request's comment: the verdict, Boo_n of each side, the comparisons and each
    side's expected-best curve as text (:func:`_curve_text`: a pull request's comment or a job's summary page
    shows no SVG); with ``svg``, also a link to each metric's plot of the curves with their bands, an SVG file
    beside the report (:func:`curve_files`)."""
    from boontrack._report_text import shown_budgets
    from boontrack.reports import across_lines, comparison_lines, interval_text, markdown_literal, md_table

    metrics = len(result.summaries)
    family = sum(len(summary.comparisons) for summary in result.summaries)
    lines = [f"# boontrack compare: {', '.join(markdown_literal(metric) for metric in result.metrics)}", ""]
    if result.gate is not None:
        mark = "✅" if result.gate.passed else "❌"
        lines += [f"{mark} {markdown_literal(result.gate.verdict)}", ""]
    for summary in result.summaries:
        budgets = shown_budgets(summary.spec, (g.boo_n for g in summary.groups))
        if metrics > 1:
            lines += [f"## Metric: {markdown_literal(summary.metric)}", ""]
        header = ["group", "runs", *(f"Boo_{n}" for n in budgets), "mean"]
        rows = [
            [
                markdown_literal(g.label),
                g.runs,
                *(interval_text(g.boo_n[n]) if n in g.boo_n else "—" for n in budgets),
                interval_text(g.mean),
            ]
            for g in summary.groups
        ]
        lines += [*md_table(header, rows), ""]
        if svg:
            said = f"Expected best {summary.metric} against n, each side with its pointwise bootstrap band"
            lines += [f"![{markdown_literal(said)}]({_svg_name(summary.metric)})", ""]
        lines += [*_curve_text(summary), "", *comparison_lines(summary, metrics=metrics, family=family), ""]
        if summary.across_tasks is not None:
            lines += across_lines(summary)
    return "\n".join(lines).rstrip("\n") + "\n"


#: The heights of a curve drawn as text, lowest first.
_BLOCKS = "▁▂▃▄▅▆▇█"
#: The most budgets a curve drawn as text shows: log-spaced from 1 to the largest n.
_TEXT_BUDGETS = 24


def _curve_text(summary: Summary) -> list[str]:
    """Each group's expected-best curve as a line of block characters, one per budget and all on one scale, in a
    collapsed ``<details>`` block: Markdown that shows wherever Markdown does. A budget where a group's curve is
    doubtful (n > m/2, as the plots dash it) or not defined is a ``·``."""
    import html

    import numpy as np

    from boontrack._report_text import number_text
    from boontrack.reports import markdown_literal, md_table, printable

    largest = max(int(g.curve.n.max()) for g in summary.groups)
    budgets = np.unique(np.round(np.geomspace(1, largest, min(largest, _TEXT_BUDGETS))).astype(np.int64))
    rows = {}
    for g in summary.groups:
        curve = g.curve
        trusted = np.ones(curve.n.size, bool) if curve.trustworthy is None else np.asarray(curve.trustworthy, bool)
        kept = dict(zip(curve.n[trusted].tolist(), curve.estimate[trusted].tolist()))
        rows[g.label] = np.array([kept.get(n, np.nan) for n in budgets.tolist()])
    shown = np.concatenate(list(rows.values()))
    shown = shown[np.isfinite(shown)]
    if shown.size == 0:
        return []
    low, high = float(shown.min()), float(shown.max())
    spread = high - low if high > low else 1.0
    drawn = {
        label: "".join(
            _BLOCKS[round((v - low) / spread * (len(_BLOCKS) - 1))] if np.isfinite(v) else "·" for v in values
        )
        for label, values in rows.items()
    }
    scale = (
        f"{_BLOCKS[0]} {number_text(low)} to {_BLOCKS[-1]} {number_text(high)}"
        if high > low
        else f"every value {number_text(low)}"
    )
    return [
        "<details>",
        # raw HTML inside Markdown: the HTML rule, on one line (a blank line would end the block early)
        f"<summary>Expected best {html.escape(printable(summary.metric))} out of n runs, n = 1 to {largest}, as "
        "text</summary>",
        "",
        f"One character per budget n = {', '.join(map(str, budgets.tolist()))}, on one scale for every row: "
        f"{scale}; · where n is more than half the runs of the row (the estimate is doubtful there).",
        "",
        *md_table(
            ["group", f"expected best, n = 1 … {largest}"], [[markdown_literal(k), f"`{v}`"] for k, v in drawn.items()]
        ),
        "",
        "</details>",
    ]


def _svg_name(metric: str) -> str:
    """The file name of a metric's plot of the curves, beside a comparison's report."""
    from boontrack.backends import discovery_key

    return f"curves_{discovery_key(metric)}.svg"


def curve_files(result: SourceComparison) -> dict[str, bytes]:
    """Each metric's plot of every side's expected-best curve with its pointwise band, as an SVG file (the plot
    of ``report.html``): file name -> content, the names :func:`to_markdown` links with ``svg=True``."""
    from boontrack.report_html import curve_svg

    return {_svg_name(summary.metric): curve_svg(summary).encode() for summary in result.summaries}


def comparison_outputs(result: SourceComparison, prefix: str) -> SummaryOutputs:
    """The metrics and artifacts of a comparison's run."""
    import json

    from boontrack.backends import SummaryOutputs
    from boontrack.reports import flat_metrics, markdown_literal, safe_name
    from boontrack.summary import jsonable

    metrics: dict[str, float] = {}
    for summary in result.summaries:
        flat = flat_metrics(summary, prefix=prefix)
        own = prefix + safe_name(summary.metric, allow_slash=True) + "/"
        # with several metrics, the counts of all runs (boon/runs, ...) would differ from metric to metric
        metrics.update(flat if len(result.summaries) == 1 else {k: v for k, v in flat.items() if k.startswith(own)})
    gate = result.gate
    if gate is not None:
        verdict = {"passed": float(gate.passed), "bound": gate.bound, "threshold": gate.threshold}
        metrics.update({f"{prefix}gate/{name}": value for name, value in verdict.items() if math.isfinite(value)})
    data = {
        "labels": list(result.labels),
        "gate": None if gate is None else jsonable(gate),
        "summaries": [summary.to_dict() for summary in result.summaries],
    }
    said = f"boontrack compare: {', '.join(result.metrics)} ({', '.join(result.labels[1:])} vs {result.labels[0]})"
    return SummaryOutputs(
        metrics=metrics,
        curves=[],
        artifacts={
            "report.md": to_markdown(result, svg=True).encode(),
            **curve_files(result),
            "comparison.json": json.dumps(data, indent=2).encode(),
        },
        description=markdown_literal(said if gate is None else gate.verdict),  # a run's description is Markdown
    )
