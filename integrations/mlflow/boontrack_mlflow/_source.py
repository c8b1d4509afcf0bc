"""``mlflow:EXPERIMENT`` sources: the runs of an experiment, or the children of a sweep's parent run."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

import pandas as pd

from boontrack.integration import (
    Backend,
    Discovered,
    InputError,
    MetricRequest,
    Source,
    check_options,
    pick_values,
    redact,
)
from boontrack_mlflow import _discover, _read, _sql
from boontrack_mlflow._client import (
    RetryBudget,
    backend_errors,
    bounded_http,
    connect,
    import_mlflow,
    is_missing,
    resolve_tracking_uri,
)
from boontrack_mlflow._sink import MlflowSink, experiment_sink

#: MLflow's default experiment.
DEFAULT_EXPERIMENT_ID = "0"


class MlflowBackend(Backend):
    """``mlflow:EXPERIMENT`` where EXPERIMENT is an experiment name or id (empty when ``parent`` is given)."""

    name: ClassVar[str] = "mlflow"
    options: ClassVar[dict[str, str]] = {
        "parent": "run id of the sweep's parent run: read only its child runs",
        "tracking-uri": "MLflow tracking URI (default: MLFLOW_TRACKING_URI; required without it)",
        "read-path": "how a database URI is read: auto (by SQL, read-only, where the schema is known) or client",
    }

    sink_options: ClassVar[dict[str, str]] = {"tracking-uri": "MLflow tracking URI (default: the process's)"}
    discover_options: ClassVar[dict[str, str]] = _discover.DISCOVER_OPTIONS

    def open_sink(self, location: str, key: str, **options: Any) -> MlflowSink:
        """A summary run directly in the experiment ``location`` (a name; created when missing), for runs kept
        elsewhere (Hydra jobs, Optuna trials, Tune trials). Option ``tracking_uri`` (default: the process's)."""
        options = check_options(self.name, options, self.sink_options)
        if not location:
            raise InputError("an MLflow destination names its experiment: mlflow:EXPERIMENT")
        return experiment_sink(location, key, tracking_uri=options.get("tracking_uri"))

    def open_source(self, location: str, **options: Any) -> MlflowSource:
        options = check_options(self.name, options, self.options)
        return MlflowSource(
            location or None,
            parent=options.get("parent"),
            tracking_uri=options.get("tracking_uri"),
            read_path=options.get("read_path"),
        )

    def check_discover(self, location: str, select: Mapping[str, Any], **options: Any) -> None:
        """The experiments named once, in ``location`` or by ``select``, and no ``parent``."""
        if "parent" in options:
            raise InputError("mlflow: discover finds the parent runs itself; give no parent")
        pattern, extra = _discover.selected_experiments(select)
        if (pattern or extra) and location:
            raise InputError(f"mlflow: name the experiments as mlflow:{location} or in discover, not both")
        if not (pattern or extra or location):
            raise InputError("mlflow: discover needs an experiment (mlflow:NAME_OR_ID) or discover experiments/filter")

    def discover(self, location: str, select: Mapping[str, Any], **options: Any) -> list[Discovered]:
        """Every sweep (parent run with children) of the experiment ``location``, or of the experiments the
        ``experiments`` glob and/or the ``filter`` of ``select`` name: ``mlflow:EXPERIMENT_ID`` with option
        ``parent``, as one writes a sweep by hand, with its change token as found."""
        options = check_options(self.name, options, self.options)
        self.check_discover(location, select, **options)
        pattern, extra = _discover.selected_experiments(select)
        # Without an experiment, the source only lends its store: the experiments are searched, not resolved.
        experiment = location or DEFAULT_EXPERIMENT_ID
        source = MlflowSource(experiment, tracking_uri=options.get("tracking_uri"), read_path=options.get("read_path"))
        return source.discover(location or None, pattern, extra)


class MlflowSource(Source):
    """The active runs of an MLflow experiment, or of one sweep (the child runs of ``parent``).

    A database URI is read read-only (:mod:`._sql`): by SQL where the store's schema is known, else through
    MLflow's client only when that would write nothing; a file that is not an MLflow store is refused. The
    client made for writing back is created only when a sink asks for it.

    Parameters
    ----------
    experiment
        Experiment name or id. May be None when ``parent`` is given: the parent's experiment is used.
    parent
        Run id of the sweep's parent run.
    tracking_uri
        Default: ``MLFLOW_TRACKING_URI`` (or :func:`mlflow.set_tracking_uri`); InputError without any, and for a
        ``sqlite:`` URI whose file does not exist (a read never creates a store).
    read_path
        ``auto`` (default: ``BOONTRACK_MLFLOW_READ_PATH``, else auto): a database URI is read by SQL, read-only,
        where its schema is known (:mod:`boontrack_mlflow._sql`); ``client``: always through ``MlflowClient``.
    """

    def __init__(
        self,
        experiment: str | None = None,
        *,
        parent: str | None = None,
        tracking_uri: str | None = None,
        read_path: str | None = None,
    ):
        if not experiment and not parent:
            raise InputError("an mlflow source needs an experiment (mlflow:NAME_OR_ID) or a parent run id")
        self._experiment_ref = experiment
        self._parent = parent
        self._uri = resolve_tracking_uri(tracking_uri)
        self._store = _sql.store_for(self._uri)  # None for a tracking server
        self._read_path = _sql.read_path_setting(read_path)
        self._by_sql: bool | None = None  # decided on the first read (it connects)
        self._budget = RetryBudget()  # one job: this source's reads and its sink's writes
        self._client: Any = None
        self._experiment_id: str | None = None
        self._experiment: Any = None  # as fetched when resolved, for the sink's first look (one request fewer)

    @property
    def tracking_uri(self) -> str:
        return self._uri

    @property
    def client(self) -> Any:
        """The ``MlflowClient`` bound to this source's tracking URI, made on first use (it writes back; a
        database is read through it only once it is known that it would write nothing there)."""
        if self._client is None:
            with backend_errors("connecting", self._uri):
                self._client = connect(_sql.with_driver(self._uri) if self._store is not None else self._uri)
        return self._client

    def describe(self) -> str:
        what = f"run {self._parent}'s children" if self._parent else "runs"
        where = f"experiment {self._experiment_ref!r}" if self._experiment_ref else "its experiment"
        return f"MLflow {what} in {where} at {redact(self._uri)}"

    def identity(self) -> str:
        # The summary run lives in the same store, so the URI is not part of the identity: the same sweep seen
        # through two spellings of the URI keeps one summary.
        parent = f"/parent={self._parent}" if self._parent else ""
        return f"mlflow:experiment={self.experiment_id()}{parent}"

    def experiment_id(self) -> str:
        """The resolved experiment id; InputError for unknown or deleted experiments or parent runs."""
        if self._experiment_id is None:
            with bounded_http(self._budget), backend_errors("resolving the experiment", self._uri):
                self._experiment_id = self._resolve()
        return self._experiment_id

    def read(self, request: MetricRequest) -> pd.DataFrame:
        experiment_id = self.experiment_id()
        with bounded_http(self._budget), backend_errors(f"reading runs of experiment {experiment_id}", self._uri):
            frame, steps, histories = self._read_runs(experiment_id, request)
            return pick_values(frame, request, lambda: self._histories(frame, request, steps, histories))

    def read_histories(self, metrics: Sequence[str], run_ids: Sequence[str]) -> dict[str, pd.DataFrame]:
        """Every point of each of ``metrics`` the runs ``run_ids`` logged, in logging order (training curves):
        by SQL one query per metric; on the client path, against a server, one get-history-bulk request per
        metric and 100 runs (:func:`._read.metric_histories`)."""
        experiment_id = self.experiment_id()
        with bounded_http(self._budget), backend_errors(f"reading histories of experiment {experiment_id}", self._uri):
            store = self._sql_store()
            if store is not None:
                histories = store.every_history(experiment_id, self._parent, metrics)
            else:
                histories = functools.partial(_read.metric_histories, self.client)
            return {metric: _in_logging_order(histories(list(run_ids), metric)) for metric in metrics}

    def change_token(self) -> str | None:
        """A sweep's token (:func:`._sql.children_token` of its children); None for a whole experiment."""
        if not self._parent:
            return None
        experiment_id = self.experiment_id()
        if (store := self._sql_store()) is not None:
            return store.change_token(experiment_id, self._parent)
        with bounded_http(self._budget), backend_errors(f"asking run {self._parent} for changes", self._uri):
            return _discover.sweep_change_token(self.client, experiment_id, self._parent)

    def discover(self, location: str | None, pattern: str | None, extra: str | None) -> list[Discovered]:
        """The sweeps of the experiment ``location``, or of those ``pattern`` and ``extra`` select (see
        :meth:`MlflowBackend.discover`)."""
        with bounded_http(self._budget), backend_errors("discovering sweeps", self._uri):
            if (store := self._sql_store()) is not None:
                if location:
                    found = store.find_experiment(self.experiment_id())
                    experiments = [] if found is None else [found]  # None: deleted since it was resolved
                else:
                    experiments = _discover.filter_experiments(store.experiments(), pattern, extra)
                sweeps = store.sweeps([e.experiment_id for e in experiments])
            else:
                if location:
                    experiments = [self.client.get_experiment(self.experiment_id())]
                else:
                    experiments = _discover.search_experiments(self.client, pattern, extra)
                sweeps = _discover.discover_sweeps(self.client, [e.experiment_id for e in experiments])
        return _discover.discovered(sweeps, {e.experiment_id: e.name for e in experiments})

    def sink(self, key: str) -> MlflowSink:
        experiment_id = self.experiment_id()
        return MlflowSink(
            lambda: self.client,
            self._uri,
            experiment_id,
            self._parent,
            key,
            budget=self._budget,
            experiment=self._experiment,
            store=self._sql_store(),
        )

    # -- helpers -------------------------------------------------------------------------------------------
    def _sql_store(self) -> _sql.SqlStore | None:
        """The store this source reads by SQL, or None when it reads through the client. Decided once: a
        database is checked to be an MLflow store (else InputError); when it is read through the client instead
        (the client path asked for, or a schema this SQL was not checked on), it is checked that the client
        would write nothing there (else InputError)."""
        if self._by_sql is None:
            if self._store is None:
                self._by_sql = False
            elif self._read_path == "auto" and self._store.revision_known():
                self._by_sql = True
            else:
                self._store.refuse_writing_client()
                self._by_sql = False
        return self._store if self._by_sql else None

    def _read_runs(self, experiment_id: str, request: MetricRequest) -> tuple[pd.DataFrame, dict, Callable]:
        """The run frame, the latest steps and a ``histories(run_ids, key)`` reader: by SQL where the store
        allows it (:mod:`._sql`), else through the client."""
        if (store := self._sql_store()) is not None:
            picked = list(request.metrics) if request.needs_history else []
            read = store.read(experiment_id, self._parent, picked)
            if read is not None:  # None only for a schema this SQL does not know (then not read by SQL)
                return read.frame, read.steps, read.histories
        frame, steps = _read.read_run_frame(self.client, experiment_id, self._parent)
        return frame, steps, functools.partial(_read.metric_histories, self.client)

    def _histories(
        self, frame: pd.DataFrame, request: MetricRequest, steps: dict[str, dict[str, int]], histories: Callable
    ) -> dict[str, pd.DataFrame]:
        """The per-step points of the metrics asked for, for :func:`~boontrack.integration.pick_values`.

        Histories are read only for runs that may have one: those whose latest val or test point is past step
        0 (a NaN last value may follow a better step), and those the search gave no steps for. A run that logged
        once, at step 0, has nothing to pick from and keeps the value the search returned."""
        metrics = [m for m in request.metrics if f"metrics.{m}" in frame.columns]
        run_ids = frame["run_id"].tolist()
        with_history = [r for r in run_ids if r not in steps or any(steps[r].get(m, 0) != 0 for m in metrics)]
        if not with_history or request.val not in metrics:
            return {}
        return {metric: _in_logging_order(histories(with_history, metric)) for metric in metrics}

    def _resolve(self) -> str:
        """The experiment id: by SQL, or through the client (then the experiment is kept for the sink)."""
        if (store := self._sql_store()) is not None:
            return self._resolve_by_sql(store)
        mlflow = import_mlflow()
        parent_experiment = None
        if self._parent:
            try:
                parent_run = self.client.get_run(self._parent)
            except mlflow.exceptions.MlflowException as exc:
                if is_missing(exc):
                    raise InputError(f"no MLflow run with id {self._parent!r} at {redact(self._uri)}") from None
                raise
            parent_experiment = self._checked_parent(parent_run.info.lifecycle_stage, parent_run.info.experiment_id)
        if not self._experiment_ref:
            assert parent_experiment is not None  # a source has an experiment or a parent run
            return parent_experiment
        experiment = self._experiment = self._find_experiment(self._experiment_ref)
        return self._checked_experiment(
            None if experiment is None else (experiment.experiment_id, experiment.lifecycle_stage), parent_experiment
        )

    def _resolve_by_sql(self, store: _sql.SqlStore) -> str:
        parent_experiment = None
        if self._parent:
            found = store.find_run(self._parent)
            if found is None:
                raise InputError(f"no MLflow run with id {self._parent!r} at {redact(self._uri)}")
            parent_experiment = self._checked_parent(found[1], found[0])
        if not self._experiment_ref:
            assert parent_experiment is not None  # a source has an experiment or a parent run
            return parent_experiment
        experiment = store.find_experiment(self._experiment_ref)
        return self._checked_experiment(
            None if experiment is None else (experiment.experiment_id, experiment.lifecycle_stage), parent_experiment
        )

    def _checked_parent(self, lifecycle_stage: str, experiment_id: str) -> str:
        if lifecycle_stage == "deleted":
            raise InputError(f"the parent run {self._parent} is deleted (restore it in MLflow first)")
        return experiment_id

    def _checked_experiment(self, found: tuple[str, str] | None, parent_experiment: str | None) -> str:
        """The experiment's id, given (id, lifecycle stage) as found; InputError when missing, deleted, or not the
        parent run's."""
        if found is None:
            raise InputError(f"no MLflow experiment named or with id {self._experiment_ref!r} at {redact(self._uri)}")
        experiment_id, stage = found
        if stage == "deleted":
            raise InputError(f"the MLflow experiment {self._experiment_ref!r} is deleted")
        if parent_experiment is not None and parent_experiment != experiment_id:
            raise InputError(
                f"the parent run {self._parent} belongs to experiment {parent_experiment}, "
                f"not to {self._experiment_ref!r} ({experiment_id})"
            )
        return experiment_id

    def _find_experiment(self, ref: str) -> Any:
        """By id first when ``ref`` is all digits (a scheduled job's usual spelling: one request, no 404 of a
        name lookup), else, or when no experiment has that id, by name."""
        mlflow = import_mlflow()
        if ref.isdigit():
            try:
                return self.client.get_experiment(ref)
            except mlflow.exceptions.MlflowException as exc:
                if not is_missing(exc):
                    raise
        return self.client.get_experiment_by_name(ref)


def _in_logging_order(history: pd.DataFrame) -> pd.DataFrame:
    """A metric history (run_id, step, timestamp, value) as points in the order they were logged."""
    return history.sort_values(["run_id", "timestamp"], kind="stable")
