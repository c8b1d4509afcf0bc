"""Outputs of a Summary: metric names, JSON, Markdown, curve and terminal tables, and everything a sink writes.

Metric names
------------
:func:`flat_metrics` names every scalar under a prefix (default ``boon/``). ``<metric>`` is the test metric
name (the validation metric when there is no test metric), without a ``metrics.`` prefix. With one group the
group segment ``/<group>`` is left out; with several it is the group label made safe for tracker metric names by
:func:`group_names`: characters other than letters, digits, ``_ - . :`` and space become ``_``; a name that
would be empty or only dots, or longer than 64 characters, and the changed labels of two that would get the
same name, end with ``_`` and 8 hex digits of the label's SHA-256 (distinct labels, distinct names). ``<n>`` is
each budget the group reports: every ``Spec.n`` when given, else each default budget (1, 5, 10) the group has
runs for; a comparison reports the budgets both its groups report. Non-finite values (e.g. an undefined
correlation) are left out.

Labels and other text from the runs are escaped wherever they are rendered: Markdown and HTML in
``report.md`` and the description, control characters (newlines, terminal escapes) everywhere as ``\n``,
``\x1b``, ...

| name | value |
|---|---|
| `boon/runs` | runs kept, all groups |
| `boon/dropped` | runs dropped (each with its reason in `runs.csv` and `report.md`) |
| `boon/groups` | number of groups |
| `boon/<metric>[/<group>]/boo_<n>` | Boo_n: expected test score of the best-validation run out of n (estimator `Spec.estimator`) |
| `boon/<metric>[/<group>]/boo_<n>/ci_low`, `.../ci_high` | its bootstrap confidence interval (`Spec.ci_method`) |
| `boon/<metric>[/<group>]/boo_<n>/trustworthy` | 1, or 0 when the number is doubtful: n > m/2, or fewer than 8 runs (`GroupSummary.doubts`) |
| `boon/<metric>[/<group>]/mean` | mean test score (= Boo_1) |
| `boon/<metric>[/<group>]/mean/ci_low`, `.../ci_high`, `.../trustworthy` | its bootstrap confidence interval, and 0 when it is doubtful |
| `boon/<metric>[/<group>]/gaussian/boo_<n>` | parametric Boo_n (Bajgar et al. 2018, eq. 6), when not flagged unreliable |
| `boon/<metric>[/<group>]/gaussian_unreliable/boo_<n>` | the same estimate when flagged: normality rejected, outside [0, 1] for a score whose runs all lie in it, or more than one s.d. beyond the observed scores |
| `boon/<metric>[/<group>]/normal` | 1 if Anderson-Darling does not reject normality at 5 %, else 0 |
| `boon/<metric>[/<group>]/sd`, `.../median`, `.../min`, `.../max` | distribution of the test scores |
| `boon/<metric>[/<group>]/spearman_val_test` | validation-test Spearman correlation (with a test metric) |
| `boon/<metric>/<group>/runs`, `.../dropped` | per-group run counts (several groups only) |
| `boon/<metric>/<group>/vs_<base>/boo_<n>` (+ `/ci_low`, `/ci_high`, `/trustworthy`) | Boo_n(group) - Boo_n(base) with its interval, and 0 when either group's Boo_n is doubtful |
| `boon/<metric>/<group>/vs_<base>/mean` (+ `/ci_low`, `/ci_high`, `/trustworthy`) | mean(group) - mean(base) with its interval, and 0 when either group's mean is doubtful |
| `boon/<metric>/<group>/vs_<base>/paired_t_p`, `.../paired_t_p_adj` | paired t-test p-value, raw and adjusted (Holm or BH over the t-tests of all comparisons); runs paired by seed only |
| `boon/<metric>/<group>/vs_<base>/wilcoxon_p`, `.../wilcoxon_p_adj` | Wilcoxon signed-rank p-value, raw and adjusted (over the rank tests of all comparisons); runs paired by seed only |
| `boon/<metric>/<group>/vs_<base>/welch_p`, `.../welch_p_adj` | Welch t-test p-value, raw and adjusted; unpaired runs only |
| `boon/<metric>/<group>/vs_<base>/mann_whitney_p`, `.../mann_whitney_p_adj` | Mann-Whitney U p-value, raw and adjusted; unpaired runs only |
| `boon/<metric>/<group>/vs_<base>/prob_superiority` | P(group > base) + 0.5 P(equal) |
| `boon/<metric>/across/tasks` | with a task column: the number of tasks (each group is then one approach on one task, labelled `task=<task>,<keys>`) |
| `boon/<metric>/across[/<approach>]/mean`, `.../median`, `.../iqm`, `.../optimality_gap`, `.../boo_<n>` (+ `/ci_low`, `/ci_high`) | with a task column: each approach (the group keys but the task; its segment only with several) across the tasks, with stratified bootstrap intervals (an interval refused, Boo_n above 2m/3, is left out) |
| `boon/<metric>/across/<approach>/vs_<base>/mean`, `.../iqm`, `.../boo_<n>`, `.../prob_improvement` (+ `/ci_low`, `/ci_high`) | the approach minus the base across the tasks; the probability of improvement, P(a run of the approach beats one of the base) + 0.5 P(equal), averaged over the tasks |

The expected-validation curve of each group is a step series (step = n) named
`boon/<metric>[/<group>]/curve`.

Artifacts (:func:`render_outputs`): `summary.json` (every number, the spec, the versions), `report.md`,
`report.html` (the same report as one self-contained page, :mod:`boontrack.report_html`),
`curves.csv` (group, n, estimate, ci_low, ci_high, time, simultaneous_low, simultaneous_high, trustworthy:
``ci_*`` is the pointwise band, ``simultaneous_*`` the sup-t band for the whole curve, ``trustworthy`` 0 where
n > m/2), `runs.csv` (every input run with `dropped_reason`, empty when
kept) and, with matplotlib and unless ``plots=False``, `curves.png`, `curves_time.png` (when run durations are
known for every group), `distributions.png` and, with a task column, `across_intervals.png` and
`across_profiles.png` (see :mod:`boontrack.plots`).
"""

from __future__ import annotations

import html
import importlib.util
import io
import json
import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from boontrack._bootstrap.doubts import DOUBT_MEASURED
from boontrack._report_text import (  # safe_name: one of this module's public names
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
    safe_name,
    scores_text,
    shown_budgets,
    unseen_sentences,
)
from boontrack.backends import DEFAULT_PREFIX
from boontrack.exceptions import InputError
from boontrack.report_across import INTERVAL_METHODS, across_heading, aggregate_table, comparison_table
from boontrack.runtable import short_name
from boontrack.summary import IntervalEstimate, Summary

if TYPE_CHECKING:
    import pandas as pd

    from boontrack.backends import SummaryOutputs
    from boontrack.runtable import DroppedRun
    from boontrack.summary import AcrossTasksSummary, ComparisonSummary, GroupSummary

__all__ = [
    "across_lines",
    "curve_table",
    "flat_metrics",
    "format_table",
    "group_names",
    "metric_names",
    "render_outputs",
    "safe_name",
    "to_json",
    "to_markdown",
]

#: Markdown punctuation that could start emphasis, code, links, tables or strike-through; "_" only where it
#: is not inside a word (where GitHub Markdown ignores it).
_MARKDOWN_SPECIAL = re.compile(r"[`*\[\]|~#!]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")
#: Groups listed in the short description; the rest are counted.
_DESCRIPTION_GROUPS = 4
_HOW_TO_READ = (
    "**How to read Boo_n.** Boo_n is the expected test score of the run you would pick — the best by validation "
    "score — out of n runs drawn at random from these: Boo_1 is the average run, Boo_5 what someone who trains "
    "five models and keeps the best should expect. Compare approaches at the same n; the brackets are "
    "{level:g} % bootstrap confidence intervals over the runs. ⚠ marks a doubtful number: n above half the runs "
    "(the default's intervals are wide there), or fewer than 8 runs (intervals may be too narrow); the group's "
    "warnings give what was measured. No interval sees a kind of run the runs do not hold: "
    "each group says below how rare such a run may be."
)
#: How a doubtful number is marked in the terminal table (the report marks it with ⚠).
_DOUBT_MARK = "*"


def group_names(labels: Sequence[str]) -> dict[str, str]:
    """Label -> metric-name segment (:func:`safe_name`), distinct for distinct labels.

    A label that is already safe keeps its name; labels changed by cleaning that would share a name with
    another label get the hash suffix. InputError in the (2**-32) case that names still collide.
    """
    plain = {label: safe_name(label) for label in labels}
    shared = Counter(plain.values())
    names = {label: safe_name(label, hashed=shared[name] > 1 and name != label) for label, name in plain.items()}
    owners: dict[str, str] = {}
    for label, name in names.items():
        if name in owners:
            raise InputError(
                f"groups {owners[name]!r} and {label!r} both become {name!r} in metric names; "
                "rename them or group by other columns"
            )
        owners[name] = label
    return names


def _group_segments(summary: Summary) -> dict[str, str]:
    """Label -> metric-name segment with its leading "/" ("" with one group)."""
    if len(summary.groups) == 1:
        return {summary.groups[0].label: ""}
    return {label: "/" + name for label, name in group_names([g.label for g in summary.groups]).items()}


def printable(text: str) -> str:
    """``text`` on one line, control characters (newlines, terminal escapes) shown as ``\\n``, ``\\x1b``, ..."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in str(text))


def markdown_literal(text: Any) -> str:
    """Text from the runs (a label, a run id, a column name) as literal Markdown: no heading, link, emphasis,
    table cell break or HTML can come out of it."""
    escaped = _MARKDOWN_SPECIAL.sub(r"\\\g<0>", printable(text).replace("\\", "\\\\"))
    return html.escape(escaped, quote=False)


def flat_metrics(summary: Summary, *, prefix: str = DEFAULT_PREFIX) -> dict[str, float]:
    """Every scalar of ``summary`` under a documented name (see the module docstring); finite values only."""
    base = prefix + safe_name(summary.metric, allow_slash=True)
    segments = _group_segments(summary)
    several = len(summary.groups) > 1
    out: dict[str, float] = {}

    def put(name: str, value: Any) -> None:
        if name in out:
            raise InputError(f"metric name {name!r} would be written twice; rename the groups")
        if value is not None and math.isfinite(float(value)):
            out[name] = float(value)

    def put_interval(name: str, interval: IntervalEstimate, trustworthy: bool | None = None) -> None:
        put(name, interval.estimate)
        put(f"{name}/ci_low", interval.ci_low)
        put(f"{name}/ci_high", interval.ci_high)
        put(f"{name}/trustworthy", trustworthy)

    put(f"{prefix}runs", summary.runs)
    put(f"{prefix}dropped", len(summary.dropped))
    put(f"{prefix}groups", len(summary.groups))
    for g in summary.groups:
        path = base + segments[g.label]
        for n, interval in g.boo_n.items():
            put_interval(f"{path}/boo_{n}", interval, g.trustworthy(n))
        put_interval(f"{path}/mean", g.mean, g.trustworthy(1))
        for n, value in g.gaussian.boo_n.items():
            put(f"{path}/{'gaussian_unreliable' if n in g.gaussian.unreliable else 'gaussian'}/boo_{n}", value)
        put(f"{path}/normal", g.gaussian.normal)
        d = g.diagnostics
        for stat in ("sd", "median", "min", "max"):
            put(f"{path}/{stat}", getattr(d, stat))
        put(f"{path}/spearman_val_test", d.spearman_val_test)
        if several:
            put(f"{path}/runs", g.runs)
            put(f"{path}/dropped", len(g.dropped))
    for c in summary.comparisons:
        path = f"{base}{segments[c.group]}/vs_{segments[c.baseline][1:]}"
        for n, interval in c.boo_n_difference.items():
            put_interval(f"{path}/boo_{n}", interval, not pair_doubts(summary, c, n))
        put_interval(f"{path}/mean", c.mean_difference, not pair_doubts(summary, c, 1))
        for test_name, result in c.tests.items():
            put(f"{path}/{test_name}_p", result.pvalue)
            put(f"{path}/{test_name}_p_adj", result.pvalue_adjusted)
        put(f"{path}/prob_superiority", c.prob_superiority)
    if summary.across_tasks is not None:
        for name, interval in _across_metrics(summary.across_tasks, f"{base}/across"):
            put_interval(name, interval)
        put(f"{base}/across/tasks", len(summary.across_tasks.tasks))
    return out


def _across_metrics(across: AcrossTasksSummary, base: str) -> list[tuple[str, IntervalEstimate]]:
    """The names and intervals of the aggregates across tasks (approach segments as groups get theirs)."""
    approaches = [a.approach for a in across.aggregates]
    several = len(approaches) > 1
    segments = {label: "/" + name if several else "" for label, name in group_names(approaches).items()}
    named: list[tuple[str, IntervalEstimate]] = []
    for a in across.aggregates:
        path = base + segments[a.approach]
        named += [(f"{path}/{key}", getattr(a, key)) for key in ("mean", "median", "iqm", "optimality_gap")]
        named += [(f"{path}/boo_{n}", interval) for n, interval in a.boo_n.items()]
    for c in across.comparisons:
        path = f"{base}{segments[c.group]}/vs_{segments[c.baseline][1:]}"
        named += [(f"{path}/mean", c.mean_difference), (f"{path}/iqm", c.iqm_difference)]
        named += [(f"{path}/boo_{n}", interval) for n, interval in c.boo_n_difference.items()]
        named.append((f"{path}/prob_improvement", c.prob_improvement))
    return named


def metric_names(summary: Summary, *, prefix: str = DEFAULT_PREFIX) -> list[str]:
    """The names :func:`flat_metrics` writes for ``summary``, in order."""
    return list(flat_metrics(summary, prefix=prefix))


def to_json(summary: Summary | Mapping[str, Any]) -> str:
    """``summary.json``: every number, the spec and the versions (:meth:`Summary.to_dict`), indented.

    ``summary`` may also be that JSON data (a stored ``summary.json``, parsed): the text is then the stored one.
    """
    data = summary.to_dict() if isinstance(summary, Summary) else summary
    return json.dumps(data, indent=2, allow_nan=False) + "\n"


def curve_table(summary: Summary) -> pd.DataFrame:
    """Long table of every group's curve: group, n, estimate, ci_low, ci_high (pointwise band), time (NaN
    without durations), simultaneous_low, simultaneous_high (simultaneous band), trustworthy (0 or 1)."""
    import pandas as pd

    frames = [
        pd.DataFrame(
            {
                "group": g.label,
                "n": g.curve.n,
                "estimate": g.curve.estimate,
                "ci_low": g.curve.ci_low,
                "ci_high": g.curve.ci_high,
                "time": g.curve.time if g.curve.time is not None else np.nan,
                "simultaneous_low": _or_nan(g.curve.simultaneous_low),
                "simultaneous_high": _or_nan(g.curve.simultaneous_high),
                "trustworthy": (
                    np.ones(g.curve.n.size, bool) if g.curve.trustworthy is None else g.curve.trustworthy
                ).astype(int),
            }
        )
        for g in summary.groups
    ]
    return pd.concat(frames, ignore_index=True)


def _or_nan(values: np.ndarray | None) -> np.ndarray | float:
    return np.nan if values is None else values


def _marked(text: str, reasons: Sequence[str] | None, mark: str = " ⚠") -> str:
    """``text`` with ``mark`` after it when ``reasons`` says the number is doubtful."""
    return f"{text}{mark}" if reasons else text


def md_table(header: Iterable[str], rows: Iterable[Iterable[Any]]) -> list[str]:
    header = list(header)
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    # Cells are numbers or text escaped by markdown_literal; printable keeps any other cell on its table row.
    lines += ["| " + " | ".join(printable(cell) for cell in row) + " |" for row in rows]
    return lines


def _overview(summary: Summary) -> str:
    spec = summary.spec
    # The keys as the user named them (``model``, not the resolved ``params.model`` of a W&B config key).
    keys = spec.group_by or [short_name(column) for column in summary.group_by]
    grouping = f", grouped by {', '.join(map(markdown_literal, keys))}" if keys else ""
    direction = spec.direction or ("higher is better" if spec.maximize is not False else "lower is better")
    direction += f"; {spec.stated_bounds}" if spec.stated_bounds else ""
    return (
        f"{summary.runs} runs kept, {len(summary.dropped)} dropped, in {len(summary.groups)} "
        f"group{'s' if len(summary.groups) != 1 else ''}{grouping}. Validation metric {markdown_literal(spec.val)} "
        f"({markdown_literal(direction)})"  # the direction's reason names the metrics, or the source that said it
        + (f", test metric {markdown_literal(spec.test)}" if spec.test else " (no separate test metric)")
        + f"; estimator {spec.estimator}, {resamples_text(summary)} ({spec.ci_method}), "
        f"{spec.confidence_level * 100:g} % intervals, seed {spec.seed}. "
        + (
            f"Budgets n = {', '.join(map(str, spec.n))}."
            if spec.n is not None
            else f"Default budgets n = {', '.join(map(str, spec.budgets))}, each where a group has at least n runs."
        )
    )


def comparison_lines(summary: Summary, *, metrics: int = 1, family: int | None = None) -> list[str]:
    """The comparisons' section of a report; ``family``: the comparisons the p-values were adjusted over, when
    those of ``metrics`` metrics were adjusted together (default: this summary's)."""
    spec = summary.spec
    budgets = [n for n in spec.budgets if any(n in c.boo_n_difference for c in summary.comparisons)]
    header = ["group", "vs", "paired", *(f"ΔBoo_{n}" for n in budgets), "Δmean"]
    header += ["t-test p (adj.)", "rank test p (adj.)", "P(group > vs)"]
    rows = []
    for c in summary.comparisons:
        tests = [
            f"{TEST_NAMES[name]} {pvalue_text(r.pvalue)} ({pvalue_text(r.pvalue_adjusted)})"
            for name, r in c.tests.items()
        ]
        rows.append(
            [
                markdown_literal(c.group),
                markdown_literal(c.baseline),
                "yes" if c.paired else "no",
                *(
                    _marked(interval_text(c.boo_n_difference[n]), pair_doubts(summary, c, n))
                    if n in c.boo_n_difference
                    else TOO_FEW
                    for n in budgets
                ),
                _marked(interval_text(c.mean_difference), pair_doubts(summary, c, 1)),
                *tests,
                f"{c.prob_superiority:.3f}",
            ]
        )
    correction = {"holm": "Holm", "bh": "Benjamini-Hochberg"}[spec.correction]
    return [
        "## Comparisons",
        "",
        f"Differences are group minus `vs` on the {scores_text(summary)}, with {spec.confidence_level * 100:g} % bootstrap "
        "intervals. Runs paired by seed (both groups have the same seeds) are compared as pairs: the intervals "
        "resample pairs, the tests are the paired t-test and the Wilcoxon signed-rank test; otherwise Welch's "
        "t-test and the Mann-Whitney U test. P-values are raw and, in parentheses, adjusted by "
        f"{correction} over the {_adjusted_over(len(summary.comparisons) if family is None else family, metrics)} "
        "(the t-tests together, the rank tests together).",
        "",
        *md_table(header, rows),
        "",
        *(
            f"- warning ({markdown_literal(c.group)} vs {markdown_literal(c.baseline)}): {markdown_literal(w)}"
            for c in summary.comparisons
            for w in c.warnings
        ),
        "",
    ]


def _group_lines(g: GroupSummary, scores: str, maximize: bool) -> list[str]:
    d = g.diagnostics
    verdict = (
        "normality not rejected (a weak check with few runs: skewed scores often pass)"
        if g.gaussian.normal
        else "normality rejected: the Gaussian estimate does not apply"
    )
    spearman = "n/a" if d.spearman_val_test is None else f"{d.spearman_val_test:.3f}"
    lines = [
        f"### {markdown_literal(g.label)}",
        "",
        f"- runs: {g.runs} kept, {len(g.dropped)} dropped; {d.ties} tied validation scores",
        f"- {scores}: mean {number_text(d.mean)}, s.d. {number_text(d.sd)}, median {number_text(d.median)}, IQR {number_text(d.iqr)}, "
        f"min {number_text(d.min)}, max {number_text(d.max)}",
        f"- validation-test Spearman ρ: {spearman}",
        f"- Anderson-Darling: statistic {d.normality_statistic:.3f} vs. 5 % critical value "
        f"{d.normality_critical_5pct:.3f} — {verdict}",
    ]
    lines += [
        f"- Gaussian Boo_{n} = {number_text(g.gaussian.boo_n[n])} is not reported: {why}"
        for n, why in g.gaussian.unreliable.items()
    ]
    if g.mean_duration_s is not None:
        lines.append(f"- mean training time: {g.mean_duration_s:.4g} s per run")
    lines.append(_band_line(g))
    doubtful = [f"{number_name(n)} ({', '.join(why)})" for n, why in sorted(g.doubts.items()) if why]
    if doubtful:
        lines.append(f"- doubtful (⚠): {'; '.join(doubtful)}")
    if g.unseen is not None:
        lines.append(f"- not ruled out by these runs: {'; '.join(unseen_sentences(g.unseen, g.runs, maximize))}")
    lines += [f"- warning: {markdown_literal(w)}" for w in g.warnings]
    return [*lines, "", *_dropped_lines(g.dropped)]


def _band_line(g: GroupSummary) -> str:
    """What the curve's band is, and where it cannot be trusted."""
    line = "- curve band: pointwise (each budget's interval); the simultaneous band for the whole curve is in "
    line += "`curves.csv` and `summary.json`"
    trusted = g.curve.trustworthy
    if trusted is not None and not trusted.all():
        line += f"; doubtful from n = {int(g.curve.n[~trusted].min())} on (n > m/2)"
    return line


def _dropped_lines(dropped: Sequence[DroppedRun]) -> list[str]:
    """Dropped runs: counts by reason, then the first few runs (all of them are in ``runs.csv``)."""
    if not dropped:
        return []
    counts = Counter(d.reason for d in dropped).most_common()
    lines = ["Dropped: " + "; ".join(f"{count} × {markdown_literal(reason)}" for reason, count in counts) + ".", ""]
    listed = [(markdown_literal(d.run_id), markdown_literal(d.reason)) for d in dropped[:REPORT_DROPPED]]
    lines += md_table(["dropped run", "reason"], listed)
    if len(dropped) > REPORT_DROPPED:
        lines += ["", f"… and {len(dropped) - REPORT_DROPPED} more (every run is in `runs.csv`)."]
    return [*lines, ""]


def _gaussian_cell(g: GroupSummary, n: int) -> str:
    if n not in g.gaussian.boo_n:
        return TOO_FEW
    return "unreliable (see diagnostics)" if n in g.gaussian.unreliable else number_text(g.gaussian.boo_n[n])


def to_markdown(summary: Summary) -> str:
    """A readable report: Boo_n with intervals per group, Gaussian estimate, diagnostics, dropped runs, comparisons."""
    spec = summary.spec
    budgets = shown_budgets(spec, (g.boo_n for g in summary.groups))
    lines = [f"# boontrack summary: {markdown_literal(summary.metric)}", ""]
    if summary.source:
        lines += [f"Source: {markdown_literal(summary.source)}", ""]
    lines += [_overview(summary), "", _HOW_TO_READ.format(level=spec.confidence_level * 100), ""]
    # Gaussian Boo_1 is the mean: only larger budgets are shown.
    gaussian_budgets = [n for n in budgets if n > 1]
    header = ["group", "runs", *(f"Boo_{n}" for n in budgets), "mean"]
    header += [*(f"Gaussian Boo_{n}" for n in gaussian_budgets), "normality rejected?"]
    rows = [
        [
            markdown_literal(g.label),
            g.runs,
            *(_marked(interval_text(g.boo_n[n]), g.doubts.get(n)) if n in g.boo_n else TOO_FEW for n in budgets),
            _marked(interval_text(g.mean), g.doubts.get(1)),
            *(_gaussian_cell(g, n) for n in gaussian_budgets),
            "no" if g.gaussian.normal else "yes",
        ]
        for g in summary.groups
    ]
    lines += ["## Boo_n per group", "", *md_table(header, rows), "", GAUSSIAN_NOTE, ""]
    lines += ["## Diagnostics", ""]
    for g in summary.groups:
        lines += _group_lines(g, scores_text(summary), spec.higher_is_better)
    ungrouped = [d for d in summary.dropped if d.group not in {g.label for g in summary.groups}]
    if ungrouped:
        lines += ["### Dropped runs outside the analyzed groups", "", *_dropped_lines(ungrouped)]
    if summary.comparisons:
        lines += comparison_lines(summary)
    if summary.across_tasks is not None:
        lines += across_lines(summary)
    versions = ", ".join(f"{name} {version}" for name, version in summary.versions.items())
    lines += [f"_Computed with {versions}._", ""]
    return "\n".join(lines)


def across_lines(summary: Summary) -> list[str]:
    """The across-tasks section of a report (``report.md``, a comparison's Markdown): the aggregates of each
    approach, the comparisons across the tasks, the intervals' methods and what they cannot see."""
    across = summary.across_tasks
    assert across is not None
    lines = ["## Across tasks", "", markdown_literal(across_heading(summary)), ""]
    for header, rows in (aggregate_table(across), comparison_table(across)):
        if rows:
            lines += [*md_table(header, ([markdown_literal(row[0]), *row[1:]] for row in rows)), ""]
    lines += [INTERVAL_METHODS, ""]
    lines += [f"- Warning: {markdown_literal(w)}" for w in across.warnings]
    return [*lines, ""] if across.warnings else lines


def _adjusted_over(comparisons: int, metrics: int) -> str:
    said = f"{comparisons} comparison{'s' if comparisons != 1 else ''}"
    return said if metrics == 1 else f"{said} of the {metrics} metrics"


def format_table(summary: Summary | Mapping[str, Any], *, report_written: bool = False) -> str:
    """A compact plain-text table for the terminal: one line per group, then one per comparison.

    ``summary`` is a :class:`Summary` or its JSON data (:meth:`Summary.to_dict`, as stored in ``summary.json``),
    which is read with :meth:`Summary.from_dict` first: a stored summary prints the table its analysis did.
    ``report_written``: the summary's report was written (``--out``, ``--write-back``), so the warnings are
    counted under the table and read there; otherwise each is printed under the table.
    """
    if not isinstance(summary, Summary):
        summary = Summary.from_dict(summary)
    spec = summary.spec
    budgets = shown_budgets(spec, (g.boo_n for g in summary.groups))
    header = ["group", "runs", "dropped", *(f"Boo_{n}" for n in budgets), "mean", "normal"]
    rows = [
        [
            printable(g.label),
            str(g.runs),
            str(len(g.dropped)),
            *(_terminal_cell(g, n) for n in budgets),
            _marked(interval_text(g.mean), g.doubts.get(1), _DOUBT_MARK),
            "yes" if g.gaussian.normal else "no",
        ]
        for g in summary.groups
    ]
    lines = [
        f"{printable(summary.metric)}: estimator {spec.estimator}, {spec.confidence_level * 100:g}% bootstrap CI, "
        f"{summary.runs} runs, {len(summary.dropped)} dropped"
        + "".join(f"; {said}" for said in (spec.direction, spec.stated_bounds) if said),
        *_aligned([header, *rows]),
    ]
    if summary.comparisons:
        largest = max(summary.common_budgets)
        header = ["group", "vs", f"ΔBoo_{largest}", "Δmean", "tests", f"p adj. ({spec.correction})"]
        header.append("P(group > vs)")
        rows = [
            [
                printable(c.group),
                printable(c.baseline),
                _marked(interval_text(c.boo_n_difference[largest]), pair_doubts(summary, c, largest), _DOUBT_MARK),
                _marked(interval_text(c.mean_difference), pair_doubts(summary, c, 1), _DOUBT_MARK),
                *_terminal_tests(c),
                f"{c.prob_superiority:.3f}",
            ]
            for c in summary.comparisons
        ]
        lines += ["", *_aligned([header, *rows])]
    left_out = [g for g in summary.groups if g.left_out_budgets]
    if left_out:
        listed = "; ".join(
            f"{g.label}: {', '.join(f'Boo_{k}' for k in g.left_out_budgets)} ({g.runs} runs)" for g in left_out
        )
        lines += ["", f"Left out, too few runs (Boo_n needs at least n runs): {listed}."]
    lines += _terminal_footnotes(summary.groups, spec.higher_is_better)
    if summary.across_tasks is not None:
        lines += ["", printable(across_heading(summary))]
        for header, rows in (aggregate_table(summary.across_tasks), comparison_table(summary.across_tasks)):
            if rows:
                lines += ["", *_aligned([header, *([printable(cell) for cell in row] for row in rows)])]
    lines += _terminal_warnings(summary, report_written)
    return "\n".join(lines)


def _terminal_warnings(summary: Summary, report_written: bool) -> list[str]:
    """The warnings under the table: counted, pointing to the report when one was written; else each in full (the
    intervals' limits, said with the table, not twice): a pointer to a report that does not exist hides them."""
    across = () if summary.across_tasks is None else summary.across_tasks.warnings
    warned = sum(len(g.warnings) for g in summary.groups) + sum(len(c.warnings) for c in summary.comparisons)
    warned += len(across)
    if not warned:
        return []
    if report_written:  # where: the line that says the summary was written
        return ["", f"{warned} warning(s); see the summary's report for details."]
    several = len(summary.groups) > 1
    unsaid = [
        (g.label if several else None, w) for g in summary.groups for w in g.warnings if w not in g.interval_limits
    ]
    unsaid += [(f"{c.group} vs {c.baseline}", w) for c in summary.comparisons for w in c.warnings]
    unsaid += [("across tasks", w) for w in across]
    lines = [f"Warning{'' if who is None else ', ' + printable(who)}: {printable(w)}" for who, w in unsaid]
    return ["", *lines] if lines else []


def _terminal_cell(group: GroupSummary, n: int) -> str:
    if n not in group.boo_n:
        return "too few runs"
    return _marked(interval_text(group.boo_n[n]), group.doubts.get(n), _DOUBT_MARK)


#: Groups whose unseen kinds of run the terminal table states one by one; with more, the smallest group's.
_TERMINAL_UNSEEN_GROUPS = 4


def _terminal_footnotes(groups: Sequence[GroupSummary], maximize: bool) -> list[str]:
    """Under the table: what the marks mean, what the intervals cannot show, and what the runs cannot show (the
    smallest groups first)."""
    reasons = sorted({why for g in groups for whys in g.doubts.values() for why in whys})
    lines = []
    if reasons:
        said = (f"{why}: {DOUBT_MEASURED[why]}" if why in DOUBT_MEASURED else why for why in reasons)
        lines.append(f"{_DOUBT_MARK} doubtful: {'; '.join(said)}.")
    for g in groups:  # intervals that look certain and are not: said with the numbers they qualify
        who = f", {printable(g.label)}" if len(groups) > 1 else ""
        lines += [f"Warning{who}: {limit}." for limit in g.interval_limits]
    shown = sorted(((g, g.unseen) for g in groups if g.unseen is not None), key=lambda s: (s[0].runs, s[0].label))
    if len(shown) > _TERMINAL_UNSEEN_GROUPS:
        shown = shown[:1]
    for g, unseen in shown:
        who = f"{printable(g.label)}: " if len(groups) > 1 else ""
        lines.append(f"Not ruled out, {who}{'; '.join(unseen_sentences(unseen, g.runs, maximize))}.")
    return ["", *lines] if lines else []


def _terminal_tests(comparison: ComparisonSummary) -> list[str]:
    """The headline tests of a comparison and their adjusted p-values, as two cells."""
    results = comparison.tests  # None for a test a summary stored before it existed (paired t)
    return [
        " / ".join(TEST_NAMES[name] for name in results),
        " / ".join(pvalue_text(None if r is None else r.pvalue_adjusted) for r in results.values()),
    ]


def _aligned(rows: list[list[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]


def _description(summary: Summary) -> str:
    """3-6 lines of Markdown for the aggregate run's description."""
    spec = summary.spec
    lines = [
        f"**boontrack** summary of {markdown_literal(summary.metric)}: {summary.runs} runs in {len(summary.groups)} "
        f"group{'s' if len(summary.groups) != 1 else ''}, {len(summary.dropped)} dropped; estimator "
        f"{spec.estimator}, {spec.confidence_level * 100:g} % bootstrap intervals.",
    ]
    lines += [
        f"- {markdown_literal(g.label)}: Boo_{max(g.boo_n)} = {_described(g, max(g.boo_n))}, mean {_described(g, 1)} "
        f"({g.runs} runs)"
        for g in summary.groups[:_DESCRIPTION_GROUPS]
    ]
    if len(summary.groups) > _DESCRIPTION_GROUPS:
        lines.append(f"- … and {len(summary.groups) - _DESCRIPTION_GROUPS} more groups (see `report.md`)")
    if summary.across_tasks is not None:  # the benchmark's headline: each approach's IQM over the tasks
        iqms = ", ".join(
            f"{markdown_literal(a.approach)} {interval_text(a.iqm)}" for a in summary.across_tasks.aggregates
        )
        lines.append(f"- across {len(summary.across_tasks.tasks)} tasks, IQM: {iqms}")
    footer = (
        f"Source: {markdown_literal(summary.source)}."
        if summary.source
        else "Full report in `report.md`, every number in `summary.json`."
    )
    smallest = min(summary.groups, key=lambda g: g.runs)
    if smallest.unseen is not None:
        unseen = unseen_sentences(smallest.unseen, smallest.runs, spec.higher_is_better)[0]
        who = f" ({markdown_literal(smallest.label)}, the smallest group)" if len(summary.groups) > 1 else ""
        footer = f"Not ruled out{who}: {unseen}. {footer}"
    lines.append(footer)
    return "\n".join(lines)


def _described(g: GroupSummary, n: int) -> str:
    """The interval of Boo_n (n = 1: the mean) for the description, with why it is doubtful."""
    interval = g.mean if n == 1 else g.boo_n[n]
    reasons = g.doubts.get(n)
    return f"{interval_text(interval)} ⚠ ({', '.join(reasons)})" if reasons else interval_text(interval)


def _csv_bytes(frame: pd.DataFrame) -> bytes:
    buffer = io.StringIO()
    frame.to_csv(buffer, index=False)
    return buffer.getvalue().encode()


def render_outputs(summary: Summary, *, prefix: str = DEFAULT_PREFIX, plots: bool = True) -> SummaryOutputs:
    """Everything a sink writes: metrics, one curve series per group, artifacts, description, curve table.

    ``plots=False`` leaves out the PNG plots, which are most of the cost of rendering a summary of few runs.
    """
    from boontrack.backends import CurveSeries, SummaryOutputs
    from boontrack.report_html import to_html

    metrics = flat_metrics(summary, prefix=prefix)
    segments = _group_segments(summary)
    base = prefix + safe_name(summary.metric, allow_slash=True)
    # analyze() evaluates each curve at no more than ~200 budgets (log-spaced for many runs).
    curves = [
        CurveSeries(key=f"{base}{segments[g.label]}/curve", n=g.curve.n, values=g.curve.estimate)
        for g in summary.groups
    ]
    table = curve_table(summary)
    artifacts = {
        "summary.json": to_json(summary).encode(),
        "report.md": to_markdown(summary).encode(),
        "report.html": to_html(summary).encode(),
        "curves.csv": _csv_bytes(table),
    }
    if summary.table is not None:
        artifacts["runs.csv"] = _csv_bytes(summary.table.all_runs())
    drawn = plots and importlib.util.find_spec("matplotlib") is not None
    if drawn:
        from boontrack.plots import render_pngs

        artifacts.update(render_pngs(summary))
    rows = json.loads(table.to_json(orient="values"))  # plain Python values, NaN as None
    tables = {"curves": (list(table.columns), rows)}
    series: list[CurveSeries] = []
    if summary.training:
        from boontrack.training_output import (
            summary_training_artifacts,
            summary_training_series,
            summary_training_table,
            training_rows,
        )

        training = summary_training_table(summary.training)
        artifacts.update(summary_training_artifacts(summary.training, training, plots=drawn))
        tables["training_curves"] = (list(training.columns), training_rows(training))
        series = summary_training_series(summary.training, segments, prefix=prefix)
    return SummaryOutputs(
        metrics=metrics,
        curves=curves,
        artifacts=artifacts,
        description=_description(summary),
        tables=tables,
        training=series,
    )
