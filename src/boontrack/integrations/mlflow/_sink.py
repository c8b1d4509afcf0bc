"""Writing a summary back to MLflow: one dedicated summary run per (sweep, spec) key.

Each write creates a new run (a child of the sweep's parent when there is one), tagged
``boontrack.role=summary`` and ``boontrack.key=<key>`` so it is never read back as input. Metrics and curves go
in one ``log_batch``, artifacts as files, the description as the run's note, then the run is finished and the
``boontrack.fingerprint`` tag is set last. Only then are superseded summary runs of the same key deleted
(soft), so a reader always finds one complete summary and no stale curve points stay mixed with new ones.
The user's runs are never written to.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from boontrack._redact import redact
from boontrack.backends import SUMMARY_ROLE_TAG, CurveSeries, Sink, SummaryOutputs
from boontrack.integrations.mlflow._client import backend_errors, bounded_http
from boontrack.runframe import SUMMARY_ROLE, write_artifacts

KEY_TAG = "boontrack.key"
FINGERPRINT_TAG = "boontrack.fingerprint"
NOTE_TAG = "mlflow.note.content"
PARENT_TAG = "mlflow.parentRunId"
RUN_NAME = "boontrack summary"
#: Curves longer than this are thinned to log-spaced budgets: one request, and a readable line chart.
MAX_CURVE_POINTS = 1000
#: An unfinished summary run older than this (before the newest complete one) is a crashed write: delete it.
ABANDONED_AFTER_MS = 15 * 60 * 1000


class MlflowSink(Sink):
    """The summary run of one (sweep, spec) key in one experiment."""

    def __init__(self, client: Any, uri: str, experiment_id: str, parent_run_id: str | None, key: str) -> None:
        self._client = client
        self._uri = uri
        self._experiment_id = experiment_id
        self._parent_run_id = parent_run_id
        self._key = key
        self._run_id: str | None = None  # the summary run written (or found complete) by this sink

    # -- Sink interface ------------------------------------------------------------------------------------
    def read_fingerprint(self) -> str | None:
        with bounded_http(), backend_errors("looking for an earlier summary", self._uri):
            complete = [r for r in self._summary_runs() if FINGERPRINT_TAG in r.data.tags]
        if not complete:
            return None
        newest = max(complete, key=_age_key)
        self._run_id = newest.info.run_id
        return newest.data.tags[FINGERPRINT_TAG]

    def write(self, outputs: SummaryOutputs) -> None:
        with bounded_http(), backend_errors("writing the summary", self._uri):
            run = self._client.create_run(self._experiment_id, tags=self._tags(outputs), run_name=RUN_NAME)
            self._run_id = run.info.run_id
            try:
                self._fill(run, outputs)
                self._client.set_terminated(self._run_id, "FINISHED")
            except BaseException:
                self._discard(self._run_id)
                raise

    def write_fingerprint(self, fingerprint: str) -> None:
        if self._run_id is None:
            raise RuntimeError("write_fingerprint() called before write()")
        with bounded_http(), backend_errors("finishing the summary", self._uri):
            self._client.set_tag(self._run_id, FINGERPRINT_TAG, fingerprint)
            self._delete_superseded()

    def location(self) -> str:
        """The summary run (once written or found), else where it goes; a UI link for a tracking server."""
        if self._uri.startswith(("http://", "https://")):
            base = f"{redact(self._uri).rstrip('/')}/#/experiments/{self._experiment_id}"
            return f"{base}/runs/{self._run_id}" if self._run_id else base
        run = f"run {self._run_id}" if self._run_id else f"the '{RUN_NAME}' run (boontrack.key={self._key})"
        return f"MLflow {run} in experiment {self._experiment_id} at {redact(self._uri)}"

    @property
    def run_id(self) -> str | None:
        """The summary run written or found by this sink."""
        return self._run_id

    # -- helpers -------------------------------------------------------------------------------------------
    def _summary_runs(self) -> list[Any]:
        from mlflow.entities import ViewType

        found = self._client.search_runs(
            [self._experiment_id],
            filter_string=f"tags.`{SUMMARY_ROLE_TAG}` = '{SUMMARY_ROLE}' and tags.`{KEY_TAG}` = '{self._key}'",
            run_view_type=ViewType.ACTIVE_ONLY,
            max_results=1000,
        )
        return list(found)

    def _tags(self, outputs: SummaryOutputs) -> dict[str, str]:
        tags = {SUMMARY_ROLE_TAG: SUMMARY_ROLE, KEY_TAG: self._key, NOTE_TAG: outputs.description}
        if self._parent_run_id:
            tags[PARENT_TAG] = self._parent_run_id
        return tags

    def _fill(self, run: Any, outputs: SummaryOutputs) -> None:
        from mlflow.entities import Metric

        # The run's own start time stamps every point: a retried request repeats identical points, which the
        # SQL stores de-duplicate.
        stamp = run.info.start_time
        metrics = [Metric(key, float(value), stamp, 0) for key, value in outputs.metrics.items()]
        for curve in outputs.curves:
            n, values = thin_curve(curve)
            metrics.extend(Metric(curve.key, float(v), stamp, int(k)) for k, v in zip(n, values))
        if metrics:
            self._client.log_batch(self._run_id, metrics=metrics)
        if outputs.artifacts:
            with tempfile.TemporaryDirectory(prefix="boontrack-") as tmp:
                write_artifacts(Path(tmp), outputs.artifacts)
                self._client.log_artifacts(self._run_id, tmp)

    def _delete_superseded(self) -> None:
        """Keep the newest complete summary of this key; delete older complete ones and abandoned partial ones.

        Two writers racing on the same key both end here; both keep the same newest run, so exactly one
        complete summary stays live. A partial run of a writer still at work is left alone.
        """
        runs = self._summary_runs()
        complete = [r for r in runs if FINGERPRINT_TAG in r.data.tags]
        if not complete:
            return
        keep = max(complete, key=_age_key)
        horizon = keep.info.start_time - ABANDONED_AFTER_MS
        for run in runs:
            if run.info.run_id == keep.info.run_id:
                continue
            if FINGERPRINT_TAG in run.data.tags or run.info.start_time < horizon:
                self._discard(run.info.run_id)

    def _discard(self, run_id: str) -> None:
        """Soft-delete one of boontrack's own summary runs; one already gone is fine."""
        from mlflow.exceptions import MlflowException

        try:
            self._client.delete_run(run_id)
        except MlflowException:
            pass  # already deleted by a concurrent writer, or the store is failing: the next write retries


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
