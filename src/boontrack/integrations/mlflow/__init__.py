"""MLflow backend: read sweeps from an MLflow tracking server or store, write summaries back.

- ``mlflow:EXPERIMENT`` sources (:class:`MlflowBackend`, :class:`MlflowSource`) with options ``parent`` and
  ``tracking_uri``;
- a summary run per (sweep, spec) that is replaced, never patched, when the inputs change (:class:`MlflowSink`);
- the post-sweep callback :func:`summarize_sweep` and the context manager :func:`sweep`.

mlflow itself is imported on first use: ``pip install "boontrack[mlflow]"``.
"""

from boontrack.integrations.mlflow._sink import MlflowSink
from boontrack.integrations.mlflow._source import MlflowBackend, MlflowSource
from boontrack.integrations.mlflow.callback import SweepHandle, summarize_sweep, sweep

__all__ = ["MlflowBackend", "MlflowSink", "MlflowSource", "SweepHandle", "summarize_sweep", "sweep"]
