"""``boontrack.mlflow``: the MLflow post-sweep callback under a short name.

    import boontrack.mlflow
    boontrack.mlflow.summarize_sweep(parent_run_id, val="val_acc", test="test_acc", n=(1, 5, 10))

mlflow itself is imported on first use (``pip install "boontrack[mlflow]"``).
"""

from boontrack.integrations.mlflow.callback import SweepHandle, summarize_sweep, sweep

__all__ = ["SweepHandle", "summarize_sweep", "sweep"]
