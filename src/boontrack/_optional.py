"""Optional dependencies (the extras ``mlflow``, ``wandb``, ``plots``, ``parquet``, ... of boontrack, or of a
third-party backend's own distribution), imported on first use."""

from __future__ import annotations

import importlib
from types import ModuleType

from boontrack.exceptions import MissingExtraError


def import_optional(module: str, *, extra: str, needed_for: str, distribution: str | None = None) -> ModuleType:
    """``module``, imported; or :class:`MissingExtraError` saying what to install.

    Parameters
    ----------
    module
        The module to import, e.g. ``"mlflow"`` or ``"matplotlib.figure"``.
    extra
        The extra that installs it.
    needed_for
        What needs it, as the message's subject: ``"drawing plots"``, ``"the Ledger backend"``.
    distribution
        The distribution whose extra ``extra`` is: a third-party backend names its own, and the message then
        reads ``pip install "boontrack-ledger[ledger]"``. None (boontrack's built-in integrations): one of
        boontrack's extras, installed from a checkout (no package is published yet: see the Install page).
    """
    try:
        return importlib.import_module(module)
    except ImportError:
        package = module.partition(".")[0]
        where = (
            f'pip install "{distribution}[{extra}]"'
            if distribution
            else f'pip install ".[{extra}]" in a boontrack checkout'
        )
        raise MissingExtraError(f"{needed_for} needs {package}: {where}") from None
