"""Warnings and errors raised by boontrack.

Errors are split by who can fix them: :class:`InputError` is the user's data, column mapping or configuration
(the CLI exits with status 2), :class:`BackendError` is a tracking backend that failed or could not be reached
(status 1). Core statistical functions raise plain :class:`ValueError` naming the parameter, like scipy.stats;
:class:`InputError` is a :class:`ValueError` too, so callers can catch either.
"""

from __future__ import annotations

__all__ = [
    "AccuracyWarning",
    "BackendError",
    "BoontrackWarning",
    "ConstantScoresWarning",
    "ExtrapolationWarning",
    "FewRunsWarning",
    "InputError",
    "MissingExtraError",
    "WriteBackWarning",
]


class BoontrackWarning(UserWarning):
    """Base class of every warning boontrack emits."""


class AccuracyWarning(BoontrackWarning):
    """A numerical result could not be computed to its target accuracy; the value returned is the best estimate."""


class ExtrapolationWarning(BoontrackWarning):
    """A budget n larger than the number of runs m: V and W extrapolate beyond the data."""


class FewRunsWarning(BoontrackWarning):
    """Intervals under-cover or are very wide here: few runs, or a budget above m / 2."""


class ConstantScoresWarning(BoontrackWarning):
    """All scores are equal: intervals collapse to a point and rank statistics are undefined."""


class WriteBackWarning(BoontrackWarning):
    """Writing results back to a tracker failed; the user's sweep is not interrupted."""


class InputError(ValueError):
    """Bad input from the user: data, column mapping, selection or configuration."""


class MissingExtraError(InputError, ImportError):
    """An optional dependency is not installed; the message names what installs it: one of boontrack's extras
    (``pip install ".[plots]"`` in a checkout) or a third-party backend's (``pip install "boontrack-ledger[ledger]"``;
    :func:`~boontrack.integration.import_optional`)."""


class BackendError(RuntimeError):
    """A tracking backend failed: unreachable, unauthorized, or answered with an error."""
