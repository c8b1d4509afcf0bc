"""Finding the sweeps of an MLflow store, and a sweep's change token: small searches, no run read in full.

A sweep is a parent run with child runs (``mlflow.parentRunId``), as MLflow's nested runs, Optuna's and Ray
Tune's MLflow callbacks and hand-written sweep scripts make them. boontrack's own runs (any
``boontrack.role`` tag) are neither sweeps nor children here, so a summary written under a parent changes
neither what is discovered nor the sweep's token.
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from boontrack.backends import Discovered, discovery_key
from boontrack.exceptions import InputError
from boontrack.runframe import SUMMARY_ROLE, SUMMARY_ROLE_TAG
from boontrack_mlflow._client import RetryBudget, bounded_http

#: Keys of a job's ``discover`` table.
DISCOVER_OPTIONS = {
    "experiments": "experiment names to look in, a glob (cifar-*, *); default: the source's experiment",
    "filter": "an MLflow experiment search filter, e.g. \"tags.team = 'vision'\" (with or without experiments)",
}
#: Not one of boontrack's own runs.
NOT_OWN = f"tags.`{SUMMARY_ROLE_TAG}` IS NULL"
PARENT_TAG = "mlflow.parentRunId"
TOP_LEVEL = f"tags.`{PARENT_TAG}` IS NULL AND {NOT_OWN}"
SUMMARIES_UNDER_PARENTS = f"tags.`{SUMMARY_ROLE_TAG}` = '{SUMMARY_ROLE}' AND tags.`{PARENT_TAG}` IS NOT NULL"
#: Parents checked for children at once (one small search each): like the history reads, a few at a time.
CHECK_CONCURRENCY = 4
PAGE_SIZE = 50_000
EXPERIMENT_PAGE_SIZE = 1_000


def children_filter(parent_run_id: str) -> str:
    return f"tags.`{PARENT_TAG}` = '{parent_run_id}' AND {NOT_OWN}"


def discover_sweeps(client: Any, experiments: list[Any], budget: RetryBudget) -> list[Discovered]:
    """Every parent run with children in ``experiments``, in the order of the experiments, then of the
    parents' start times."""
    from mlflow.entities import ViewType

    parents: list[Any] = []
    for experiment in experiments:
        token = None
        while True:
            page = client.search_runs(
                [experiment.experiment_id],
                filter_string=TOP_LEVEL,
                run_view_type=ViewType.ACTIVE_ONLY,
                max_results=PAGE_SIZE,
                order_by=["attributes.start_time ASC"],
                page_token=token,
            )
            parents.extend((experiment, run) for run in page)
            token = page.token
            if not token:
                break

    summarized = _summarized_parents(client, experiments)

    def has_children(run: Any) -> bool:
        if run.info.run_id in summarized:  # summarized before: a sweep (no request)
            return True
        with bounded_http(budget):
            return bool(_newest_child(client, run.info.experiment_id, run.info.run_id, "start_time"))

    with ThreadPoolExecutor(CHECK_CONCURRENCY) as pool:
        checked = list(pool.map(has_children, [run for _, run in parents]))
    return [
        Discovered(
            key=discovery_key(experiment.experiment_id, run.info.run_id),
            label=f"{experiment.name}/{run.info.run_name or run.info.run_id}",
            location=experiment.experiment_id,
            options={"parent": run.info.run_id},
        )
        for (experiment, run), sweep in zip(parents, checked)
        if sweep
    ]


def _summarized_parents(client: Any, experiments: list[Any]) -> set[str]:
    """The parent runs that boontrack's summary runs sit under (one search of the summaries per experiment):
    each was a sweep when it was summarized, and needs no search of its own to be told from a plain run."""
    from mlflow.entities import ViewType

    parents: set[str] = set()
    for experiment in experiments:
        token = None
        while True:
            page = client.search_runs(
                [experiment.experiment_id],
                filter_string=SUMMARIES_UNDER_PARENTS,
                run_view_type=ViewType.ACTIVE_ONLY,
                max_results=PAGE_SIZE,
                page_token=token,
            )
            parents.update(run.data.tags[PARENT_TAG] for run in page)
            token = page.token
            if not token:
                break
    return parents


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


def sweep_change_token(client: Any, experiment_id: str, parent_run_id: str) -> str:
    """The sweep's latest-ended child (id, status, start and end time), as JSON: one search of one run.

    A child that finishes, fails or is killed gets the latest end time, so every change of the runs that
    enter the numbers (finished runs) moves the token. Not seen: a new child still running (it is only
    listed among the dropped runs; seen when it ends), a child deleted or restored, given a metric after it
    ended, or given an end time older than the latest; ``--force`` reads every sweep again.
    """
    return json.dumps(_token_part(_newest_child(client, experiment_id, parent_run_id, "end_time")))


def _newest_child(client: Any, experiment_id: str, parent_run_id: str, time_attribute: str) -> Any | None:
    """The child with the latest ``time_attribute`` (runs without it come last), or None without children."""
    from mlflow.entities import ViewType

    found = client.search_runs(
        [experiment_id],
        filter_string=children_filter(parent_run_id),
        run_view_type=ViewType.ACTIVE_ONLY,
        max_results=1,
        order_by=[f"attributes.{time_attribute} DESC", "attributes.run_id ASC"],
    )
    return found[0] if found else None


def _token_part(run: Any | None) -> list[Any] | None:
    if run is None:
        return None
    return [run.info.run_id, run.info.status, run.info.start_time, run.info.end_time]
