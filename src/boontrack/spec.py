"""What to compute: the :class:`Spec`, checked once when it is built, and the metric's direction.

This module imports nothing heavy, so the command line builds its option choices from it at start-up.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from typing import Any, Literal

from boontrack import vocabulary
from boontrack.choices import (
    CI_METHODS,
    COMPARE_MODES,
    CORRECTIONS,
    DEFAULT_BUDGETS,
    DEFAULT_CI_METHOD,
    ESTIMATORS,
    NORMALIZATIONS,
    PICK_SPELLINGS,
    PICKS,
)
from boontrack.exceptions import InputError

__all__ = [
    "BEST_SO_FAR",
    "CI_METHODS",
    "COMPARE_MODES",
    "CORRECTIONS",
    "DEFAULT_BUDGETS",
    "DEFAULT_CI_METHOD",
    "ESTIMATORS",
    "LOSS_WORDS",
    "PERCENT_BOUNDS",
    "PICKS",
    "REFERENCE_COLUMNS",
    "SCORE_WORDS",
    "SHARE_WORDS",
    "Direction",
    "Spec",
    "curve_request",
    "direction_in_name",
    "loss_word",
    "reference_scores",
    "score_word",
    "share_word",
]

#: The bounds of a share in percent (:meth:`Spec.resolve_bounds`).
PERCENT_BOUNDS = (0.0, 100.0)

#: How an entry of ``Spec.curves`` asks for a best-so-far curve: ``best-so-far:<val>`` (each run's running best
#: validation value) or ``best-so-far:<test>`` (its test value at that best step), in the summary's direction.
BEST_SO_FAR = "best-so-far:"


def curve_request(entry: str) -> tuple[Literal["value", "best-so-far"], str]:
    """What an entry of ``Spec.curves`` asks for: ``("value", metric)`` for a metric as logged, or
    ``("best-so-far", metric)`` for ``best-so-far:<metric>``.

    >>> curve_request("val_loss"), curve_request("best-so-far:val_acc")
    (('value', 'val_loss'), ('best-so-far', 'val_acc'))
    """
    if entry.startswith(BEST_SO_FAR):
        return "best-so-far", entry.removeprefix(BEST_SO_FAR)
    return "value", entry


@dataclass(frozen=True)
class Spec:
    """What to compute, and from which columns. Everything that changes a result is in here.

    The column names (``val``, ``test``, ``group_by``, ``seed_column``, ``task_column``) are resolved against the
    run frame as: the exact column name, else ``metrics.<name>`` for ``val``/``test`` and ``params.<name>`` (then
    ``tags.<name>``) for ``group_by``/``seed_column``/``task_column``.

    Budgets: ``n`` given, every group must have enough runs for every budget (else :class:`InputError`).
    ``n=None`` (the default) reports :data:`DEFAULT_BUDGETS` per group, each where the group has enough runs,
    and says in the group's warnings which were left out (see :meth:`budgets_for`).
    """

    val: str
    test: str | None = None
    #: Budgets of Boo_n; None: :data:`DEFAULT_BUDGETS`, each where a group has enough runs for it.
    n: tuple[int, ...] | None = None
    estimator: Literal["V", "U", "W"] = "V"
    #: True: higher is better; False: lower is better (losses, errors); None: not said. An unsaid direction is
    #: resolved before any work (:meth:`resolve_direction`): from the source where it knows it, else by default.
    maximize: bool | None = None
    #: None: group by every ``params.*`` column except the seed when a seed column is known, else one group.
    group_by: tuple[str, ...] | None = None
    seed_column: str | None = None
    baseline: str | None = None
    #: ``"baseline"`` compares every group with ``baseline`` (default: the first group); ``"all-pairs"`` all pairs.
    compare: Literal["baseline", "all-pairs"] = "baseline"
    correction: Literal["holm", "bh"] = "holm"
    confidence_level: float = 0.95
    #: A number of bootstrap resamples, or ``"auto"``: as many as keep each interval end's Monte Carlo error below 5 %
    #: of its reach, 999 to 9,999 (:mod:`boontrack._bootstrap.precision`).
    n_resamples: int | Literal["auto"] = "auto"
    #: ``"studentized-u-farther"`` (bootstrap-t around the unbiased U, each end as far as the farther of the
    #: symmetric and the equal-tailed interval's): the method chosen by its measured coverage and width
    #: (:mod:`boontrack.resampling`); ``"studentized-u"`` is the symmetric interval alone; ``"studentized-u-k-of-m"``
    #: takes the pivot's quantiles from resamples of fewer runs than the sweep has (wider: for scores with a long
    #: tail on the better side); ``"studentized"`` is the symmetric pivot around the estimate (the default of
    #: 0.2.0); ``"studentized-u-calibrated"`` is ``"studentized-u"`` at a level calibrated by a second-level bootstrap.
    ci_method: Literal[
        "studentized-u-farther",
        "studentized-u",
        "studentized-u-k-of-m",
        "studentized-u-calibrated",
        "studentized",
        "percentile",
        "bca",
        "smoothed",
    ] = DEFAULT_CI_METHOD
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
    #: Metrics logged per step whose training curves (each group's mean over its runs at each step, with bands)
    #: are summarized too (:mod:`boontrack.training`); empty: none (their histories cost a read per metric). An
    #: entry ``best-so-far:<val>`` averages each run's running best of ``val`` (in the summary's direction), and
    #: ``best-so-far:<test>`` its ``test`` value at that best step, as early stopping reports (:func:`curve_request`).
    curves: tuple[str, ...] = ()
    #: Column naming each run's task (a dataset of a benchmark): each task's groups are summarized on their own,
    #: and the groups compared across the tasks (:mod:`boontrack.across`); None: the runs are one task.
    task_column: str | None = None
    #: How the test scores of the tasks are put on one scale before they are aggregated across tasks: ``"none"``,
    #: ``"min-max"`` (each task's lowest to highest score over every group), or each task's reference scores
    #: ``((task, low, high), ...)`` (a mapping task -> ``(low, high)`` is accepted). Needs ``task_column``.
    normalize: Literal["none", "min-max"] | tuple[tuple[str, float, float], ...] = "none"
    #: A CSV file with columns ``task``, ``low``, ``high``: each task's reference scores, read into ``normalize``
    #: when the spec is built (this field is then None: the spec holds the scores, not where they were read).
    normalize_with: str | None = None
    #: Who set ``maximize``: ``"caller"``, the source (e.g. ``"the Optuna study 'cnn'"``) or ``"default"``; None
    #: until :meth:`resolve_direction` has run. Not an option: it says in the summary why a direction was used.
    direction_from: str | None = None
    #: Why :meth:`resolve_bounds` inferred ``bounds`` (a percentage's), said in the summary; None for bounds the
    #: caller gave, and for none. Not an option, like ``direction_from``.
    bounds_from: str | None = None

    def __post_init__(self) -> None:
        """Normalize the values callers spell in several ways, then check every field, once: a bad one is an
        :class:`InputError` naming the option as the caller typed it (see :mod:`boontrack.vocabulary`)."""
        for f in fields(self):
            given = getattr(self, f.name)
            value = _NORMALIZE.get(f.name, _as_given)(given)
            object.__setattr__(self, f.name, value)
            problem = _PROBLEMS[f.name](value)
            if problem:
                raise InputError(f"{vocabulary.name(f.name)} {problem}, got {given!r}")
        if self.direction_from is not None and self.maximize is None:
            raise InputError("direction_from is set by resolve_direction, with maximize")
        if self.bounds_from is not None and self.bounds is None:
            raise InputError("bounds_from is set by resolve_bounds, with bounds")
        self._check_best_so_far()
        self._read_reference_scores()
        if self.normalize != "none" and self.task_column is None:
            raise InputError(
                f"{vocabulary.name('normalize')} puts the scores of several tasks on one scale: give "
                f"{vocabulary.name('task_column')} too"
            )

    def _read_reference_scores(self) -> None:
        """``normalize_with``'s file read into ``normalize`` (InputError naming the file and what is wrong)."""
        if self.normalize_with is None:
            return
        if self.normalize != "none":
            raise InputError(f"give {vocabulary.name('normalize')} or {vocabulary.name('normalize_with')}, not both")
        object.__setattr__(self, "normalize", reference_scores(self.normalize_with))
        object.__setattr__(self, "normalize_with", None)

    def _check_best_so_far(self) -> None:
        """A best-so-far curve follows the summary's validation metric in the summary's direction: its entry
        names ``val`` or ``test``; any other metric has no direction the summary states."""
        followed = {name.removeprefix("metrics.") for name in (self.val, self.test) if name is not None}
        for entry in self.curves:
            kind, metric = curve_request(entry)
            if kind == "best-so-far" and metric.removeprefix("metrics.") not in followed:
                test = f" or {vocabulary.name('test')} ({self.test!r})" if self.test is not None else ""
                raise InputError(
                    f"{vocabulary.name('curves')} {entry!r}: a best-so-far curve follows the validation metric, "
                    f"in the summary's direction: name {vocabulary.name('val')} ({self.val!r}){test} after "
                    f"{BEST_SO_FAR!r}, or make {metric!r} the validation metric ({vocabulary.name('val')})"
                )

    @classmethod
    def from_keywords(
        cls,
        keywords: Mapping[str, Any],
        *,
        spoken: vocabulary.Vocabulary = vocabulary.PYTHON,
        defaults: Mapping[str, Any] | None = None,
    ) -> Spec:
        """A spec from the keywords of a callback, a config file's job or a Hydra config, as ``spoken`` writes them.

        The keywords are the fields' names; earlier spellings (``minimize``, ``resamples``, ``confidence``, ...;
        see :data:`boontrack.vocabulary.DEPRECATED`) are accepted with a :class:`DeprecationWarning`. A bad value
        or an unknown keyword is an :class:`InputError` naming it as the caller typed it. ``defaults``: the
        caller's own defaults of keywords that always arrive (a callback's signature), so that an earlier
        spelling in ``**spec_options`` is not taken for a second value.
        """
        modern, typed = vocabulary.modernize(keywords, defaults=defaults)
        with vocabulary.speaking(spoken.knowing(typed)):
            unknown = sorted(set(modern) - set(_OPTIONS))
            if unknown:
                known = ", ".join(vocabulary.name(option) for option in _OPTIONS)
                raise InputError(f"unknown option {vocabulary.name(unknown[0])} (known: {known})")
            return cls(**modern)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready dict (tuples as lists), used in ``summary.json`` and in the fingerprint. ``curves`` is
        left out when empty, ``bounds_from`` and ``task_column`` when None and ``normalize`` when ``"none"``, so
        that a spec without them keeps the summary key and fingerprint it had before they existed."""
        data = {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()}
        if not self.curves:
            del data["curves"]
        if self.bounds_from is None:
            del data["bounds_from"]
        for name, default in (("task_column", None), ("normalize", "none"), ("normalize_with", None)):
            if data[name] == default:
                del data[name]
        if isinstance(self.normalize, tuple):
            data["normalize"] = [list(row) for row in self.normalize]
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Spec:
        """The spec of :meth:`to_dict`'s data (a stored ``summary.json``), its direction as it was resolved; fields
        a summary of an earlier version did not store take their defaults."""
        known = {f.name for f in fields(cls)}
        values: dict[str, Any] = {
            key: tuple(v) if isinstance(v, list) else v for key, v in data.items() if key in known
        }
        return cls(**values)

    @property
    def higher_is_better(self) -> bool:
        """``maximize`` once decided (:meth:`resolve_direction`); ValueError before, where no work may start."""
        if self.maximize is None:
            raise ValueError("the spec's direction is not decided yet: resolve_direction() first")
        return self.maximize

    def resolve_direction(self, known: Direction | None = None) -> Spec:
        """This spec with its direction decided, before any work: ``known`` (the source's own direction of
        ``val``) where there is one, else the caller's ``maximize``, else higher is better, as the metrics' names
        allow (:func:`direction_in_name`).

        One direction serves ``val`` and ``test``. Unless the caller says which way is better, it is refused
        (:class:`InputError`, naming the setting to add as the caller writes it) when the names of ``val`` and
        ``test`` disagree on it (``val_acc`` and ``test_err``), when the name of ``test`` contradicts the source's
        direction of ``val``, and when a metric whose name says it is a loss or an error has no direction. A
        caller's direction that contradicts the source's is refused too. A resolved spec is returned as it is.
        """
        if self.direction_from is not None:
            return self
        if known is not None and self.maximize is not None and self.maximize != known.maximize:
            verb = "maximizes" if known.maximize else "minimizes"
            raise InputError(
                f"{known.said_by} {verb} {self.val!r}, but {vocabulary.setting('maximize', self.maximize)} says "
                "the opposite: leave the direction out"
            )
        if self.maximize is not None:
            return dataclasses.replace(self, direction_from="caller" if known is None else known.said_by)
        if known is not None:
            self._check_test_name(known)
            return dataclasses.replace(self, maximize=known.maximize, direction_from=known.said_by)
        self._check_names()
        return dataclasses.replace(self, maximize=True, direction_from="default")

    def _check_names(self) -> None:
        """InputError unless the names of ``val`` and ``test`` allow higher is better by default: they disagree
        on which way is better, or one of them says it is a loss or an error."""
        said = [(name, direction_in_name(name)) for name in (self.val, self.test) if name is not None]
        ways = [way for _, way in said if way is not None]
        if len(said) == len(ways) == 2 and ways[0][0] != ways[1][0]:
            (val_higher, val_word), (test_higher, test_word) = ways
            raise InputError(
                _one_direction(
                    f"{self.val!r} and {self.test!r} disagree on which way is better ({val_word!r} says "
                    f"{_better(val_higher)}, {test_word!r} {_better(test_higher)})",
                    True,
                    False,
                )
            )
        for name, way in said:
            if way is not None and not way[0]:
                raise InputError(
                    f"{name!r} looks like a loss or an error ({way[1]!r} in its name) and nothing says which way is "
                    f"better: add {vocabulary.setting('maximize', False)} (or {vocabulary.setting('maximize', True)} "
                    "if higher is better)"
                )

    def _check_test_name(self, known: Direction) -> None:
        """InputError when the name of ``test`` says the opposite of the source's direction of ``val``."""
        way = None if self.test is None else direction_in_name(self.test)
        if way is not None and way[0] != known.maximize:
            verb = "maximizes" if known.maximize else "minimizes"
            raise InputError(
                _one_direction(
                    f"{known.said_by} {verb} {self.val!r}, but {self.test!r} says {_better(way[0])} is better "
                    f"({way[1]!r} in its name)",
                    known.maximize,
                )
            )

    @property
    def direction(self) -> str:
        """Which way is better and who said so, as the summary states it (``"lower is better, said by the
        Optuna study 'cnn'"``); ``""`` before :meth:`resolve_direction`."""
        if self.direction_from is None:
            return ""
        better = f"{_better(self.maximize is True)} is better"
        if self.direction_from == "caller":
            return f"{better}, as asked"
        if self.direction_from == "default":
            names = list(dict.fromkeys(name for name in (self.val, self.test) if name is not None))
            read = f"{names[0]!r} does not name" if len(names) == 1 else f"neither {names[0]!r} nor {names[1]!r} names"
            return f"{better} by default: nothing said which way, and {read} a loss or an error"
        return f"{better}, said by {self.direction_from}"

    def resolve_bounds(self, lowest: float, highest: float) -> Spec:
        """This spec with the bounds of a percentage when none were given and the reported metric is one: its name
        says it is a share of a whole (:func:`share_word`: an accuracy, an F1, a recall, a percentage) and its
        scores, ``lowest`` to ``highest``, lie in [0, 100] but not all in [0, 1] (where [0, 1] holds already,
        see ``bounds``). The summary says so (:attr:`stated_bounds`); a resolved spec is returned as it is.
        """
        word = share_word(self.metric)
        if self.bounds is not None or word is None or not (lowest >= 0 and 1 < highest <= 100):
            return self
        why = f"{self.metric!r} names a share ({word!r}) and its scores lie in [0, 100], above 1: percentages"
        return dataclasses.replace(self, bounds=PERCENT_BOUNDS, bounds_from=why)

    @property
    def stated_bounds(self) -> str:
        """The bounds :meth:`resolve_bounds` inferred and why, as the summary states them; ``""`` for bounds the
        caller gave and for the default rule."""
        if self.bounds_from is None or self.bounds is None:
            return ""
        low, high = self.bounds
        return f"bounds [{low:g}, {high:g}]: {self.bounds_from}"

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


def _curves(value: Any) -> str | None:
    if not (isinstance(value, tuple) and all(isinstance(k, str) and k for k in value)):
        return "must be a list of metric names"
    if any(entry in (BEST_SO_FAR, BEST_SO_FAR[:-1]) for entry in value):
        return f"must name the metric of a best-so-far curve ({BEST_SO_FAR}METRIC)"
    return "repeats a metric" if len(set(value)) < len(value) else None


def _reference_table(value: Any) -> str | None:
    """What is wrong with ``normalize``: a choice, or rows (task, low, high) with finite low < high, one per task."""
    if value in NORMALIZATIONS:
        return None
    rows = value if isinstance(value, tuple) else ()
    if not rows or not all(isinstance(row, tuple) and len(row) == 3 for row in rows):
        return f"must be one of {', '.join(NORMALIZATIONS)}, or reference scores (task, low, high) per task"
    for task, low, high in rows:
        ends = (low, high)
        if not all(isinstance(end, numbers.Real) and not isinstance(end, bool) and math.isfinite(end) for end in ends):
            return f"must give two finite numbers (low, high) for task {task!r}"
        if not low < high:
            return f"must have low < high for task {task!r}"
    tasks = [row[0] for row in rows]
    repeated = next((task for task in tasks if tasks.count(task) > 1), None)
    return None if repeated is None else f"gives task {repeated!r} twice"


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
    "maximize": lambda v: None if v is None or isinstance(v, bool) else "must be true or false",
    "group_by": _group_by,
    "seed_column": _optional_text,
    "baseline": _optional_text,
    "compare": _choice(COMPARE_MODES),
    "correction": _choice(CORRECTIONS),
    "confidence_level": lambda v: (
        None
        if isinstance(v, numbers.Real) and not isinstance(v, bool) and 0 < float(v) < 1
        else "must be a number between 0 and 1"
    ),
    "n_resamples": lambda v: None if v == "auto" or (_is_int(v) and v >= 1) else "must be an integer >= 1 or 'auto'",
    "ci_method": _choice(CI_METHODS),
    "seed": lambda v: None if _is_int(v) and v >= 0 else "must be an integer >= 0",
    "pick": _choice(PICKS),
    "duration": _optional_text,
    "bounds": _bounds,
    "curves": _curves,
    "task_column": _optional_text,
    "normalize": _reference_table,
    "normalize_with": _optional_text,
    "direction_from": _optional_text,
    "bounds_from": _optional_text,
}


def _as_given(value: Any) -> Any:
    return value


def _sequence(value: Any) -> Any:
    """A list, tuple or other sequence (a YAML list arrives as omegaconf's ListConfig) as a tuple; a single
    text or number as a tuple of one; anything else as given, for the check to report."""
    if isinstance(value, (str, numbers.Integral)):
        return (value,)
    if isinstance(value, Sequence) or (hasattr(value, "__iter__") and not isinstance(value, (Mapping, bytes))):
        return tuple(value)
    return value


def _open_sides(bounds: Any) -> Any:
    """Bounds as a tuple, an infinite side (``inf`` on the command line and in TOML) as None; anything else as it
    is, for the check to report."""
    if isinstance(bounds, str) or not isinstance(bounds, Sequence):
        return bounds
    return tuple(None if isinstance(end, float) and math.isinf(end) else end for end in bounds)


def _as_reference_rows(value: Any) -> Any:
    """Reference scores as rows ``(task, low, high)``, the task as label text (:func:`boontrack.runtable.format_value`
    writes a task column's values so): from a mapping task -> (low, high) or a sequence of rows (a stored
    ``summary.json``'s lists); anything else as given, for the check to report."""
    if isinstance(value, Mapping):
        value = [
            (task, *pair) if isinstance(pair, Sequence) and not isinstance(pair, str) else (task, pair)
            for task, pair in value.items()
        ]
    if isinstance(value, str) or not isinstance(value, Sequence):
        return value
    rows = []
    for row in value:
        if isinstance(row, str) or not isinstance(row, Sequence):
            return value
        rows.append((_task_text(row[0]), *row[1:]) if len(row) == 3 else tuple(row))
    return tuple(rows)


def _task_text(task: Any) -> Any:
    """A task's label as a task column's value is written: integral numbers without ".0"."""
    if isinstance(task, float) and task.is_integer():
        return str(int(task))
    return task if isinstance(task, str) else str(task)


#: The columns of a ``normalize_with`` file.
REFERENCE_COLUMNS = ("task", "low", "high")


def reference_scores(path: str) -> tuple[tuple[str, float, float], ...]:
    """The rows ``(task, low, high)`` of a CSV file with those columns (others are ignored): the reference scores
    of ``normalize``. InputError, naming the file and the line, for a file that cannot be read, lacks a column,
    holds a cell that is not a finite number, has ``low >= high`` or gives a task twice."""
    import csv

    where = f"{vocabulary.name('normalize_with')} {path}"
    try:
        with open(path, newline="", encoding="utf-8") as file:
            lines = list(csv.DictReader(file))
            header = lines[0].keys() if lines else ()
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise InputError(f"{where}: cannot be read ({getattr(exc, 'strerror', None) or exc})") from None
    missing = [column for column in REFERENCE_COLUMNS if column not in header]
    if not lines or missing:
        raise InputError(
            f"{where}: needs a header with columns task, low, high and a row per task"
            + (f" (no column {missing[0]!r})" if lines else " (no rows)")
        )
    rows = []
    seen: dict[str, int] = {}
    for line_number, line in enumerate(lines, start=2):
        task = (line["task"] or "").strip()
        try:
            low, high = float(line["low"]), float(line["high"])
        except (TypeError, ValueError):
            raise InputError(
                f"{where}, line {line_number}: low and high must be numbers, got {line['low']!r} and {line['high']!r}"
            ) from None
        if not task:
            raise InputError(f"{where}, line {line_number}: the task is empty")
        if not (math.isfinite(low) and math.isfinite(high) and low < high):
            raise InputError(
                f"{where}, line {line_number}: task {task!r} must have finite low < high, got "
                f"low {low:g}, high {high:g}"
            )
        if task in seen:
            raise InputError(f"{where}, line {line_number}: task {task!r} is given twice (line {seen[task]})")
        seen[task] = line_number
        rows.append((task, low, high))
    return tuple(rows)


def _pick(value: Any) -> Any:
    return PICK_SPELLINGS.get(value, value) if isinstance(value, str) else value


#: How the values callers spell in several ways become the field's one type.
_NORMALIZE = {
    "n": _sequence,
    "group_by": _sequence,
    "curves": lambda v: () if v is None else _sequence(v),
    "pick": _pick,
    "bounds": _open_sides,
    "normalize": _as_reference_rows,
}


#: The options of a spec: its fields but those :meth:`Spec.resolve_direction` and :meth:`Spec.resolve_bounds` set.
_OPTIONS = tuple(f.name for f in fields(Spec) if f.name not in ("direction_from", "bounds_from"))


def _better(maximize: bool) -> str:
    return "higher" if maximize else "lower"


def _one_direction(problem: str, *settings: bool) -> str:
    """A refusal of metrics whose names disagree on which way is better: ``problem``, then the two ways out, the
    direction settings that would be accepted written as the caller writes them."""
    said = " or ".join(vocabulary.setting("maximize", maximize) for maximize in settings)
    return f"{problem}, and one direction serves both: name metrics that agree, or say which way with {said}"


@dataclass(frozen=True)
class Direction:
    """Which way a metric is better, as a source knows it (:meth:`boontrack.backends.Source.direction`)."""

    maximize: bool
    #: Who says so, read after "said by": ``"the Optuna study 'cnn'"``, ``"the metric.goal of W&B sweep abc"``.
    said_by: str


#: Word parts of a metric's name that say lower is better: losses, errors, costs, distances, divergences, regret,
#: latency and their usual abbreviations.
LOSS_WORDS = frozenset(
    {
        "loss", "losses", "logloss", "error", "errors", "err", "errs", "perplexity", "ppl", "nll", "xent",
        "crossentropy", "ce", "bce", "mse", "mae", "rmse", "nmse", "msle", "rmsle", "mape", "smape", "huber",
        "wer", "cer", "ter", "eer", "ece", "fpr", "fnr", "bpc", "bpd", "bpb", "fid", "kid", "lpips", "regret",
        "brier", "kl", "kld", "divergence", "hinge", "cost", "costs", "penalty", "distance", "latency",
    }
)  # fmt: skip
#: Word parts of a metric's name that say higher is better: accuracies, shares of right answers, overlaps,
#: correlations, rewards and scores.
SCORE_WORDS = frozenset(
    {
        "acc", "accuracy", "f1", "fscore", "auc", "auroc", "auprc", "precision", "recall", "bleu", "rouge", "chrf",
        "meteor", "iou", "miou", "dice", "ndcg", "mrr", "r2", "mcc", "kappa", "spearman", "pearson", "psnr",
        "ssim", "tpr", "tnr", "sensitivity", "specificity", "reward", "score",
    }
)  # fmt: skip
#: The scores of :data:`SCORE_WORDS` that are shares of a whole: in [0, 1], or in [0, 100] in percent, as any
#: metric named a percentage.
SHARE_WORDS = frozenset(
    {
        "acc", "accuracy", "f1", "fscore", "auc", "auroc", "auprc", "precision", "recall", "bleu", "rouge", "chrf",
        "iou", "miou", "dice", "tpr", "tnr", "sensitivity", "specificity", "percent", "percentage", "pct",
    }
)  # fmt: skip
#: A name's word parts: runs of letters split at case changes (``valLoss``, ``MSELoss``), with the digits that end
#: them (``F1``, ``top1``), and runs of digits.
_WORD_PARTS = re.compile(r"[A-Z]+(?![a-z])[0-9]*|[A-Z]?[a-z]+[0-9]*|[0-9]+")


def _word_in(metric: str, words: frozenset[str]) -> str | None:
    """The first word part of ``metric`` in ``words``, as it is there: whole, or without the digits that end it
    (``loss2`` is ``loss``, ``f1`` is itself)."""
    for part in _WORD_PARTS.findall(metric):
        for word in (part.lower(), part.lower().rstrip("0123456789")):
            if word in words:
                return word
    return None


def loss_word(metric: str) -> str | None:
    """The word part of ``metric`` that says it is a loss or an error (:data:`LOSS_WORDS`), or None.

    Only whole word parts count: ``val_loss``, ``eval/perplexity``, ``test_error_rate`` and ``valMSE`` are
    losses, ``terrain_acc`` and ``maestro_f1`` are not.

    >>> loss_word("eval/perplexity"), loss_word("test_error_rate"), loss_word("terrain_acc")
    ('perplexity', 'error', None)
    """
    return _word_in(metric, LOSS_WORDS)


def score_word(metric: str) -> str | None:
    """The word part of ``metric`` that says higher is better (:data:`SCORE_WORDS`), unless a word part says it
    is a loss (:func:`loss_word`): a loss word says what is scored (``brier_score`` is a loss)."""
    return None if loss_word(metric) is not None else _word_in(metric, SCORE_WORDS)


def share_word(metric: str) -> str | None:
    """The word part of ``metric`` that says it is a share of a whole (:data:`SHARE_WORDS`), bounded by 1, or by
    100 in percent, unless a word part says it is a loss (``accuracy_loss`` is not bounded by 100)."""
    return None if loss_word(metric) is not None else _word_in(metric, SHARE_WORDS)


def direction_in_name(metric: str) -> tuple[bool, str] | None:
    """Which way ``metric``'s name says is better, and the word part that says it: ``(False, word)`` for a loss
    (:func:`loss_word`), ``(True, word)`` for a score (:func:`score_word`), None when it says neither.

    >>> [direction_in_name(name) for name in ("val_loss", "test_F1", "brier_score", "value")]
    [(False, 'loss'), (True, 'f1'), (False, 'brier'), None]
    """
    word = loss_word(metric)
    if word is not None:
        return False, word
    word = score_word(metric)
    return None if word is None else (True, word)
