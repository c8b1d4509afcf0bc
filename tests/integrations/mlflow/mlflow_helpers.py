"""Helpers for the MLflow backend tests: sweeps with known values logged through the real MlflowClient, a
snapshot of what a user sees of runs, and an independent Boo_n oracle."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

import numpy as np
from mlflow import MlflowClient
from mlflow.entities import Metric, Param, ViewType


@dataclass
class Sweep:
    """A sweep logged through MlflowClient, and the values logged (the tests' independent expectations)."""

    client: MlflowClient
    experiment_id: str
    experiment_name: str
    parent_id: str
    #: run id -> {"status", "val" (history), "test" (history), "params"}
    children: dict[str, dict] = field(default_factory=dict)

    def add_child(
        self,
        *,
        val: list[float] | None,
        test: list[float] | None = None,
        status: str | None = "FINISHED",
        params: dict | None = None,
        stamp: int = 1_700_000_000_000,
        metric_names: tuple[str, str] = ("val_acc", "test_acc"),
    ) -> str:
        """Log one trial: ``val``/``test`` are per-epoch histories (step = position), logged under ``metric_names``;
        status None leaves it RUNNING."""
        run = self.client.create_run(self.experiment_id, tags={"mlflow.parentRunId": self.parent_id})
        run_id = run.info.run_id
        val_name, test_name = metric_names
        metrics = [Metric(val_name, v, stamp + i, i) for i, v in enumerate(val or [])]
        metrics += [Metric(test_name, t, stamp + i, i) for i, t in enumerate(test or [])]
        params = dict(params or {})
        self.client.log_batch(run_id, metrics=metrics, params=[Param(k, str(v)) for k, v in params.items()])
        if status is not None:
            self.client.set_terminated(run_id, status)
        self.children[run_id] = {"status": status or "RUNNING", "val": val, "test": test, "params": params}
        return run_id

    def finished(self) -> dict[str, dict]:
        return {k: v for k, v in self.children.items() if v["status"] == "FINISHED" and v["val"]}


def new_sweep(uri: str, *, name: str | None = None) -> Sweep:
    """An experiment with a finished parent run and no children yet."""
    client = MlflowClient(uri)
    name = name or f"sweep-{uuid.uuid4().hex[:10]}"
    experiment_id = client.create_experiment(name)
    parent = client.create_run(experiment_id, run_name="parent", tags={"sweep.kind": "parent"})
    client.log_batch(parent.info.run_id, params=[Param("sweep", "demo")])
    client.set_terminated(parent.info.run_id, "FINISHED")
    return Sweep(client, experiment_id, name, parent.info.run_id)


def mixed_sweep(uri: str, *, finished: int = 12, rng_seed: int = 0) -> Sweep:
    """``finished`` FINISHED children with random scores (some with 4-epoch histories), plus one FAILED, one
    RUNNING and one FINISHED child without the metric."""
    rng = np.random.default_rng(rng_seed)
    sweep = new_sweep(uri)
    for i in range(finished):
        epochs = 4 if i % 3 == 0 else 1
        sweep.add_child(
            val=rng.uniform(0.6, 0.9, epochs).round(4).tolist(),
            test=rng.uniform(0.6, 0.9, epochs).round(4).tolist(),
            params={"seed": i, "lr": 0.1},
        )
    sweep.add_child(val=[0.99], test=[0.99], status="FAILED", params={"seed": 100, "lr": 0.1})
    sweep.add_child(val=[0.98], test=[0.98], status=None, params={"seed": 101, "lr": 0.1})
    sweep.add_child(val=None, test=None, params={"seed": 102, "lr": 0.1})
    return sweep


def snapshot(client: MlflowClient, run_ids) -> dict:
    """Everything a user sees of runs: info, params, tags, metric histories, artifacts."""
    state = {}
    for run_id in run_ids:
        run = client.get_run(run_id)
        histories = {
            k: sorted((m.step, m.timestamp, m.value) for m in client.get_metric_history(run_id, k))
            for k in run.data.metrics
        }
        state[run_id] = (
            run.info.status,
            run.info.start_time,
            run.info.end_time,
            run.info.lifecycle_stage,
            dict(run.data.params),
            dict(run.data.tags),
            histories,
            sorted(a.path for a in client.list_artifacts(run_id)),
        )
    return state


def boo_n_v(val: np.ndarray, test: np.ndarray, n: int, *, maximize: bool = True) -> float:
    """Boo_n, estimator V, by enumerating every ordered draw of n runs with replacement (small m only)."""
    val, test = np.asarray(val, float), np.asarray(test, float)
    m = val.size
    draws = np.array(np.meshgrid(*[np.arange(m)] * n, indexing="ij")).reshape(n, -1).T
    v = val[draws] if maximize else -val[draws]
    best = v.max(axis=1, keepdims=True)
    # ties in val share the draw equally
    is_best = v == best
    return float(np.mean((test[draws] * is_best).sum(axis=1) / is_best.sum(axis=1)))


def summary_runs(client: MlflowClient, experiment_id: str, *, deleted: bool = False) -> list:
    view = ViewType.DELETED_ONLY if deleted else ViewType.ACTIVE_ONLY
    return list(client.search_runs([experiment_id], "tags.`boontrack.role` = 'summary'", run_view_type=view))
