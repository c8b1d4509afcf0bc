"""MLflow backend: read sweeps from an MLflow tracking server or store, write summaries back.

Reading (``mlflow:EXPERIMENT``, :class:`MlflowBackend`, :class:`MlflowSource`)
    EXPERIMENT is an experiment name or id; option ``parent`` restricts the runs to the children of a sweep's
    parent run (EXPERIMENT may then be empty). The tracking URI is the ``tracking_uri`` option, else
    ``MLFLOW_TRACKING_URI``, else MLflow's own default (``sqlite:///mlflow.db`` in the working directory).
    Active runs are read in pages of 50,000 (from a server as JSON straight into the frame, through MLflow's
    own request helper; from an SQL store with ``MlflowClient.search_runs``); params, metrics and tags become
    ``params.*``, ``metrics.*``, ``tags.*``. With ``pick="best_val_step"`` the per-epoch histories are read in
    bulk (100 runs per request against a server, 500 per query against an SQL store).

Writing (:class:`MlflowSink`)
    One summary run per (sweep, spec), named ``boontrack summary``: a child of the parent when there is one,
    else a run in the experiment, tagged ``boontrack.role=summary`` (never read back as input) and
    ``boontrack.key``. Metrics at step 0 and curves with step = n in one ``log_batch``, the report, JSON, CSV
    and plots as artifacts, a description in ``mlflow.note.content``, and ``boontrack.fingerprint`` last. When
    the runs change, a new summary run is written and the superseded one is deleted (soft) once the new one is
    complete; when they do not, nothing is written. The user's runs are only read.

Callback (:func:`summarize_sweep`, :func:`sweep`; also as ``boontrack.mlflow``)
    One call at the end of a sweep script; a failed write-back warns and is reported in the result.

Latency: while boontrack talks to MLflow, ``MLFLOW_HTTP_REQUEST_MAX_RETRIES=2``,
``MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR=1`` and ``MLFLOW_HTTP_REQUEST_TIMEOUT=10`` apply unless the user set them,
so a dead server is an error within seconds instead of four minutes. Errors name the action and the URI with
any ``user:password@`` removed.

mlflow itself is imported on first use: ``pip install "boontrack[mlflow]"``.
"""

from boontrack.integrations.mlflow._sink import MlflowSink
from boontrack.integrations.mlflow._source import MlflowBackend, MlflowSource
from boontrack.integrations.mlflow.callback import SweepHandle, summarize_sweep, sweep

__all__ = ["MlflowBackend", "MlflowSink", "MlflowSource", "SweepHandle", "summarize_sweep", "sweep"]
