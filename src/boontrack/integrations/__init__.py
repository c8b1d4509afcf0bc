"""Tracker backends (MLflow, Weights & Biases), found through the ``boontrack.backends`` entry points."""
