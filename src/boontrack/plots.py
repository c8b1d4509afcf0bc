"""Plots of a Summary: expected-best curves with bands, and score distributions per group.

matplotlib is an optional extra (``pip install "boontrack[plots]"``), imported when a plot is made. Figures are
built as :class:`matplotlib.figure.Figure` objects on the Agg canvas, never through pyplot, so nothing leaks
into (or depends on) global pyplot state.
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING, Literal

import numpy as np

from boontrack._optional import import_optional
from boontrack.exceptions import InputError

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from boontrack.analysis import Summary

__all__ = ["figure_png", "plot_curves", "plot_distributions"]

#: Above this many budgets, the curve's x axis is logarithmic (as in Dodge et al.'s plots).
_LOG_X_ABOVE = 30
#: With more groups than this, the legend moves outside the axes.
_LEGEND_INSIDE_MAX = 6


def _new_figure(width: float = 7.5, height: float = 4.8) -> Figure:
    """An empty figure on the Agg canvas, with the install hint when matplotlib is missing."""
    figure_module = import_optional("matplotlib.figure", extra="plots", needed_for="drawing plots")
    agg = import_optional("matplotlib.backends.backend_agg", extra="plots", needed_for="drawing plots")
    figure = figure_module.Figure(figsize=(width, height), layout="constrained")
    agg.FigureCanvasAgg(figure)
    return figure


def _colors(count: int) -> list:
    from matplotlib import colormaps

    cmap = colormaps["tab10" if count <= 10 else "tab20"]
    return [cmap(i % cmap.N) for i in range(count)]


def _legend(ax, count: int) -> None:
    if count <= _LEGEND_INSIDE_MAX:
        ax.legend(loc="best", fontsize="small", frameon=True)
    else:
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="x-small", frameon=False)


def _draw_band(ax, xs: np.ndarray, g, color, alpha: float) -> None:
    """One group's curve: the pointwise band shaded, the simultaneous band dotted, and the doubtful budgets
    (``Curve.trustworthy`` False: n > m/2 or an estimated coverage below 90 %) dashed with a fainter band."""
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
    label = f"{g.label} ({g.runs} runs)"
    ax.plot(xs, np.where(trusted, curve.estimate, np.nan), color=color, linewidth=1.8, label=label)
    if doubtful.any():
        ax.plot(xs, np.where(doubtful, curve.estimate, np.nan), color=color, linewidth=1.4, linestyle="--")


def plot_curves(summary: Summary, *, x: Literal["n", "time"] = "n") -> Figure:
    """Expected test score of the best-validation run against the budget, with bootstrap bands, all groups.

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
    figure = _new_figure()
    ax = figure.add_subplot()
    colors = _colors(len(summary.groups))
    band_alpha = 0.18 if len(summary.groups) <= 4 else 0.08  # overlapping bands of many groups stay readable
    for g, color in zip(summary.groups, colors):
        xs = g.curve.n if x == "n" else g.curve.time
        _draw_band(ax, xs, g, color, band_alpha)
    if x == "time" or max(int(g.curve.n[-1]) for g in summary.groups) > _LOG_X_ABOVE:
        from matplotlib.ticker import FuncFormatter

        ax.set_xscale("log")
        ax.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))  # 1, 10, 100, not 10^k
    if x == "n":
        ax.set_xlabel("budget n (runs drawn at random; the best by validation is kept)")
    else:
        ax.set_xlabel("expected training time in seconds for n runs (n x mean run duration)")
    ylabel = f"expected {summary.metric}" + (" (test)" if summary.has_test else " (validation)")
    ax.set_ylabel(ylabel)
    ax.set_title(
        f"Expected {summary.metric} of the best-validation run out of n"
        + (" against training time" if x == "time" else "")
        + f"\nestimator {spec.estimator}; {spec.confidence_level * 100:g} % bands: pointwise (shaded), "
        "simultaneous (dotted); dashed: doubtful",
        fontsize="medium",
    )
    ax.grid(True, which="major", alpha=0.3)
    _legend(ax, len(summary.groups))
    return figure


def plot_distributions(summary: Summary) -> Figure:
    """Empirical CDF of the scores of each group, with the mean (circle) and Boo_n for the largest n (triangle).

    Needs the runs (``summary.table``), which :func:`boontrack.analysis.analyze` keeps.
    """
    if summary.table is None:
        raise InputError("this summary carries no runs (summary.table is None): cannot plot the distributions")
    n = max(summary.spec.n)
    figure = _new_figure()
    ax = figure.add_subplot()
    colors = _colors(len(summary.groups))
    for g, color in zip(summary.groups, colors):
        _, scores = summary.table.arrays(g.label)
        xs = np.sort(scores)
        ys = np.arange(1, xs.size + 1) / xs.size
        ax.step(np.concatenate(([xs[0]], xs)), np.concatenate(([0.0], ys)), where="post", color=color,
                linewidth=1.6, label=f"{g.label} ({g.runs} runs)")
        for value, marker in ((g.mean.estimate, "o"), (g.boo_n[n].estimate, "^")):
            height = np.searchsorted(xs, value, side="right") / xs.size
            ax.plot([value], [height], marker=marker, color=color, markersize=8, markeredgecolor="black",
                    linestyle="none")
    # Marker meaning, once, in the legend.
    ax.plot([], [], marker="o", color="grey", markeredgecolor="black", linestyle="none", label="mean")
    ax.plot([], [], marker="^", color="grey", markeredgecolor="black", linestyle="none", label=f"Boo_{n}")
    kind = "test" if summary.has_test else "validation"
    ax.set_xlabel(f"{summary.metric} ({kind} score of a run)")
    ax.set_ylabel("fraction of runs with a score ≤ x")
    ax.set_ylim(0, 1.02)
    ax.set_title(f"Distribution of {summary.metric} per group (empirical CDF)", fontsize="medium")
    ax.grid(True, alpha=0.3)
    _legend(ax, len(summary.groups) + 2)
    return figure


def figure_png(figure: Figure, *, dpi: int = 120) -> bytes:
    """The figure as PNG bytes."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=dpi)
    return buffer.getvalue()
