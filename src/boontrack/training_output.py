"""The files of training curves: ``training_curves.csv`` and ``training_curves.png``.

One metric's curves (:func:`write_training_curves`), or a summary's, one per entry of ``Spec.curves``
(:func:`summary_training_artifacts`: one CSV with a ``metric`` column holding the entry, one PNG per entry), and
their series for the trackers (:func:`training_path`). matplotlib is needed only for the PNG (the ``plots``
extra), imported when one is drawn.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from boontrack._report_text import safe_name
from boontrack._validation import as_flag
from boontrack.spec import curve_request
from boontrack.training import TrainingCurves
from boontrack.vocabulary import name as _named

if TYPE_CHECKING:
    import pandas as pd

    from boontrack.backends import CurveSeries

__all__ = [
    "CSV_NAME",
    "PNG_NAME",
    "png_name",
    "summary_training_artifacts",
    "summary_training_series",
    "summary_training_table",
    "training_curves_table",
    "training_path",
    "training_rows",
    "write_training_curves",
]

#: Files written by :func:`write_training_curves`.
CSV_NAME, PNG_NAME = "training_curves.csv", "training_curves.png"
#: The series of each metric and group (name, attribute of :class:`TrainingCurves`).
SERIES = (
    ("mean", "mean"),
    ("ci_low", "low"),
    ("ci_high", "high"),
    ("band_low", "simultaneous_low"),
    ("band_high", "simultaneous_high"),
    ("runs", "runs"),
)


def training_curves_table(curves: TrainingCurves) -> pd.DataFrame:
    """The curves as a table, one row per group and step, with the columns of ``curves.csv``: ``group``,
    ``step``, ``runs``, ``mean``, ``standard_error``, ``ci_low``, ``ci_high`` (the pointwise band),
    ``simultaneous_low``, ``simultaneous_high`` and ``enough_runs``."""
    import pandas as pd

    if not isinstance(curves, TrainingCurves):
        raise ValueError(f"{_named('curves')} must be a TrainingCurves, got {type(curves).__name__}")
    return pd.DataFrame(
        {
            "group": curves.group,
            "step": curves.step,
            "runs": curves.runs,
            "mean": curves.mean,
            "standard_error": curves.standard_error,
            "ci_low": curves.low,
            "ci_high": curves.high,
            "simultaneous_low": curves.simultaneous_low,
            "simultaneous_high": curves.simultaneous_high,
            "enough_runs": curves.enough_runs,
        }
    )


def write_training_curves(curves: TrainingCurves, directory: str | Path, *, plots: bool = True) -> list[Path]:
    """Write ``training_curves.csv`` and, with ``plots``, ``training_curves.png``
    (:func:`boontrack.plots.plot_training_curves`; needs the ``plots`` extra) into ``directory``, created if
    missing. Returns the files written.

    The CSV has one row per group and step, with the columns ``group``, ``step``, ``runs``, ``mean``,
    ``standard_error``, ``ci_low``, ``ci_high`` (the pointwise band), ``simultaneous_low``,
    ``simultaneous_high`` and ``enough_runs`` (:func:`training_curves_table`)."""
    from boontrack.runframe import write_artifacts

    table = training_curves_table(curves)
    artifacts = {CSV_NAME: table.to_csv(index=False).encode()}
    if as_flag(plots, "plots"):
        from boontrack.plots import figure_png, plot_training_curves

        artifacts[PNG_NAME] = figure_png(plot_training_curves(curves))
    return write_artifacts(Path(directory), artifacts)


def summary_training_table(curves: Sequence[TrainingCurves]) -> pd.DataFrame:
    """The curves of several entries of ``Spec.curves`` as one table: ``metric`` (the entry: ``val_loss``,
    ``best-so-far:val_acc``), then the columns of :func:`training_curves_table`."""
    import pandas as pd

    tables = [training_curves_table(each) for each in curves]
    for each, table in zip(curves, tables):
        table.insert(0, "metric", each.entry)
    return pd.concat(tables, ignore_index=True)


def training_rows(table: pd.DataFrame) -> list[list]:
    """The table's rows as plain Python values, NaN as None, every float exact (``to_json`` keeps 10 digits)."""
    return [[None if value != value else value for value in row] for row in table.to_dict("split")["data"]]


def png_name(metric: str, *, several: bool) -> str:
    """The PNG of one metric's curves: :data:`PNG_NAME`, or with several metrics ``training_curves-METRIC.png``
    (characters outside ``[A-Za-z0-9._-]`` as ``_``)."""
    if not several:
        return PNG_NAME
    return f"training_curves-{re.sub(r'[^A-Za-z0-9._-]', '_', metric)}.png"


def summary_training_artifacts(
    curves: Sequence[TrainingCurves], table: pd.DataFrame, *, plots: bool = True
) -> dict[str, bytes]:
    """A summary's training-curve files: ``training_curves.csv`` (``table``, :func:`summary_training_table`) and,
    with ``plots``, one PNG per entry (:func:`png_name`)."""
    artifacts = {CSV_NAME: table.to_csv(index=False).encode()}
    if plots:
        from boontrack.plots import figure_png, plot_training_curves

        for each in curves:
            artifacts[png_name(each.entry, several=len(curves) > 1)] = figure_png(plot_training_curves(each))
    return artifacts


def training_path(entry: str) -> str:
    """The name of an entry's series after the prefix and before the group and series segments:
    ``train/<metric>``, or ``train/best-so-far/<metric>`` for ``best-so-far:<metric>`` (a tracker's metric name
    cannot hold ``:`` everywhere)."""
    kind, metric = curve_request(entry)
    path = safe_name(metric, allow_slash=True)
    return f"train/{path}" if kind == "value" else f"train/{kind}/{path}"


def summary_training_series(
    curves: Sequence[TrainingCurves], segments: Mapping[str, str], *, prefix: str
) -> list[CurveSeries]:
    """Every entry's curves as series with step = the training step: ``<prefix><path><segment>/<name>`` for each
    name of :data:`SERIES`, ``<path>`` the entry's :func:`training_path` and ``segments`` giving each group's
    part of the name (as the Boo_n curves')."""
    from boontrack.backends import CurveSeries

    series: list[CurveSeries] = []
    for each in curves:
        base = f"{prefix}{training_path(each.entry)}"
        for label in each.groups:
            group = each.of(label)
            series.extend(
                CurveSeries(f"{base}{segments[label]}/{name}", group.step, getattr(group, attribute))
                for name, attribute in SERIES
            )
    return series
