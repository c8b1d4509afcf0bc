"""Finding the sweeps or run groups of a W&B project, and the change token of a selection of runs.

Both go through the public API's client (``wandb.Api`` and its GraphQL path), with light queries only: the
sweep list (``GetSweeps``, the query ``Project.sweeps()`` sends, 100 sweeps to a request, without the one
``GetSweep`` per sweep that building its ``Sweep`` objects costs), and run listings with the lightweight run
fragment (``lazy=True``: no config or summary).
"""

from __future__ import annotations

import itertools
import json
from typing import Any

from boontrack.exceptions import InputError
from boontrack.integration import Discovered, discovery_key
from boontrack_wandb._client import PAGE_SIZE, Selection, make_api, translate_errors
from boontrack_wandb._frame import AGGREGATE_JOB_TYPE

SWEEPS_PER_REQUEST = 100
#: Runs looked at for the token: the most recent heartbeats, past boontrack's own aggregate runs.
TOKEN_RUNS = 10


def discover(source: Selection, by: str) -> list[Discovered]:
    """One :class:`Discovered` per sweep (``by = "sweep"``) or run group (``by = "group"``) of the project that
    ``source`` (its filters included) selects; the source's options stay, the sweep or group is added."""
    api = make_api(source.entity, source.timeout_s)
    with translate_errors(f"discovering {by}s of wandb:{source.path}", source.timeout_s):
        names = _sweeps(api, source) if by == "sweep" else _groups(api, source)
    return [
        Discovered(
            key=discovery_key(by, name),
            label=f"{by} {name}",
            location=source.path,
            options={by: name},
        )
        for name in names
    ]


def _sweeps(api: Any, source: Selection) -> list[str]:
    """The project's sweep ids, in the order W&B lists them (``filters`` are run filters: not applied here)."""
    from wandb.apis._generated import GET_SWEEPS_GQL

    variables: dict[str, Any] = {"entity": source.entity, "project": source.project, "perPage": SWEEPS_PER_REQUEST}
    names: list[str] = []
    while True:
        data = api._service_api.execute_graphql(GET_SWEEPS_GQL, variables=variables, omit_variables=["filters"])
        project = data.get("project")
        if project is None:
            raise InputError(f"wandb: no project {source.path}")
        connection = project.get("sweeps") or {}
        names.extend(edge["node"]["name"] for edge in connection.get("edges") or ())
        page = connection.get("pageInfo") or {}
        if not page.get("hasNextPage"):
            return names
        variables["cursor"] = page.get("endCursor")


def _groups(api: Any, source: Selection) -> list[str]:
    """The run groups of the selected runs (boontrack's aggregate runs left out), sorted."""
    runs = api.runs(source.path, filters=source.server_filters(), per_page=PAGE_SIZE, lazy=True)
    return sorted({run.group for run in runs if run.group and run.job_type != AGGREGATE_JOB_TYPE})


def change_token(source: Selection) -> str | None:
    """How many runs the source selects and its most recently alive run (id, state, heartbeat), as JSON: one
    lightweight request. None (read in full) when boontrack's own aggregate runs hide every recent run.

    Not seen: a summary value changed through the API after a run ended (it does not touch the heartbeat).
    """
    api = make_api(source.entity, source.timeout_s)
    with translate_errors(f"{source.describe()}: asking for changes", source.timeout_s):
        runs = api.runs(
            source.path, filters=source.server_filters(), order="-heartbeat_at", per_page=TOKEN_RUNS, lazy=True
        )
        count = len(runs)
        recent = list(itertools.islice(runs, min(count, TOKEN_RUNS)))
    alive = next((run for run in recent if run.job_type != AGGREGATE_JOB_TYPE), None)
    if alive is None and count:
        return None
    newest = None if alive is None else [alive.id, alive.state, alive.heartbeat_at]
    return json.dumps([count, newest])
