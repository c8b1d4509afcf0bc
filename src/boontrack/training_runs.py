"""The training curves of a summary's runs (``Spec.curves``): each metric's history read from the source, kept to
the runs the summary keeps and grouped as it groups them, then :func:`boontrack.training.training_curves`: of the
values as logged, or for an entry ``best-so-far:<metric>`` of each run's running best of the validation metric (or
its test value at that best step) in the direction the summary states.

The histories enter the summary's fingerprint (:func:`history_parts`): a run that logs one more step changes the
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
from boontrack.runframe import last_per_step
from boontrack.spec import curve_request

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from boontrack.backends import Source
    from boontrack.runtable import RunTable
    from boontrack.spec import Spec
    from boontrack.training import TrainingCurves

__all__ = [
    "HISTORY_COLUMNS",
    "history_parts",
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
    :class:`InputError`. The frame is sorted by metric, run and step; ``metric``, ``run_id`` and ``group`` are
    categorical, their categories in name order, so that a point costs a byte or two per label and no text is
    compared per point.
    """
    import numpy as np
    import pandas as pd

    if not spec.curves:
        return None
    runs = pd.Categorical(table.runs["run_id"].astype(str))
    groups = pd.Categorical(table.runs["group"].astype(str))
    group_of_run = np.empty(runs.categories.size, dtype=np.intp)
    group_of_run[runs.codes] = groups.codes
    metrics = sorted(history_metrics(spec))
    points = source.read_histories(metrics, list(runs.categories))
    kept = [_kept_points(points.get(metric), metric, runs.categories) for metric in metrics]
    run_code = np.concatenate([code for code, _, _ in kept])
    return pd.DataFrame(
        {
            "metric": pd.Categorical.from_codes(
                np.repeat(np.arange(len(metrics)), [code.size for code, _, _ in kept]), categories=metrics
            ),
            "run_id": pd.Categorical.from_codes(run_code, categories=runs.categories),
            "group": pd.Categorical.from_codes(group_of_run[run_code], categories=groups.categories),
            "step": np.concatenate([steps for _, steps, _ in kept]),
            "value": np.concatenate([values for _, _, values in kept]),
        }
    )


def _kept_points(logged: pd.DataFrame | None, metric: str, runs: pd.Index) -> tuple[np.ndarray, ...]:
    """One metric's points of the summary's ``runs`` (sorted names): each point's run (its position in ``runs``),
    step and value, by run and step, the last value logged at a step, finite values only (the others warned)."""
    import numpy as np
    import pandas as pd

    if logged is not None:
        code, names = pd.factorize(logged["run_id"].astype(str))  # -1: no run id
        run_code = np.append(runs.get_indexer(names), -1)[code]  # -1: a run not summarized, or no run id
    if logged is None or not (run_code >= 0).any():
        raise InputError(
            f"none of the {len(runs)} runs summarized logged {metric!r} per step: "
            f"{vocabulary.name('curves')} names metrics with a history"
        )
    steps = logged["step"].to_numpy(dtype=np.int64)
    values = pd.to_numeric(logged["value"], errors="coerce").to_numpy(dtype=np.float64)
    run_code, steps, values = last_per_step(*_where(run_code >= 0, run_code, steps, values))
    finite = np.isfinite(values)
    if not finite.all():
        warnings.warn(
            f"{metric!r}: {np.count_nonzero(~finite)} logged points of {np.unique(run_code[~finite]).size} runs are "
            "not finite numbers and are left out of its training curves",
            BoontrackWarning,
            stacklevel=3,
        )
    return _where(finite, run_code, steps, values)


def _where(kept: np.ndarray, *arrays: np.ndarray) -> tuple[np.ndarray, ...]:
    """The rows of ``arrays`` where ``kept`` holds; the arrays themselves where it holds everywhere (no copy)."""
    return arrays if kept.all() else tuple(array[kept] for array in arrays)


def history_parts(histories: pd.DataFrame) -> tuple[bytes, memoryview, memoryview]:
    """The histories (:func:`summary_histories`' frame) as parts of the fingerprint: each metric and run with its
    number of points as JSON, then every step (int64) and every value (IEEE-754), in the frame's order; the last
    two as views of the frame's own arrays, not copies."""
    import numpy as np

    metric, run = histories["metric"].array, histories["run_id"].array
    block = metric.codes.astype(np.int64) * len(run.categories) + run.codes
    starts = np.flatnonzero(np.diff(block, prepend=-1))
    sizes = np.diff(np.append(starts, block.size)).tolist()
    heads = [[str(m), str(r), size] for m, r, size in zip(metric[starts], run[starts], sizes)]
    steps = np.ascontiguousarray(histories["step"], dtype="<i8")
    values = np.ascontiguousarray(histories["value"], dtype="<f8")
    return json.dumps(heads).encode(), steps.data.cast("B"), values.data.cast("B")


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
        points = _points_of(histories, metric)
    else:
        points, test = _best_so_far_points(histories, _plain(spec.val), _plain(metric), entry)
        options = dict(curve="best-so-far", maximize=spec.higher_is_better, test=test)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        curves = training_curves(
            _arrays(points),
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


def _arrays(points: pd.DataFrame) -> dict[str, np.ndarray]:
    """The columns of ``points`` as arrays, the labels (categorical) as objects taken from their categories: 10x
    faster than converting a categorical column of millions of rows."""
    arrays = {column: points[column].to_numpy() for column in ("step", "value", "test") if column in points}
    for column in ("run_id", "group"):
        categorical = points[column].array
        arrays[column] = categorical.categories.to_numpy(dtype=object)[categorical.codes]
    return arrays


def _points_of(histories: pd.DataFrame, metric: str) -> pd.DataFrame:
    """The rows of one metric of :func:`summary_histories`' frame: a slice (the frame is sorted by metric), not a
    copy."""
    import numpy as np

    metrics = histories["metric"].array
    code = metrics.categories.get_loc(metric)
    start, stop = np.searchsorted(metrics.codes, [code, code + 1])
    return histories.iloc[start:stop]


def _best_so_far_points(histories: pd.DataFrame, val: str, metric: str, entry: str) -> tuple[pd.DataFrame, str | None]:
    """The points of a best-so-far curve: the validation metric's, and for the test metric (``metric`` other than
    ``val``) its value at the same run and step in a column ``test`` (None: no such column). Validation points
    with no test value at their step are left out, with a warning that counts them: the test value at a best
    step must have been logged. None with one is an :class:`InputError`."""
    validation = _points_of(histories, val)
    if metric == val:
        return validation, None
    tests = _points_of(histories, metric)[["run_id", "step", "value"]]
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
