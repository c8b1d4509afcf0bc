"""Optuna integration: read a study's trials as runs, and summarize a study while and after it is optimized.

Reading (``optuna:STORAGE_URL``, :class:`OptunaBackend`, :class:`OptunaSource`)
    One run per trial of the study (option ``study``; may be left out when the storage holds one) in a database
    (``optuna:sqlite:///optuna.db``) or a journal file (``optuna:PATH``), read through
    Optuna's storage API without creating anything: a sqlite file that does not exist or a database without
    Optuna's tables is refused before Optuna sees it. Params become ``params.*``; the objective value becomes
    ``metrics.value`` (``metrics.values_0``, ``values_1``, ... for several objectives, the study's metric
    names when it has them), numeric user attributes ``metrics.<name>``, other user attributes ``tags.<name>``;
    the trial state the status (pruned, failed and running trials are dropped with it as their reason). With
    ``pick="best_val_step"``, and for training curves (``curves``) of the objective, the intermediate values
    (``trial.report(value, step)``) are the objective's per-step history (step = the step reported).

Callback (:class:`BoonCallback`, :func:`summarize_study`; also as ``boontrack.optuna``)
    Summaries every k finished trials and once after ``optimize`` returns, into a directory and, when the
    study is also tracked in MLflow, as a summary run there. Nothing raises into ``optimize``.

Importing this package imports neither optuna nor numpy or pandas (``pip install ".[optuna]"``).
"""

from __future__ import annotations

from boontrack.integration import lazy_exports

_EXPORTS = {
    "OptunaBackend": "boontrack_optuna._source",
    "OptunaSource": "boontrack_optuna._source",
    "BoonCallback": "boontrack_optuna.callback",
    "summarize_study": "boontrack_optuna.callback",
}
__all__ = list(_EXPORTS)

__getattr__, __dir__ = lazy_exports(globals(), _EXPORTS)
