"""boontrack's warnings, collected per analysis in the thread (context) that raises them.

A summary keeps the warnings raised while each group is summarized (and each pair compared). Python's
``warnings.catch_warnings`` swaps the process's filters, so two groups summarized on two threads could not each
collect their own: one that ends would restore the filters under the other. Instead, boontrack raises its
warnings through :func:`warn`, which hands them to the collector of the current context (:func:`collected`) when
there is one, and to ``warnings.warn`` otherwise. A context is per thread (and copied into a task's thread by
:func:`boontrack._bootstrap.threads.evaluate_groups`), so each group collects its own warnings, in the order they
were raised, without touching the process's filters. Other warnings (numpy's, scipy's) are not collected: they
reach the caller through ``warnings.warn`` as raised.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator
from contextvars import ContextVar

from boontrack.exceptions import BoontrackWarning

#: The messages collected in this context, or None when boontrack's warnings go to ``warnings.warn``.
_COLLECTOR: ContextVar[list[str] | None] = ContextVar("boontrack_warnings", default=None)


def warn(message: str, category: type[Warning], stacklevel: int = 1) -> None:
    """``warnings.warn(message, category, stacklevel)``, unless this context collects boontrack's warnings and
    ``category`` is one of them: then the message is added to the collection (once)."""
    collector = _COLLECTOR.get()
    if collector is None or not issubclass(category, BoontrackWarning):
        warnings.warn(message, category, stacklevel=stacklevel + 1)
    elif message not in collector:
        collector.append(message)


@contextlib.contextmanager
def collected() -> Iterator[list[str]]:
    """Collect boontrack's warnings raised in this context inside the block (deduplicated, in order) into the
    yielded list, whatever the warning filters say."""
    messages: list[str] = []
    token = _COLLECTOR.set(messages)
    try:
        yield messages
    finally:
        _COLLECTOR.reset(token)
