"""What to compute: the :class:`Spec`, the values its options take, and its one validation.

This module imports nothing heavy, so the command line builds its option choices from it at start-up.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from typing import Any, Literal

from boontrack.exceptions import InputError

__all__ = [
    "CI_METHODS",
    "COMPARE_MODES",
    "DEFAULT_CI_METHOD",
    "CORRECTIONS",
    "DEFAULT_BUDGETS",
    "ESTIMATORS",
    "PICKS",
    "Spec",
]

ESTIMATORS = ("V", "U", "W")
COMPARE_MODES = ("baseline", "all-pairs")
CORRECTIONS = ("holm", "bh")
CI_METHODS = ("studentized-u", "studentized", "percentile", "bca", "smoothed")
#: The interval method of every summary and function unless another is asked for.
DEFAULT_CI_METHOD = CI_METHODS[0]
PICKS = ("last", "best_val_step")
#: The budgets reported when none are asked for, each where a group has enough runs for it.
DEFAULT_BUDGETS = (1, 5, 10)


@dataclass(frozen=True)
class Spec:
    """What to compute, and from which columns. Everything that changes a result is in here.

    The column names (``val``, ``test``, ``group_by``, ``seed_column``) are resolved against the run frame as:
    the exact column name, else ``metrics.<name>`` for ``val``/``test`` and ``params.<name>`` (then
    ``tags.<name>``) for ``group_by``/``seed_column``.

    Budgets: ``n`` given, every group must have enough runs for every budget (else :class:`InputError`).
    ``n=None`` (the default) reports :data:`DEFAULT_BUDGETS` per group, each where the group has enough runs,
    and says in the group's warnings which were left out (see :meth:`budgets_for`).
    """

    val: str
    test: str | None = None
    #: Budgets of Boo_n; None: :data:`DEFAULT_BUDGETS`, each where a group has enough runs for it.
    n: tuple[int, ...] | None = None
    estimator: Literal["V", "U", "W"] = "V"
    maximize: bool = True
    #: None: group by every ``params.*`` column except the seed when a seed column is known, else one group.
    group_by: tuple[str, ...] | None = None
    seed_column: str | None = None
    baseline: str | None = None
    #: ``"baseline"`` compares every group with ``baseline`` (default: the first group); ``"all-pairs"`` all pairs.
    compare: Literal["baseline", "all-pairs"] = "baseline"
    correction: Literal["holm", "bh"] = "holm"
    confidence_level: float = 0.95
    n_resamples: int = 9999
    #: ``"studentized-u"`` (symmetric bootstrap-t around the unbiased U): the method chosen by its measured
    #: coverage (:mod:`boontrack.resampling`); ``"studentized"`` is the same around the estimate (the default of
    #: 0.2.0).
    ci_method: Literal["studentized-u", "studentized", "percentile", "bca", "smoothed"] = DEFAULT_CI_METHOD
    #: Seed of the bootstrap; fixed by default so that the same inputs give the same numbers (idempotent writes).
    seed: int = 0
    #: Which metric values a tracker source returns (see :class:`boontrack.backends.MetricRequest`).
    pick: Literal["last", "best_val_step"] = "last"
    #: Column of training seconds per run (resolved like ``val``); None: the run frame's ``duration_s`` if any.
    duration: str | None = None
    #: The bounds of the scores, ``(low, high)`` with None for an open side, which every interval respects (it is
    #: computed on a scale where they lie at infinity); None: [0, 1] for a group whose test scores all lie in it,
    #: else none. ``(None, None)`` declares the scores unbounded.
    bounds: tuple[float | None, float | None] | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready dict (tuples as lists), used in ``summary.json`` and in the fingerprint."""
        return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()}

    @property
    def budgets(self) -> tuple[int, ...]:
        """The budgets asked for: ``n``, else :data:`DEFAULT_BUDGETS`."""
        return DEFAULT_BUDGETS if self.n is None else self.n

    def largest_supported(self, runs: int) -> int:
        """The largest budget a group of ``runs`` runs supports: ``runs``, or ``runs - 1`` for U with BCa.

        Boo_n beyond the number of runs would be an extrapolation (V, W) or is undefined (U); BCa's jackknife
        evaluates the estimator on ``runs - 1`` runs, which U cannot extrapolate to n either.
        """
        return runs - 1 if self.estimator == "U" and self.ci_method == "bca" else runs

    def budgets_for(self, runs: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """(reported, left out) budgets for a group of ``runs`` runs.

        With ``n`` given every budget is reported (the analysis refuses groups too small for them); with
        ``n=None`` the default budgets beyond :meth:`largest_supported` are left out.
        """
        if self.n is not None:
            return self.n, ()
        largest = self.largest_supported(runs)
        return (
            tuple(k for k in DEFAULT_BUDGETS if k <= largest),
            tuple(k for k in DEFAULT_BUDGETS if k > largest),
        )

    @property
    def metric(self) -> str:
        """The name of the reported metric: the test metric, else the validation metric (no ``metrics.``)."""
        name = self.test if self.test is not None else self.val
        return name.removeprefix("metrics.")

    def check(self, names: Mapping[str, str] | None = None) -> Spec:
        """This spec if every field is valid, else :class:`InputError` naming the first invalid one.

        ``names`` says what to call a field in the message (the command line says ``resamples`` where the
        spec says ``n_resamples``); by default a field is called by its own name.
        """
        for f in fields(self):
            problem = _PROBLEMS[f.name](getattr(self, f.name))
            if problem:
                name = (names or {}).get(f.name, f.name)
                raise InputError(f"{name} {problem}, got {getattr(self, f.name)!r}")
        return self


def _is_int(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _text(value: Any) -> str | None:
    return None if isinstance(value, str) and value else "must be a non-empty name"


def _optional_text(value: Any) -> str | None:
    return None if value is None else _text(value)


def _choice(choices: tuple[Any, ...]):
    def problem(value: Any) -> str | None:
        return None if value in choices else f"must be one of {', '.join(map(str, choices))}"

    return problem


def _budgets(value: Any) -> str | None:
    if value is None:
        return None
    if not (isinstance(value, tuple) and value and all(_is_int(k) and k >= 1 for k in value)):
        return "must be a list of integers >= 1"
    return "repeats a budget" if len(set(value)) < len(value) else None


def _bounds(value: Any) -> str | None:
    if value is None:
        return None
    ends = list(value) if isinstance(value, (tuple, list)) else []
    numbers_or_none = all(end is None or (isinstance(end, numbers.Real) and not isinstance(end, bool)) for end in ends)
    if len(ends) != 2 or not numbers_or_none or any(end != end for end in ends if end is not None):
        return "must be a pair (low, high) of numbers, None for an open side"
    low, high = (-math.inf if ends[0] is None else ends[0]), (math.inf if ends[1] is None else ends[1])
    return None if low < high else "must have low < high"


def _group_by(value: Any) -> str | None:
    if value is None or (isinstance(value, tuple) and value and all(isinstance(k, str) and k for k in value)):
        return None
    return "must be a list of column names"


#: What is wrong with a field's value (None: nothing), by field.
_PROBLEMS = {
    "val": _text,
    "test": _optional_text,
    "n": _budgets,
    "estimator": _choice(ESTIMATORS),
    "maximize": lambda v: None if isinstance(v, bool) else "must be true or false",
    "group_by": _group_by,
    "seed_column": _optional_text,
    "baseline": _optional_text,
    "compare": _choice(COMPARE_MODES),
    "correction": _choice(CORRECTIONS),
    "confidence_level": lambda v: (
        None
        if isinstance(v, numbers.Real) and not isinstance(v, bool) and 0 < v < 1
        else "must be a number between 0 and 1"
    ),
    "n_resamples": lambda v: None if _is_int(v) and v >= 1 else "must be an integer >= 1",
    "ci_method": _choice(CI_METHODS),
    "seed": lambda v: None if _is_int(v) and v >= 0 else "must be an integer >= 0",
    "pick": _choice(PICKS),
    "duration": _optional_text,
    "bounds": _bounds,
}


#: Spellings of ``pick`` accepted by the command line and the config file -> Spec spelling.
PICK_SPELLINGS = {"last": "last", "best-val-step": "best_val_step", "best_val_step": "best_val_step"}


def make_spec(
    *,
    val: str,
    test: str | None = None,
    n: Sequence[int] | None = None,
    estimator: str = "V",
    minimize: bool = False,
    group_by: Sequence[str] | None = None,
    seed_column: str | None = None,
    duration: str | None = None,
    baseline: str | None = None,
    compare: str = "baseline",
    correction: str = "holm",
    confidence: float = 0.95,
    resamples: int = 9999,
    ci_method: str = DEFAULT_CI_METHOD,
    seed: int = 0,
    pick: str = "last",
    bounds: Sequence[float | None] | None = None,
) -> Spec:
    """A :class:`~boontrack.spec.Spec` from the option names of the command line and the config file.

    The keywords are the ``boontrack summarize`` options (dashes as underscores) and the keys of a
    ``[[jobs]]`` table. :meth:`Spec.check <boontrack.spec.Spec.check>` validates every value, and a bad one
    raises :class:`InputError` naming the option as the user wrote it. ``n=None`` (not given): the default
    budgets, each where a group has enough runs (see :meth:`Spec.budgets_for`).
    """
    spec = Spec(
        val=val,
        test=test,
        n=tuple(n) if isinstance(n, list) else n,
        estimator=estimator,
        # a non-boolean stays as it is, so that the check reports it (``not "yes"`` would be a silent False)
        maximize=not minimize if isinstance(minimize, bool) else minimize,
        group_by=tuple(group_by) if isinstance(group_by, list) else group_by,
        seed_column=seed_column,
        duration=duration,
        baseline=baseline,
        compare=compare,
        correction=correction,
        confidence_level=confidence,
        n_resamples=resamples,
        ci_method=ci_method,
        seed=seed,
        pick=PICK_SPELLINGS.get(pick, pick),
        bounds=_open_sides(bounds),
    )
    return spec.check(names=OPTION_NAMES)


def _open_sides(bounds: Any) -> Any:
    """Bounds as a tuple, an infinite side (``inf`` on the command line) as None; anything else as it is, for the
    check to report."""
    if not isinstance(bounds, (list, tuple)):
        return bounds
    return tuple(None if isinstance(end, float) and math.isinf(end) else end for end in bounds)


#: Spec fields whose command-line and config name differs (spec field -> option name).
OPTION_NAMES = {
    "maximize": "minimize",
    "confidence_level": "confidence",
    "n_resamples": "resamples",
}
