"""``boontrack.mlflow``: the MLflow integration (``boontrack_mlflow``) under a short name, loaded on first use.

    import boontrack.mlflow
    boontrack.mlflow.summarize_sweep(parent_run_id, val="val_acc", test="test_acc", n=(1, 5, 10))

Importing this module imports neither the integration nor mlflow (``pip install ".[mlflow]"``).
"""

from __future__ import annotations

from boontrack._lazy import lazy_exports

__all__ = ["SweepHandle", "summarize_sweep", "sweep"]

__getattr__, __dir__ = lazy_exports(globals(), dict.fromkeys(__all__, "boontrack_mlflow.callback"))
