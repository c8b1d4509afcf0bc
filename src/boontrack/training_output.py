"""The files of training curves: ``training_curves.csv`` and ``training_curves.png``.

matplotlib is needed only for the PNG (the ``plots`` extra), imported when one is drawn.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from boontrack._validation import as_flag
from boontrack.training import TrainingCurves
from boontrack.vocabulary import name as _named

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["CSV_NAME", "PNG_NAME", "training_curves_table", "write_training_curves"]

#: Files written by :func:`write_training_curves`.
CSV_NAME, PNG_NAME = "training_curves.csv", "training_curves.png"


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
    """Write ``training_curves.csv`` (:func:`training_curves_table`) and, with ``plots``, ``training_curves.png``
    (:func:`boontrack.plots.plot_training_curves`; needs the ``plots`` extra) into ``directory``, created if
    missing. Returns the files written."""
    from boontrack.runframe import write_artifacts

    table = training_curves_table(curves)
    artifacts = {CSV_NAME: table.to_csv(index=False).encode()}
    if as_flag(plots, "plots"):
        from boontrack.plots import figure_png, plot_training_curves

        artifacts[PNG_NAME] = figure_png(plot_training_curves(curves))
    return write_artifacts(Path(directory), artifacts)
