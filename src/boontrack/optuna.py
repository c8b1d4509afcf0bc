"""``boontrack.optuna``: the Optuna integration (``boontrack_optuna``) under a short name, loaded on first use.

    import boontrack.optuna
    boon = boontrack.optuna.BoonCallback(test="test_acc", every=10, out="boon-summary")
    study.optimize(objective, n_trials=50, callbacks=[boon])
    boon.summarize(study)          # or boontrack.optuna.summarize_study(study, test="test_acc", out=...)

Importing this module imports neither the integration nor optuna (``pip install ".[optuna]"``).
"""

from __future__ import annotations

from boontrack._lazy import lazy_exports

__all__ = ["BoonCallback", "summarize_study"]

__getattr__, __dir__ = lazy_exports(globals(), dict.fromkeys(__all__, "boontrack_optuna.callback"))
