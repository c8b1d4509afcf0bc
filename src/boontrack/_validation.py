"""Input validation shared by the public functions of the estimator core.

Every public function validates its arguments in one helper (``_<name>_iv``) built from these pieces, and
raises :class:`ValueError` naming the parameter and the offending value or position. A parameter is named as the
caller writes it (:func:`boontrack.vocabulary.name`: ```n_resamples``` in Python, ``--resamples`` on the command
line).
"""

from __future__ import annotations

import decimal
import math
import numbers
from collections.abc import Iterable
from typing import Any

import numpy as np

from boontrack.vocabulary import name as _named

#: The largest magnitude a score may have. Beyond it the arithmetic of the intervals (sums over resamples,
#: squared and cubed deviations) overflows and would give inf or NaN; no metric comes near it.
MAX_MAGNITUDE = 1e100


#: Arrays (by numpy's kind) that numpy would turn into numbers although they hold none: dates and time spans
#: (their count of time units since an origin), bytes and text (parsed); refused rather than converted.
NOT_NUMBERS = {"M": "dates and times", "m": "time spans", "S": "bytes", "U": "text", "V": "raw bytes"}
#: What an array of objects may hold: real numbers (a database's Decimal among them), and None for a missing one.
REAL_OR_MISSING = (numbers.Real, decimal.Decimal, type(None))


def as_real_array(x: Any, name: str) -> np.ndarray:
    """``x`` as a float64 array; ValueError naming ``name`` when it is not numbers (dates, time spans, bytes and
    text included, which numpy would convert), or holds complex ones (converting them would drop their imaginary
    parts without a word)."""
    try:
        raw = np.asarray(x)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{_named(name)} must be a 1-D sequence of numbers: {exc}") from None
    flat = raw.ravel()
    if raw.dtype.kind == "c" or (raw.dtype == object and any(isinstance(v, complex) for v in flat)):
        imaginary = np.flatnonzero(np.asarray(flat, dtype=complex).imag != 0)
        where = f"position {imaginary[0]} is {flat[imaginary[0]]!r}" if imaginary.size else "their type is complex"
        raise ValueError(f"{_named(name)} must hold real numbers; {where}")
    if raw.dtype.kind in NOT_NUMBERS:
        raise ValueError(
            f"{_named(name)} must be a 1-D sequence of numbers, got {NOT_NUMBERS[raw.dtype.kind]} ({raw.dtype})"
        )
    if raw.dtype == object:
        other = next((i for i, v in enumerate(flat) if not isinstance(v, REAL_OR_MISSING)), None)
        if other is not None:
            raise ValueError(f"{_named(name)} must be a 1-D sequence of numbers; position {other} is {flat[other]!r}")
    try:
        return np.asarray(raw, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{_named(name)} must be a 1-D sequence of numbers: {exc}") from None


def as_scores(x: Any, name: str) -> np.ndarray:
    """A 1-D float64 array of finite real scores within ±:data:`MAX_MAGNITUDE`, or ValueError naming ``name``
    and the first bad position."""
    arr = as_real_array(x, name)
    if arr.ndim != 1:
        raise ValueError(f"{_named(name)} must be 1-D, got an array of shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{_named(name)} is empty: at least one run is needed")
    bad = np.flatnonzero(~np.isfinite(arr))
    if bad.size:
        raise ValueError(
            f"{_named(name)} must be finite; position {bad[0]} is {float(arr[bad[0]])!r}"
            + (f" ({bad.size} non-finite values in all)" if bad.size > 1 else "")
        )
    huge = np.flatnonzero(np.abs(arr) > MAX_MAGNITUDE)
    if huge.size:
        raise ValueError(
            f"{_named(name)} must lie within ±{MAX_MAGNITUDE:g} (the intervals' arithmetic overflows beyond); "
            f"position {huge[0]} is {float(arr[huge[0]])!r}; rescale the scores"
        )
    return arr


def as_val_test(val: Any, test: Any) -> tuple[np.ndarray, np.ndarray]:
    """Validated (val, test) arrays of equal length; ``test=None`` means test = val."""
    v = as_scores(val, "val")
    if test is None:
        return v, v
    t = as_scores(test, "test")
    if t.shape != v.shape:
        raise ValueError(f"{_named('val')} and {_named('test')} must have the same length, got {v.size} and {t.size}")
    return v, t


_INT64_MAX = int(np.iinfo(np.int64).max)


def as_budget(n: Any, name: str = "n") -> int:
    """One budget: an integer >= 1 (bools are refused, integral floats like 5.0 accepted)."""
    if isinstance(n, bool) or not isinstance(n, (numbers.Integral, float, np.floating)):
        raise ValueError(f"{_named(name)} must be an integer >= 1, got {n!r}")
    if isinstance(n, (float, np.floating)):
        if not float(n).is_integer():
            raise ValueError(f"{_named(name)} must be an integer >= 1, got {n!r}")
    if int(n) < 1:
        raise ValueError(f"{_named(name)} must be an integer >= 1, got {n!r}")
    if int(n) > _INT64_MAX:
        raise ValueError(f"{_named(name)} must be at most 2**63 - 1, got {n!r}")
    return int(n)


def as_budgets(n: Any, name: str = "n") -> tuple[np.ndarray, bool]:
    """Budgets as an int64 array and whether the input was a scalar."""
    if np.ndim(n) == 0:
        return np.array([as_budget(n, name)], dtype=np.int64), True
    items = np.asarray(n) if isinstance(n, np.ndarray) else np.asarray(list(n), dtype=object)
    if items.size == 0:
        raise ValueError(f"{_named(name)} is empty: give at least one budget")
    if items.dtype.kind in "iu":  # whole curves: checked at once, not budget by budget
        bad = np.flatnonzero((items < 1) | (items > _INT64_MAX))
        if bad.size:
            as_budget(items[bad[0]].item(), f"{name}[{bad[0]}]")
        return items.astype(np.int64), False
    return np.array([as_budget(k, f"{name}[{i}]") for i, k in enumerate(items)], dtype=np.int64), False


def as_count(value: Any, name: str) -> int:
    """A count such as a number of resamples: an int (not a float, not a bool) >= 1."""
    if isinstance(value, bool) or not isinstance(value, (numbers.Integral, np.integer)) or value < 1:
        raise ValueError(f"{_named(name)} must be an integer >= 1, got {value!r}")
    return int(value)


def as_resamples(value: Any, name: str = "n_resamples") -> int | str:
    """A number of resamples (:func:`as_count`), or ``"auto"``: as many as the intervals' precision needs
    (:mod:`boontrack._bootstrap.precision`)."""
    if isinstance(value, str) and value == "auto":
        return value
    if isinstance(value, bool) or not isinstance(value, (numbers.Integral, np.integer)) or value < 1:
        raise ValueError(f"{_named(name)} must be an integer >= 1 or 'auto', got {value!r}")
    return int(value)


def as_flag(value: Any, name: str) -> bool:
    """A real boolean (not a truthy string or number), as a Python bool."""
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{_named(name)} must be True or False, got {value!r}")
    return bool(value)


def as_choice(value: Any, name: str, choices: Iterable[str]) -> str:
    """``value`` if it is one of ``choices``, else ValueError listing them."""
    choices = tuple(choices)
    if value not in choices:
        raise ValueError(f"{_named(name)} must be one of {', '.join(map(repr, choices))}; got {value!r}")
    return value


def as_probability(x: Any, name: str) -> float:
    """A number strictly between 0 and 1."""
    try:
        p = float(x)
    except (TypeError, ValueError):
        raise ValueError(f"{_named(name)} must be a number in (0, 1), got {x!r}") from None
    if not 0.0 < p < 1.0:
        raise ValueError(f"{_named(name)} must be in (0, 1), got {x!r}")
    return p


def as_rng(rng: Any) -> np.random.Generator:
    """A Generator from ``None``, an int seed or a Generator; never the global RNG."""
    if rng is None or isinstance(rng, np.random.SeedSequence):
        return np.random.default_rng(rng)
    if isinstance(rng, numbers.Integral) and not isinstance(rng, bool):
        return np.random.default_rng(int(rng))
    if isinstance(rng, np.random.Generator):
        return rng
    raise ValueError(f"{_named('rng')} must be None, an int seed or a numpy.random.Generator, got {type(rng).__name__}")


#: No bounds: the identity scale (:mod:`boontrack._bootstrap.scales`).
UNBOUNDED_RANGE = (-math.inf, math.inf)


def score_range(test: np.ndarray, bounds: tuple[float, float] | None) -> tuple[float, float]:
    """The bounds of a score: ``bounds`` when declared, else [0, 1] when every test score lies in it (an
    accuracy, a rate), else none (``(-inf, inf)``)."""
    if bounds is not None:
        return float(bounds[0]), float(bounds[1])
    if test.size and test.min() >= 0.0 and test.max() <= 1.0:
        return 0.0, 1.0
    return UNBOUNDED_RANGE


def as_bounds(bounds: Any, scores: np.ndarray, name: str = "bounds") -> tuple[float, float]:
    """The bounds of ``scores`` as two floats ``low < high``, infinite where there is none.

    ``bounds`` is a pair (low, high) that holds every score, None (or an infinity) for an open side; or None for
    [0, 1] when every score lies in it, and no bounds otherwise.
    """
    if bounds is None:
        return score_range(scores, None)
    try:
        low, high = bounds
    except (TypeError, ValueError):
        raise ValueError(f"{_named(name)} must be a pair (low, high), got {bounds!r}") from None
    ends = []
    for end, open_side in ((low, -math.inf), (high, math.inf)):
        if end is None:
            end = open_side
        if isinstance(end, bool) or not isinstance(end, (numbers.Real, np.floating)) or math.isnan(end):
            raise ValueError(f"{_named(name)} must be a pair of numbers or None (low, high), got {bounds!r}")
        ends.append(float(end))
    low, high = ends
    if not low < high:
        raise ValueError(f"{_named(name)} must have low < high, got {bounds!r}")
    outside = np.flatnonzero((scores < low) | (scores > high))
    if outside.size:
        raise ValueError(
            f"{_named(name)} ({low:g}, {high:g}) do not hold score {float(scores[outside[0]])!r} at position "
            f"{outside[0]}" + (f" ({outside.size} scores outside in all)" if outside.size > 1 else "")
        )
    return low, high
