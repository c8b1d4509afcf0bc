"""``wandb:ENTITY/PROJECT``: runs listed through the W&B public API, and the aggregate run written back.

Listing uses ``api.runs(path, filters, per_page=500, lazy=False)``: config and summary of 500 runs come in one
request. The default lazy listing (and ``api.sweep(...).runs``) costs one more request per run.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from boontrack.integration import (
    POINT_COLUMNS,
    Direction,
    InputError,
    MetricRequest,
    RunRecord,
    Sink,
    Source,
    option_name,
)
from boontrack_wandb._client import DEFAULT_TIMEOUT_S, PAGE_SIZE, make_api, translate_errors
from boontrack_wandb._frame import build_frame, is_aggregate_run, metric_points, run_record, wandb_tags

if TYPE_CHECKING:
    import pandas as pd

#: The query ``wandb.apis.public.Run.history`` sends (wandb 0.31), which takes one spec per list of keys.
_SAMPLED_HISTORY = """
query RunSampledHistory($project: String!, $entity: String!, $name: String!, $specs: [JSONString!]!) {
    project(name: $project, entityName: $entity) {
        run(name: $name) { sampledHistory(specs: $specs) }
    }
}
"""


def parse_filters(filters: Any) -> dict[str, Any]:
    """``filters`` given as a dict or as JSON text (the CLI), as a dict."""
    if filters is None or isinstance(filters, Mapping):
        return dict(filters or {})
    try:
        parsed = json.loads(filters)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"wandb: {option_name('filters')} must be a JSON object (Mongo-style W&B run filters): {exc}"
        ) from None
    if not isinstance(parsed, dict):
        raise InputError(f"wandb: {option_name('filters')} must be a JSON object, got {filters!r}")
    return parsed


class WandbSource(Source):
    """Runs of one W&B project, optionally limited to a sweep, a group, and Mongo-style ``filters``."""

    def __init__(
        self,
        entity: str,
        project: str,
        *,
        sweep: str | None = None,
        group: str | None = None,
        filters: Mapping[str, Any] | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
    ) -> None:
        self.entity, self.project = entity, project
        self.sweep, self.group = sweep, group
        self.filters = dict(filters or {})
        self.timeout_s = timeout_s

    @property
    def path(self) -> str:
        return f"{self.entity}/{self.project}"

    def describe(self) -> str:
        selection = "".join(f" {k}={v}" for k, v in (("sweep", self.sweep), ("group", self.group)) if v)
        if self.filters:
            selection += f" filters={json.dumps(self.filters, sort_keys=True)}"
        return f"wandb:{self.path}{selection}"

    def identity(self) -> str:
        return self.describe()

    def server_filters(self) -> dict[str, Any]:
        clauses = [{"sweep": self.sweep}] if self.sweep else []
        clauses += [{"group": self.group}] if self.group else []
        clauses += [self.filters] if self.filters else []
        return {"$and": clauses} if len(clauses) > 1 else (clauses[0] if clauses else {})

    def change_token(self) -> str | None:
        """The number of selected runs and the most recent heartbeat (see :func:`._discover.change_token`)."""
        from boontrack_wandb._discover import change_token

        return change_token(self)

    def direction(self, metric: str) -> Direction | None:
        """The sweep's ``metric.goal`` when its ``metric.name`` is ``metric`` (one request); None for a project
        or a group, which record no direction."""
        if not self.sweep:
            return None
        api = make_api(self.entity, self.timeout_s)
        with translate_errors(f"{self.describe()}: reading the sweep's metric", self.timeout_s):
            config = api.sweep(f"{self.path}/{self.sweep}").config or {}
        goal = config.get("metric") if isinstance(config, Mapping) else None
        if (
            not isinstance(goal, Mapping)
            or goal.get("name") != metric
            or goal.get("goal") not in ("maximize", "minimize")
        ):
            return None
        return Direction(maximize=goal["goal"] == "maximize", said_by=f"the metric.goal of W&B sweep {self.sweep}")

    def _check_sweep(self, api: Any) -> None:
        # A filter on an unknown sweep lists nothing; ask for the sweep so that a typo is an error, not 0 runs.
        if self.sweep:
            api.sweep(f"{self.path}/{self.sweep}")

    def list_runs(self, api: Any) -> list[Any]:
        """The selected runs, ``PAGE_SIZE`` to a request, boontrack's aggregate runs left out."""
        with translate_errors(self.describe(), self.timeout_s):
            self._check_sweep(api)
            runs = list(api.runs(self.path, filters=self.server_filters(), per_page=PAGE_SIZE, lazy=False))
        return [run for run in runs if not is_aggregate_run(run.job_type, run.config)]

    def read(self, request: MetricRequest) -> pd.DataFrame:
        api = make_api(self.entity, self.timeout_s)
        runs = self.list_runs(api)
        records = [self._record(run) for run in runs]

        # one more request per run: only when picked
        return build_frame(records, request, lambda: self._points(runs, list(request.metrics)))

    def read_histories(self, metrics: Sequence[str], run_ids: Sequence[str]) -> dict[str, pd.DataFrame]:
        """Each metric's points in the runs ``run_ids`` (training curves): the runs listed again, then one
        request per run for all the metrics."""
        import pandas as pd

        wanted = set(run_ids)
        runs = [run for run in self.list_runs(make_api(self.entity, self.timeout_s)) if run.id in wanted]
        points = self._points(runs, list(metrics))
        return {key: pd.DataFrame.from_records(rows, columns=list(POINT_COLUMNS)) for key, rows in points.items()}

    def _points(self, runs: list[Any], keys: list[str]) -> dict[str, list[tuple[str, int, float]]]:
        """The (run id, step, value) points of each key in ``runs``' histories: one request per run."""
        points: dict[str, list[tuple[str, int, float]]] = {key: [] for key in keys}
        for run in runs:
            for key, rows in zip(keys, self._histories(run, keys)):
                points[key].extend(metric_points(run.id, rows, key))
        return points

    def _histories(self, run: Any, keys: list[str]) -> list[list[dict[str, Any]]]:
        """The history rows of each key, unsampled (samples = row count), in one request per run.

        One spec per key: W&B returns only the rows holding every key of a spec, and a test score logged once
        after training is in a row of its own. The query is the one ``Run.history`` sends, with more specs.
        """
        specs = [json.dumps({"keys": ["_step", key], "samples": max(run.history_line_count or 0, 1)}) for key in keys]
        with translate_errors(f"{self.describe()} run {run.id}", self.timeout_s):
            answer = run._exec(_SAMPLED_HISTORY, specs=specs)
        return answer["project"]["run"]["sampledHistory"]

    def _record(self, run: Any) -> RunRecord:
        summary = run.summary_metrics
        return run_record(
            run_id=run.id,
            status=run.state,
            created_at=run.created_at,
            duration_s=summary.get("_runtime"),
            config=run.config,
            summary=summary,
            tags=wandb_tags(group=run.group, job_type=run.job_type, sweep=run.sweep_name, tags=run.tags or ()),
        )

    def sink(self, key: str) -> Sink:
        from boontrack_wandb._sink import WandbSink

        return WandbSink(self, key)
