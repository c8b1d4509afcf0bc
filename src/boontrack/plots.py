"""Plots of a Summary: expected-best curves with bands, score distributions per group, and across tasks the
aggregates' intervals and the performance profiles.

matplotlib is an optional extra (``pip install ".[plots]"``), imported when a plot is made. Figures are
built as :class:`matplotlib.figure.Figure` objects on the Agg canvas, never through pyplot, so nothing leaks
into (or depends on) global pyplot state.

Axes: a curve's x axis is logarithmic when the plotted values span more than a factor :data:`LOG_X_SPAN` (30),
linear otherwise, for budgets and for training time alike (:func:`x_scale`); training time is shown in seconds,
minutes or hours, whichever keeps the numbers small. Tick labels are plain numbers (no ``10^k`` or offset
notation), integers on a linear budget axis, and only major ticks are labelled.

Cost: figures have fixed margins (no layout solver), the legend and title fixed places (no search for free
space), and are drawn once, straight to PNG by the Agg canvas with fast zlib compression.
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from boontrack._optional import import_optional
from boontrack.exceptions import InputError

if TYPE_CHECKING:
    from matplotlib.figure import Figure
    from numpy.typing import ArrayLike

    from boontrack.summary import Summary
    from boontrack.training import TrainingCurves

__all__ = [
    "figure_png",
    "plot_across_intervals",
    "plot_across_profiles",
    "plot_curves",
    "plot_distributions",
    "plot_study",
    "plot_training_curves",
    "render_pngs",
    "x_scale",
]

#: A curve's x axis is logarithmic when its values span more than this factor (as in Dodge et al.'s plots).
LOG_X_SPAN = 30
#: With more groups than this, the legend moves outside the axes.
_LEGEND_INSIDE_MAX = 6
_SIZE_IN = (7.5, 4.8)
_DPI = 120
#: Fixed margins (fractions of the figure) that fit two title lines, the axis labels and 6-digit tick labels.
_MARGINS = {"left": 0.1, "right": 0.97, "bottom": 0.11, "top": 0.88}
#: An outer legend's width as a fraction of the figure: its marker and padding, then per character of the
#: longest label (x-small text on a 7.5-inch figure); the axes keep at least half of the figure.
_OUTER_LEGEND_BASE, _OUTER_LEGEND_PER_CHAR, _OUTER_LEGEND_MAX = 0.07, 0.0075, 0.45
#: Steps drawn per empirical CDF at most: more are not visible at this size and cost drawing time.
_ECDF_STEPS = 500
#: Training time is shown in the largest unit in which the longest time is still at least 3 of it.
_TIME_UNITS = (("hours", 3600.0), ("minutes", 60.0), ("seconds", 1.0))


def x_scale(values: ArrayLike) -> Literal["linear", "log"]:
    """The scale of a curve's x axis: ``"log"`` when the positive values span more than a factor
    :data:`LOG_X_SPAN`, else ``"linear"``.

    One rule for every curve plot and for the W&B chart, applied to all the values on the axis (every
    group's budgets, or their expected training times): budgets 1..N are on a log axis from N = 31 on.
    """
    values = np.asarray(values, dtype=float)
    positive = values[np.isfinite(values) & (values > 0)]
    if positive.size == 0:
        return "linear"
    return "log" if positive.max() / positive.min() > LOG_X_SPAN else "linear"


def _plain(value: float, _position: object = None) -> str:
    """A tick label without exponent: 0.3, -2.5, 250, 10,000 (an exponent only below 0.001 in magnitude)."""
    magnitude = abs(value)
    if magnitude >= 10_000:
        return f"{value:,.0f}"
    return f"{value:g}" if magnitude >= 1e-3 or value == 0 else f"{value:.1e}"


def _format_axes(ax, *, x: Literal["linear", "log"], integer_x: bool) -> None:
    """Plain, non-overlapping tick labels: major ticks only, integers on a linear budget axis."""
    from matplotlib.ticker import FuncFormatter, LogLocator, MaxNLocator, NullFormatter, ScalarFormatter

    if x == "log":
        ax.set_xscale("log")
        low, high = ax.get_xlim()
        decades = np.log10(high / low)
        # Up to 3.5 decades, 1-2-5 ticks (at most ~11 labels, room for each); above, powers of ten are enough.
        ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0) if decades <= 3.5 else (1.0,)))
        ax.xaxis.set_major_formatter(FuncFormatter(_plain))
        ax.xaxis.set_minor_formatter(NullFormatter())
    else:
        ax.xaxis.set_major_locator(MaxNLocator(nbins="auto", steps=[1, 2, 5, 10], integer=integer_x))
        ax.xaxis.set_major_formatter(FuncFormatter(_plain))
    y_formatter = ScalarFormatter(useOffset=False)
    y_formatter.set_scientific(False)
    ax.yaxis.set_major_formatter(y_formatter)


def _time_unit(seconds: np.ndarray) -> tuple[str, float]:
    """(name, seconds per unit) of the unit training times are shown in."""
    longest = float(np.nanmax(seconds))
    return next(((name, size) for name, size in _TIME_UNITS if longest >= 3 * size), _TIME_UNITS[-1])


def _new_figure(size: tuple[float, float] = _SIZE_IN) -> Figure:
    """An empty figure on the Agg canvas with fixed margins, with the install hint when matplotlib is missing.

    A new figure costs less than clearing and reusing one (measured), so every plot gets its own.
    """
    figure_module = import_optional("matplotlib.figure", extra="plots", needed_for="drawing plots")
    agg = import_optional("matplotlib.backends.backend_agg", extra="plots", needed_for="drawing plots")
    figure = figure_module.Figure(figsize=size, dpi=_DPI)
    agg.FigureCanvasAgg(figure)
    figure.subplots_adjust(**_MARGINS)
    return figure


def _colors(count: int) -> list:
    from matplotlib import colormaps

    cmap = colormaps["tab10" if count <= 10 else "tab20"]
    return [cmap(i % cmap.N) for i in range(count)]


def _legend(ax, count: int, *, corner: str) -> None:
    if count <= _LEGEND_INSIDE_MAX:
        # A fixed corner: loc="best" searches every line vertex for the emptiest place, at every draw.
        ax.legend(loc=corner, fontsize="small", frameon=True)
    else:
        # Room for the longest label, computed instead of measured: a layout pass would draw the figure twice.
        longest = max((len(label) for label in ax.get_legend_handles_labels()[1]), default=0)
        width = min(_OUTER_LEGEND_BASE + _OUTER_LEGEND_PER_CHAR * longest, _OUTER_LEGEND_MAX)
        ax.figure.subplots_adjust(right=1 - width)
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="x-small", frameon=False)


def _draw_band(ax, xs: np.ndarray, g, color, alpha: float, *, label: str) -> None:
    """One group's curve under ``label``: the pointwise band shaded, the simultaneous band dotted, and the
    doubtful budgets (``Curve.trustworthy`` False: n > m/2 or an estimated coverage below 90 %) dashed with a
    fainter band."""
    curve = g.curve
    trusted = np.ones(curve.n.size, bool) if curve.trustworthy is None else curve.trustworthy
    # The doubtful part starts at the last trusted budget, so that the two parts join.
    doubtful = ~trusted
    doubtful[:-1] |= doubtful[1:]
    ax.fill_between(xs, curve.ci_low, curve.ci_high, where=trusted, color=color, alpha=alpha, linewidth=0)
    ax.fill_between(xs, curve.ci_low, curve.ci_high, where=doubtful, color=color, alpha=alpha / 3, linewidth=0)
    if curve.simultaneous_low is not None:
        for bound in (curve.simultaneous_low, curve.simultaneous_high):
            ax.plot(xs, bound, color=color, linewidth=0.8, linestyle=":")
    ax.plot(xs, np.where(trusted, curve.estimate, np.nan), color=color, linewidth=1.8, label=label)
    if doubtful.any():
        ax.plot(xs, np.where(doubtful, curve.estimate, np.nan), color=color, linewidth=1.4, linestyle="--")


def plot_curves(summary: Summary, *, x: Literal["n", "time"] = "n") -> Figure:
    """Expected test score of the best-validation run against the budget, with bootstrap bands, all groups; with
    a task column, one panel per task holding its approaches, each approach in one color throughout.

    The shaded band is pointwise (each budget's interval), the dotted lines the simultaneous band for the whole
    curve; where the band cannot be trusted (n > m/2, or an estimated coverage below 90 %) the curve is dashed
    and its band faint.

    Parameters
    ----------
    summary
        The result of :func:`boontrack.analysis.analyze`.
    x
        ``"n"``: the number of runs; ``"time"``: expected training time, n x the group's mean run duration
        (Dodge et al. 2019, Fig. 1); needs durations for every group.
    """
    if x not in ("n", "time"):
        raise ValueError(f'`x` must be "n" or "time", got {x!r}')
    if x == "time" and any(g.curve.time is None for g in summary.groups):
        missing = [g.label for g in summary.groups if g.curve.time is None]
        raise InputError(f"no run durations for group(s) {', '.join(missing)}: cannot plot against time")
    spec = summary.spec
    unit, unit_s = _time_unit(np.concatenate([g.curve.time for g in summary.groups])) if x == "time" else ("", 1.0)
    panels = _task_panels(summary)
    columns = min(len(panels), _PANEL_COLUMNS)
    rows = -(-len(panels) // columns)
    size = _SIZE_IN if len(panels) == 1 else (_SIZE_IN[0] * 1.3, 1.2 + _PANEL_HEIGHT_IN * rows)
    figure = _new_figure(size)
    axes = np.atleast_1d(figure.subplots(rows, columns, sharex=True, squeeze=False).ravel())
    labels = list(dict.fromkeys(label for _, members in panels for _, label in members))
    color_of = dict(zip(labels, _colors(len(labels))))
    most = max(len(members) for _, members in panels)
    band_alpha = 0.18 if most <= 4 else 0.08  # overlapping bands of many groups stay readable
    for ax, (title, members) in zip(axes, panels):
        for g, label in members:
            xs = g.curve.n if x == "n" else g.curve.time / unit_s
            _draw_band(ax, xs, g, color_of[label], band_alpha, label=f"{label} ({g.runs} runs)")
        xs_all = np.concatenate([g.curve.n if x == "n" else g.curve.time for g, _ in members])
        _format_axes(ax, x=x_scale(xs_all), integer_x=x == "n")
        ax.grid(True, which="major", alpha=0.3)
        if title is not None:
            ax.set_title(title, fontsize="small", loc="left")
    for ax in axes[len(panels) :]:
        ax.set_visible(False)
    xlabel = (
        "budget n (runs drawn at random; the best by validation is kept)"
        if x == "n"
        else f"expected training time in {unit} for n runs (n x mean run duration)"
    )
    ylabel = f"expected {summary.metric}" + (" (test)" if summary.has_test else " (validation)")
    title = (
        f"Expected {summary.metric} of the best-validation run out of n"
        + (" against training time" if x == "time" else "")
        + f"\nestimator {spec.estimator}; {spec.confidence_level * 100:g} % bands: pointwise (shaded), "
        "simultaneous (dotted); dashed: doubtful"
    )
    # Curves of a maximized score rise to the right, those of a minimized one fall: the legend goes opposite.
    corner = "lower right" if spec.maximize else "upper right"
    if len(panels) == 1:
        (ax,) = axes
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_title(title, fontsize="medium", y=1.0)  # a fixed place: spares the search for tick labels above
        _legend(ax, len(labels), corner=corner)
        return figure
    height = size[1]  # margins in inches: the two title lines above, the label below
    figure.subplots_adjust(left=0.08, right=0.97, bottom=0.55 / height, top=1 - 0.85 / height, hspace=0.4, wspace=0.22)
    figure.suptitle(title, fontsize="medium")
    figure.supxlabel(xlabel, fontsize="small")
    figure.supylabel(ylabel, fontsize="small")
    axes[0].legend(loc=corner, fontsize="x-small", frameon=True)
    return figure


#: With a task column, the panels of :func:`plot_curves` per row, and each row's height in inches.
_PANEL_COLUMNS, _PANEL_HEIGHT_IN = 3, 2.4


def _task_panels(summary: Summary) -> list[tuple[str | None, list[tuple[Any, str]]]]:
    """(title, [(group, legend label)]) per panel: one per task with a task column (the approaches as labels),
    else one of every group under its own label."""
    across = summary.across_tasks
    tasks = [] if across is None else across.by_task(summary.groups)
    if across is None or not tasks:
        return [(None, [(g, g.label) for g in summary.groups])]
    return [(f"{across.task_column} = {task}", members) for task, members in tasks]


def plot_training_curves(curves: TrainingCurves) -> Figure:
    """Each group's mean training curve against the step, with its bands (:func:`boontrack.training.training_curves`).

    The shaded band is pointwise, the dotted lines the simultaneous band; steps with fewer than ``min_runs``
    runs (outside the simultaneous band) are dashed with a fainter band. A group of more than
    :data:`boontrack.training.BAND_STEPS` steps is drawn at the steps its bands were computed at.
    """
    curves = curves.plotted()
    figure = _new_figure()
    ax = figure.add_subplot()
    groups = curves.groups
    band_alpha = 0.18 if len(groups) <= 4 else 0.08
    for label, color in zip(groups, _colors(len(groups))):
        group = curves.of(label)
        steps, enough = group.step, group.enough_runs
        # The marked part starts at the last step with enough runs, so that the two parts join.
        few = ~enough
        few[:-1] |= few[1:]
        ax.fill_between(steps, group.low, group.high, where=enough, color=color, alpha=band_alpha, linewidth=0)
        ax.fill_between(steps, group.low, group.high, where=few, color=color, alpha=band_alpha / 3, linewidth=0)
        for bound in (group.simultaneous_low, group.simultaneous_high):
            ax.plot(steps, bound, color=color, linewidth=0.8, linestyle=":")
        runs = f"{group.runs.min()}-{group.runs.max()}" if group.runs.min() < group.runs.max() else group.runs[0]
        ax.plot(steps, np.where(enough, group.mean, np.nan), color=color, linewidth=1.8, label=f"{label} ({runs} runs)")
        if few.any():
            ax.plot(steps, np.where(few, group.mean, np.nan), color=color, linewidth=1.4, linestyle="--")
    _format_axes(ax, x="linear", integer_x=curves.step.dtype.kind in "iu")
    ax.set_xlabel("step")
    what = curves.metric if curves.curve == "value" else f"best-so-far {curves.test or curves.metric}"
    ax.set_ylabel(f"mean {what} across runs")
    ax.set_title(
        f"Mean {what} across runs\n{curves.confidence_level * 100:g} % bands: pointwise (shaded), simultaneous "
        f"(dotted); dashed: fewer than {curves.min_runs} runs",
        fontsize="medium",
        y=1.0,
    )
    ax.grid(True, which="major", alpha=0.3)
    rising = np.nanmean(curves.mean[curves.step == curves.step.max()]) >= np.nanmean(
        curves.mean[curves.step == curves.step.min()]
    )
    _legend(ax, len(groups), corner="lower right" if rising else "upper right")
    return figure


def plot_distributions(summary: Summary) -> Figure:
    """Empirical CDF of the scores of each group, with the mean (circle) and Boo_n for the largest n (triangle).

    Needs the runs (``summary.table``), which :func:`boontrack.analysis.analyze` keeps.
    """
    if summary.table is None:
        raise InputError("this summary carries no runs (summary.table is None): cannot plot the distributions")
    n = max(summary.common_budgets)
    figure = _new_figure()
    ax = figure.add_subplot()
    colors = _colors(len(summary.groups))
    for g, color in zip(summary.groups, colors):
        _, scores = summary.table.arrays(g.label)
        xs = np.sort(scores)
        ys = np.arange(1, xs.size + 1) / xs.size
        # At most _ECDF_STEPS evenly spaced ranks (the first and the last included): invisible at this size.
        steps = np.unique(np.linspace(0, xs.size - 1, min(xs.size, _ECDF_STEPS)).round().astype(int))
        ax.step(
            np.concatenate(([xs[0]], xs[steps])),
            np.concatenate(([0.0], ys[steps])),
            where="post",
            color=color,
            linewidth=1.6,
            label=f"{g.label} ({g.runs} runs)",
        )
        for value, marker in ((g.mean.estimate, "o"), (g.boo_n[n].estimate, "^")):
            height = np.searchsorted(xs, value, side="right") / xs.size
            ax.plot(
                [value], [height], marker=marker, color=color, markersize=8, markeredgecolor="black", linestyle="none"
            )
    # Marker meaning, once, in the legend.
    ax.plot([], [], marker="o", color="grey", markeredgecolor="black", linestyle="none", label="mean")
    ax.plot([], [], marker="^", color="grey", markeredgecolor="black", linestyle="none", label=f"Boo_{n}")
    kind = "test" if summary.has_test else "validation"
    ax.set_xlabel(f"{summary.metric} ({kind} score of a run)")
    ax.set_ylabel("fraction of runs with a score ≤ x")
    ax.set_ylim(0, 1.02)
    ax.set_title(f"Distribution of {summary.metric} per group (empirical CDF)", fontsize="medium", y=1.0)
    ax.grid(True, alpha=0.3)
    _format_axes(ax, x="linear", integer_x=False)
    _legend(ax, len(summary.groups) + 2, corner="upper left")  # above an empirical CDF, left of its rise
    return figure


#: Title of each runs-needed panel of :func:`plot_study`, by its quantity: the two panels share a budget.
_RUNS_NEEDED_TITLES = {
    "median width": "width of the Boo_{n} interval: runs needed",
    "power": "power on ΔBoo_{n} (paired): runs needed",
}


def plot_study(result: Any) -> Figure:
    """The study of :func:`boontrack.simulate.study` (a :class:`~boontrack.simulate.Study`, not imported here:
    the simulation draws its figure with this module): the coverage of each interval method by budget against the
    nominal level (bars: two standard errors) and, when asked for, the runs-needed curves, side by side."""
    plans = [p for p in (result.width, result.power) if p is not None]
    figure = _new_figure((5.5 * (1 + len(plans)), 4.2))
    figure.subplots_adjust(wspace=0.3)
    axes = figure.subplots(1, 1 + len(plans), squeeze=False)[0]
    for method in dict.fromkeys(c.method for c in result.coverage):
        cells = [c for c in result.coverage if c.method == method]
        axes[0].errorbar(
            [c.n for c in cells],
            [c.coverage for c in cells],
            yerr=[2 * c.coverage_se for c in cells],
            marker="o",
            capsize=3,
            label=method,
        )
    if result.coverage:
        axes[0].axhline(result.coverage[0].confidence_level, color="grey", linestyle="--", label="nominal")
    axes[0].set(xlabel="budget n", ylabel="coverage", title=f"{result.population}, m = {result.m}")
    _format_axes(axes[0], x="linear", integer_x=True)  # budgets are whole numbers of runs
    axes[0].legend(loc="lower left", fontsize="small")
    for ax, plan in zip(axes[1:], plans):
        ax.plot(plan.m, plan.value, marker="o")
        ax.axhline(plan.target, color="grey", linestyle="--", label="target")
        ax.set(xlabel="runs m", ylabel=plan.quantity, title=_RUNS_NEEDED_TITLES[plan.quantity].format(n=plan.n))
        _format_axes(ax, x="log", integer_x=True)
        ax.legend(loc="best" if len(plan.m) < 20 else "upper right", fontsize="small")
    return figure


#: The aggregates across tasks drawn with their intervals: (label, attribute of ApproachAggregates).
ACROSS_AGGREGATES = (("mean", "mean"), ("median", "median"), ("IQM", "iqm"), ("optimality gap", "optimality_gap"))


def plot_across_intervals(summary: Summary) -> Figure:
    """Across tasks, each approach's mean, median, IQM and optimality gap as a point with its interval as an
    error bar (Agarwal et al. 2021, figure 1), one panel per aggregate."""
    across = _across_of(summary)
    figure = _new_figure((_SIZE_IN[0], 1.2 + 0.35 * len(across.aggregates) * len(ACROSS_AGGREGATES)))
    axes = figure.subplots(len(ACROSS_AGGREGATES), 1, sharex=False)
    figure.subplots_adjust(left=0.25, right=0.97, top=0.88, bottom=0.06, hspace=0.9)
    colors = _colors(len(across.aggregates))
    rows = np.arange(len(across.aggregates))
    for ax, (title, key) in zip(axes, ACROSS_AGGREGATES):
        for row, aggregates, color in zip(rows, across.aggregates, colors):
            interval = getattr(aggregates, key)
            reach = [[interval.estimate - interval.ci_low], [interval.ci_high - interval.estimate]]
            ax.errorbar([interval.estimate], [row], xerr=reach, fmt="o", color=color, capsize=4, linewidth=2)
        ax.set_title(title, fontsize="small", loc="left")
        ax.grid(True, axis="x", alpha=0.3)
        _format_axes(ax, x="linear", integer_x=False)
        ax.set_yticks(rows, [a.approach for a in across.aggregates])  # after the axes' number formats
        ax.set_ylim(rows[-1] + 0.6, -0.6)
    level = summary.spec.confidence_level * 100
    figure.suptitle(
        f"{summary.metric} across {len(across.tasks)} tasks, {level:g} % stratified bootstrap intervals",
        fontsize="medium",
    )
    return figure


def plot_across_profiles(summary: Summary) -> Figure:
    """Across tasks, each approach's performance profile (the share of its runs scoring better than tau, over
    tau) with its pointwise band (Agarwal et al. 2021, figure 6)."""
    across = _across_of(summary)
    figure = _new_figure()
    ax = figure.add_subplot()
    for aggregates, color in zip(across.aggregates, _colors(len(across.aggregates))):
        profile = aggregates.profile
        ax.fill_between(profile.tau, profile.low, profile.high, color=color, alpha=0.2, linewidth=0)
        ax.plot(profile.tau, profile.share, color=color, linewidth=1.8, label=f"{aggregates.approach}")
    better = ">" if summary.spec.higher_is_better else "<"
    ax.set_xlabel(f"tau ({summary.metric}, {'normalized' if across.normalize != 'none' else 'as logged'})")
    ax.set_ylabel(f"fraction of runs with score {better} tau")
    ax.set_ylim(-0.02, 1.02)
    ax.set_title(f"Performance profiles across {len(across.tasks)} tasks, pointwise bands", fontsize="medium")
    ax.grid(True, alpha=0.3)
    _format_axes(ax, x="linear", integer_x=False)
    _legend(ax, len(across.aggregates), corner="upper right" if summary.spec.higher_is_better else "upper left")
    return figure


def _across_of(summary: Summary) -> Any:
    if summary.across_tasks is None:
        raise InputError("this summary has no across-tasks part: it was made without a task column")
    return summary.across_tasks


def figure_png(figure: Figure, *, dpi: int = _DPI) -> bytes:
    """The figure as PNG bytes, drawn once by its Agg canvas (no layout pass, no bounding-box search)."""
    buffer = io.BytesIO()
    figure.set_dpi(dpi)
    # zlib level 1: a few percent larger files than the default 6, encoded several times faster.
    canvas: Any = figure.canvas  # the Agg canvas of _new_figure, which prints PNG
    canvas.print_png(buffer, pil_kwargs={"compress_level": 1})
    return buffer.getvalue()


def render_pngs(summary: Summary) -> dict[str, bytes]:
    """Every plot of ``summary`` as PNG bytes: ``curves.png``, ``curves_time.png`` (when every group has run
    durations: a time axis missing a group would mislead) and ``distributions.png`` (when the summary carries
    its runs), and with a task column ``across_intervals.png`` and ``across_profiles.png``."""
    pngs = {"curves.png": figure_png(plot_curves(summary))}
    if summary.across_tasks is not None:
        pngs["across_intervals.png"] = figure_png(plot_across_intervals(summary))
        pngs["across_profiles.png"] = figure_png(plot_across_profiles(summary))
    if all(g.curve.time is not None for g in summary.groups):
        pngs["curves_time.png"] = figure_png(plot_curves(summary, x="time"))
    if summary.table is not None:
        pngs["distributions.png"] = figure_png(plot_distributions(summary))
    return pngs
