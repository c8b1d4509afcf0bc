"""MLflow backend: read sweeps from an MLflow tracking server or store, write summaries back.

Reading (``mlflow:EXPERIMENT``, :class:`MlflowBackend`, :class:`MlflowSource`)
    EXPERIMENT is an experiment name or id; option ``parent`` restricts the runs to the children of a sweep's
    parent run (EXPERIMENT may then be empty). The tracking URI is the ``tracking_uri`` option, else
    ``MLFLOW_TRACKING_URI`` (or :func:`mlflow.set_tracking_uri`); without one, or with a ``sqlite:`` URI whose
    file does not exist, reading is refused (InputError): a read never creates a store. A database URI
    (``sqlite:``, ``postgresql:``, ``mysql:``) is read by SQL, read-only, on the schema revisions it was checked
    on (:mod:`._sql`; option ``read_path=client`` or ``BOONTRACK_MLFLOW_READ_PATH=client`` reads through the
    client). Otherwise active runs are read in pages of 50,000 (from a server as JSON straight into the frame,
    through MLflow's own request helper; from an SQL store with ``MlflowClient.search_runs``); params, metrics
    and tags become ``params.*``, ``metrics.*``, ``tags.*``. Left out of the inputs: boontrack's own runs (any
    ``boontrack.role`` tag) and runs that have child runs (a sweep's parent). With ``pick="best_val_step"`` the
    per-epoch histories are read in bulk (one query per metric by SQL, 100 runs per request against a server,
    500 per query against an SQL store through the client).

Writing (:class:`MlflowSink`)
    One summary run per (sweep, spec), named by what it holds (``boon test_acc V n=1,5,10``): a child of the
    parent when there is one, else a run in the experiment, tagged ``boontrack.role=summary`` and
    ``boontrack.key``, with the spec as params ``boon.<field>``, the metrics at step 0 and curves with step = n,
    the report, JSON, CSV and plots as artifacts, and a description in ``mlflow.note.content``. Under it, one
    run per group (named by the group) logs ``boon/curve``, ``boon/curve/ci_low`` and ``boon/curve/ci_high``
    with step = n, so comparing these runs overlays the groups' curves and bands in one chart. Each write is
    recorded in the experiment (tag ``boontrack.write.<id>``) before it creates a run; only runs whose write
    id is recorded there are boontrack's, and only those are ever deleted. After a crash at any point, the
    next run leaves exactly one complete summary (see :mod:`._sink`); when the runs do not change and the
    summary is complete, nothing is written. The user's runs are only read.

Callback (:func:`summarize_sweep`, :func:`sweep`; also as ``boontrack.mlflow``)
    One call at the end of a sweep script; a failed write-back warns and is reported in the result.

Discovery and change token (``boontrack reaggregate``)
    A job with ``discover`` finds every sweep (a parent run with child runs, boontrack's own runs left out)
    of the experiment ``mlflow:EXPERIMENT``, or of the experiments an ``experiments`` glob on names and/or an
    MLflow experiment search ``filter`` select, from the child side (:mod:`._discover`): one paged search of the
    runs that have a parent, then the parents by id, 100 per search (one query on a database), so plain runs
    cost nothing. Each sweep is the job ``mlflow:EXPERIMENT_ID`` with option ``parent``, and comes with its
    change token: the number of its ended children and a digest of their ids, statuses and times (a child
    logged by a host whose clock lags is still a change). The summary run keeps the token (tag
    ``boontrack.change_token``) and an unchanged sweep is not read again. A child still running, or given a
    metric after it ended, is not a change the token sees until another child ends (``--force`` reads
    everything); where the token cannot be had (a server without ``IS NULL`` in its search filters), every
    sweep is read as before.

Time bounds: while boontrack talks to MLflow, ``MLFLOW_HTTP_REQUEST_MAX_RETRIES=2``,
``MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR=1`` and ``MLFLOW_HTTP_REQUEST_TIMEOUT=10`` apply unless the user set them
(the run search has a 60 s timeout), and one job's waits (its start-up from connecting to its first request,
failed attempts, back-off and the waits a server asks for with ``Retry-After``) share a budget of
``BOONTRACK_MLFLOW_MAX_WAIT`` seconds (default 60): a retry that would exceed it is not made, the error says what
the server asked for, and no attempt waits longer than what remains. A dead server is the one-line error "cannot
reach the MLflow server at URI (Connection refused; is it running?)", at once and before MLflow is imported (one
socket connection checks the server's port first). Errors name the URI with any ``user:password@`` removed.

Importing this package imports neither mlflow nor numpy or pandas: its names are loaded on first use, and
mlflow when it is first called (``pip install ".[mlflow]"``).
"""

from __future__ import annotations

from boontrack.integration import lazy_exports

_EXPORTS = {
    "MlflowSink": "boontrack_mlflow._sink",
    "experiment_sink": "boontrack_mlflow._sink",
    "MlflowBackend": "boontrack_mlflow._source",
    "MlflowSource": "boontrack_mlflow._source",
    "SweepHandle": "boontrack_mlflow.callback",
    "summarize_sweep": "boontrack_mlflow.callback",
    "sweep": "boontrack_mlflow.callback",
}
__all__ = list(_EXPORTS)

__getattr__, __dir__ = lazy_exports(globals(), _EXPORTS)
