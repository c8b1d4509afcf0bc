"""The result of an analysis: the :class:`Summary` of a sweep's groups and their comparisons, and its JSON round
trip (:meth:`Summary.to_dict`, :meth:`Summary.from_dict`).

:func:`boontrack.analysis.analyze` builds these; the renderers (:mod:`boontrack.reports`,
:mod:`boontrack.report_html`, :mod:`boontrack.plots`) and the sinks read them, and need nothing of the analysis.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import MISSING, dataclass, field, fields, is_dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from boontrack.spec import Spec

if TYPE_CHECKING:
    from boontrack.diagnostics import Diagnostics
    from boontrack.runtable import DroppedRun, RunTable
    from boontrack.training import TrainingCurves

__all__ = [
    "AcrossTasksSummary",
    "AggregateInterval",
    "ApproachAggregates",
    "ApproachComparison",
    "ComparisonSummary",
    "Curve",
    "GaussianEstimate",
    "GroupSummary",
    "IntervalEstimate",
    "PerformanceProfile",
    "Summary",
    "TestResult",
    "Unseen",
]


@dataclass(frozen=True)
class IntervalEstimate:
    """A point estimate with its confidence interval (bootstrap, or for Δmean the t-test's)."""

    estimate: float
    ci_low: float
    ci_high: float
    standard_error: float

    @classmethod
    def from_bootstrap(cls, result: Any) -> IntervalEstimate:
        """From a :class:`boontrack.resampling.BootstrapResult`."""
        ci = result.confidence_interval
        return cls(float(result.estimate), float(ci.low), float(ci.high), float(result.standard_error))


@dataclass(frozen=True)
class AggregateInterval(IntervalEstimate):
    """An aggregate across tasks with its stratified bootstrap interval, and which interval it is
    (:mod:`boontrack.across`): ``"studentized"``, ``"studentized-u"``, ``"percentile"``, or ``"refused"`` (NaN
    ends: :attr:`AcrossTasksSummary.refused` says why)."""

    method: str = ""

    @classmethod
    def from_bootstrap(cls, result: Any) -> AggregateInterval:
        """From a :class:`boontrack.resampling.BootstrapResult` of :func:`boontrack.across.across_tasks`."""
        ci = result.confidence_interval
        return cls(
            float(result.estimate), float(ci.low), float(ci.high), float(result.standard_error), str(result.method)
        )


@dataclass(frozen=True, eq=False)
class Curve:
    """Expected best test score against the budget n, with bootstrap bands; ``time`` = n x mean duration.

    ``ci_low``/``ci_high`` are the *pointwise* band (each budget's own interval); ``simultaneous_low``/
    ``simultaneous_high`` the *simultaneous* (sup-t) band, meant to hold the whole curve at once
    (:class:`boontrack.resampling.CurveBand`). ``trustworthy`` is False at budgets n > m/2.
    """

    n: np.ndarray
    estimate: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    time: np.ndarray | None = None
    simultaneous_low: np.ndarray | None = None
    simultaneous_high: np.ndarray | None = None
    trustworthy: np.ndarray | None = None


@dataclass(frozen=True)
class GaussianEstimate:
    """Parametric Boo_n (Bajgar et al. 2018, eq. 6) and whether the test scores look normal (Anderson-Darling).

    ``unreliable`` maps each budget whose estimate is not to be read as a result to the reason (see
    :func:`boontrack.analysis.gaussian_doubts`); reports and metric names keep those apart.
    """

    boo_n: Mapping[int, float]
    normal: bool
    normality_statistic: float
    normality_critical_5pct: float
    unreliable: Mapping[int, str] = field(default_factory=dict)

    @property
    def reliable(self) -> dict[int, float]:
        """The estimates that are not flagged unreliable, by budget."""
        return {k: v for k, v in self.boo_n.items() if k not in self.unreliable}


@dataclass(frozen=True)
class Unseen:
    """What a group's runs cannot show, in numbers.

    No resampling sees a kind of run the runs do not hold: a failure mode, or a rarer top better by validation.
    ``rate`` is what m runs rule out: a kind of run at least this common per run shows up in 95 % of sweeps of m
    runs (``1 - 0.05^(1/m)``, about 3/m); a rarer one may well be absent from these. ``top_runs`` says how few runs
    Boo_n rests on, and ``without_best`` what it would be without the best of them by validation: a sweep that
    lacks a run of the population's as good as these stands to one without them as the truth stands to it.
    """

    #: Kinds of run rarer than this per run may be absent from the runs.
    rate: float
    #: The worst score the metric can take (its lower bound when higher is better), when the bounds are known.
    floor: float | None
    #: How much failures at ``rate`` scoring ``floor`` would move the mean: ``rate * |mean - floor|``.
    mean_shift: float | None
    #: Per reported budget n >= 2: (k, share), the best k runs carry ``share`` of Boo_n's weight.
    top_runs: Mapping[int, tuple[int, float]] = field(default_factory=dict)
    #: Per reported budget n >= 2: Boo_n of the runs without their best one by validation, and without their best
    #: two (None where too few runs are left for the estimator): how far it rests on what the best runs scored.
    without_best: Mapping[int, tuple[float | None, float | None]] = field(default_factory=dict)
    #: The bounds ``floor`` comes from when nobody declared them: [0, 1] because every test score lies in it, or
    #: [0, 100] for a share in percent (the header says why); None when they were declared (``Spec.bounds``), so
    #: that ``floor`` is the worst score possible only then (an NPMI in [-1, 1] whose runs all scored above 0 is
    #: not bounded below by 0).
    assumed_bounds: tuple[float, float] | None = None


@dataclass(frozen=True)
class GroupSummary:
    """Everything computed for one group of runs."""

    label: str
    runs: int
    dropped: tuple[DroppedRun, ...]
    boo_n: Mapping[int, IntervalEstimate]
    curve: Curve
    gaussian: GaussianEstimate
    mean: IntervalEstimate
    diagnostics: Diagnostics
    #: Mean training seconds of the group's runs (over runs with a known duration), or None.
    mean_duration_s: float | None
    warnings: tuple[str, ...]
    #: Default budgets not reported for this group: too few runs (``Spec.n=None`` only; see ``Spec.budgets_for``).
    left_out_budgets: tuple[int, ...] = ()
    #: Why each reported number is doubtful, by budget (1 is the mean): fewer than 8 runs, n > m/2, a long
    #: tail on the better side (the rules of the ``FewRunsWarning``); an empty tuple where it is not.
    doubts: Mapping[int, tuple[str, ...]] = field(default_factory=dict)
    #: What these runs cannot show (:class:`Unseen`).
    unseen: Unseen | None = None
    #: The test scores' bounds the intervals respect, None for an open side (declared, [0, 1], or [0, 100] for a
    #: share in percent: :meth:`Spec.resolve_bounds`).
    bounds: tuple[float | None, float | None] = (None, None)
    #: What its intervals cannot show because of where the scores lie: every score equal (each interval is a
    #: point), or Boo_n resting on runs at the best score possible. Each is one of :attr:`warnings` too; the
    #: terminal table states them under the table.
    interval_limits: tuple[str, ...] = ()
    #: The bootstrap resamples of the group's intervals: ``Spec.n_resamples``, or as many as ``"auto"`` drew
    #: (0 in a summary stored before this was kept).
    n_resamples: int = 0

    def trustworthy(self, n: int) -> bool:
        """Whether the number at budget ``n`` (1: the mean) is free of the doubts of :attr:`doubts`."""
        return not self.doubts.get(n)


@dataclass(frozen=True)
class TestResult:
    """A hypothesis test of one comparison, with its p-value adjusted over all comparisons."""

    statistic: float
    pvalue: float
    pvalue_adjusted: float


@dataclass(frozen=True)
class ComparisonSummary:
    """Group ``group`` against ``baseline``: differences are ``group - baseline`` of the test scores.

    The tests are the right ones for the design. Runs paired by seed (both groups have the same distinct
    seeds): the paired t-test and the Wilcoxon signed-rank test, and the difference intervals resample pairs;
    ``welch`` and ``mann_whitney`` are None. Otherwise Welch's t-test and the Mann-Whitney U test, the groups
    resampled independently; ``paired_t`` and ``wilcoxon`` are None. Each p-value is adjusted over the
    comparisons within its family: the t-test of each comparison (paired t or Welch) form one family, the rank
    test (Wilcoxon or Mann-Whitney) another.
    """

    group: str
    baseline: str
    #: Whether runs were paired by seed (then the bootstrap resamples pairs and the tests are the paired ones).
    paired: bool
    boo_n_difference: Mapping[int, IntervalEstimate]
    #: mean(group) - mean(baseline) with the t-interval of the t-test reported (paired t or Welch).
    mean_difference: IntervalEstimate
    welch: TestResult | None
    mann_whitney: TestResult | None
    #: P(group > baseline) + 0.5 P(equal) for a run of each, from the Mann-Whitney statistic.
    prob_superiority: float
    wilcoxon: TestResult | None
    warnings: tuple[str, ...] = ()
    paired_t: TestResult | None = None

    @property
    def tests(self) -> dict[str, TestResult]:
        """The headline tests by name, t-test first: ``paired_t`` and ``wilcoxon``, or ``welch`` and
        ``mann_whitney``."""
        names = ("paired_t", "wilcoxon") if self.paired else ("welch", "mann_whitney")
        return {name: getattr(self, name) for name in names}


@dataclass(frozen=True)
class PerformanceProfile:
    """The share of an approach's pooled runs whose (normalized) score is better than tau, over a grid of tau,
    with its pointwise percentile band (:class:`boontrack.across.PerformanceProfile`)."""

    tau: tuple[float, ...]
    share: tuple[float, ...]
    low: tuple[float, ...]
    high: tuple[float, ...]


@dataclass(frozen=True)
class ApproachAggregates:
    """One approach (a group's keys but the task) over every task: the aggregates of
    :func:`boontrack.across.across_tasks` on the test scores, Boo_n picking the best run by validation."""

    approach: str
    #: Runs over every task.
    runs: int
    mean: AggregateInterval
    median: AggregateInterval
    iqm: AggregateInterval
    optimality_gap: AggregateInterval
    #: Budget -> the mean over the tasks of Boo_n.
    boo_n: Mapping[int, AggregateInterval]
    #: The mean (normalized) test score on each task, aligned with :attr:`AcrossTasksSummary.tasks`.
    task_means: tuple[float, ...]
    profile: PerformanceProfile


@dataclass(frozen=True)
class ApproachComparison:
    """Approach ``group`` against ``baseline`` across the tasks: differences ``group - baseline`` of the mean, the
    IQM and Boo_n, and the probability of improvement (0.5: no difference)."""

    group: str
    baseline: str
    mean_difference: AggregateInterval
    iqm_difference: AggregateInterval
    boo_n_difference: Mapping[int, AggregateInterval]
    prob_improvement: AggregateInterval
    #: The probability of improvement on each task, aligned with :attr:`AcrossTasksSummary.tasks`.
    task_prob_improvement: tuple[float, ...]


@dataclass(frozen=True)
class AcrossTasksSummary:
    """The approaches of a summary with a task column (``Spec.task_column``), aggregated and compared across the
    tasks (:mod:`boontrack.across_analysis`)."""

    task_column: str
    tasks: tuple[str, ...]
    #: ``"none"``, ``"min-max"`` or ``"reference"`` (``Spec.normalize``'s scores per task).
    normalize: str
    #: ``(low, high)`` of each task, aligned with :attr:`tasks`; empty without normalization.
    normalization: tuple[tuple[float, float], ...]
    #: The target of the optimality gap.
    gamma: float
    #: The budgets of the aggregate Boo_n.
    n: tuple[int, ...]
    aggregates: tuple[ApproachAggregates, ...]
    comparisons: tuple[ApproachComparison, ...]
    n_resamples: int
    #: What the intervals cannot see (a task with few runs, the bias of Boo_n over tasks), in numbers.
    warnings: tuple[str, ...] = ()
    #: ``"boo_n[n]"`` -> why that aggregate Boo_n has no interval.
    refused: Mapping[str, str] = field(default_factory=dict)
    #: ``(group, task, approach)`` of each group of the summary (empty in a summary stored before it was kept).
    cells: tuple[tuple[str, str, str], ...] = ()
    #: The tasks (of :attr:`tasks`) whose approaches ran the same seeds and were resampled paired by seed.
    paired_tasks: tuple[str, ...] = ()

    def by_task(self, groups: Sequence[GroupSummary]) -> list[tuple[str, list[tuple[GroupSummary, str]]]]:
        """``groups`` (a summary's) task by task, in the order of :attr:`tasks`: each task with its groups and their
        approaches; empty for a summary stored before :attr:`cells` was kept."""
        if not self.cells:
            return []
        where = {group: (task, approach) for group, task, approach in self.cells}
        by_task: dict[str, list[tuple[GroupSummary, str]]] = {task: [] for task in self.tasks}
        for g in groups:
            task, approach = where[g.label]
            by_task[task].append((g, approach))
        return list(by_task.items())

    def aggregate(self, approach: str) -> ApproachAggregates:
        """The aggregates of ``approach``."""
        for aggregates in self.aggregates:
            if aggregates.approach == approach:
                return aggregates
        raise KeyError(f"no approach {approach!r}; approaches are {[a.approach for a in self.aggregates]}")


@dataclass(frozen=True)
class Summary:
    """The result of :func:`boontrack.analysis.analyze`: per-group summaries, comparisons, dropped runs, spec and
    versions."""

    spec: Spec
    groups: tuple[GroupSummary, ...]
    comparisons: tuple[ComparisonSummary, ...]
    #: The resolved group-key columns (empty for one group).
    group_by: tuple[str, ...]
    #: Every dropped run, with its reason.
    dropped: tuple[DroppedRun, ...]
    versions: Mapping[str, str]
    #: Whether each run has a test score separate from its validation score.
    has_test: bool
    #: A description of where the runs came from, set by the caller (e.g. ``Source.describe()``).
    source: str | None = None
    #: The runs analyzed (for per-run tables and distribution plots); not part of equality.
    table: RunTable | None = field(default=None, repr=False, compare=False)
    #: The training curves of ``spec.curves``, one per metric (:mod:`boontrack.training_runs`); not part of
    #: equality, nor of ``summary.json`` (they are written as ``training_curves.csv``).
    training: tuple[TrainingCurves, ...] = field(default=(), repr=False, compare=False)
    #: With a task column: the approaches across the tasks (each group is then one approach on one task).
    across_tasks: AcrossTasksSummary | None = None

    @property
    def metric(self) -> str:
        """Name of the reported metric (the test metric, else the validation metric)."""
        return self.spec.metric

    @property
    def common_budgets(self) -> tuple[int, ...]:
        """The budgets every group reports, in order (with default budgets, a small group reports fewer)."""
        return tuple(k for k in self.spec.budgets if all(k in g.boo_n for g in self.groups))

    @property
    def runs(self) -> int:
        """Number of kept runs over all groups."""
        return sum(g.runs for g in self.groups)

    def group(self, label: str) -> GroupSummary:
        """The summary of the group labelled ``label``."""
        for summary in self.groups:
            if summary.label == label:
                return summary
        raise KeyError(f"no group {label!r}; groups are {[g.label for g in self.groups]}")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data with every number, the spec and the versions (non-finite floats become None); an
        ``across_tasks`` part with a task column only."""
        data = {
            "source": self.source,
            "metric": self.metric,
            "has_test": self.has_test,
            "group_by": list(self.group_by),
            "runs": self.runs,
            "dropped": [jsonable(d) for d in self.dropped],
            "groups": {g.label: _group_dict(g) for g in self.groups},
            "comparisons": [jsonable(c) for c in self.comparisons],
            "spec": self.spec.to_dict(),
            "versions": dict(self.versions),
        }
        if self.across_tasks is not None:
            data["across_tasks"] = jsonable(self.across_tasks)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Summary:
        """The summary of :meth:`to_dict`'s data (a stored ``summary.json``, parsed): its inverse, so that
        ``Summary.from_dict(s.to_dict()).to_dict() == s.to_dict()``.

        A number stored as None (not finite) comes back as NaN, or as None where the field may be None. The runs
        are not stored: :attr:`table` is None. Fields a summary of an earlier version did not store take their
        defaults (no doubts, no statement of what the runs cannot show, open bounds, no paired t-test).

        Raises
        ------
        ValueError
            ``data`` is not a summary's data; the message names the missing key or the part of the wrong type.
        """
        stored = _Stored(data, "summary")
        groups = stored.part("groups")
        return cls(
            spec=Spec.from_dict(stored.part("spec").data),
            groups=tuple(_group_of(label, groups.part(label)) for label in groups.data),
            comparisons=tuple(_comparison_of(c, set(groups.data)) for c in stored.parts("comparisons")),
            group_by=stored.strings("group_by"),
            dropped=tuple(_dropped_of(d) for d in stored.parts("dropped")),
            versions={str(name): str(version) for name, version in stored.part("versions").data.items()},
            has_test=stored.value("has_test", "bool"),
            source=stored.value("source", "str | None", default=None),
            across_tasks=None if "across_tasks" not in data else _across_of(stored.part("across_tasks")),
        )


def _group_dict(g: GroupSummary) -> dict[str, Any]:
    """One group's JSON layout: Boo_n keyed by n as a string, the curve as lists."""
    curve = {
        "n": g.curve.n,
        "estimate": g.curve.estimate,
        "band": "pointwise",
        "ci_low": g.curve.ci_low,
        "ci_high": g.curve.ci_high,
        "simultaneous_low": g.curve.simultaneous_low,
        "simultaneous_high": g.curve.simultaneous_high,
        "trustworthy": g.curve.trustworthy,
    }
    if g.curve.time is not None:
        curve["time"] = g.curve.time
    gaussian = {
        "boo_n": {str(k): v for k, v in g.gaussian.boo_n.items()},
        "unreliable": {str(k): why for k, why in g.gaussian.unreliable.items()},
        "normal": g.gaussian.normal,
        "normality_statistic": g.gaussian.normality_statistic,
        "normality_critical_5pct": g.gaussian.normality_critical_5pct,
    }
    return jsonable(
        {
            "runs": g.runs,
            "dropped": g.dropped,
            "boo_n": {str(k): v for k, v in g.boo_n.items()},
            "curve": curve,
            "gaussian": gaussian,
            "mean": g.mean,
            "diagnostics": g.diagnostics,
            "mean_duration_s": g.mean_duration_s,
            "warnings": g.warnings,
            "left_out_budgets": g.left_out_budgets,
            "doubts": {str(k): reasons for k, reasons in g.doubts.items()},
            "unseen": g.unseen,
            "bounds": g.bounds,
            "interval_limits": g.interval_limits,
            "n_resamples": g.n_resamples,
        }
    )


def jsonable(value: Any) -> Any:
    """Dataclasses, mappings, sequences and numpy values as JSON-ready Python data; NaN/inf become None."""
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: jsonable(getattr(value, f.name)) for f in fields(value) if f.compare}
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, np.ndarray):
        return [jsonable(v) for v in value.tolist()]
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(value) else None
    return value


#: A key without a default: its absence is an error.
_REQUIRED = object()


class _Stored:
    """A JSON object of a summary's data, with its place in the data (``summary.groups['a'].mean``): a missing
    key or a value of the wrong type is a ValueError that says where."""

    def __init__(self, data: Any, where: str) -> None:
        if not isinstance(data, Mapping):
            raise ValueError(f"malformed summary data: {where} must be a JSON object, got {type(data).__name__}")
        self.data: Mapping[str, Any] = data
        self.where = where

    def __getitem__(self, key: str) -> Any:
        if key not in self.data:
            raise ValueError(f"malformed summary data: {self.where} has no {key!r}")
        return self.data[key]

    def at(self, key: str) -> str:
        """Where the value under ``key`` is: ``summary.groups['a b'].boo_n['5']``."""
        return f"{self.where}.{key}" if key.isidentifier() else f"{self.where}[{key!r}]"

    def part(self, key: str) -> _Stored:
        """The JSON object under ``key``."""
        return _Stored(self[key], self.at(key))

    def parts(self, key: str) -> list[_Stored]:
        """The JSON objects of the list under ``key``."""
        return [_Stored(item, f"{self.at(key)}[{i}]") for i, item in enumerate(self.sequence(key))]

    def sequence(self, key: str, default: Any = _REQUIRED) -> list[Any]:
        values = self.data.get(key, default) if default is not _REQUIRED else self[key]
        if not isinstance(values, (list, tuple)):
            raise ValueError(f"malformed summary data: {self.at(key)} must be a list, got {type(values).__name__}")
        return list(values)

    def strings(self, key: str, default: Any = _REQUIRED) -> tuple[str, ...]:
        return tuple(_checked(v, "str", self.at(key)) for v in self.sequence(key, default))

    def value(self, key: str, kind: str, default: Any = _REQUIRED) -> Any:
        """The value under ``key`` as ``kind`` (a field's type, see :func:`_checked`); ``default`` when absent."""
        if key not in self.data and default is not _REQUIRED:
            return default
        return _checked(self[key], kind, self.at(key))

    def by_budget(self, key: str, default: Any = _REQUIRED) -> _Stored:
        """The object under ``key`` whose keys are budgets (JSON keys are strings)."""
        if key not in self.data and default is not _REQUIRED:
            return _Stored(default, self.at(key))
        stored = self.part(key)
        if not all(isinstance(n, str) and n.isdigit() for n in stored.data):
            raise ValueError(
                f"malformed summary data: {stored.where} must be keyed by budgets, got {list(stored.data)}"
            )
        return stored


def _checked(value: Any, kind: str, where: str) -> Any:
    """``value`` as a field of type ``kind`` holds it: JSON's None is NaN for a float, stays None where allowed."""
    if value is None and kind.endswith(" | None"):
        return None
    kind = kind.removesuffix(" | None")
    if kind == "float" and value is None:
        return math.nan
    expected = {"float": (int, float), "int": (int,), "bool": (bool,), "str": (str,)}[kind]
    if not isinstance(value, expected) or (kind in ("float", "int") and isinstance(value, bool)):
        raise ValueError(f"malformed summary data: {where} must be {kind}, got {value!r}")
    return float(value) if kind == "float" else value


def _record(cls: Any, stored: _Stored) -> Any:
    """A result type of scalar fields and tuples of text (IntervalEstimate, TestResult, Diagnostics, DroppedRun)
    from its JSON object; a field with a default may be absent."""
    values = {}
    for f in fields(cls):
        default = _REQUIRED if f.default is MISSING else f.default
        if f.type == "tuple[str, ...]":
            values[f.name] = stored.strings(f.name, default)
        else:
            values[f.name] = stored.value(f.name, str(f.type), default)
    return cls(**values)


def _optional_record(cls: Any, stored: _Stored, key: str) -> Any:
    return None if stored.data.get(key) is None else _record(cls, stored.part(key))


def _intervals_of(stored: _Stored) -> dict[int, IntervalEstimate]:
    return {int(n): _record(IntervalEstimate, stored.part(n)) for n in stored.data}


def _dropped_of(stored: _Stored) -> DroppedRun:
    from boontrack.runtable import DroppedRun

    return _record(DroppedRun, stored)


def _group_of(label: str, g: _Stored) -> GroupSummary:
    from boontrack.diagnostics import Diagnostics

    doubts = g.by_budget("doubts", {})
    unseen = g.data.get("unseen")
    bounds = [_checked(end, "float | None", g.at("bounds")) for end in g.sequence("bounds", [None, None])]
    if len(bounds) != 2:
        raise ValueError(f"malformed summary data: {g.at('bounds')} must be [low, high], got {bounds}")
    return GroupSummary(
        label=label,
        runs=g.value("runs", "int"),
        dropped=tuple(_dropped_of(d) for d in g.parts("dropped")),
        boo_n=_intervals_of(g.by_budget("boo_n")),
        curve=_curve_of(g.part("curve")),
        gaussian=_gaussian_of(g.part("gaussian")),
        mean=_record(IntervalEstimate, g.part("mean")),
        diagnostics=_record(Diagnostics, g.part("diagnostics")),
        mean_duration_s=g.value("mean_duration_s", "float | None", None),
        warnings=g.strings("warnings"),
        left_out_budgets=tuple(
            _checked(k, "int", g.at("left_out_budgets")) for k in g.sequence("left_out_budgets", [])
        ),
        doubts={int(n): doubts.strings(n) for n in doubts.data},
        unseen=None if unseen is None else _unseen_of(g.part("unseen")),
        bounds=(bounds[0], bounds[1]),
        interval_limits=g.strings("interval_limits", ()),
        n_resamples=g.value("n_resamples", "int", 0),
    )


def _curve_of(stored: _Stored) -> Curve:
    def array(key: str, dtype: type = float) -> np.ndarray:
        return np.array(stored.sequence(key), dtype=dtype)  # None (not finite) becomes NaN

    def optional(key: str, dtype: type = float) -> np.ndarray | None:
        return None if stored.data.get(key) is None else array(key, dtype)

    return Curve(
        n=array("n", np.int64),
        estimate=array("estimate"),
        ci_low=array("ci_low"),
        ci_high=array("ci_high"),
        time=optional("time"),
        simultaneous_low=optional("simultaneous_low"),
        simultaneous_high=optional("simultaneous_high"),
        trustworthy=optional("trustworthy", bool),
    )


def _gaussian_of(stored: _Stored) -> GaussianEstimate:
    estimates = stored.by_budget("boo_n")
    unreliable = stored.by_budget("unreliable", {})
    return GaussianEstimate(
        boo_n={int(n): estimates.value(n, "float") for n in estimates.data},
        normal=stored.value("normal", "bool"),
        normality_statistic=stored.value("normality_statistic", "float"),
        normality_critical_5pct=stored.value("normality_critical_5pct", "float"),
        unreliable={int(n): unreliable.value(n, "str") for n in unreliable.data},
    )


def _unseen_of(stored: _Stored) -> Unseen:
    top_runs = stored.by_budget("top_runs", {})

    def top(n: str) -> tuple[int, float]:
        pair = top_runs.sequence(n)
        if len(pair) != 2:
            raise ValueError(f"malformed summary data: {top_runs.at(n)} must be [runs, share], got {pair}")
        return _checked(pair[0], "int", top_runs.at(n)), _checked(pair[1], "float", top_runs.at(n))

    without_best = stored.by_budget("without_best", {})

    def without(n: str) -> tuple[float | None, float | None]:
        pair = without_best.sequence(n)
        if len(pair) != 2:
            raise ValueError(f"malformed summary data: {without_best.at(n)} must be [one, two], got {pair}")
        one, two = (_checked(value, "float | None", without_best.at(n)) for value in pair)
        return one, two

    return Unseen(
        rate=stored.value("rate", "float"),
        floor=stored.value("floor", "float | None", None),
        mean_shift=stored.value("mean_shift", "float | None", None),
        top_runs={int(n): top(n) for n in top_runs.data},
        without_best={int(n): without(n) for n in without_best.data},
        assumed_bounds=_assumed_bounds(stored),
    )


def _assumed_bounds(stored: _Stored) -> tuple[float, float] | None:
    """:attr:`Unseen.assumed_bounds` as stored: absent (a summary written before it was kept) or null is None."""
    if stored.data.get("assumed_bounds") is None:
        return None
    bounds = stored.sequence("assumed_bounds")
    if len(bounds) != 2:
        raise ValueError(f"malformed summary data: {stored.at('assumed_bounds')} must be [low, high], got {bounds}")
    low, high = (_checked(end, "float", stored.at("assumed_bounds")) for end in bounds)
    return low, high


def _comparison_of(stored: _Stored, labels: set[str]) -> ComparisonSummary:
    """A comparison from its JSON object; both its groups must be among the summary's ``labels``."""
    group, baseline = stored.value("group", "str"), stored.value("baseline", "str")
    for key, label in (("group", group), ("baseline", baseline)):
        if label not in labels:
            raise ValueError(f"malformed summary data: {stored.at(key)} is {label!r}, which is not a group's label")
    return ComparisonSummary(
        group=group,
        baseline=baseline,
        paired=stored.value("paired", "bool"),
        boo_n_difference=_intervals_of(stored.by_budget("boo_n_difference")),
        mean_difference=_record(IntervalEstimate, stored.part("mean_difference")),
        welch=_optional_record(TestResult, stored, "welch"),
        mann_whitney=_optional_record(TestResult, stored, "mann_whitney"),
        prob_superiority=stored.value("prob_superiority", "float"),
        wilcoxon=_optional_record(TestResult, stored, "wilcoxon"),
        warnings=stored.strings("warnings", ()),
        paired_t=_optional_record(TestResult, stored, "paired_t"),
    )


def _aggregates_of(stored: _Stored) -> dict[int, AggregateInterval]:
    return {int(n): _record(AggregateInterval, stored.part(n)) for n in stored.data}


def _floats(stored: _Stored, key: str) -> tuple[float, ...]:
    return tuple(_checked(v, "float", stored.at(key)) for v in stored.sequence(key))


def _across_of(stored: _Stored) -> AcrossTasksSummary:
    def aggregates(a: _Stored) -> ApproachAggregates:
        profile = a.part("profile")
        return ApproachAggregates(
            approach=a.value("approach", "str"),
            runs=a.value("runs", "int"),
            **{key: _record(AggregateInterval, a.part(key)) for key in ("mean", "median", "iqm", "optimality_gap")},
            boo_n=_aggregates_of(a.by_budget("boo_n")),
            task_means=_floats(a, "task_means"),
            profile=PerformanceProfile(*(_floats(profile, key) for key in ("tau", "share", "low", "high"))),
        )

    def comparison(c: _Stored) -> ApproachComparison:
        return ApproachComparison(
            group=c.value("group", "str"),
            baseline=c.value("baseline", "str"),
            mean_difference=_record(AggregateInterval, c.part("mean_difference")),
            iqm_difference=_record(AggregateInterval, c.part("iqm_difference")),
            boo_n_difference=_aggregates_of(c.by_budget("boo_n_difference")),
            prob_improvement=_record(AggregateInterval, c.part("prob_improvement")),
            task_prob_improvement=_floats(c, "task_prob_improvement"),
        )

    def cell(value: Any) -> tuple[str, str, str]:
        group, task, approach = (_checked(label, "str", stored.at("cells")) for label in value)
        return group, task, approach

    where = stored.at("normalization")
    return AcrossTasksSummary(
        task_column=stored.value("task_column", "str"),
        tasks=stored.strings("tasks"),
        normalize=stored.value("normalize", "str"),
        normalization=tuple(
            (_checked(low, "float", where), _checked(high, "float", where))
            for low, high in stored.sequence("normalization")
        ),
        gamma=stored.value("gamma", "float"),
        n=tuple(_checked(k, "int", stored.at("n")) for k in stored.sequence("n")),
        aggregates=tuple(aggregates(a) for a in stored.parts("aggregates")),
        comparisons=tuple(comparison(c) for c in stored.parts("comparisons")),
        n_resamples=stored.value("n_resamples", "int"),
        warnings=stored.strings("warnings", ()),
        refused={str(k): str(v) for k, v in stored.part("refused").data.items()},
        cells=tuple(cell(c) for c in stored.sequence("cells", [])),
        paired_tasks=stored.strings("paired_tasks", ()),
    )
