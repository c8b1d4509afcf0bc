"""Outputs of a Summary: metric names, JSON, Markdown, curve and terminal tables, and everything a sink writes.

Metric names
------------
:func:`flat_metrics` names every scalar under a prefix (default ``boon/``). ``<metric>`` is the test metric
name (the validation metric when there is no test metric), without a ``metrics.`` prefix. With one group the
group segment ``/<group>`` is left out; with several it is the group label made safe for tracker metric names
(characters other than letters, digits, ``_ - . :`` and space become ``_``). ``<n>`` is each budget of
``Spec.n``. Non-finite values (e.g. an undefined correlation) are left out.

| name | value |
|---|---|
| `boon/runs` | runs kept, all groups |
| `boon/dropped` | runs dropped (each with its reason in `runs.csv` and `report.md`) |
| `boon/groups` | number of groups |
| `boon/<metric>[/<group>]/boo_<n>` | Boo_n: expected test score of the best-validation run out of n (estimator `Spec.estimator`) |
| `boon/<metric>[/<group>]/boo_<n>/ci_low`, `.../ci_high` | its bootstrap confidence interval (`Spec.ci_method`) |
| `boon/<metric>[/<group>]/boo_<n>/coverage` | that interval's estimated actual coverage, simulated from a smoothed fit of the runs (absent above 500 runs) |
| `boon/<metric>[/<group>]/mean` | mean test score (= Boo_1) |
| `boon/<metric>[/<group>]/mean/ci_low`, `.../ci_high`, `.../coverage` | its bootstrap confidence interval and estimated coverage |
| `boon/<metric>[/<group>]/gaussian/boo_<n>` | parametric Boo_n (Bajgar et al. 2018, eq. 6) |
| `boon/<metric>[/<group>]/normal` | 1 if Anderson-Darling does not reject normality at 5 %, else 0 |
| `boon/<metric>[/<group>]/sd`, `.../median`, `.../min`, `.../max` | distribution of the test scores |
| `boon/<metric>[/<group>]/spearman_val_test` | validation-test Spearman correlation (with a test metric) |
| `boon/<metric>/<group>/runs`, `.../dropped` | per-group run counts (several groups only) |
| `boon/<metric>/<group>/vs_<base>/boo_<n>` (+ `/ci_low`, `/ci_high`) | Boo_n(group) - Boo_n(base) with its interval |
| `boon/<metric>/<group>/vs_<base>/mean` (+ `/ci_low`, `/ci_high`) | mean(group) - mean(base) with its interval |
| `boon/<metric>/<group>/vs_<base>/welch_p`, `.../welch_p_adj` | Welch t-test p-value, raw and adjusted (Holm or BH over all comparisons) |
| `boon/<metric>/<group>/vs_<base>/mann_whitney_p`, `.../mann_whitney_p_adj` | Mann-Whitney U p-value, raw and adjusted |
| `boon/<metric>/<group>/vs_<base>/wilcoxon_p`, `.../wilcoxon_p_adj` | Wilcoxon signed-rank p-value (runs paired by seed only) |
| `boon/<metric>/<group>/vs_<base>/prob_superiority` | P(group > base) + 0.5 P(equal) |

The expected-validation curve of each group is a step series (step = n) named
`boon/<metric>[/<group>]/curve`.

Artifacts (:func:`render_outputs`): `summary.json` (every number, the spec, the versions), `report.md`,
`curves.csv` (group, n, estimate, ci_low, ci_high, time, simultaneous_low, simultaneous_high, trustworthy:
``ci_*`` is the pointwise band, ``simultaneous_*`` the sup-t band for the whole curve, ``trustworthy`` 0 where
n > m/2 or the estimated coverage is below 90 %), `runs.csv` (every input run with `dropped_reason`,
empty when kept) and, with matplotlib, `curves.png`, `curves_time.png` (when run durations are known for every group) and
`distributions.png`.
"""

from __future__ import annotations

import importlib.util
import io
import json
import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from boontrack.analysis import Summary
from boontrack.exceptions import InputError

if TYPE_CHECKING:
    import pandas as pd

    from boontrack.analysis import GroupSummary, IntervalEstimate
    from boontrack.backends import SummaryOutputs
    from boontrack.runtable import DroppedRun

__all__ = [
    "curve_table",
    "flat_metrics",
    "format_table",
    "metric_names",
    "render_outputs",
    "safe_name",
    "to_json",
    "to_markdown",
]

DEFAULT_PREFIX = "boon/"
#: Characters trackers accept in metric names besides letters and digits (MLflow's rule; "/" nests).
_UNSAFE_IN_METRIC = re.compile(r"[^A-Za-z0-9_\-. :/]")
_UNSAFE_IN_LABEL = re.compile(r"[^A-Za-z0-9_\-. :]")
#: Groups listed in the short description; the rest are counted.
_DESCRIPTION_GROUPS = 4
#: Dropped runs listed in the Markdown report; the rest are in runs.csv.
_REPORT_DROPPED = 20
_HOW_TO_READ = (
    "**How to read Boo_n.** Boo_n is the expected test score of the run you would pick — the best by validation "
    "score — out of n runs drawn at random from these: Boo_1 is the average run, Boo_5 what someone who trains "
    "five models and keeps the best should expect. Compare approaches at the same n; the brackets are "
    "{level:g} % bootstrap confidence intervals over the runs, followed by their estimated actual coverage "
    "(~, simulated from a smoothed fit of the runs; ⚠ below 90 %: the interval is likely too narrow)."
)


def safe_name(text: str, *, allow_slash: bool = False) -> str:
    """``text`` with characters trackers refuse in metric names replaced by ``_`` (``/`` only if allowed)."""
    return (_UNSAFE_IN_METRIC if allow_slash else _UNSAFE_IN_LABEL).sub("_", text)


def _group_segments(summary: Summary) -> dict[str, str]:
    """Label -> metric-name segment ("" with one group); InputError when two labels map to one segment."""
    if len(summary.groups) == 1:
        return {summary.groups[0].label: ""}
    segments: dict[str, str] = {}
    seen: dict[str, str] = {}
    for g in summary.groups:
        segment = safe_name(g.label)
        if segment in seen:
            raise InputError(
                f"groups {seen[segment]!r} and {g.label!r} both become {segment!r} in metric names; "
                "rename them or group by other columns"
            )
        seen[segment] = g.label
        segments[g.label] = "/" + segment
    return segments


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

    def put_interval(name: str, interval: IntervalEstimate, coverage: float | None = None) -> None:
        put(name, interval.estimate)
        put(f"{name}/ci_low", interval.ci_low)
        put(f"{name}/ci_high", interval.ci_high)
        put(f"{name}/coverage", coverage)

    put(f"{prefix}runs", summary.runs)
    put(f"{prefix}dropped", len(summary.dropped))
    put(f"{prefix}groups", len(summary.groups))
    for g in summary.groups:
        path = base + segments[g.label]
        for n, interval in g.boo_n.items():
            put_interval(f"{path}/boo_{n}", interval, g.coverage.get(n))
        put_interval(f"{path}/mean", g.mean, g.coverage.get(1))
        for n, value in g.gaussian.boo_n.items():
            put(f"{path}/gaussian/boo_{n}", value)
        put(f"{path}/normal", g.gaussian.normal)
        d = g.diagnostics
        for stat in ("sd", "median", "min", "max"):
            put(f"{path}/{stat}", getattr(d, stat))
        put(f"{path}/spearman_val_test", d.spearman_val_test)
        if several:
            put(f"{path}/runs", g.runs)
            put(f"{path}/dropped", len(g.dropped))
    for c in summary.comparisons:
        path = f"{base}{segments[c.group]}/vs_{safe_name(c.baseline)}"
        for n, interval in c.boo_n_difference.items():
            put_interval(f"{path}/boo_{n}", interval)
        put_interval(f"{path}/mean", c.mean_difference)
        for test_name in ("welch", "mann_whitney", "wilcoxon"):
            result = getattr(c, test_name)
            if result is not None:
                put(f"{path}/{test_name}_p", result.pvalue)
                put(f"{path}/{test_name}_p_adj", result.pvalue_adjusted)
        put(f"{path}/prob_superiority", c.prob_superiority)
    return out


def metric_names(summary: Summary, *, prefix: str = DEFAULT_PREFIX) -> list[str]:
    """The names :func:`flat_metrics` writes for ``summary``, in order."""
    return list(flat_metrics(summary, prefix=prefix))


def to_json(summary: Summary) -> str:
    """``summary.json``: every number, the spec and the versions (:meth:`Summary.to_dict`), indented."""
    return json.dumps(summary.to_dict(), indent=2, allow_nan=False) + "\n"


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
                "trustworthy": (np.ones(g.curve.n.size, bool) if g.curve.trustworthy is None else g.curve.trustworthy)
                .astype(int),
            }
        )
        for g in summary.groups
    ]
    return pd.concat(frames, ignore_index=True)


def _or_nan(values: np.ndarray | None) -> np.ndarray | float:
    return np.nan if values is None else values


def _with_coverage(interval: IntervalEstimate, coverage: float | None) -> str:
    """The interval, then its estimated actual coverage when known (flagged below 90 %)."""
    from boontrack.simulate import DOUBTFUL_COVERAGE

    if coverage is None or not math.isfinite(coverage):
        return _interval(interval)
    flag = " ⚠" if coverage < DOUBTFUL_COVERAGE else ""
    return f"{_interval(interval)} ~{100 * coverage:.0f} %{flag}"


def _num(x: float | None) -> str:
    """A score for people: 4 significant digits, "n/a" when undefined."""
    return "n/a" if x is None or not math.isfinite(x) else f"{x:.4g}"


def _pvalue(x: float) -> str:
    return "n/a" if not math.isfinite(x) else ("<0.0001" if x < 1e-4 else f"{x:.3g}")


def _interval(i: IntervalEstimate) -> str:
    return f"{_num(i.estimate)} [{_num(i.ci_low)}, {_num(i.ci_high)}]"


def _md_table(header: Iterable[str], rows: Iterable[Iterable[Any]]) -> list[str]:
    header = list(header)
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(cell).replace("|", "\\|") for cell in row) + " |" for row in rows]
    return lines


def _overview(summary: Summary) -> str:
    spec = summary.spec
    grouping = f", grouped by {', '.join(summary.group_by)}" if summary.group_by else ""
    direction = "higher is better" if spec.maximize else "lower is better"
    return (
        f"{summary.runs} runs kept, {len(summary.dropped)} dropped, in {len(summary.groups)} "
        f"group{'s' if len(summary.groups) != 1 else ''}{grouping}. Validation metric `{spec.val}` ({direction})"
        + (f", test metric `{spec.test}`" if spec.test else " (no separate test metric)")
        + f"; estimator {spec.estimator}, {spec.n_resamples} bootstrap resamples ({spec.ci_method}), "
        f"{spec.confidence_level * 100:g} % intervals, seed {spec.seed}."
    )


def _comparison_lines(summary: Summary) -> list[str]:
    spec = summary.spec
    budgets = list(spec.n)
    header = ["group", "vs", "paired", *(f"ΔBoo_{n}" for n in budgets), "Δmean"]
    header += ["Welch p (adj.)", "Mann-Whitney p (adj.)", "P(group > vs)", "Wilcoxon p (adj.)"]
    rows = []
    for c in summary.comparisons:
        wilcoxon = (
            f"{_pvalue(c.wilcoxon.pvalue)} ({_pvalue(c.wilcoxon.pvalue_adjusted)})" if c.wilcoxon else "not paired"
        )
        rows.append(
            [
                c.group,
                c.baseline,
                "yes" if c.paired else "no",
                *(_interval(c.boo_n_difference[n]) for n in budgets),
                _interval(c.mean_difference),
                f"{_pvalue(c.welch.pvalue)} ({_pvalue(c.welch.pvalue_adjusted)})",
                f"{_pvalue(c.mann_whitney.pvalue)} ({_pvalue(c.mann_whitney.pvalue_adjusted)})",
                f"{c.prob_superiority:.3f}",
                wilcoxon,
            ]
        )
    correction = {"holm": "Holm", "bh": "Benjamini-Hochberg"}[spec.correction]
    return [
        "## Comparisons",
        "",
        f"Differences are group minus `vs` on the test scores, with {spec.confidence_level * 100:g} % bootstrap "
        f"intervals; p-values are raw and, in parentheses, adjusted by {correction} over the "
        f"{len(summary.comparisons)} comparison{'s' if len(summary.comparisons) != 1 else ''}.",
        "",
        *_md_table(header, rows),
        "",
        *(f"- warning ({c.group} vs {c.baseline}): {w}" for c in summary.comparisons for w in c.warnings),
        "",
    ]


def _group_lines(g: GroupSummary) -> list[str]:
    d = g.diagnostics
    verdict = (
        "consistent with a normal distribution"
        if g.gaussian.normal
        else "not normal: prefer the non-parametric Boo_n"
    )
    spearman = "n/a" if d.spearman_val_test is None else f"{d.spearman_val_test:.3f}"
    lines = [
        f"### {g.label}",
        "",
        f"- runs: {g.runs} kept, {len(g.dropped)} dropped; {d.ties} tied validation scores",
        f"- test scores: mean {_num(d.mean)}, s.d. {_num(d.sd)}, median {_num(d.median)}, IQR {_num(d.iqr)}, "
        f"min {_num(d.min)}, max {_num(d.max)}",
        f"- validation-test Spearman ρ: {spearman}",
        f"- Anderson-Darling: statistic {d.normality_statistic:.3f} vs. 5 % critical value "
        f"{d.normality_critical_5pct:.3f} — {verdict}",
    ]
    if g.mean_duration_s is not None:
        lines.append(f"- mean training time: {g.mean_duration_s:.4g} s per run")
    lines.append(_band_line(g))
    lines += [f"- warning: {w}" for w in g.warnings]
    return [*lines, "", *_dropped_lines(g.dropped)]


def _band_line(g: GroupSummary) -> str:
    """What the curve's band is, and where it cannot be trusted."""
    line = "- curve band: pointwise (each budget's interval); the simultaneous band for the whole curve is in "
    line += "`curves.csv` and `summary.json`"
    trusted = g.curve.trustworthy
    if trusted is not None and not trusted.all():
        line += f"; doubtful from n = {int(g.curve.n[~trusted].min())} on (n > m/2 or estimated coverage < 90 %)"
    if g.coverage_skipped:
        line += f"; coverage not estimated: {g.coverage_skipped}"
    return line


def _dropped_lines(dropped: Sequence[DroppedRun]) -> list[str]:
    """Dropped runs: counts by reason, then the first few runs (all of them are in ``runs.csv``)."""
    if not dropped:
        return []
    counts = Counter(d.reason for d in dropped).most_common()
    lines = ["Dropped: " + "; ".join(f"{count} × {reason}" for reason, count in counts) + ".", ""]
    lines += _md_table(["dropped run", "reason"], [(d.run_id, d.reason) for d in dropped[:_REPORT_DROPPED]])
    if len(dropped) > _REPORT_DROPPED:
        lines += ["", f"… and {len(dropped) - _REPORT_DROPPED} more (every run is in `runs.csv`)."]
    return [*lines, ""]


def to_markdown(summary: Summary) -> str:
    """A readable report: Boo_n with intervals per group, Gaussian estimate, diagnostics, dropped runs, comparisons."""
    spec = summary.spec
    budgets = list(spec.n)
    lines = [f"# boontrack summary: {summary.metric}", ""]
    if summary.source:
        lines += [f"Source: {summary.source}", ""]
    lines += [_overview(summary), "", _HOW_TO_READ.format(level=spec.confidence_level * 100), ""]
    # Gaussian Boo_1 is the mean: only larger budgets are shown.
    gaussian_budgets = [n for n in budgets if n > 1]
    header = ["group", "runs", *(f"Boo_{n}" for n in budgets), "mean"]
    header += [*(f"Gaussian Boo_{n}" for n in gaussian_budgets), "normal?"]
    rows = [
        [
            g.label,
            g.runs,
            *(_with_coverage(g.boo_n[n], g.coverage.get(n)) for n in budgets),
            _with_coverage(g.mean, g.coverage.get(1)),
            *(_num(g.gaussian.boo_n[n]) for n in gaussian_budgets),
            "yes" if g.gaussian.normal else "no",
        ]
        for g in summary.groups
    ]
    lines += ["## Boo_n per group", "", *_md_table(header, rows), ""]
    lines += ["## Diagnostics", ""]
    for g in summary.groups:
        lines += _group_lines(g)
    ungrouped = [d for d in summary.dropped if d.group not in {g.label for g in summary.groups}]
    if ungrouped:
        lines += ["### Dropped runs outside the analyzed groups", "", *_dropped_lines(ungrouped)]
    if summary.comparisons:
        lines += _comparison_lines(summary)
    versions = ", ".join(f"{name} {version}" for name, version in summary.versions.items())
    lines += [f"_Computed with {versions}._", ""]
    return "\n".join(lines)


def format_table(summary: Summary) -> str:
    """A compact plain-text table for the terminal: one line per group, then one per comparison."""
    spec = summary.spec
    budgets = list(spec.n)
    header = ["group", "runs", "dropped", *(f"Boo_{n}" for n in budgets), "mean", "normal"]
    rows = [
        [
            g.label,
            str(g.runs),
            str(len(g.dropped)),
            *(_interval(g.boo_n[n]) for n in budgets),
            _interval(g.mean),
            "yes" if g.gaussian.normal else "no",
        ]
        for g in summary.groups
    ]
    lines = [
        f"{summary.metric}: estimator {spec.estimator}, {spec.confidence_level * 100:g}% bootstrap CI, "
        f"{summary.runs} runs, {len(summary.dropped)} dropped",
        *_aligned([header, *rows]),
    ]
    if summary.comparisons:
        largest = max(budgets)
        header = ["group", "vs", f"ΔBoo_{largest}", "Δmean", f"Mann-Whitney p adj. ({spec.correction})"]
        header.append("P(group > vs)")
        rows = [
            [
                c.group,
                c.baseline,
                _interval(c.boo_n_difference[largest]),
                _interval(c.mean_difference),
                _pvalue(c.mann_whitney.pvalue_adjusted),
                f"{c.prob_superiority:.3f}",
            ]
            for c in summary.comparisons
        ]
        lines += ["", *_aligned([header, *rows])]
    warned = sum(len(g.warnings) for g in summary.groups) + sum(len(c.warnings) for c in summary.comparisons)
    if warned:
        lines += ["", f"{warned} warning(s); see the report for details."]
    return "\n".join(lines)


def _aligned(rows: list[list[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]


def _description(summary: Summary) -> str:
    """3-6 lines of Markdown for the aggregate run's description."""
    spec = summary.spec
    n = max(spec.n)
    lines = [
        f"**boontrack** summary of `{summary.metric}`: {summary.runs} runs in {len(summary.groups)} "
        f"group{'s' if len(summary.groups) != 1 else ''}, {len(summary.dropped)} dropped; estimator "
        f"{spec.estimator}, {spec.confidence_level * 100:g} % bootstrap intervals.",
    ]
    lines += [
        f"- {g.label}: Boo_{n} = {_interval(g.boo_n[n])}, mean {_interval(g.mean)} ({g.runs} runs)"
        for g in summary.groups[:_DESCRIPTION_GROUPS]
    ]
    if len(summary.groups) > _DESCRIPTION_GROUPS:
        lines.append(f"- … and {len(summary.groups) - _DESCRIPTION_GROUPS} more groups (see `report.md`)")
    lines.append(
        f"Source: {summary.source}."
        if summary.source
        else "Full report in `report.md`, every number in `summary.json`."
    )
    return "\n".join(lines)


def _csv_bytes(frame: pd.DataFrame) -> bytes:
    buffer = io.StringIO()
    frame.to_csv(buffer, index=False)
    return buffer.getvalue().encode()


def render_outputs(summary: Summary, *, prefix: str = DEFAULT_PREFIX, plots: bool = True) -> SummaryOutputs:
    """Everything a sink writes: metrics, one curve series per group, artifacts, description, curve table."""
    from boontrack.backends import CurveSeries, SummaryOutputs

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
        "curves.csv": _csv_bytes(table),
    }
    if summary.table is not None:
        artifacts["runs.csv"] = _csv_bytes(summary.table.all_runs())
    if plots and importlib.util.find_spec("matplotlib") is not None:
        from boontrack.plots import figure_png, plot_curves, plot_distributions

        artifacts["curves.png"] = figure_png(plot_curves(summary))
        if all(g.curve.time is not None for g in summary.groups):  # a time axis missing a group would mislead
            artifacts["curves_time.png"] = figure_png(plot_curves(summary, x="time"))
        if summary.table is not None:
            artifacts["distributions.png"] = figure_png(plot_distributions(summary))
    rows = json.loads(table.to_json(orient="values"))  # plain Python values, NaN as None
    return SummaryOutputs(
        metrics=metrics,
        curves=curves,
        artifacts=artifacts,
        description=_description(summary),
        tables={"curves": (list(table.columns), rows)},
    )
