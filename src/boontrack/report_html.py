"""``report.html``: the summary as one self-contained page, for a tracker's artifact view or a browser.

The page holds the tables of ``report.md`` (Boo_n with intervals per group, the means, the comparisons with
their p-values), every plot as inline SVG (each group's expected-best curve with its pointwise band, and the
training curves when the summary has them), the warnings, the dropped runs with their reasons, the doubtful
numbers marked ⚠ as in ``report.md``, how the numbers were computed, and with a task column the approaches
across the tasks (their aggregates with intervals as error bars, their performance profiles). It loads
nothing: no script, no external style sheet, font or image; each plotted point carries its values in an SVG
``<title>``, which browsers show on hover. Numbers are formatted by the helpers of :mod:`boontrack.reports`, so the page and
``report.md`` say the same figures.
"""

from __future__ import annotations

import html
import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from boontrack._report_text import (
    GAUSSIAN_NOTE,
    REPORT_DROPPED,
    TEST_NAMES,
    TOO_FEW,
    interval_text,
    number_name,
    number_text,
    pair_doubts,
    pvalue_text,
    resamples_text,
    scores_text,
    shown_budgets,
    unseen_sentences,
)
from boontrack.report_across import INTERVAL_METHODS, across_heading, aggregate_table, comparison_table
from boontrack.summary import IntervalEstimate, Summary

if TYPE_CHECKING:
    from boontrack.runtable import DroppedRun
    from boontrack.summary import ComparisonSummary, GroupSummary
    from boontrack.training import TrainingCurves

__all__ = ["curve_svg", "to_html"]

#: Okabe-Ito colours: distinct for colour-blind readers, and each dark enough to show on white (no yellow).
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000")
#: Plot size in SVG user units (the SVG scales to the page's width).
_WIDTH, _HEIGHT = 900, 340
_LEFT, _RIGHT, _TOP, _BOTTOM = 70, 170, 16, 48
_STYLE = """
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; color: #1a1a1a;
  background: #fff; max-width: 1100px; margin: 0 auto; padding: 20px 28px; }
h1 { font-size: 1.5em; margin: 0 0 .3em; } h2 { font-size: 1.2em; margin: 1.6em 0 .5em; border-bottom: 1px solid #ccc; }
h3 { font-size: 1.05em; margin: 1.2em 0 .3em; }
.wide { overflow-x: auto; }
table { border-collapse: collapse; margin: .4em 0 .8em; font-variant-numeric: tabular-nums; font-size: .93em; }
th, td { padding: 4px 8px; border-bottom: 1px solid #ddd; text-align: left; vertical-align: top; }
th { text-align: right; } td.num { text-align: right; }
th { background: #f3f5f7; font-weight: 600; vertical-align: bottom; }
th:first-child, td:first-child { text-align: left; white-space: nowrap; }
td.num { white-space: nowrap; } .ci { color: #555; font-size: .88em; }
.doubt { color: #b35900; cursor: help; } .note { color: #444; font-size: .92em; }
.warn { background: #fff6e5; border-left: 4px solid #e69f00; padding: 6px 10px; margin: 4px 0; }
dl.how { display: grid; grid-template-columns: max-content 1fr; gap: 2px 16px; } dl.how dt { font-weight: 600; }
dl.how dd { margin: 0; } svg { width: 100%; height: auto; max-width: 900px; display: block; }
footer { margin-top: 2em; color: #666; font-size: .85em; }
"""
#: How a plot's text looks, in the page and in an SVG file of its own (:func:`curve_svg`).
_SVG_TEXT = "text { font: 12px system-ui, Helvetica, Arial, sans-serif; fill: #333; }"


def _e(text: object) -> str:
    """Text from the runs, escaped for HTML (labels, run ids, reasons, warnings)."""
    return html.escape(str(text), quote=True)


def _doubt_mark(reasons: Sequence[str] | None) -> str:
    """⚠ after a doubtful number, as in ``report.md``, its reasons on hover."""
    if not reasons:
        return ""
    return f' <span class="doubt" title="doubtful: {_e("; ".join(reasons))}">⚠</span>'


def _interval_cell(interval: IntervalEstimate, reasons: Sequence[str] | None = None) -> str:
    """An estimate over its interval in one cell that does not wrap."""
    return (
        f'<td class="num">{number_text(interval.estimate)}{_doubt_mark(reasons)}<br>'
        f'<span class="ci">[{number_text(interval.ci_low)}, {number_text(interval.ci_high)}]</span></td>'
    )


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A table; ``rows`` are rendered cells (``<td>...</td>``), ``header`` escaped text."""
    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    body = "".join(f"<tr>{''.join(row)}</tr>" for row in rows)
    return f'<div class="wide"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'


def _td(text: object, *, number: bool = False) -> str:
    return f'<td class="num">{_e(text)}</td>' if number else f"<td>{_e(text)}</td>"


def _group_table(summary: Summary) -> str:
    budgets = shown_budgets(summary.spec, (g.boo_n for g in summary.groups))
    gaussian_budgets = [n for n in budgets if n > 1]  # Gaussian Boo_1 is the mean
    header = ["group", "runs", "dropped", *(f"Boo_{n}" for n in budgets), "mean"]
    header += [*(f"Gaussian Boo_{n}" for n in gaussian_budgets), "normality rejected?"]
    rows = []
    for g in summary.groups:
        cells = [_td(g.label), _td(g.runs, number=True), _td(len(g.dropped), number=True)]
        cells += [_interval_cell(g.boo_n[n], g.doubts.get(n)) if n in g.boo_n else _td(TOO_FEW) for n in budgets]
        cells.append(_interval_cell(g.mean, g.doubts.get(1)))
        cells += [_td(_gaussian_text(g, n), number=True) for n in gaussian_budgets]
        cells.append(_td("no" if g.gaussian.normal else "yes"))
        rows.append(cells)
    return _table(header, rows)


def _gaussian_text(g: GroupSummary, n: int) -> str:
    if n not in g.gaussian.boo_n:
        return TOO_FEW
    return "unreliable" if n in g.gaussian.unreliable else number_text(g.gaussian.boo_n[n])


def _diagnostics_table(summary: Summary) -> str:
    header = ["group", "mean", "s.d.", "median", "IQR", "min", "max", "Spearman ρ (val, test)"]
    header += ["Anderson-Darling", "critical value", "tied val."]
    rows = []
    for g in summary.groups:
        d = g.diagnostics
        spearman = "n/a" if d.spearman_val_test is None else f"{d.spearman_val_test:.3f}"
        rows.append(
            [
                _td(g.label),
                *(_td(number_text(x), number=True) for x in (d.mean, d.sd, d.median, d.iqr, d.min, d.max)),
                _td(spearman, number=True),
                _td(f"{d.normality_statistic:.3f}", number=True),
                _td(f"{d.normality_critical_5pct:.3f}", number=True),
                _td(d.ties, number=True),
            ]
        )
    return _table(header, rows)


def _group_notes(g: GroupSummary, maximize: bool) -> list[str]:
    """Per group: doubts, what the runs cannot show, the Gaussian estimates not reported, dropped runs (the
    warnings are all in their own section)."""
    items = [f"{_e(number_name(n))} is doubtful: {_e(', '.join(why))}" for n, why in sorted(g.doubts.items()) if why]
    items += [f"Gaussian Boo_{n} is not reported: {_e(why)}" for n, why in g.gaussian.unreliable.items()]
    if g.unseen is not None:
        items.append("Not ruled out by these runs: " + _e("; ".join(unseen_sentences(g.unseen, g.runs, maximize))))
    if g.mean_duration_s is not None:
        items.append(f"Mean training time: {g.mean_duration_s:.4g} s per run")
    parts = [f"<h3>{_e(g.label)}</h3>"]
    if items:
        parts.append("<ul>" + "".join(f"<li>{item}</li>" for item in items) + "</ul>")
    parts += _dropped_html(g.dropped)
    return parts


def _dropped_html(dropped: Sequence[DroppedRun]) -> list[str]:
    """Dropped runs as ``report.md`` lists them: counts by reason, then the first few runs."""
    if not dropped:
        return []
    counts = Counter(d.reason for d in dropped).most_common()
    parts = ["<p>Dropped: " + "; ".join(f"{count} × {_e(reason)}" for reason, count in counts) + ".</p>"]
    rows = [[_td(d.run_id), _td(d.reason)] for d in dropped[:REPORT_DROPPED]]
    parts.append(_table(["dropped run", "reason"], rows))
    if len(dropped) > REPORT_DROPPED:
        parts.append(f"<p>… and {len(dropped) - REPORT_DROPPED} more (every run is in <code>runs.csv</code>).</p>")
    return parts


def _comparisons(summary: Summary) -> list[str]:
    if not summary.comparisons:
        return []
    spec = summary.spec
    budgets = [n for n in spec.budgets if any(n in c.boo_n_difference for c in summary.comparisons)]
    header = ["group", "vs", "paired", *(f"ΔBoo_{n}" for n in budgets), "Δmean"]
    header += ["t-test p (adj.)", "rank test p (adj.)", "P(group > vs)"]
    rows = [_comparison_row(summary, c, budgets) for c in summary.comparisons]
    correction = {"holm": "Holm", "bh": "Benjamini-Hochberg"}[spec.correction]
    text = (
        f"Differences are group minus <i>vs</i> on the {scores_text(summary)}, with bootstrap intervals. Runs paired by "
        "seed are compared as pairs (paired t-test, Wilcoxon signed-rank test), others by Welch's t-test and the "
        f"Mann-Whitney U test. P-values are raw and, in parentheses, adjusted by {correction} over the comparisons "
        "(the t-tests together, the rank tests together)."
    )
    return ["<h2>Comparisons</h2>", f'<p class="note">{text}</p>', _table(header, rows)]


def _comparison_row(summary: Summary, c: ComparisonSummary, budgets: Sequence[int]) -> list[str]:
    cells = [_td(c.group), f'<td class="num">{_e(c.baseline)}</td>', _td("yes" if c.paired else "no")]
    cells += [
        _interval_cell(c.boo_n_difference[n], pair_doubts(summary, c, n)) if n in c.boo_n_difference else _td(TOO_FEW)
        for n in budgets
    ]
    cells.append(_interval_cell(c.mean_difference, pair_doubts(summary, c, 1)))
    cells += [
        f'<td class="num">{pvalue_text(r.pvalue)} ({pvalue_text(r.pvalue_adjusted)})<br>'
        f'<span class="ci">{_e(TEST_NAMES[name])}</span></td>'
        for name, r in c.tests.items()
    ]
    cells.append(_td(f"{c.prob_superiority:.3f}", number=True))
    return cells


@dataclass(frozen=True)
class _Line:
    """One group's line in a plot: its points, its band, which points are doubtful, each point's hover text."""

    label: str
    x: np.ndarray
    y: np.ndarray
    low: np.ndarray
    high: np.ndarray
    doubtful: np.ndarray
    hover: Sequence[str]


def _ticks(low: float, high: float, *, log: bool) -> list[float]:
    """Round tick positions within [low, high] (about five; powers of ten times 1, 2, 5 on a log axis)."""
    if log:
        decades = range(math.floor(math.log10(low)), math.ceil(math.log10(high)) + 1)
        ticks = [m * 10.0**k for k in decades for m in (1, 2, 5)]
        return [t for t in ticks if low <= t <= high]
    if high <= low:
        return [low]
    raw = (high - low) / 5
    step = min((m * 10 ** math.floor(math.log10(raw)) for m in (1, 2, 5, 10)), key=lambda s: abs(s - raw))
    first = math.ceil(low / step) * step
    return [first + i * step for i in range(int((high - first) / step + 1e-9) + 1)]


def _tick_text(value: float, ticks: Sequence[float]) -> str:
    spread = max(abs(t) for t in ticks) or 1.0
    return f"{value:.6g}" if abs(value) >= spread * 1e-9 else "0"


def _runs_of(mask: np.ndarray) -> list[tuple[int, int]]:
    """(start, stop) of each run of consecutive True values."""
    edges = np.diff(np.concatenate([[0], mask.astype(int), [0]]))
    return list(zip(np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)))


def _svg_plot(lines: Sequence[_Line], *, x_label: str, y_label: str, title: str, standalone: bool = False) -> str:
    """Lines with shaded bands, points with hover values, axes, ticks and a legend, as one inline SVG; with
    ``standalone``, as an SVG file: its size and the style of its text its own."""
    xs = np.concatenate([line.x for line in lines])
    ys = np.concatenate([np.concatenate([line.y, line.low, line.high]) for line in lines])
    ys = ys[np.isfinite(ys)]
    log = bool(xs.min() > 0 and xs.max() / xs.min() > 50)
    x0, x1 = float(xs.min()), float(xs.max())
    y0, y1 = float(ys.min()), float(ys.max())
    pad = (y1 - y0) * 0.05 or abs(y0) * 0.05 or 1.0
    y0, y1 = y0 - pad, y1 + pad
    inner_w, inner_h = _WIDTH - _LEFT - _RIGHT, _HEIGHT - _TOP - _BOTTOM

    def px(x: np.ndarray | float) -> np.ndarray:
        x = np.asarray(x, float)
        if log:
            share = (np.log10(x) - math.log10(x0)) / (math.log10(x1) - math.log10(x0))
        else:
            share = (x - x0) / (x1 - x0) if x1 > x0 else np.full_like(x, 0.5)
        return _LEFT + share * inner_w

    def py(y: np.ndarray | float) -> np.ndarray:
        return _TOP + (1 - (np.asarray(y, float) - y0) / (y1 - y0)) * inner_h

    own = f' width="{_WIDTH}" height="{_HEIGHT}"' if standalone else ""
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {_WIDTH} {_HEIGHT}"{own} role="img" '
        f'aria-label="{_e(title)}"><title>{_e(title)}</title>',
        f"<style>{_SVG_TEXT}</style>" if standalone else "",
        f'<rect x="{_LEFT}" y="{_TOP}" width="{inner_w}" height="{inner_h}" fill="#fff" stroke="#999"/>',
    ]
    for tick in _ticks(x0, x1, log=log):
        x = float(px(tick))
        parts.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{_TOP}" y2="{_TOP + inner_h}" stroke="#eee"/>')
        parts.append(
            f'<text class="tick" x="{x:.1f}" y="{_TOP + inner_h + 16}" text-anchor="middle">'
            f"{_tick_text(tick, [x0, x1])}</text>"
        )
    for tick in _ticks(y0, y1, log=False):
        y = float(py(tick))
        parts.append(f'<line x1="{_LEFT}" x2="{_LEFT + inner_w}" y1="{y:.1f}" y2="{y:.1f}" stroke="#eee"/>')
        parts.append(
            f'<text class="tick" x="{_LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">{_tick_text(tick, [y0, y1])}</text>'
        )
    parts.append(
        f'<text x="{_LEFT + inner_w / 2:.0f}" y="{_HEIGHT - 8}" text-anchor="middle">{_e(x_label)}'
        f"{' (log scale)' if log else ''}</text>"
        f'<text transform="translate(16 {_TOP + inner_h / 2:.0f}) rotate(-90)" text-anchor="middle">{_e(y_label)}</text>'
    )
    for index, line in enumerate(lines):
        parts += _svg_line(line, PALETTE[index % len(PALETTE)], px(line.x), py)
        y = _TOP + 14 + 20 * index
        legend_x = _LEFT + inner_w + 14
        parts.append(
            f'<rect x="{legend_x}" y="{y - 9}" width="14" height="10" fill="{PALETTE[index % len(PALETTE)]}" '
            f'fill-opacity="0.25" stroke="{PALETTE[index % len(PALETTE)]}"/>'
            f'<text x="{legend_x + 20}" y="{y}">{_e(line.label[:22])}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def _svg_line(line: _Line, colour: str, x: np.ndarray, py: Callable[[np.ndarray], np.ndarray]) -> list[str]:
    """A group's band (shaded, where it is defined), its line (dashed where doubtful) and its points."""
    parts = []
    banded = np.isfinite(line.low) & np.isfinite(line.high)
    for start, stop in _runs_of(banded):
        upper = [f"{a:.1f},{b:.1f}" for a, b in zip(x[start:stop], py(line.high[start:stop]))]
        lower = [f"{a:.1f},{b:.1f}" for a, b in zip(x[start:stop][::-1], py(line.low[start:stop][::-1]))]
        parts.append(f'<polygon points="{" ".join(upper + lower)}" fill="{colour}" fill-opacity="0.18"/>')
    y = py(line.y)
    for doubtful in (False, True):
        for start, stop in _runs_of(line.doubtful == doubtful):
            start = max(start - 1, 0) if doubtful else start  # the dashed part starts where the solid one ends
            points = " ".join(f"{a:.1f},{b:.1f}" for a, b in zip(x[start:stop], y[start:stop]))
            dash = ' stroke-dasharray="5 4"' if doubtful else ""
            parts.append(f'<polyline points="{points}" fill="none" stroke="{colour}" stroke-width="2"{dash}/>')
    radius = 3 if x.size <= 60 else 2
    parts += [
        f'<circle cx="{a:.1f}" cy="{b:.1f}" r="{radius}" fill="{"#fff" if d else colour}" stroke="{colour}">'
        f"<title>{_e(text)}</title></circle>"
        for a, b, d, text in zip(x, y, line.doubtful, line.hover)
    ]
    return parts


def curve_svg(summary: Summary) -> str:
    """The plot of ``report.html`` of every group's expected-best curve with its pointwise band, as an SVG file
    (``curves_<metric>.svg`` beside a comparison's ``report.md``, which links it)."""
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + _curve_plot(summary, standalone=True) + "\n"


def _curve_plot(summary: Summary, *, standalone: bool = False) -> str:
    """Every group's curve in one plot (:func:`curve_svg`)."""
    return _curve_svg(summary, [(g, g.label) for g in summary.groups], "", standalone=standalone)


def _curve_plots(summary: Summary) -> str:
    """The page's curves: with a task column, one plot per task holding its approaches (each in the color of its
    place among the approaches, the same on every task); else every group in one plot."""
    across = summary.across_tasks
    tasks = [] if across is None else across.by_task(summary.groups)
    if across is None or not tasks:
        return _curve_plot(summary)
    return "".join(
        f"<h3>{_e(across.task_column)} = {_e(task)}</h3>"
        + _curve_svg(summary, members, f"{across.task_column} = {task}: ")
        for task, members in tasks
    )


def _curve_svg(
    summary: Summary, members: Sequence[tuple[GroupSummary, str]], heading: str, *, standalone: bool = False
) -> str:
    lines = []
    for g, label in members:
        c = g.curve
        doubtful = np.zeros(c.n.size, bool) if c.trustworthy is None else ~np.asarray(c.trustworthy, bool)
        hover = [
            f"{g.label}: n = {n}, expected best {number_text(est)} [{number_text(lo)}, {number_text(hi)}]"
            + (" ⚠ n > m/2" if d else "")
            for n, est, lo, hi, d in zip(c.n.tolist(), c.estimate, c.ci_low, c.ci_high, doubtful)
        ]
        lines.append(_Line(label, c.n, c.estimate, c.ci_low, c.ci_high, doubtful, hover))
    return _svg_plot(
        lines,
        x_label="n (runs trained, the best by validation kept)",
        y_label=f"expected best {scores_text(summary)[:-1]}",
        title=f"{heading}Expected best {summary.metric} against n, with pointwise bootstrap bands",
        standalone=standalone,
    )


def _training_plot(curves: TrainingCurves) -> str:
    curves = curves.plotted()  # a long curve at the steps of its bands: the file stays small
    lines = []
    for label in dict.fromkeys(curves.group.tolist()):
        at = curves.group == label
        few = ~curves.enough_runs[at]
        hover = [
            f"{label}: step {step:g}, mean {number_text(mean)} [{number_text(lo)}, {number_text(hi)}], {runs} runs"
            + (" ⚠ few runs" if f else "")
            for step, mean, lo, hi, runs, f in zip(
                curves.step[at].tolist(), curves.mean[at], curves.low[at], curves.high[at], curves.runs[at], few
            )
        ]
        lines.append(_Line(str(label), curves.step[at], curves.mean[at], curves.low[at], curves.high[at], few, hover))
    what = curves.metric if curves.curve == "value" else f"best-so-far {curves.test or curves.metric}"
    return _svg_plot(
        lines,
        x_label="step",
        y_label=f"mean {what}",
        title=f"Mean {what} across runs, with pointwise bootstrap bands",
    )


def _best_so_far_note(curves: TrainingCurves) -> str:
    """What a best-so-far curve averages, and in which direction ("" for values as logged)."""
    if curves.curve == "value":
        return ""
    what = f"the running best {_e(curves.metric)}"
    if curves.test is not None:
        what = f"the {_e(curves.test)} at the step of the running best {_e(curves.metric)}"
    return f" of each run's {what} ({_e(curves.direction)}), as early stopping reports"


def _training_section(summary: Summary) -> list[str]:
    if not summary.training:
        return []
    parts = ["<h2>Training curves</h2>"]
    for curves in summary.training:
        parts += [
            f"<h3>{_e(curves.entry)}</h3>",
            _training_plot(curves),
            '<p class="note">Each group\'s mean over its runs at each step'
            + _best_so_far_note(curves)
            + "; the shaded band is the pointwise bootstrap interval. Dashed, with open points: steps with fewer runs "
            "than the simultaneous band needs (doubtful). Every value is in <code>training_curves.csv</code>.</p>",
        ]
    return parts


def _how(summary: Summary) -> str:
    spec = summary.spec
    budgets = (
        ", ".join(map(str, spec.n))
        if spec.n is not None
        else f"{', '.join(map(str, spec.budgets))} (default; each where a group has at least n runs)"
    )
    items = [
        ("source", summary.source or "not stated"),
        ("validation metric", spec.val),
        ("test metric", spec.test or "none (the validation scores are reported)"),
        ("direction", spec.direction or ("higher is better" if spec.maximize is not False else "lower is better")),
        *([("scores", spec.stated_bounds)] if spec.stated_bounds else []),
        ("estimator", spec.estimator),
        ("interval method", f"{spec.ci_method} bootstrap over runs"),
        ("resamples", resamples_text(summary)),
        ("seed", spec.seed),
        ("confidence level", f"{spec.confidence_level * 100:g} %"),
        ("budgets n", budgets),
        ("p-value adjustment", {"holm": "Holm", "bh": "Benjamini-Hochberg"}[spec.correction]),
        ("versions", ", ".join(f"{name} {version}" for name, version in summary.versions.items())),
    ]
    rows = "".join(f"<dt>{_e(name)}</dt><dd>{_e(value)}</dd>" for name, value in items)
    return f'<h2>How the numbers were computed</h2><dl class="how">{rows}</dl>'


def _error_bars(title: str, entries: Sequence[tuple[str, IntervalEstimate]]) -> str:
    """Each entry's estimate as a point and its interval as a horizontal error bar, one row per entry, on one
    axis (an interval with an undefined end is drawn as its point alone)."""
    values = [v for _, i in entries for v in (i.estimate, i.ci_low, i.ci_high) if math.isfinite(v)]
    x0, x1 = min(values), max(values)
    pad = (x1 - x0) * 0.05 or abs(x0) * 0.05 or 1.0
    x0, x1 = x0 - pad, x1 + pad
    row, top, inner_w = 22, 24, _WIDTH - _LEFT - _RIGHT
    height = top + row * len(entries) + 30

    def px(x: float) -> float:
        return _LEFT + (x - x0) / (x1 - x0) * inner_w

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {_WIDTH} {height}" role="img" '
        f'aria-label="{_e(title)}"><title>{_e(title)}</title>',
        f'<text x="{_LEFT}" y="14">{_e(title)}</text>',
    ]
    for tick in _ticks(x0, x1, log=False):
        parts.append(
            f'<line x1="{px(tick):.1f}" x2="{px(tick):.1f}" y1="{top}" y2="{height - 24}" stroke="#eee"/>'
            f'<text class="tick" x="{px(tick):.1f}" y="{height - 8}" text-anchor="middle">'
            f"{_tick_text(tick, [x0, x1])}</text>"
        )
    for index, (label, interval) in enumerate(entries):
        y, colour = top + row * index + row / 2, PALETTE[index % len(PALETTE)]
        if math.isfinite(interval.ci_low) and math.isfinite(interval.ci_high):
            low, high = px(interval.ci_low), px(interval.ci_high)
            parts.append(
                f'<line x1="{low:.1f}" x2="{high:.1f}" y1="{y:.1f}" y2="{y:.1f}" stroke="{colour}" stroke-width="2"/>'
                + "".join(
                    f'<line x1="{end:.1f}" x2="{end:.1f}" y1="{y - 5:.1f}" y2="{y + 5:.1f}" stroke="{colour}"/>'
                    for end in (low, high)
                )
            )
        parts.append(
            f'<text x="{_LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">{_e(label[:12])}</text>'
            f'<circle cx="{px(interval.estimate):.1f}" cy="{y:.1f}" r="4" fill="{colour}">'
            f"<title>{_e(label)}: {_e(interval_text(interval))}</title></circle>"
        )
    parts.append("</svg>")
    return "".join(parts)


def _across_section(summary: Summary) -> list[str]:
    """The approaches across the tasks: the tables of ``report.md``, the aggregates' intervals as error bars and
    the performance profiles with their pointwise bands."""
    across = summary.across_tasks
    if across is None:
        return []
    body = ["<h2>Across tasks</h2>", f"<p>{_e(across_heading(summary))}</p>"]
    for header, rows in (aggregate_table(across), comparison_table(across)):
        if rows:
            body.append(_table(header, [[_td(row[0]), *(_td(cell, number=True) for cell in row[1:])] for row in rows]))
    body.append(f'<p class="note">{_e(INTERVAL_METHODS)}</p>')
    for title, key in (("mean", "mean"), ("median", "median"), ("IQM", "iqm"), ("optimality gap", "optimality_gap")):
        body.append(_error_bars(title, [(a.approach, getattr(a, key)) for a in across.aggregates]))
    better = ">" if summary.spec.higher_is_better else "<"
    lines = [
        _Line(
            a.approach,
            np.array(a.profile.tau),
            np.array(a.profile.share),
            np.array(a.profile.low),
            np.array(a.profile.high),
            np.zeros(len(a.profile.tau), bool),
            [
                f"{a.approach}: tau = {t:.4g}, {s:.3g} of the runs {better} tau"
                for t, s in zip(a.profile.tau, a.profile.share)
            ],
        )
        for a in across.aggregates
    ]
    body.append(
        _svg_plot(
            lines,
            x_label=f"tau ({summary.metric})",
            y_label=f"fraction of runs with score {better} tau",
            title=f"Performance profiles across {len(across.tasks)} tasks, with pointwise bootstrap bands",
        )
    )
    return body


def _all_warnings(summary: Summary) -> list[str]:
    warned = [(g.label, w) for g in summary.groups for w in g.warnings]
    warned += [(f"{c.group} vs {c.baseline}", w) for c in summary.comparisons for w in c.warnings]
    if summary.across_tasks is not None:
        warned += [("across tasks", w) for w in summary.across_tasks.warnings]
    if not warned:
        return []
    return ["<h2>Warnings</h2>", *(f'<div class="warn"><b>{_e(who)}</b>: {_e(w)}</div>' for who, w in warned)]


def to_html(summary: Summary) -> str:
    """``report.html``: the summary as one self-contained HTML page (see the module docstring)."""
    title = f"boontrack summary: {summary.metric}"
    overview = (
        f"{summary.runs} runs kept, {len(summary.dropped)} dropped, in {len(summary.groups)} "
        f"group{'s' if len(summary.groups) != 1 else ''}."
    )
    body = [
        f"<h1>{_e(title)}</h1>",
        f"<p>{_e(overview)}</p>",
        '<p class="note">Boo_n is the expected test score of the run you would pick — the best by validation — out of '
        "n runs drawn at random from these (Boo_1 is the mean). Brackets are bootstrap confidence intervals over "
        "the runs. ⚠ marks a doubtful number (hover it for why).</p>",
        "<h2>Boo_n per group</h2>",
        _group_table(summary),
        f'<p class="note">{_e(GAUSSIAN_NOTE)}</p>',
        "<h2>Expected best score against n</h2>",
        _curve_plots(summary),
        '<p class="note">The shaded band is the pointwise bootstrap interval; dashed, with open points, where n > m/2 '
        "(doubtful). The simultaneous band is in <code>curves.csv</code>. Hover a point for its values.</p>",
        *_training_section(summary),
        *_comparisons(summary),
        *_across_section(summary),
        *_all_warnings(summary),
        "<h2>Diagnostics and dropped runs</h2>",
        _diagnostics_table(summary),
    ]
    for g in summary.groups:
        body += _group_notes(g, summary.spec.higher_is_better)
    ungrouped = [d for d in summary.dropped if d.group not in {g.label for g in summary.groups}]
    if ungrouped:
        body += ["<h3>Dropped runs outside the analyzed groups</h3>", *_dropped_html(ungrouped)]
    body += [_how(summary), "<footer>Every number is in <code>summary.json</code>.</footer>"]
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_e(title)}</title><style>{_STYLE}svg {_SVG_TEXT}</style></head><body>\n"
        + "\n".join(body)
        + "\n</body></html>\n"
    )
