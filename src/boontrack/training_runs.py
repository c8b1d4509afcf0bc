"""The training curves of a summary's runs (``Spec.curves``): each metric's history read from the source, kept to
the runs the summary keeps and grouped as it groups them, then :func:`boontrack.training.training_curves`: of the
values as logged, or for an entry ``best-so-far:<metric>`` of each run's running best of the validation metric (or
its test value at that best step) in the direction the summary states.

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
from boontrack.spec import curve_request

if TYPE_CHECKING:
    import pandas as pd

    from boontrack.backends import Source
    from boontrack.runtable import RunTable
    from boontrack.spec import Spec
    from boontrack.training import TrainingCurves

__all__ = [
    "HISTORY_COLUMNS",
    "history_bytes",
    "history_metrics",
    "summary_histories",
    "training_lines",
    "training_of",
]

#: Columns of :func:`summary_histories`' frame: one row per metric, run and step.
HISTORY_COLUMNS = ("metric", "run_id", "group", "step", "value")


def history_metrics(spec: Spec) -> tuple[str, ...]:
    """The metrics whose histories ``spec.curves`` needs, each once: a value curve's metric; for a best-so-far
    curve the validation metric, and the test metric for the test value at the best step."""
    needed = []
    for entry in spec.curves:
        kind, metric = curve_request(entry)
        if kind == "best-so-far":
            needed.append(_plain(spec.val))
            metric = _plain(metric)
        needed.append(metric)
    return tuple(dict.fromkeys(needed))


def _plain(metric: str) -> str:
    """A metric's name without the run frame's ``metrics.`` (``Spec.val`` may name the column)."""
    return metric.removeprefix("metrics.")


def summary_histories(source: Source, spec: Spec, table: RunTable) -> pd.DataFrame | None:
    """The histories of ``spec.curves`` (:func:`history_metrics`) for the runs ``table`` keeps, with their groups;
    None without curves.

    At a step a run logged twice, the value logged last counts. Points that are not finite numbers (a run that
    diverged to NaN) are left out, with a warning saying how many. A metric none of the runs logged is an
    :class:`InputError`.
    """
    import numpy as np
    import pandas as pd

    if not spec.curves:
        return None
    groups = dict(zip(table.runs["run_id"].astype(str), table.runs["group"].astype(str)))
    metrics = history_metrics(spec)
    points = source.read_histories(metrics, list(groups))
    frames = []
    for metric in metrics:
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
    """The training curves of each entry of ``spec.curves``, grouped as the summary's runs, with the spec's level,
    resamples and seed; a best-so-far curve in the spec's direction, which must be decided
    (:meth:`boontrack.spec.Spec.resolve_direction`)."""
    return tuple(_curves_of(histories, entry, spec) for entry in spec.curves)


def _curves_of(histories: pd.DataFrame, entry: str, spec: Spec) -> TrainingCurves:
    """One entry's curves; its warnings (steps with few runs) say which entry they are about."""
    from boontrack._bootstrap.precision import AUTO, FIRST_RESAMPLES
    from boontrack.training import training_curves

    kind, metric = curve_request(entry)
    options: dict = {}
    if kind == "value":
        points = histories.loc[histories["metric"] == metric]
    else:
        points, test = _best_so_far_points(histories, _plain(spec.val), _plain(metric), entry)
        options = dict(curve="best-so-far", maximize=spec.higher_is_better, test=test)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        curves = training_curves(
            points,
            value="value",
            group_by="group",
            confidence_level=spec.confidence_level,
            # a band's quantiles of its steps' pivots: "auto" takes the first round of a summary's intervals
            n_resamples=FIRST_RESAMPLES if spec.n_resamples == AUTO else spec.n_resamples,
            rng=spec.seed,
            **options,
        )
    for warning in caught:
        warnings.warn(f"training curves of {entry!r}: {warning.message}", warning.category, stacklevel=3)
    if kind == "value":
        return dataclasses.replace(curves, metric=metric)
    tested = _plain(metric) if curves.test is not None else None
    return dataclasses.replace(curves, metric=_plain(spec.val), test=tested, direction=spec.direction)


def _best_so_far_points(histories: pd.DataFrame, val: str, metric: str, entry: str) -> tuple[pd.DataFrame, str | None]:
    """The points of a best-so-far curve: the validation metric's, and for the test metric (``metric`` other than
    ``val``) its value at the same run and step in a column ``test`` (None: no such column). Validation points
    with no test value at their step are left out, with a warning that counts them: the test value at a best
    step must have been logged. None with one is an :class:`InputError`."""
    validation = histories.loc[histories["metric"] == val]
    if metric == val:
        return validation, None
    tests = histories.loc[histories["metric"] == metric, ["run_id", "step", "value"]]
    joined = validation.merge(tests.rename(columns={"value": "test"}), on=["run_id", "step"], how="left")
    untested = joined["test"].isna()
    if untested.all():
        raise InputError(
            f"{vocabulary.name('curves')} {entry!r}: no run logged {metric!r} at a step where it logged {val!r}; the "
            "test value at the best validation step needs both logged at the same steps"
        )
    if untested.any():
        warnings.warn(
            f"training curves of {entry!r}: {int(untested.sum())} points of {val!r} of "
            f"{joined.loc[untested, 'run_id'].nunique()} runs have no {metric!r} at their step and are left out",
            BoontrackWarning,
            stacklevel=4,
        )
    return joined.loc[~untested], "test"


def training_lines(curves: TrainingCurves) -> list[str]:
    """One line per group: its steps, its runs, and where fewer than ``min_runs`` remain; before them, for a
    best-so-far curve, what it averages and which direction is better, and who said so."""
    lines = []
    if curves.curve == "best-so-far":
        what = f"best {curves.metric!r} so far"
        what = f"{curves.test!r} at its {what}" if curves.test is not None else what
        lines.append(f"Training curve of {curves.entry!r}: each run's {what}; {curves.direction}")
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
        lines.append(f"Training curve of {curves.entry!r}, group {label}: {text}")
    return lines
