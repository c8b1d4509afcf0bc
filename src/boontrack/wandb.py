"""``boontrack.wandb.summarize_sweep``: the W&B post-sweep callback, loaded on first use.

Importing :mod:`boontrack` does not import this module, and this module does not import ``wandb`` until the
callback runs.
"""

from __future__ import annotations

from typing import Any

__all__ = ["summarize_sweep"]


def __getattr__(name: str) -> Any:
    if name == "summarize_sweep":
        from boontrack.integrations.wandb._callback import summarize_sweep

        return summarize_sweep
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
