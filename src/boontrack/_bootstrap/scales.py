"""The scale a studentized interval is computed on: one where the metric's bounds lie at infinity.

A score bounded to [low, high] (an accuracy in [0, 1]) has a Boo_n in the same range, but ``est +- q se`` may
leave it near a bound. Computed on the logit scale ``log(x - low) - log(high - x)`` and mapped back, every end
lies inside (the transformation of Efron & Tibshirani 1993, §12.6, applied to the studentized statistic);
with one bound only the scale is ``log(x - low)`` or ``-log(high - x)``, with none the identity. Cutting an
interval at a bound would keep the ends inside too, but not its coverage: the cut side would lose what the
transformed interval keeps by leaning away from the bound.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from boontrack._special import expit
from boontrack._validation import UNBOUNDED_RANGE, score_range

__all__ = ["UNBOUNDED_RANGE", "Scale", "difference_scale", "score_range"]


@dataclass(frozen=True)
class Scale:
    """A monotone map of [low, high] onto the real line (both bounds may be infinite), with its slope."""

    low: float = -math.inf
    high: float = math.inf

    @property
    def bounded(self) -> bool:
        return math.isfinite(self.low) or math.isfinite(self.high)

    def forward(self, x: np.ndarray) -> np.ndarray:
        """The transformed values; a value on a finite bound maps to -inf or +inf."""
        x = np.asarray(x, dtype=np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            if math.isfinite(self.low) and math.isfinite(self.high):
                return np.log(x - self.low) - np.log(self.high - x)
            if math.isfinite(self.low):
                return np.log(x - self.low)
            if math.isfinite(self.high):
                return -np.log(self.high - x)
        return x

    def inverse(self, y: np.ndarray) -> np.ndarray:
        """Back to the metric's scale; -inf and +inf map to the bounds."""
        y = np.asarray(y, dtype=np.float64)
        with np.errstate(over="ignore"):
            if math.isfinite(self.low) and math.isfinite(self.high):
                return self.low + (self.high - self.low) * expit(y)
            if math.isfinite(self.low):
                return self.low + np.exp(y)
            if math.isfinite(self.high):
                return self.high - np.exp(-y)
        return y

    def slope(self, x: np.ndarray) -> np.ndarray:
        """d forward / dx: a standard error times it is the standard error on the transformed scale."""
        x = np.asarray(x, dtype=np.float64)
        with np.errstate(divide="ignore", over="ignore"):  # infinite on (or a subnormal step from) a bound
            slope = np.ones_like(x)
            if math.isfinite(self.low):
                slope = 1.0 / (x - self.low)
                if math.isfinite(self.high):
                    slope = slope + 1.0 / (self.high - x)
            elif math.isfinite(self.high):
                slope = 1.0 / (self.high - x)
        return slope

    def interior(self, x: np.ndarray) -> np.ndarray:
        """Where ``x`` lies strictly inside the bounds and the transformed scale is finite there: a subnormal distance
        from a bound (5e-324 above 0) overflows the slope, and such a point is treated as on the bound."""
        x = np.asarray(x, dtype=np.float64)
        return (x > self.low) & (x < self.high) & np.isfinite(self.slope(x))


def difference_scale(bounds_a: tuple[float, float], bounds_b: tuple[float, float]) -> Scale:
    """The scale of A - B for scores of A and B in their bounds: A - B lies in [low_a - high_b, high_a - low_b]."""
    return Scale(bounds_a[0] - bounds_b[1], bounds_a[1] - bounds_b[0])
