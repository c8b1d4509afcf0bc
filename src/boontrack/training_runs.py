"""The training curves of a summary's runs (``Spec.curves``): each metric's history read from the source, kept to
the runs the summary keeps and grouped as it groups them, then :func:`boontrack.training.training_curves`.

The histories enter the summary's fingerprint (:func:`history_bytes`): a run that logs one more step changes the
curves, and the summary is written again. pandas and numpy are imported on first use (the pipeline imports this
module when a job asks for curves).
"""

from __future__ import annotations

import dataclasses
import json
import warnings
from typing import TYPE_CHECKING

from boontrack import vocabulary
from boontrack.exceptions import BoontrackWarning, InputError

if TYPE_CHECKING:
    import pandas as pd

    from boontrack.backends import Source
    from boontrack.runtable import RunTable
    from boontrack.spec import Spec
    from boontrack.training import TrainingCurves

__all__ = ["HISTORY_COLUMNS", "history_bytes", "summary_histories", "training_lines", "training_of"]

#: Columns of :func:`summary_histories`' frame: one row per metric, run and step.
HISTORY_COLUMNS = ("metric", "run_id", "group", "step", "value")


def summary_histories(source: Source, spec: Spec, table: RunTable) -> pd.DataFrame | None:
    """The histories of ``spec.curves`` for the runs ``table`` keeps, with their groups; None without curves.

    At a step a run logged twice, the value logged last counts. Points that are not finite numbers (a run that
    diverged to NaN) are left out, with a warning saying how many. A metric none of the runs logged is an
    :class:`InputError`.
    """
    import numpy as np
    import pandas as pd

    if not spec.curves:
        return None
    groups = dict(zip(table.runs["run_id"].astype(str), table.runs["group"].astype(str)))
    points = source.read_histories(spec.curves, list(groups))
    frames = []
    for metric in spec.curves:
        logged = points.get(metric)
        logged = logged.assign(run_id=logged["run_id"].astype(str)) if logged is not None else None
        if logged is None or not logged["run_id"].isin(groups).any():
            raise InputError(
                f"none of the {len(groups)} runs summarized logged {metric!r} per step: "
                f"{vocabulary.name('curves')} names metrics with a history"
            )
        logged = logged.loc[logged["run_id"].isin(groups)].drop_duplicates(["run_id", "step"], keep="last")
        values = pd.to_numeric(logged["value"], errors="coerce").to_numpy(dtype=np.float64)
        finite = np.isfinite(values)
        if not finite.all():
            warnings.warn(
                f"{metric!r}: {np.count_nonzero(~finite)} logged points of {logged.loc[~finite, 'run_id'].nunique()} "
                "runs are not finite numbers and are left out of its training curves",
                BoontrackWarning,
                stacklevel=2,
            )
        kept = logged.loc[finite]
        frames.append(
            pd.DataFrame(
                {
                    "metric": metric,
                    "run_id": kept["run_id"].to_numpy(dtype=object),
                    "group": kept["run_id"].map(groups).to_numpy(dtype=object),
                    "step": kept["step"].to_numpy(dtype=np.int64),
                    "value": values[finite],
                }
            )
        )
    return pd.concat(frames, ignore_index=True).sort_values(["metric", "run_id", "step"], kind="stable")


def history_bytes(histories: pd.DataFrame) -> bytes:
    """The histories as bytes for the fingerprint: the (metric, run, step) keys as JSON, the values as IEEE-754."""
    keys = json.dumps(histories[["metric", "run_id", "step"]].astype(str).to_numpy().tolist()).encode()
    return len(keys).to_bytes(8, "little") + keys + histories["value"].to_numpy(dtype="<f8").tobytes()


def training_of(histories: pd.DataFrame, spec: Spec) -> tuple[TrainingCurves, ...]:
    """Each metric's training curves, grouped as the summary's runs, with the spec's level, resamples and seed."""
    return tuple(_curves_of(histories.loc[histories["metric"] == metric], metric, spec) for metric in spec.curves)


def _curves_of(points: pd.DataFrame, metric: str, spec: Spec) -> TrainingCurves:
    """One metric's curves; its warnings (steps with few runs) say which metric they are about."""
    from boontrack.training import training_curves

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        curves = training_curves(
            points,
            value="value",
            group_by="group",
            confidence_level=spec.confidence_level,
            n_resamples=spec.n_resamples,
            rng=spec.seed,
        )
    for warning in caught:
        warnings.warn(f"training curves of {metric!r}: {warning.message}", warning.category, stacklevel=3)
    return dataclasses.replace(curves, metric=metric)


def training_lines(curves: TrainingCurves) -> list[str]:
    """One line per group: its steps, its runs, and where fewer than ``min_runs`` remain."""
    lines = []
    for label in curves.groups:
        group = curves.of(label)
        least, most = group.runs.min(), group.runs.max()
        runs = f"{most} runs" if least == most else f"{least}-{most} runs"
        text = f"{group.step.size} steps ({group.step.min()}-{group.step.max()}), {runs}"
        few = group.step[~group.enough_runs]
        if few.size:
            text += (
                f"; {few.size} steps with fewer than {curves.min_runs} runs ({few.min()}-{few.max()}), outside the "
                "simultaneous band"
            )
        lines.append(f"Training curve of {curves.metric!r}, group {label}: {text}")
    return lines
