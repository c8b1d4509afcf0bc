"""Finding the sweeps of an MLflow store, and a sweep's change token, through the client (a tracking server, or
a store read through MLflow's client): paged searches whose cost follows the child runs, never the plain runs.

A sweep is a parent run with child runs (``mlflow.parentRunId``), as MLflow's nested runs, Optuna's and Ray
Tune's MLflow callbacks and hand-written sweep scripts make them. It is found from its children: one paged
search of the runs that have a parent tag gives every parent at once (a plain run costs nothing), and one more
search per 100 parents names them. boontrack's own runs (any ``boontrack.role`` tag) are neither sweeps nor
children here, so a summary written under a parent changes neither what is discovered nor the sweep's token.
The SQL path (:mod:`._sql`) does the same in one query.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping, Sequence
from typing import Any

from boontrack.exceptions import InputError
from boontrack.integration import SUMMARY_ROLE_TAG, Discovered, discovery_key
from boontrack_mlflow._read import SearchedRun, search_runs
from boontrack_mlflow._sql import PARENT_RUN_TAG, Sweep, children_token

#: Keys of a job's ``discover`` table.
DISCOVER_OPTIONS = {
    "experiments": "experiment names to look in, a glob (cifar-*, *); default: the source's experiment",
    "filter": "an MLflow experiment search filter, e.g. \"tags.team = 'vision'\" (with or without experiments)",
}
#: Not one of boontrack's own runs.
NOT_OWN = f"tags.`{SUMMARY_ROLE_TAG}` IS NULL"
TOP_LEVEL = f"tags.`{PARENT_RUN_TAG}` IS NULL AND {NOT_OWN}"
CHILDREN = f"tags.`{PARENT_RUN_TAG}` IS NOT NULL AND {NOT_OWN}"
EXPERIMENT_PAGE_SIZE = 1_000
#: Parent runs named in one search (``attributes.run_id IN (...)``).
PARENTS_PER_SEARCH = 100


def children_filter(parent_run_id: str) -> str:
    return f"tags.`{PARENT_RUN_TAG}` = '{parent_run_id}' AND {NOT_OWN}"


def discovered(sweeps: Sequence[Sweep], experiment_names: Mapping[str, str]) -> list[Discovered]:
    """The sweeps as :class:`Discovered` jobs: ``mlflow:EXPERIMENT_ID`` with option ``parent``, as one writes a
    sweep by hand, each with the change token its children had when found."""
    return [
        Discovered(
            key=discovery_key(sweep.experiment_id, sweep.run_id),
            label=f"{experiment_names[sweep.experiment_id]}/{sweep.name or sweep.run_id}",
            location=sweep.experiment_id,
            options={"parent": sweep.run_id},
            change_token=sweep.token,
        )
        for sweep in sweeps
    ]


def discover_sweeps(client: Any, experiment_ids: Sequence[str]) -> list[Sweep]:
    """Every top-level active parent run with active children in the experiments, with its children's change
    token, in the order of the experiments and then of the parents' start times.

    One paged search of the child runs of all the experiments, then one search per :data:`PARENTS_PER_SEARCH`
    parents found: the requests follow the number of children and sweeps, not of plain runs.
    """
    if not experiment_ids:
        return []
    children: dict[tuple[str, str], list[SearchedRun]] = {}
    for run in search_runs(client, experiment_ids, CHILDREN):
        children.setdefault((run.experiment_id, run.tags[PARENT_RUN_TAG]), []).append(run)
    wanted = sorted({parent for _, parent in children})
    parents = []
    for start in range(0, len(wanted), PARENTS_PER_SEARCH):
        listed = ", ".join(f"'{run_id}'" for run_id in wanted[start : start + PARENTS_PER_SEARCH])
        found = search_runs(client, experiment_ids, f"attributes.run_id IN ({listed}) AND {TOP_LEVEL}")
        parents += [run for run in found if (run.experiment_id, run.run_id) in children]
    rank = {experiment_id: i for i, experiment_id in enumerate(experiment_ids)}
    parents.sort(key=lambda r: (rank[r.experiment_id], r.start_time is None, r.start_time or 0, r.run_id))
    return [
        Sweep(
            r.experiment_id,
            r.run_id,
            r.run_name,
            children_token(_child(c) for c in children[(r.experiment_id, r.run_id)]),
        )
        for r in parents
    ]


def selected_experiments(select: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """The ``experiments`` glob and the ``filter`` of a discover table, checked."""
    pattern, extra = select.get("experiments"), select.get("filter")
    for name, value in (("experiments", pattern), ("filter", extra)):
        if value is not None and (not isinstance(value, str) or not value.strip()):
            raise InputError(f"mlflow: discover {name!r} must be a non-empty string, got {value!r}")
    if pattern is not None and "'" in pattern:
        raise InputError(f"mlflow: discover 'experiments' cannot contain a quote, got {pattern!r}")
    return pattern, extra


def search_experiments(client: Any, pattern: str | None, extra: str | None) -> list[Any]:
    """The active experiments whose name matches the glob ``pattern`` and that the search filter ``extra``
    selects, by id."""
    from mlflow.entities import ViewType

    clauses = [extra] if extra else []
    if pattern is not None:
        # LIKE narrows the listing on the server; the glob decides (LIKE also takes % and _ in names).
        clauses.append(f"name LIKE '{pattern.replace('*', '%').replace('?', '_')}'")
    found: list[Any] = []
    token = None
    while True:
        page = client.search_experiments(
            view_type=ViewType.ACTIVE_ONLY,
            max_results=EXPERIMENT_PAGE_SIZE,
            filter_string=" AND ".join(clauses),
            page_token=token,
        )
        found.extend(e for e in page if pattern is None or fnmatch.fnmatchcase(e.name, pattern))
        token = page.token
        if not token:
            return sorted(found, key=lambda e: (len(e.experiment_id), e.experiment_id))


def filter_experiments(experiments: Sequence[Any], pattern: str | None, extra: str | None) -> list[Any]:
    """What :func:`search_experiments` selects, among experiments read by SQL: the glob, then MLflow's own
    evaluation of the search filter (its grammar, its semantics)."""
    chosen = [e for e in experiments if pattern is None or fnmatch.fnmatchcase(e.name, pattern)]
    if not extra:
        return chosen
    from mlflow.entities import Experiment, ExperimentTag
    from mlflow.utils.search_utils import SearchExperimentsUtils

    by_id = {e.experiment_id: e for e in chosen}
    entities = [
        Experiment(
            e.experiment_id,
            e.name,
            "",
            e.lifecycle_stage,
            [ExperimentTag(key, value) for key, value in e.tags.items()],
            e.creation_time,
            e.last_update_time,
        )
        for e in chosen
    ]
    return [by_id[e.experiment_id] for e in SearchExperimentsUtils.filter(entities, extra)]


def sweep_change_token(client: Any, experiment_id: str, parent_run_id: str) -> str:
    """The sweep's change token (:func:`._sql.children_token` of its children): one paged search of them."""
    return children_token(_child(run) for run in search_runs(client, [experiment_id], children_filter(parent_run_id)))


def _child(run: SearchedRun) -> tuple[str, str, int | None, int | None]:
    return (run.run_id, run.status, run.start_time, run.end_time)
