"""``boontrack.wandb``: the W&B integration (``boontrack_wandb``) under a short name, loaded on first use.

    import boontrack.wandb
    boontrack.wandb.summarize_sweep("ENTITY/PROJECT", sweep="SWEEP_ID", val="val_acc", test="test_acc")

Importing this module imports neither the integration nor wandb (``pip install ".[wandb]"``).
"""

from __future__ import annotations

from boontrack._lazy import lazy_exports

__all__ = ["summarize_sweep"]

__getattr__, __dir__ = lazy_exports(globals(), {"summarize_sweep": "boontrack_wandb._callback"})
