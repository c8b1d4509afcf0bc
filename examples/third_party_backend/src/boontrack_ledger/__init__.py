"""boontrack's backend for Ledger (:mod:`boontrack_ledger.ledger`): ``boontrack summarize ledger:DIRECTORY``
(:mod:`boontrack_ledger.backend`), and :func:`summarize_ledger` to call after a sweep.

Written outside boontrack against ``boontrack.integration`` alone, and registered under the entry-point group
``boontrack.backends`` by this package's ``pyproject.toml``.
"""

from boontrack_ledger.backend import LedgerBackend, LedgerSink, LedgerSource
from boontrack_ledger.callback import summarize_ledger

__all__ = ["LedgerBackend", "LedgerSink", "LedgerSource", "summarize_ledger"]
