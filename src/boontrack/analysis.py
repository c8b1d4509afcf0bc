"""From a RunTable to a Summary: per-group estimates, intervals, curves, diagnostics and comparisons.

OWNERSHIP NOTE (remove when implemented): :class:`Spec` is the agreed contract; ``analyze`` and ``Summary``
are being written.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

__all__ = ["Spec"]


@dataclass(frozen=True)
class Spec:
    """What to compute, and from which columns. Everything that changes a result is in here.

    The column names (``val``, ``test``, ``group_by``, ``seed``) are resolved against the run frame as:
    the exact column name, else ``metrics.<name>`` for ``val``/``test`` and ``params.<name>`` (then
    ``tags.<name>``) for ``group_by``/``seed``.
    """

    val: str
    test: str | None = None
    n: tuple[int, ...] = (1, 5, 10)
    estimator: Literal["V", "U", "W"] = "V"
    maximize: bool = True
    #: None: group by every ``params.*`` column except the seed when a seed column is known, else one group.
    group_by: tuple[str, ...] | None = None
    seed: str | None = None
    baseline: str | None = None
    #: ``"baseline"`` compares every group with ``baseline`` (default: the first group); ``"all-pairs"`` all pairs.
    compare: Literal["baseline", "all-pairs"] = "baseline"
    correction: Literal["holm", "bh"] = "holm"
    confidence_level: float = 0.95
    n_resamples: int = 9999
    ci_method: Literal["percentile", "bca", "smoothed"] = "percentile"
    #: Seed of the bootstrap; fixed by default so that the same inputs give the same numbers (idempotent writes).
    rng_seed: int = 0
    #: Which metric values a tracker source returns (see :class:`boontrack.backends.MetricRequest`).
    pick: Literal["last", "best_val_step"] = "last"

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready dict (tuples as lists), used in ``summary.json`` and in the fingerprint."""
        return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()}
