"""Writing a summary back to MLflow: one summary run per (sweep, spec) key, one curve run per group under it.

A write is identified by a fresh *write id* (a random nonce). Before any run is created, the id is recorded in
the experiment as the tag ``boontrack.write.<id>`` (value: the key and the time); every run of the write
carries it as ``boontrack.write``. A run is boontrack's own only when its write id is recorded in its own
experiment under its key: a run imported or copied from elsewhere with the same tags is never deleted or taken
for a summary. (Experiment tags, not tags on the sweep's parent run: a sweep without a parent has nowhere
else to put them, and the user's runs stay untouched.)

The write: the summary run (a child of the sweep's parent when there is one) gets the scalar metrics, the spec
as params, the artifacts and the description (which opens with a link to the artifact view of ``report.html``,
set with the metrics once the run's id is known); then one child run per group logs that group's curve and band
(``boon/curve``, ``boon/curve/ci_low``, ``boon/curve/ci_high`` with step = n) so that MLflow's chart of the
summary run's children overlays the groups; then every run is finished, and ``boontrack.fingerprint`` is set
on the summary run last. A summary is complete when it is FINISHED, has its fingerprint, and all its group
runs are FINISHED.

A change token (:meth:`MlflowSink.write_change_token`) is the tag ``boontrack.change_token`` on the summary
run, holding the token and the fingerprint it was stored for; it is set before the fingerprint during a write,
or alone on a complete summary whose fingerprint it names, and trusted only on a complete summary with that
fingerprint.

Convergence: :meth:`MlflowSink.read_fingerprint` reports a fingerprint only when the key's own runs are
exactly one complete summary with its group runs. Anything else (a run left RUNNING by a crash, a duplicate
of a retried ``create_run``, a superseded summary whose deletion was interrupted) makes it report none, so the
pipeline writes again, and :meth:`MlflowSink.write_fingerprint` then deletes (soft) every other run of the
key that is boontrack's own and forgets their write ids. After a crash at any point, the next run leaves
exactly one complete summary. The user's runs are only read.
"""

from __future__ import annotations

import contextlib
import json
import tempfile
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from boontrack.integration import (
    GROUP_CURVE_ROLE,
    SUMMARY_ROLE,
    SUMMARY_ROLE_TAG,
    CurveSeries,
    Sink,
    SummaryOutputs,
    redact,
    training_path,
    write_artifacts,
)
from boontrack_mlflow._client import (
    RetryBudget,
    backend_errors,
    bounded_http,
    connect,
    is_missing,
    local_artifact_directory,
    resolve_tracking_uri,
)
from boontrack_mlflow._sql import SqlStore

KEY_TAG = "boontrack.key"
FINGERPRINT_TAG = "boontrack.fingerprint"
#: On a summary run: JSON ``{"token", "fingerprint"}``, the change token stored with that fingerprint.
CHANGE_TOKEN_TAG = "boontrack.change_token"
#: On a run: the id of the write that created it.
WRITE_TAG = "boontrack.write"
#: Experiment tag ``boontrack.write.<write id>`` = ``"<key> <epoch ms>"``: the record that makes a run boontrack's.
WRITE_RECORD_PREFIX = "boontrack.write."
#: On a summary run: how many group runs a complete summary has.
GROUPS_TAG = "boontrack.groups"
NOTE_TAG = "mlflow.note.content"
PARENT_TAG = "mlflow.parentRunId"
#: Metric keys of a group run: the same in every group run, so MLflow overlays them in one chart.
GROUP_CURVE_KEY = "boon/curve"
#: Prefix of the training-curve series of a group run: ``boon/train/<metric>/<series>`` (``boon/train/best-so-far/
#: <metric>/<series>`` for a best-so-far curve; the part after it is :func:`training_path`), step = the training step.
TRAINING_PREFIX = "boon/"
#: The series of each metric (key suffix, column of ``training_curves.csv``).
TRAINING_SERIES = (
    ("mean", "mean"),
    ("ci_low", "ci_low"),
    ("ci_high", "ci_high"),
    ("band_low", "simultaneous_low"),
    ("band_high", "simultaneous_high"),
    ("runs", "runs"),
)
#: Curves longer than this are thinned to log-spaced budgets: one request, and a readable line chart.
MAX_CURVE_POINTS = 1000
#: A recorded write id with no run is forgotten after this long (its writer crashed before create_run, or
#: the record is older than any writer still at work).
UNUSED_RECORD_AFTER_MS = 60 * 60 * 1000
#: Most of boontrack's own runs one key can hold (a summary, its group runs, leftovers of crashed writes).
MAX_OWN_RUNS = 10_000
#: The query that opens an MLflow UI page in its "Model training" view. MLflow 3's UI opens every page in its GenAI
#: view unless the page's URL says otherwise (``workflowType``, read by ``WorkflowTypeContext`` of its web app),
#: or the browser remembers the last view chosen; summaries are classic runs.
CLASSIC_VIEW_QUERY = "?workflowType=machine_learning"


@dataclass(frozen=True)
class _State:
    """What the store holds for one key: boontrack's own runs and the recorded write ids."""

    records: dict[str, int]  # write id -> recorded at (epoch ms)
    own: list[Any]  # active runs of the key whose write id is recorded
    keep: Any | None  # the newest complete summary run
    clean: bool  # own == keep and its group runs, all complete


class MlflowSink(Sink):
    """The summary run of one (sweep, spec) key in one experiment, and its group curve runs."""

    def __init__(
        self,
        make_client: Callable[[], Any],
        uri: str,
        experiment_id: str,
        parent_run_id: str | None,
        key: str,
        *,
        budget: RetryBudget | None = None,
        experiment: Any = None,
        store: SqlStore | None = None,
    ) -> None:
        # The MlflowClient is made on first use: a look for an earlier summary by SQL needs none (nor MLflow).
        self._make_client = make_client
        self._made_client: Any = None
        # The experiment as the source fetched it a moment ago: the first look for a change token uses it.
        self._fetched_experiment = experiment
        # The store the source reads by SQL, when it does: the looks for an earlier summary read it too.
        self._store = store
        self._budget = budget or RetryBudget()
        self._uri = uri
        self._experiment_id = experiment_id
        self._parent_run_id = parent_run_id
        self._key = key
        self._run_id: str | None = None  # the summary run written (or found complete) by this sink
        self._artifact_uri: str | None = None  # the artifacts of the complete summary run found
        self._superseded = False  # our run was deleted by a concurrent writer that completed first

    @property
    def _client(self) -> Any:
        if self._made_client is None:
            self._made_client = self._make_client()
        return self._made_client

    # -- Sink interface ------------------------------------------------------------------------------------
    def read_fingerprint(self) -> str | None:
        """The complete summary's fingerprint, or None unless the key holds exactly that summary and its runs."""
        with bounded_http(self._budget), backend_errors("looking for an earlier summary", self._uri):
            state = self._state(by_sql=True)
        if not state.clean or state.keep is None:
            return None
        self._run_id, self._artifact_uri = state.keep.info.run_id, state.keep.info.artifact_uri
        return state.keep.data.tags[FINGERPRINT_TAG]

    def read_change_token(self) -> tuple[str, str] | None:
        """``(token, fingerprint)`` of the complete summary, when its token tag was stored for its fingerprint.

        The first call takes the write records from the experiment the source fetched when it resolved it: a
        write recorded since is not seen, as if it had started after this look (its runs are not counted as
        boontrack's, the summary it may replace still is).
        """
        experiment, self._fetched_experiment = self._fetched_experiment, None
        with bounded_http(self._budget), backend_errors("looking for an earlier summary", self._uri):
            state = self._state(experiment, by_sql=True)
        if not state.clean or state.keep is None:
            return None
        self._run_id = state.keep.info.run_id
        tags = state.keep.data.tags
        try:
            stored = json.loads(tags.get(CHANGE_TOKEN_TAG, ""))
        except ValueError:
            return None
        if not isinstance(stored, dict) or not isinstance(stored.get("token"), str):
            return None
        fingerprint = tags[FINGERPRINT_TAG]
        return (stored["token"], fingerprint) if stored.get("fingerprint") == fingerprint else None

    def write_change_token(self, token: str, fingerprint: str) -> None:
        """A tag on the summary run written by :meth:`write` (before its fingerprint), or on the complete one
        found holding ``fingerprint``; nothing when a concurrent writer replaced ours."""
        from mlflow.exceptions import MlflowException

        if self._run_id is None or self._superseded:
            return
        value = json.dumps({"token": token, "fingerprint": fingerprint}, sort_keys=True)
        with bounded_http(self._budget), backend_errors("storing the change token", self._uri):
            try:
                self._client.set_tag(self._run_id, CHANGE_TOKEN_TAG, value)
            except MlflowException:
                if not self._deleted_by_another_writer():
                    raise

    def read_summary(self, fingerprint: str) -> dict[str, Any] | None:
        """The ``summary.json`` of the complete summary run found by :meth:`read_fingerprint`, when it holds
        ``fingerprint``; a summary run without a readable ``summary.json`` raises (the pipeline rewrites it)."""
        if self._run_id is None or self.read_fingerprint() != fingerprint:
            return None
        data = json.loads(self._stored_summary_text())
        if not isinstance(data, dict):
            raise ValueError(f"summary.json of MLflow run {self._run_id} is not a JSON object")
        return data

    def _stored_summary_text(self) -> str:
        """``summary.json`` of the summary run found: read in its artifact directory where the store read by SQL
        names one on this machine (no client, so no MLflow to import: an unchanged summary stays by SQL; a file
        gone raises as it is, and the pipeline writes the summary again), else downloaded through the client."""
        local = local_artifact_directory(self._artifact_uri) if self._store is not None else None
        if local is not None:
            return (local / "summary.json").read_text(encoding="utf-8")
        with bounded_http(self._budget), backend_errors("reading the stored summary", self._uri):
            with tempfile.TemporaryDirectory(prefix="boontrack-") as tmp:
                path = self._client.download_artifacts(self._run_id, "summary.json", tmp)
                return Path(path).read_text(encoding="utf-8")

    def write(self, outputs: SummaryOutputs) -> None:
        from mlflow.exceptions import MlflowException

        write_id = uuid.uuid4().hex
        self._superseded = False
        with bounded_http(self._budget), backend_errors("writing the summary", self._uri):
            # Recorded before any run exists: a crash or a lost create_run response leaves runs that are
            # recognisably boontrack's, and the next write deletes them.
            self._client.set_experiment_tag(
                self._experiment_id, WRITE_RECORD_PREFIX + write_id, f"{self._key} {_now_ms()}"
            )
            groups = _group_curves(outputs)
            training = _training_series(outputs)
            spec = _spec(outputs)
            run = self._client.create_run(
                self._experiment_id,
                tags=self._tags(write_id, outputs, len(groups)),
                run_name=summary_run_name(spec, _reported_budgets(outputs)),
            )
            self._run_id = run.info.run_id
            try:
                self._fill(run, outputs, spec)
                for label, columns in groups.items():
                    self._write_group(write_id, run.info.start_time, label, columns, training.get(label, []))
                self._client.set_terminated(self._run_id, "FINISHED")
            except MlflowException:
                superseded = self._deleted_by_another_writer()
                self._abandon(write_id)  # with its group runs written so far
                if superseded:
                    return
                raise
            except BaseException:
                self._abandon(write_id)
                raise

    def write_fingerprint(self, fingerprint: str) -> None:
        from mlflow.exceptions import MlflowException

        if self._run_id is None:
            raise RuntimeError("write_fingerprint() called before write()")
        with bounded_http(self._budget), backend_errors("finishing the summary", self._uri):
            if not self._superseded:
                try:
                    self._client.set_tag(self._run_id, FINGERPRINT_TAG, fingerprint)
                except MlflowException:
                    if not self._deleted_by_another_writer():
                        raise
            if self._superseded:
                self._adopt(fingerprint)
            else:
                self._remove_superseded()

    def location(self) -> str:
        """The summary run (once written or found), else where it goes; a UI link for a tracking server."""
        if self._uri.startswith(("http://", "https://")):
            run = f"/runs/{self._run_id}" if self._run_id else ""
            return f"{redact(self._uri).rstrip('/')}/{ui_route(self._experiment_id, run)}"
        run = f"run {self._run_id}" if self._run_id else f"the summary run (boontrack.key={self._key})"
        return f"MLflow {run} in experiment {self._experiment_id} at {redact(self._uri)}"

    @property
    def run_id(self) -> str | None:
        """The summary run written or found by this sink."""
        return self._run_id

    # -- what the store holds --------------------------------------------------------------------------------
    def _state(self, experiment: Any = None, *, by_sql: bool = False) -> _State:
        """What the store holds for the key: the experiment's write records (``experiment``, when given, as
        fetched a moment ago), then the key's runs. ``by_sql``: read by SQL when the source does (a look that
        writes nothing after it; the write path asks the client, which it writes through)."""
        if by_sql and self._store is not None:
            tags, found = self._store.tagged_runs(self._experiment_id, KEY_TAG, self._key)
            return _state_of(_records(tags, self._key), found)
        from mlflow.entities import ViewType

        if experiment is None or experiment.experiment_id != self._experiment_id:
            experiment = self._client.get_experiment(self._experiment_id)
        records = _records(experiment.tags, self._key)
        found = self._client.search_runs(
            [self._experiment_id],
            filter_string=f"tags.`{KEY_TAG}` = '{self._key}'",
            run_view_type=ViewType.ACTIVE_ONLY,
            max_results=MAX_OWN_RUNS,
        )
        return _state_of(records, found)

    def _remove_superseded(self) -> None:
        """Delete the own runs of the key that the newest complete summary supersedes; forget the write ids
        left without runs.

        Superseded are the summaries older than the newest complete one (by start time, then run id) and their
        group runs, duplicates of the kept summary from a retried ``create_run``, and group runs whose summary is
        gone. A newer summary of another write is left alone even when unfinished:
        its writer may still be at work, and when it completes it supersedes this one. Deleting it here could
        leave no summary at all when two writers see each other's completion at different moments. A newer run
        left by a crash is not lost either: a key holding it is not "up to date", so the next run writes a
        newer summary still, which supersedes it.
        """
        state = self._state()
        if state.keep is None:
            return
        keep_id, keep_key, keep_write = state.keep.info.run_id, _age_key(state.keep), state.keep.data.tags[WRITE_TAG]
        summaries = {r.info.run_id: r for r in state.own if r.data.tags.get(SUMMARY_ROLE_TAG) == SUMMARY_ROLE}

        def superseded(run: Any) -> bool:
            summary = summaries.get(run.data.tags.get(PARENT_TAG)) if run.info.run_id not in summaries else run
            if summary is None:
                return True
            if summary.info.run_id == keep_id:
                return False
            # Another summary of the kept one's own write is a duplicate left by a retried create_run (its
            # request, start time included, was sent again): superseded whatever its age.
            return summary.data.tags.get(WRITE_TAG) == keep_write or _age_key(summary) < keep_key

        # Group runs first, summaries last: an interrupted deletion never leaves a group run without its summary
        # visible as the only trace of a write.
        doomed = sorted(
            (r for r in state.own if superseded(r)),
            key=lambda r: r.data.tags.get(SUMMARY_ROLE_TAG) == SUMMARY_ROLE,
        )
        for run in doomed:
            self._discard(run.info.run_id)
        gone = {r.info.run_id for r in doomed}
        live_writes = {r.data.tags[WRITE_TAG] for r in state.own if r.info.run_id not in gone}
        used = {r.data.tags[WRITE_TAG] for r in state.own}
        horizon = _now_ms() - UNUSED_RECORD_AFTER_MS
        for write_id, recorded_at in state.records.items():
            if write_id in live_writes or (write_id not in used and recorded_at > horizon):
                continue  # kept, or a write that may still be at work
            self._forget(write_id)

    # -- writing ---------------------------------------------------------------------------------------------
    def _tags(self, write_id: str, outputs: SummaryOutputs, groups: int) -> dict[str, str]:
        tags = {
            SUMMARY_ROLE_TAG: SUMMARY_ROLE,
            KEY_TAG: self._key,
            WRITE_TAG: write_id,
            GROUPS_TAG: str(groups),
            NOTE_TAG: outputs.description,
        }
        if self._parent_run_id:
            tags[PARENT_TAG] = self._parent_run_id
        return tags

    def _fill(self, run: Any, outputs: SummaryOutputs, spec: dict[str, Any]) -> None:
        from mlflow.entities import Metric, Param, RunTag

        # The run's own start time stamps every point: a retried request repeats identical points, which the
        # SQL stores de-duplicate.
        stamp = run.info.start_time
        metrics = [Metric(key, float(value), stamp, 0) for key, value in outputs.metrics.items()]
        for curve in outputs.curves:
            n, values = thin_curve(curve)
            metrics.extend(Metric(curve.key, float(v), stamp, int(k)) for k, v in zip(n, values))
        params = [Param(k, v) for k, v in spec_params(spec).items()]
        tags = []
        if "report.html" in outputs.artifacts:  # the run id is known now: the description links to the page
            page = ui_route(self._experiment_id, f"/runs/{self._run_id}/artifacts/report.html")
            tags.append(RunTag(NOTE_TAG, f"[Open the report (report.html)]({page})\n\n{outputs.description}"))
        self._client.log_batch(self._run_id, metrics=metrics, params=params, tags=tags)
        if outputs.artifacts:
            with tempfile.TemporaryDirectory(prefix="boontrack-") as tmp:
                write_artifacts(Path(tmp), outputs.artifacts)
                self._client.log_artifacts(self._run_id, tmp)

    def _write_group(
        self, write_id: str, stamp: int, label: str, columns: dict[str, np.ndarray], training: Sequence[CurveSeries]
    ) -> None:
        from mlflow.entities import Metric

        tags = {
            SUMMARY_ROLE_TAG: GROUP_CURVE_ROLE,
            KEY_TAG: self._key,
            WRITE_TAG: write_id,
            PARENT_TAG: self._run_id,
            "boontrack.group": label,
            NOTE_TAG: curve_run_description(label, columns["n"]) + training_description(training),
        }
        run = self._client.create_run(self._experiment_id, tags=tags, run_name=label)
        metrics: list[Any] = []
        for suffix, column in (("", "estimate"), ("/ci_low", "ci_low"), ("/ci_high", "ci_high")):
            n, values = thin_curve(CurveSeries(GROUP_CURVE_KEY + suffix, columns["n"], columns[column]))
            # a band undefined at some n (too few runs) has no point there, rather than a NaN MLflow cannot draw
            metrics.extend(
                Metric(GROUP_CURVE_KEY + suffix, float(v), stamp, int(k)) for k, v in zip(n, values) if np.isfinite(v)
            )
        for series in training:  # every step, in requests of MLflow's 1000 points
            metrics.extend(
                Metric(series.key, float(v), stamp, int(k)) for k, v in zip(series.n, series.values) if np.isfinite(v)
            )
        if metrics:
            self._client.log_batch(run.info.run_id, metrics=metrics)
        self._client.set_terminated(run.info.run_id, "FINISHED")

    def _deleted_by_another_writer(self) -> bool:
        """Whether our summary run was deleted under us: a concurrent writer completed first and cleaned up."""
        from mlflow.exceptions import MlflowException

        try:
            deleted = self._client.get_run(self._run_id).info.lifecycle_stage == "deleted"
        except MlflowException:
            return False
        self._superseded = deleted
        return deleted

    def _adopt(self, fingerprint: str) -> None:
        """Take the concurrent writer's complete summary as ours when it holds the same inputs."""
        keep = self._state().keep
        if keep is None or keep.data.tags.get(FINGERPRINT_TAG) != fingerprint:
            raise RuntimeError(
                "a concurrent writer replaced this summary with one of other inputs; the next run repairs it"
            )
        self._run_id = keep.info.run_id

    def _abandon(self, write_id: str) -> None:
        """After a failed write, remove its runs at once if the store lets us (else the next write does)."""
        from mlflow.exceptions import MlflowException

        with contextlib.suppress(MlflowException):
            for run in self._state().own:
                if run.data.tags.get(WRITE_TAG) == write_id:
                    self._discard(run.info.run_id)
            self._forget(write_id)

    def _discard(self, run_id: str) -> None:
        """Soft-delete one of boontrack's own runs; one already gone is fine."""
        from mlflow.exceptions import MlflowException

        try:
            self._client.delete_run(run_id)
        except MlflowException as exc:
            if not is_missing(exc):
                raise

    def _forget(self, write_id: str) -> None:
        from mlflow.exceptions import MlflowException

        try:
            self._client.delete_experiment_tag(self._experiment_id, WRITE_RECORD_PREFIX + write_id)
        except MlflowException as exc:
            if not is_missing(exc):
                raise


def summary_run_name(spec: dict[str, Any], reported: Sequence[int] = ()) -> str:
    """What the summary holds, e.g. ``boon test_acc V n=1,5,10`` (``boon`` alone without a spec).

    The budgets are the spec's ``n`` when given, else ``reported``: the default budgets some group reports.
    """
    if not spec:
        return "boon"
    metric = spec.get("test") or spec.get("val") or ""
    budgets = ",".join(str(n) for n in spec.get("n") or reported)
    return f"boon {str(metric).removeprefix('metrics.')} {spec.get('estimator', '')} n={budgets}".replace("  ", " ")


def curve_run_description(label: str, n: np.ndarray) -> str:
    """The curve run's description: what its metrics are, which value its page lists, how to overlay groups.

    Its page lists each metric's last value, the one at the largest n, which is not a Boo_n of the summary.
    """
    from boontrack.integration import markdown_literal

    return (
        f"**boontrack** curve of group {markdown_literal(label)}: `boon/curve` is the expected score of the "
        f"best-validation run out of n runs, at step = n (n = {int(n.min())} to {int(n.max())}), with its bootstrap "
        f"band `boon/curve/ci_low` to `boon/curve/ci_high`; the values listed are those at n = {int(n.max())}.\n"
        "To overlay the groups: tick this run and the summary run's other child runs, click Compare, then click "
        "`boon/curve` in the Metrics table and add `boon/curve/ci_low` and `boon/curve/ci_high` on the Y-axis."
    )


def training_description(training: Sequence[CurveSeries]) -> str:
    """What the curve run's training series are (nothing without them)."""
    metrics = sorted({series.key.removeprefix(TRAINING_PREFIX).rpartition("/")[0] for series in training})
    if not metrics:
        return ""
    keys = ", ".join(f"`{TRAINING_PREFIX}{metric}/mean`" for metric in metrics)
    best = any(metric.startswith("train/best-so-far/") for metric in metrics)
    return (
        f"\n{keys}: the mean over the group's runs at each training step (step = the step logged), with the "
        "pointwise band `.../ci_low` to `.../ci_high`, the simultaneous band over the steps with enough runs "
        "`.../band_low` to `.../band_high`, and the runs logged at each step `.../runs` (training_curves.csv of the "
        "summary run has every column)."
        + (
            " Under `boon/train/best-so-far/`: of each run's best validation value so far, or of its test value at "
            "that step (as early stopping reports)."
            if best
            else ""
        )
    )


def ui_route(experiment_id: str, page: str = "") -> str:
    """The MLflow UI's address of a page of the experiment (``page``: ``/runs/RUN_ID``, ...), relative to the UI's
    root, opened in its "Model training" view (:data:`CLASSIC_VIEW_QUERY`)."""
    return f"#/experiments/{experiment_id}{page}{CLASSIC_VIEW_QUERY}"


def spec_params(spec: dict[str, Any]) -> dict[str, str]:
    """The spec as MLflow params ``boon.<field>`` (lists comma-separated, None as empty)."""

    def text(value: Any) -> str:
        if value is None:
            return ""
        if isinstance(value, (list, tuple)):
            return ",".join(str(v) for v in value)
        return str(value)

    return {f"boon.{name}": text(value)[:6000] for name, value in sorted(spec.items())}


def _spec(outputs: SummaryOutputs) -> dict[str, Any]:
    """The spec recorded in ``summary.json`` (empty when the outputs carry none)."""
    try:
        return dict(json.loads(outputs.artifacts["summary.json"])["spec"])
    except (KeyError, ValueError, TypeError):
        return {}


def _reported_budgets(outputs: SummaryOutputs) -> list[int]:
    """The budgets at which some group of ``summary.json`` reports Boo_n, in increasing order."""
    try:
        groups = json.loads(outputs.artifacts["summary.json"])["groups"].values()
        return sorted({int(n) for group in groups for n in group["boo_n"]})
    except (KeyError, ValueError, TypeError, AttributeError):
        return []


def _group_curves(outputs: SummaryOutputs) -> dict[str, dict[str, np.ndarray]]:
    """Each group's curve and band from the outputs' curve table: label -> n, estimate, ci_low, ci_high."""
    if "curves" not in outputs.tables:
        return {}
    columns, rows = outputs.tables["curves"]
    wanted = ("group", "n", "estimate", "ci_low", "ci_high")
    if not set(wanted) <= set(columns):
        return {}
    index = [list(columns).index(name) for name in wanted]
    groups: dict[str, dict[str, list]] = {}
    for row in rows:
        group, n, estimate, low, high = (row[i] for i in index)
        target = groups.setdefault(str(group), {"n": [], "estimate": [], "ci_low": [], "ci_high": []})
        for name, value in (("n", n), ("estimate", estimate), ("ci_low", low), ("ci_high", high)):
            target[name].append(np.nan if value is None else value)
    return {
        label: {name: np.asarray(values, dtype=np.int64 if name == "n" else np.float64) for name, values in c.items()}
        for label, c in groups.items()
    }


def _training_series(outputs: SummaryOutputs) -> dict[str, list[CurveSeries]]:
    """Each group's training-curve series from the outputs' training table (step = the training step): label ->
    ``boon/train/<metric>/mean``, ``.../ci_low``, ``.../ci_high``, ``.../band_low``, ``.../band_high``, ``.../runs``
    (``boon/train/best-so-far/<metric>/...`` for a best-so-far curve)."""
    if "training_curves" not in outputs.tables:
        return {}
    columns, rows = outputs.tables["training_curves"]
    cells = {name: [row[i] for row in rows] for i, name in enumerate(columns)}
    metric, group = np.asarray(cells["metric"], dtype=object), np.asarray(cells["group"], dtype=object)
    step = np.asarray(cells["step"], dtype=np.int64)
    values = {  # a cell of JSON null (a band undefined at a step) as NaN
        column: np.array([np.nan if v is None else v for v in cells[column]], dtype=np.float64)
        for _, column in TRAINING_SERIES
    }
    series: dict[str, list[CurveSeries]] = {}
    for name, label in dict.fromkeys(zip(metric.tolist(), group.tolist())):
        here = (metric == name) & (group == label)
        series[str(label)] = series.get(str(label), []) + [
            CurveSeries(f"{TRAINING_PREFIX}{training_path(name)}/{suffix}", step[here], values[column][here])
            for suffix, column in TRAINING_SERIES
        ]
    return series


def _state_of(records: dict[str, int], found: Sequence[Any]) -> _State:
    """The state of a key from its write records and its active runs (MLflow's ``Run`` or :class:`StoredRun`)."""
    own = [r for r in found if r.data.tags.get(WRITE_TAG) in records]
    complete = [
        r
        for r in own
        if r.data.tags.get(SUMMARY_ROLE_TAG) == SUMMARY_ROLE
        and r.info.status == "FINISHED"
        and FINGERPRINT_TAG in r.data.tags
    ]
    if not complete:
        return _State(records, own, None, False)
    keep = max(complete, key=_age_key)
    groups = [r for r in own if r.data.tags.get(PARENT_TAG) == keep.info.run_id]
    clean = (
        len(own) == 1 + len(groups)
        and all(r.data.tags.get(SUMMARY_ROLE_TAG) == GROUP_CURVE_ROLE and r.info.status == "FINISHED" for r in groups)
        and str(len(groups)) == keep.data.tags.get(GROUPS_TAG)
    )
    return _State(records, own, keep, clean)


def _records(tags: Mapping[str, str], key: str) -> dict[str, int]:
    """The write ids recorded in the experiment's tags for ``key``: write id -> recorded at (epoch ms)."""
    records = {}
    for name, value in tags.items():
        if not name.startswith(WRITE_RECORD_PREFIX):
            continue
        record_key, _, stamp = value.partition(" ")
        if record_key == key:
            records[name.removeprefix(WRITE_RECORD_PREFIX)] = int(stamp) if stamp.isdigit() else 0
    return records


def _now_ms() -> int:
    return int(time.time() * 1000)


def _age_key(run: Any) -> tuple[int, str]:
    return run.info.start_time, run.info.run_id


def thin_curve(curve: CurveSeries) -> tuple[np.ndarray, np.ndarray]:
    """The curve's (n, value) points, thinned to at most :data:`MAX_CURVE_POINTS` log-spaced budgets."""
    n = np.asarray(curve.n, dtype=np.int64)
    values = np.asarray(curve.values, dtype=np.float64)
    if n.size <= MAX_CURVE_POINTS:
        return n, values
    positions = np.unique(np.round(np.geomspace(1, n.size, MAX_CURVE_POINTS)).astype(np.int64) - 1)
    return n[positions], values[positions]


def experiment_sink(experiment: str, key: str, *, tracking_uri: str | None = None) -> MlflowSink:
    """The sink of a summary run directly in ``experiment`` (no parent run), the experiment created if missing.

    For sweeps whose runs are not MLflow runs, or not children of one parent (Hydra jobs, Optuna trials), whose
    summaries go to MLflow all the same. The tracking URI is ``tracking_uri``, else the process's.
    """
    uri = resolve_tracking_uri(tracking_uri)
    budget = RetryBudget()
    with bounded_http(budget), backend_errors(f"finding the experiment {experiment!r}", uri):
        client = connect(uri)
        found = client.get_experiment_by_name(experiment)
        experiment_id = found.experiment_id if found is not None else client.create_experiment(experiment)
    return MlflowSink(lambda: client, uri, experiment_id, None, key, budget=budget)
