"""The approaches of a summary with a task column, across the tasks of a benchmark.

With ``Spec.task_column``, each group of a :class:`~boontrack.runtable.RunTable` is one approach (the runs' other
group keys) on one task (:class:`~boontrack.runtable.TaskCells`). :func:`boontrack.analysis.analyze` summarizes
each group as any other and compares the approaches within each task (:func:`task_pairs`); this module adds,
per approach, the aggregates of :func:`boontrack.across.across_tasks` over every task (mean, median, IQM,
optimality gap, the mean of per-task Boo_n, performance profiles) and the comparisons of the approaches across
the tasks, with the spec's budgets, level, resamples and seed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from boontrack._bootstrap.precision import MOST_RESAMPLES
from boontrack._collector import collected
from boontrack.choices import DEFAULT_BUDGETS
from boontrack.summary import (
    AcrossTasksSummary,
    AggregateInterval,
    ApproachAggregates,
    ApproachComparison,
    PerformanceProfile,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    from boontrack.across import AcrossTasks
    from boontrack.runtable import RunTable, TaskCells
    from boontrack.spec import Spec

__all__ = ["ACROSS_STREAM", "approach_pairs", "summarize_across_tasks", "task_pairs"]

#: The stream of the spec's seed the stratified bootstrap draws from (:func:`boontrack.analysis.analyze` draws
#: the groups' resamples from streams 0 and 1).
ACROSS_STREAM = 2


def approach_pairs(approaches: Sequence[str], spec: Spec) -> list[tuple[str, str]]:
    """(approach, baseline) pairs as ``spec.compare`` says: every approach against ``spec.baseline`` (else the
    first), or all pairs."""
    if spec.compare == "all-pairs":
        return [(approaches[a], approaches[b]) for b in range(len(approaches)) for a in range(b + 1, len(approaches))]
    base = spec.baseline if spec.baseline is not None else approaches[0]
    return [(approach, base) for approach in approaches if approach != base]


def task_pairs(cells: TaskCells, spec: Spec) -> list[tuple[str, str]]:
    """The (group, baseline) labels compared within each task: the approaches' pairs (:func:`approach_pairs`)
    on every task, task after task."""
    label = {cell: group for group, cell in cells.cells.items()}
    pairs = approach_pairs(cells.approaches, spec)
    return [(label[task, a], label[task, b]) for task in cells.tasks for a, b in pairs]


def summarize_across_tasks(table: RunTable, spec: Spec, pairs: Sequence[tuple[str, str]]) -> AcrossTasksSummary:
    """Every approach of ``table`` aggregated over the tasks, and the approaches of ``pairs`` (group labels
    compared within tasks, as :func:`task_pairs` gives them) compared across the tasks.

    The scores are the test scores, Boo_n picks by validation score; the budgets are ``spec.n``, else the
    default budgets every group has runs for; ``n_resamples="auto"`` is the most ``"auto"`` draws (9,999). The
    warnings :func:`~boontrack.across.across_tasks` raises are the summary's :attr:`~AcrossTasksSummary.warnings`.
    """
    from boontrack.across import across_tasks

    cells = table.task_cells
    assert cells is not None  # called for a table with a task column only
    runs = table.runs
    task, approach = zip(*runs["group"].map(cells.cells))
    smallest = int(runs["group"].value_counts().min())
    budgets = spec.n or tuple(k for k in DEFAULT_BUDGETS if k <= spec.largest_supported(smallest))
    normalize = (
        {name: (low, high) for name, low, high in spec.normalize}
        if isinstance(spec.normalize, tuple)
        else spec.normalize
    )
    with collected() as warned:
        result = across_tasks(
            runs["test"].to_numpy(np.float64),
            task=np.array(task, dtype=object),
            group=np.array(approach, dtype=object),
            maximize=spec.higher_is_better,
            validation=runs["val"].to_numpy(np.float64),
            normalize=normalize,
            n=budgets,
            estimator=spec.estimator,
            confidence_level=spec.confidence_level,
            n_resamples=MOST_RESAMPLES if spec.n_resamples == "auto" else spec.n_resamples,
            rng=np.random.default_rng(np.random.SeedSequence([spec.seed, ACROSS_STREAM])),
            # paired by seed on the tasks whose approaches ran the same seeds, as the comparisons within a task
            seed=None if spec.seed_column is None else runs["seed"].astype(str).to_numpy(dtype=object),
        )
    compared = dict.fromkeys((cells.cells[a][1], cells.cells[b][1]) for a, b in pairs)
    return AcrossTasksSummary(
        task_column=cells.column,
        tasks=cells.tasks,
        normalize="reference" if isinstance(spec.normalize, tuple) else spec.normalize,
        normalization=_normalization(result, cells),
        gamma=result.gamma,
        n=result.n,
        aggregates=tuple(_aggregates(result, cells, name) for name in cells.approaches),
        comparisons=tuple(_comparison(result, cells, a, b) for a, b in compared),
        n_resamples=result.n_resamples,
        warnings=tuple(warned),
        refused=dict(result.refused),
        cells=tuple((group, task, approach) for group, (task, approach) in cells.cells.items()),
        paired_tasks=tuple(task for task in cells.tasks if result.paired[result.tasks.index(task)]),
    )


def _aligned(values: np.ndarray, result: AcrossTasks, cells: TaskCells) -> tuple[float, ...]:
    """Per-task ``values`` (in ``result``'s order of the tasks) in the table's order of the tasks."""
    position = {name: i for i, name in enumerate(result.tasks)}
    return tuple(float(values[position[name]]) for name in cells.tasks)


def _normalization(result: AcrossTasks, cells: TaskCells) -> tuple[tuple[float, float], ...]:
    if result.normalization is None:
        return ()
    lows, highs = (_aligned(result.normalization[:, end], result, cells) for end in (0, 1))
    return tuple(zip(lows, highs))


def _aggregates(result: AcrossTasks, cells: TaskCells, approach: str) -> ApproachAggregates:
    found = result.aggregates[approach]
    profile = found.profile
    return ApproachAggregates(
        approach=approach,
        runs=int(result.runs[result.groups.index(approach)].sum()),
        mean=AggregateInterval.from_bootstrap(found.mean),
        median=AggregateInterval.from_bootstrap(found.median),
        iqm=AggregateInterval.from_bootstrap(found.iqm),
        optimality_gap=AggregateInterval.from_bootstrap(found.optimality_gap),
        boo_n={n: AggregateInterval.from_bootstrap(value) for n, value in found.boo_n.items()},
        task_means=_aligned(found.task_means, result, cells),
        profile=PerformanceProfile(
            *(tuple(float(v) for v in values) for values in (profile.tau, profile.share, profile.low, profile.high))
        ),
    )


def _comparison(result: AcrossTasks, cells: TaskCells, a: str, b: str) -> ApproachComparison:
    found = result.compare(a, b)
    return ApproachComparison(
        group=a,
        baseline=b,
        mean_difference=AggregateInterval.from_bootstrap(found.mean_difference),
        iqm_difference=AggregateInterval.from_bootstrap(found.iqm_difference),
        boo_n_difference={n: AggregateInterval.from_bootstrap(value) for n, value in found.boo_n_difference.items()},
        prob_improvement=AggregateInterval.from_bootstrap(found.prob_improvement),
        task_prob_improvement=_aligned(found.task_prob_improvement, result, cells),
    )
