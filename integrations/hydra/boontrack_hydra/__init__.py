"""Hydra integration: summarize a ``--multirun`` sweep with a callback.

Callback (:class:`BoonCallback`; also as ``boontrack.hydra.BoonCallback``)
    Configured under ``hydra.callbacks`` (``_target_: boontrack.hydra.BoonCallback``). Each job's return value
    (a number, or a mapping of metrics) is recorded in the sweep directory by ``on_job_end``, in the process
    that ran the job; ``on_multirun_end`` reads the records, groups the jobs by the overridden keys that vary
    (the seed excepted), and writes the summary to ``<sweep dir>/boontrack/`` and prints its table.

Source (``hydra:SWEEP_DIR``, :class:`HydraBackend`, :class:`HydraSweepSource`)
    The recorded jobs of one sweep as the run frame of :mod:`boontrack.backends` (see :mod:`._records`), for
    ``boontrack summarize`` to read again with other options.

Importing this package imports neither Hydra nor numpy or pandas: its names are loaded on first use, and Hydra
with :class:`BoonCallback` (``pip install ".[hydra]"``).
"""

from __future__ import annotations

from boontrack.integration import lazy_exports

_EXPORTS = {
    "BoonCallback": "boontrack_hydra.callback",
    "HydraBackend": "boontrack_hydra._records",
    "HydraSweepSource": "boontrack_hydra._records",
}
__all__ = list(_EXPORTS)

__getattr__, __dir__ = lazy_exports(globals(), _EXPORTS)
