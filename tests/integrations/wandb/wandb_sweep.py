"""The shape of the small sweep the W&B tests log with the real library (see ``conftest.offline_runs``)."""

ENTITY, PROJECT, SWEEP = "team", "proj", "sweep01"
MODELS = {"cnn": 0.70, "mlp": 0.60}  # base validation accuracy of each approach
SEEDS = range(5)
EPOCHS = 4
BIG_TEXT = "x" * 70_000  # longer than two 32 KiB blocks: the config record is split into FIRST/MIDDLE/LAST chunks
