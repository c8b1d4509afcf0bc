"""Optional dependencies (the extras ``mlflow``, ``wandb``, ``plots``, ``parquet``), imported on first use."""

from __future__ import annotations

import importlib
from types import ModuleType

from boontrack.exceptions import MissingExtraError


def import_optional(module: str, *, extra: str, needed_for: str) -> ModuleType:
    """``module``, imported; or :class:`MissingExtraError` naming the extra that installs it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        package = module.partition(".")[0]
        # No package is published yet: the extra is installed from a checkout (docs/install.md).
        raise MissingExtraError(
            f'{needed_for} needs {package}: pip install ".[{extra}]" in a boontrack checkout'
        ) from None
