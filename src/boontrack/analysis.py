"""From a RunTable to a Summary: per-group estimates, intervals, curves, diagnostics and comparisons.

:func:`analyze` is the one function that turns validated runs into numbers; the CLI, the post-sweep callbacks
and the scheduled job all call it. Every random draw comes from generators derived from ``Spec.seed``, so
the same runs and spec give the same :class:`Summary` (which makes writes back to a tracker idempotent).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import MISSING, dataclass, field, fields, is_dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from boontrack import vocabulary
from boontrack._collector import collected, warn
from boontrack._progress import progress_bar
from boontrack.exceptions import FewRunsWarning, InputError
from boontrack.spec import Spec

if TYPE_CHECKING:
    from boontrack._bootstrap.compiled import Work
    from boontrack.compare import Comparison
    from boontrack.diagnostics import Diagnostics
    from boontrack.resampling import CurveBand
    from boontrack.runtable import DroppedRun, RunTable
    from boontrack.training import TrainingCurves

__all__ = [
    "ComparisonSummary",
    "Curve",
    "Unseen",
    "GaussianEstimate",
    "GroupSummary",
    "IntervalEstimate",
    "Summary",
    "TestResult",
    "analyze",
    "gaussian_doubts",
]


@dataclass(frozen=True)
class IntervalEstimate:
    """A point estimate with its bootstrap confidence interval."""

    estimate: float
    ci_low: float
    ci_high: float
    standard_error: float

    @classmethod
    def from_bootstrap(cls, result: Any) -> IntervalEstimate:
        """From a :class:`boontrack.resampling.BootstrapResult`."""
        ci = result.confidence_interval
        return cls(float(result.estimate), float(ci.low), float(ci.high), float(result.standard_error))


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
    :func:`gaussian_doubts`); reports and metric names keep those apart.
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
class Summary:
    """The result of :func:`analyze`: per-group summaries, comparisons, dropped runs, spec and versions."""

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
        """JSON-ready data with every number, the spec and the versions (non-finite floats become None)."""
        return {
            "source": self.source,
            "metric": self.metric,
            "has_test": self.has_test,
            "group_by": list(self.group_by),
            "runs": self.runs,
            "dropped": [_jsonable(d) for d in self.dropped],
            "groups": {g.label: _group_dict(g) for g in self.groups},
            "comparisons": [_jsonable(c) for c in self.comparisons],
            "spec": self.spec.to_dict(),
            "versions": dict(self.versions),
        }

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
        )


def analyze(
    table: RunTable,
    spec: Spec,
    *,
    progress: bool = False,
    source: str | None = None,
    threads: int | None = None,
    pairs: Sequence[tuple[str, str]] | None = None,
) -> Summary:
    """Summarize every group of ``table`` and compare the groups, as ``spec`` says.

    Per group: Boo_n at each budget (``spec.n``, else the default budgets the group has runs for, see
    :meth:`Spec.budgets_for`) with a bootstrap interval, the expected-best curve over n = 1..m with a
    band (and over expected compute time when durations are known), the Gaussian estimate with the normality
    verdict, the mean with an interval, and diagnostics. Then every group against the baseline (or all pairs):
    differences in Boo_n and mean with intervals, the paired t-test and Wilcoxon signed-rank test for runs paired
    by seed or Welch and Mann-Whitney otherwise, p-values adjusted over all comparisons (``spec.correction``).

    Parameters
    ----------
    table
        Validated runs (:meth:`boontrack.runtable.RunTable.from_frame`) built with the same ``spec``.
    spec
        What to compute.
    progress
        Show a progress bar over groups on stderr (only when stderr is a terminal).
    source
        Description of where the runs came from, stored in :attr:`Summary.source`.
    threads
        Threads that summarize the groups side by side and evaluate the bootstrap's batches of resamples (None:
        every CPU this process may use). The results do not depend on it: each group draws from its own generator,
        its resamples in order in one thread, and collects its own warnings.
    pairs
        The (group, baseline) labels to compare, in this order, instead of those ``spec.compare`` names; the
        p-values are adjusted over these comparisons. For comparing matched groups only (e.g. the same group in
        two sources, :func:`boontrack.sources.compare_sources`).

    Raises
    ------
    InputError
        A group with fewer runs than the largest ``spec.n`` given (or than the smallest default budget), a group
        of one run, an unknown baseline, or invalid spec options.
    """
    from boontrack._bootstrap import evaluate_groups, using_threads
    from boontrack._bootstrap.compiled import computation

    _analyze_iv(table, spec, threads, pairs)
    spec = spec.resolve_direction()  # not resolved by a pipeline: the caller's direction, else the rule for names
    reported = table.runs["test"]  # one rule for every group (a percentage's bounds), said once in the summary
    spec = spec.resolve_bounds(float(reported.min()), float(reported.max()))
    with (
        using_threads(threads),
        computation(_bootstrap_work(table, spec)),
        progress_bar(table.groups, enabled=progress, label="boontrack: groups") as shown,
    ):
        # Groups side by side on the threads: each draws from its own generator and collects its own warnings.
        summarized = evaluate_groups(lambda group: _summarize_group(table, spec, *group), list(enumerate(table.groups)))
        results = [result for result, _ in zip(summarized, shown)]  # the bar advances as each group is done
        summaries = tuple(summary for summary, _ in results)
        comparisons = _compare_groups(table, spec, {summary.label: band for summary, band in results}, pairs)
    return Summary(
        spec=spec,
        groups=summaries,
        comparisons=comparisons,
        group_by=table.group_by,
        dropped=table.dropped,
        versions=_versions(),
        has_test=table.test_column is not None,
        source=source,
        table=table,
    )


def _analyze_iv(table: RunTable, spec: Spec, threads: int | None, pairs: Sequence[tuple[str, str]] | None) -> None:
    """InputError for arguments of the wrong type, a spec other than the table's, spec options the analysis
    cannot use, a thread count below one, pairs of unknown or identical groups and groups too small for the
    budgets.

    Budgets given (``spec.n``): every group must have runs for the largest. Default budgets: every group must
    have runs for one of them at least (the others are left out per group, see :meth:`Spec.budgets_for`).
    """
    from boontrack.runtable import RunTable

    if not isinstance(table, RunTable):
        raise InputError(
            f"table must be a RunTable (build one with RunTable.from_frame(frame, spec)), got {type(table).__name__}"
        )
    if not isinstance(spec, Spec):
        raise InputError(f"spec must be a boontrack Spec, got {type(spec).__name__}")
    if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int) or threads < 1):
        raise InputError(f"threads must be a whole number >= 1 or None (every CPU), got {threads!r}")
    _check_same_spec(table, spec)
    if spec.baseline is not None and spec.baseline not in table.groups:
        raise InputError(f"baseline group {spec.baseline!r} not found; groups are: {', '.join(table.groups)}")
    for pair in pairs or ():
        unknown = [label for label in pair if label not in table.groups]
        if unknown or len(pair) != 2 or pair[0] == pair[1]:
            raise InputError(f"pairs must hold two distinct groups each; {pair!r} does not (groups: {table.groups})")
    counts = table.runs["group"].value_counts()
    keys = f"; groups are split by {', '.join(table.group_by)}" if table.group_by else ""
    needed = max(spec.n) if spec.n is not None else min(spec.budgets)
    small = [(label, int(counts[label])) for label in table.groups if spec.largest_supported(counts[label]) < needed]
    if small:
        listed = ", ".join(f"{label!r} has {count}" for label, count in small[:5])
        more = f" (and {len(small) - 5} more groups)" if len(small) > 5 else ""
        why = (
            "the U estimator cannot extrapolate beyond the number of runs"
            if spec.estimator == "U"
            else "Boo_n beyond the number of runs would be an extrapolation"
        )
        raise InputError(
            f"too few runs for n = {needed}: group {listed}{more} runs; {why}"
            + (" (BCa with U needs n + 1 runs)" if _bca_with_u(spec) else "")
            + f". Give a smaller {vocabulary.name('n')} (or leave it out: the default budgets adapt to each group) or "
            f"add runs{keys}"
        )
    alone = [label for label in table.groups if counts[label] < 2]
    if alone:
        others = f" (and {len(alone) - 1} more groups)" if len(alone) > 1 else ""
        raise InputError(
            f"group {alone[0]!r}{others} has 1 run: a summary needs at least 2 runs in every group, whose spread its "
            f"intervals and the Gaussian estimate measure; add runs{keys}"
        )


def _check_same_spec(table: RunTable, spec: Spec) -> None:
    """InputError unless ``table`` was built with ``spec``'s columns (else one metric is reported as another)."""
    metric, param = ("metrics.", "tags."), ("params.", "tags.")  # RunTable reads metrics from tags too
    pairs: list[tuple[str, str | None, str | None, tuple[str, ...]]] = [
        ("val", table.val_column, spec.val, metric),
        ("test", table.test_column, spec.test, metric),
    ]
    pairs.append(("seed_column", table.seed_column, spec.seed_column, param))
    if spec.group_by is not None:
        pairs += [("group_by", resolved, name, param) for resolved, name in zip(table.group_by, spec.group_by)]
        if len(table.group_by) != len(spec.group_by):
            pairs.append(("group_by", ", ".join(table.group_by), ", ".join(spec.group_by), ()))
    for option, resolved, name, prefixes in pairs:
        if resolved != name and (name is None or resolved not in [prefix + name for prefix in prefixes]):
            raise InputError(
                f"spec.{option} is {name!r} but the table was built with column {resolved!r}; "
                "build the table with the same spec (RunTable.from_frame(frame, spec))"
            )


def _bca_with_u(spec: Spec) -> bool:
    return spec.estimator == "U" and spec.ci_method == "bca"


def _bootstrap_work(table: RunTable, spec: Spec) -> Work:
    """What the analysis's groups draw and studentize in all: every group counts towards loading numba once (the
    fast extra), whatever its own size. The studentized elements are counted with m blocks per group, at most
    what its pass evaluates (tie blocks merge runs)."""
    from boontrack._bootstrap.compiled import Work
    from boontrack._bootstrap.intervals import STUDENTIZED_METHODS, pivot_columns, studentized_resamples
    from boontrack._bootstrap.precision import AUTO, FIRST_RESAMPLES

    studentized = 0
    resamples = FIRST_RESAMPLES if spec.n_resamples == AUTO else int(spec.n_resamples)  # "auto": its first round
    if spec.ci_method in STUDENTIZED_METHODS:
        for m in table.runs["group"].value_counts().to_numpy().tolist():
            reported_budgets = spec.budgets_for(m)[0]
            curve = _curve_budgets(m, spec, reported_budgets)
            budgets = pivot_columns(curve, m, np.isin(curve, [1, *reported_budgets])).size
            studentized += m * budgets * studentized_resamples(m, budgets, resamples)
    return Work(draws=len(table.runs) * resamples, studentized=studentized)


def _curve_budgets(m: int, spec: Spec, budgets: tuple[int, ...]) -> np.ndarray:
    """Budgets of a group's curve: :func:`~boontrack.resampling.default_budgets` (every n up to 200, else up to 200
    log-spaced ones), plus the group's ``budgets``.

    The band's cost grows with the number of budgets, and 200 log-spaced points draw a smooth curve. Every
    budget fits: :func:`_analyze_iv` refused groups too small for them.
    """
    from boontrack.resampling import default_budgets

    curve = default_budgets(m, estimator=spec.estimator, method=spec.ci_method)
    return np.union1d(curve, np.array(budgets, dtype=np.int64))


def _left_out_warning(runs: int, spec: Spec, left_out: tuple[int, ...]) -> str:
    """Why default budgets were left out of a group, and how to get them."""
    names = ", ".join(f"Boo_{k}" for k in left_out)
    extra = " (BCa with U needs n + 1)" if _bca_with_u(spec) else ""
    return (
        f"{names} left out: {runs} runs are too few{extra}, and Boo_n beyond the number of runs would be an "
        "extrapolation; add runs for it"
    )


def _rng(spec: Spec, *stream: int) -> np.random.Generator:
    """An independent generator for one computation, derived from the spec's seed and the stream's indices."""
    return np.random.default_rng(np.random.SeedSequence([spec.seed, *stream]))


# Stream ids, so that each computation has its own reproducible random numbers.
_GROUP, _COMPARE = range(2)


def _summarize_group(table: RunTable, spec: Spec, index: int, label: str) -> tuple[GroupSummary, CurveBand]:
    """One group's summary, and its bootstrap band (whose resamples unpaired comparisons reuse)."""
    from boontrack._bootstrap import few_runs_messages
    from boontrack._bootstrap.doubts import doubts
    from boontrack.diagnostics import diagnose
    from boontrack.estimators import boo_n_gaussian
    from boontrack.resampling import _summary_band

    val, scores = table.arrays(label)
    test = scores if table.test_column is not None else None
    budgets, left_out = spec.budgets_for(val.size)
    common: dict[str, Any] = dict(
        estimator=spec.estimator,
        maximize=spec.higher_is_better,
        confidence_level=spec.confidence_level,
        n_resamples=spec.n_resamples,
        method=spec.ci_method,
        bounds=spec.bounds,
    )
    with collected() as caught:
        # One resampling of the group gives every interval: the band over the curve's budgets, Boo_n at each
        # reported budget (budgets of the band) and the mean (Boo_1). They agree with each other, and the runs are
        # resampled once instead of once per number.
        curve_budgets = _curve_budgets(val.size, spec, budgets)
        band = _summary_band(val, test, [1, *budgets], n=curve_budgets, rng=_rng(spec, _GROUP, index), **common)
        boo = {int(k): IntervalEstimate.from_bootstrap(band.at(int(k))) for k in budgets}
        mean = IntervalEstimate.from_bootstrap(band.at(1))
        gaussian_values = np.atleast_1d(boo_n_gaussian(val, test, n=list(budgets), maximize=spec.higher_is_better))
        diagnostics = diagnose(val, test, n=max(budgets))
        for message in few_runs_messages(val.size, np.asarray(budgets)):  # the reported budgets' n / m
            warn(message, FewRunsWarning)
    mean_duration, duration_warning = _mean_duration(table, label)
    curve = Curve(
        n=np.asarray(band.n, dtype=np.int64),
        estimate=np.asarray(band.estimate, dtype=np.float64),
        ci_low=np.asarray(band.low, dtype=np.float64),
        ci_high=np.asarray(band.high, dtype=np.float64),
        time=None if mean_duration is None else np.asarray(band.n, dtype=np.float64) * mean_duration,
        simultaneous_low=np.asarray(band.simultaneous_low, dtype=np.float64),
        simultaneous_high=np.asarray(band.simultaneous_high, dtype=np.float64),
        trustworthy=band.trustworthy,
    )
    bounds = band.bounds
    gaussian = GaussianEstimate(
        boo_n={int(k): float(v) for k, v in zip(budgets, gaussian_values)},
        normal=bool(diagnostics.normal),
        normality_statistic=float(diagnostics.normality_statistic),
        normality_critical_5pct=float(diagnostics.normality_critical_5pct),
        unreliable=gaussian_doubts(dict(zip(budgets, map(float, gaussian_values))), diagnostics),
    )
    limits = _interval_limits(val, scores, test is not None, budgets, spec, bounds)
    messages = [*diagnostics.warnings, *caught, *limits]
    if left_out:
        messages.append(_left_out_warning(int(val.size), spec, left_out))
    if duration_warning:
        messages.append(duration_warning)
    summary = GroupSummary(
        label=label,
        runs=int(val.size),
        dropped=tuple(d for d in table.dropped if d.group == label),
        boo_n=boo,
        curve=curve,
        gaussian=gaussian,
        mean=mean,
        diagnostics=diagnostics,
        mean_duration_s=mean_duration,
        warnings=tuple(dict.fromkeys(messages)),
        left_out_budgets=left_out,
        doubts={int(k): doubts(int(val.size), int(k)) for k in sorted({1, *budgets})},
        unseen=_unseen(val, scores, budgets, spec, bounds),
        n_resamples=band.n_resamples,
        bounds=(_finite_or_none(bounds[0]), _finite_or_none(bounds[1])),
        interval_limits=limits,
    )
    return summary, band


def _interval_limits(
    val: np.ndarray,
    scores: np.ndarray,
    test_given: bool,
    budgets: tuple[int, ...],
    spec: Spec,
    bounds: tuple[float, float],
) -> tuple[str, ...]:
    """What a group's intervals cannot show because of where its scores lie (:attr:`GroupSummary.interval_limits`):
    every score equal, else Boo_n at budgets n >= 2 resting on runs at the best score possible."""
    from boontrack.diagnostics import _equal_scores_message

    if scores.size > 1 and np.ptp(scores) == 0:
        return (_equal_scores_message(test_given),)
    at_best = _resting_at_best(val, scores, budgets, spec, bounds)
    return () if at_best is None else (at_best,)


def _resting_at_best(
    val: np.ndarray, scores: np.ndarray, budgets: tuple[int, ...], spec: Spec, bounds: tuple[float, float]
) -> str | None:
    """The statement that runs at the best score possible carry at least half the weight of Boo_n (the share
    :func:`~boontrack._bootstrap.doubts.top_runs` says Boo_n rests on), at the budgets n >= 2 where they do; None
    where they carry less everywhere, or the bound on the better side is open.

    A score at the bound shows no spread: runs that score the bound here may score below it on other test examples
    or in another sweep, and no resample of these runs can show how far below.
    """
    from boontrack._bootstrap.doubts import TOP_SHARE
    from boontrack.estimators import boo_n

    best = bounds[1] if spec.higher_is_better else bounds[0]
    at_best = scores == best
    larger = [k for k in budgets if k > 1]
    if not (math.isfinite(best) and at_best.any() and larger):
        return None
    # Boo_n is linear in the test scores: of the runs' indicator at the best score, it is the weight they carry.
    indicator = at_best.astype(np.float64)
    shares = np.atleast_1d(boo_n(val, indicator, n=larger, estimator=spec.estimator, maximize=spec.higher_is_better))
    # shares of half or more, in whole percents as the reports write them (a bound, as the scores are written)
    carried = [f"{100 * share:.0f} % of Boo_{k}'s" for k, share in zip(larger, shares) if share >= TOP_SHARE]
    if not carried:
        return None
    weights = carried[0] if len(carried) == 1 else f"{', '.join(carried[:-1])} and {carried[-1]}"
    intervals = "its interval" if len(carried) == 1 else "their intervals"
    side = "below" if spec.higher_is_better else "above"
    return (
        f"the runs that scored {best:.4g}, the best score possible ({int(at_best.sum())} of {scores.size}), carry "
        f"{weights} weight: at the bound their scores show no spread, so {intervals} cannot show how far {side} "
        f"{best:.4g} the best runs by validation may score"
    )


def _finite_or_none(end: float) -> float | None:
    """A bound as :attr:`GroupSummary.bounds` keeps it: None for an open side."""
    return None if math.isinf(end) else end


def _unseen(
    val: np.ndarray, scores: np.ndarray, budgets: tuple[int, ...], spec: Spec, bounds: tuple[float, float]
) -> Unseen:
    """What a group's runs (validation and test ``scores``) cannot show (see :class:`Unseen`)."""
    from boontrack._bootstrap.doubts import top_runs, unseen_rate

    m = scores.size
    rate = unseen_rate(m)
    floor = bounds[0] if spec.higher_is_better else bounds[1]
    known = math.isfinite(floor)
    shown = [int(k) for k in budgets if k > 1]
    return Unseen(
        rate=rate,
        floor=floor if known else None,
        mean_shift=rate * abs(float(scores.mean()) - floor) if known else None,
        top_runs={k: top_runs(m, k, spec.estimator) for k in shown},
        without_best=_without_best(val, scores, shown, spec),
    )


def _without_best(
    val: np.ndarray, scores: np.ndarray, budgets: list[int], spec: Spec
) -> dict[int, tuple[float | None, float | None]]:
    """Boo_n at each budget of the runs without their best one, and their best two, by validation (ties by test
    score, as they are ranked for the bootstrap); None where fewer runs than the budget are left."""
    from boontrack._bootstrap import RankedRuns
    from boontrack.estimators import boo_n

    order = RankedRuns(val, scores, spec.higher_is_better).order  # worst to best

    def without(n: int, best: int) -> float | None:
        kept = order[: val.size - best]
        if kept.size < n:  # too few runs left: an extrapolation, or undefined for U
            return None
        return float(boo_n(val[kept], scores[kept], n=n, estimator=spec.estimator, maximize=spec.higher_is_better))

    return {n: (without(n, 1), without(n, 2)) for n in budgets}


def gaussian_doubts(estimates: Mapping[int, float], diagnostics: Diagnostics) -> dict[int, str]:
    """Why each Gaussian Boo_n estimate is not a result to report (budgets without doubt are left out).

    The Gaussian estimate (eq. 6) assumes normal test scores, and it extrapolates from the mean and s.d.
    without looking at the runs themselves. It is flagged when

    - Anderson-Darling rejects normality at 5 % (a weak check: at 10-30 runs it lets most skewed samples
      through, so a pass is no evidence that the estimate is safe);
    - it lies outside [0, 1] while every test score does (a score bounded like an accuracy cannot exceed it);
    - it lies more than one standard deviation beyond the observed extremes of the test scores.

    Boo_1 is never flagged: it is the mean of the test scores.
    """
    d = diagnostics
    bounded = 0.0 <= d.min and d.max <= 1.0
    spread = d.sd if math.isfinite(d.sd) else 0.0
    doubts = {}
    for k, value in estimates.items():
        if k == 1:  # Gaussian Boo_1 is the mean, which assumes nothing
            continue
        reasons = [] if d.normal else ["normality rejected (Anderson-Darling, 5 %)"]
        if bounded and not 0.0 <= value <= 1.0:
            reasons.append(f"{value:.4g} is outside [0, 1], the range of a score whose runs all lie in it")
        elif not d.min - spread <= value <= d.max + spread:
            reasons.append(f"{value:.4g} is more than one s.d. beyond the observed scores [{d.min:.4g}, {d.max:.4g}]")
        if reasons:
            doubts[k] = "; ".join(reasons)
    return doubts


def _mean_duration(table: RunTable, label: str) -> tuple[float | None, str | None]:
    """Mean training seconds of the group's runs with a known duration, and a warning when some are unknown.

    Trackers report 0 s for runs whose times they did not record, so only positive durations count as known.
    """
    durations = table.group_runs(label)["duration_s"].to_numpy(dtype=np.float64)
    known = np.isfinite(durations) & (durations > 0)
    if not known.any():
        return None, None
    warning = None
    if not known.all():
        warning = (
            f"duration unknown for {int((~known).sum())} of {durations.size} runs; "
            "the time axis uses the mean of the others"
        )
    return float(durations[known].mean()), warning


def _comparison_pairs(table: RunTable, spec: Spec) -> list[tuple[int, int]]:
    """(group, baseline) index pairs to compare."""
    count = len(table.groups)
    if spec.compare == "all-pairs":
        return [(a, b) for b in range(count) for a in range(b + 1, count)]
    base = table.groups.index(spec.baseline) if spec.baseline is not None else 0
    return [(a, base) for a in range(count) if a != base]


def _paired_arrays(table: RunTable, a: str, b: str) -> tuple[np.ndarray, ...] | None:
    """(a_val, a_test, b_val, b_test) aligned by seed when both groups have the same distinct seeds, else None."""
    if table.seed_column is None:
        return None
    runs_a, runs_b = table.group_runs(a), table.group_runs(b)
    seeds_a, seeds_b = runs_a["seed"], runs_b["seed"]
    if seeds_a.isna().any() or seeds_b.isna().any() or seeds_a.duplicated().any() or seeds_b.duplicated().any():
        return None
    if set(seeds_a) != set(seeds_b):
        return None
    aligned_b = runs_b.set_index("seed").loc[seeds_a.to_numpy()]
    return (
        runs_a["val"].to_numpy(np.float64),
        runs_a["test"].to_numpy(np.float64),
        aligned_b["val"].to_numpy(np.float64),
        aligned_b["test"].to_numpy(np.float64),
    )


def _compare_groups(
    table: RunTable, spec: Spec, bands: Mapping[str, CurveBand], chosen: Sequence[tuple[str, str]] | None
) -> tuple[ComparisonSummary, ...]:
    if chosen is None:
        pairs = _comparison_pairs(table, spec)
    else:
        pairs = [(table.groups.index(a), table.groups.index(b)) for a, b in chosen]
    if not pairs:
        return ()
    raw = [_compare_pair(table, spec, bands, a, b) for a, b in pairs]
    tests = [c.headline for _, c, _, _ in raw]
    # One family per kind of test: the t-test of every comparison (paired t or Welch), then the rank test.
    families = [{i: list(t.items())[kind] for i, t in enumerate(tests)} for kind in (0, 1)]
    adjusted = [_adjusted(family, spec.correction) for family in families]
    out = []
    for i, ((a, b), (paired, c, boo_differences, messages)) in enumerate(zip(pairs, raw)):
        results = {
            name: TestResult(float(r.statistic), float(r.pvalue), adjusted[kind][i])
            for kind, (name, r) in enumerate(tests[i].items())
        }
        out.append(
            ComparisonSummary(
                group=table.groups[a],
                baseline=table.groups[b],
                paired=paired,
                boo_n_difference=boo_differences,
                mean_difference=IntervalEstimate.from_bootstrap(c.mean_difference),
                welch=results.get("welch"),
                mann_whitney=results.get("mann_whitney"),
                prob_superiority=float(c.mann_whitney.prob_superiority),
                wilcoxon=results.get("wilcoxon"),
                paired_t=results.get("paired_t"),
                warnings=messages,
            )
        )
    return tuple(out)


def _adjusted(family: Mapping[int, tuple[str, Any]], correction: Literal["holm", "bh"]) -> dict[int, float]:
    """Adjusted p-values of one family of tests (comparison position -> (name, result)), by position.

    A test is undefined (NaN p-value) when both groups have constant scores (or, paired, every difference is
    the same); it takes no part in the correction and keeps NaN.
    """
    from boontrack.compare import adjust_pvalues

    defined = [i for i, (_, r) in family.items() if math.isfinite(r.pvalue)]
    adjusted = dict.fromkeys(family, math.nan)
    if defined:
        pvalues = [family[i][1].pvalue for i in defined]
        adjusted.update(zip(defined, adjust_pvalues(pvalues, method=correction).tolist()))
    return adjusted


def _compare_pair(
    table: RunTable, spec: Spec, bands: Mapping[str, CurveBand], a: int, b: int
) -> tuple[bool, Comparison, dict[int, IntervalEstimate], tuple[str, ...]]:
    """Group a against group b: differences in Boo_n at every budget both report and in the mean, and the tests."""
    label_a, label_b = table.groups[a], table.groups[b]
    runs = {label: len(table.group_runs(label)) for label in (label_a, label_b)}
    reported = {label: spec.budgets_for(count)[0] for label, count in runs.items()}
    budgets = [k for k in spec.budgets if k in reported[label_a] and k in reported[label_b]]
    aligned = _paired_arrays(table, label_a, label_b)
    with collected() as messages:
        if aligned is None and spec.ci_method not in _RESAMPLED_DIFFERENCES:
            comparison, differences = _independent_comparison(
                table, spec, bands[label_a], bands[label_b], a, b, budgets
            )
        else:
            paired = aligned is not None
            arrays = aligned if paired else _group_arrays(table, label_a, label_b)
            has_test = table.test_column is not None
            resamples = max(bands[label_a].n_resamples, bands[label_b].n_resamples)  # as the groups needed
            comparison, differences = _resampled_comparison(spec, arrays, has_test, paired, (a, b), budgets, resamples)
    left_out = [k for k in spec.budgets if k not in differences and k in reported[label_a] + reported[label_b]]
    if left_out:
        smaller = min(runs, key=lambda label: runs[label])
        messages.append(
            f"{', '.join(f'ΔBoo_{k}' for k in left_out)} left out: group {smaller!r} has {runs[smaller]} runs, "
            "too few for it"
        )
    scores = (aligned[1], aligned[3]) if aligned is not None else (table.arrays(label_a)[1], table.arrays(label_b)[1])
    wider = _wider_than_t(comparison.mean_difference, *scores, paired=aligned is not None)
    if wider:
        messages.append(wider)
    boo_differences = {k: IntervalEstimate.from_bootstrap(r) for k, r in differences.items()}
    return aligned is not None, comparison, boo_differences, tuple(messages)


#: A difference's interval at least this many times as wide as the t-interval of the same runs is said to be,
#: with why (:func:`_wider_than_t`).
WIDER_THAN_T = 1.1


def _wider_than_t(difference: Any, a: np.ndarray, b: np.ndarray, *, paired: bool) -> str | None:
    """One line when the bootstrap interval of mean(A) - mean(B) is at least :data:`WIDER_THAN_T` times as wide
    as the t-interval of the same runs (the paired t-test's for runs paired by seed, else Welch's), or holds 0
    where the t-interval does not: the two intervals, and why they differ. None otherwise, or when the t-interval
    is undefined (constant scores)."""
    from boontrack._special import student_t_isf

    level = difference.confidence_level
    if paired:
        gaps = a - b
        centre, error, df = gaps.mean(), gaps.std(ddof=1) / math.sqrt(gaps.size), gaps.size - 1.0
        name = "the paired t-interval"
    else:
        share_a, share_b = a.var(ddof=1) / a.size, b.var(ddof=1) / b.size
        centre, error, name = a.mean() - b.mean(), math.sqrt(share_a + share_b), "Welch's t-interval"
        df = (share_a + share_b) ** 2 / (share_a**2 / (a.size - 1) + share_b**2 / (b.size - 1)) if error else 0.0
    if not error > 0:
        return None
    reach = student_t_isf((1.0 - level) / 2.0, df) * error
    low, high = difference.confidence_interval.low, difference.confidence_interval.high
    ratio = (high - low) / (2.0 * reach)
    t_excludes_zero = abs(centre) > reach
    if ratio < WIDER_THAN_T and not (t_excludes_zero and low <= 0.0 <= high):
        return None
    return (
        f"Δmean: the interval [{low:.4g}, {high:.4g}] is {ratio:.2f}x as wide as {name} "
        f"[{centre - reach:.4g}, {centre + reach:.4g}] of the same runs"
        f"{', which excludes 0' if t_excludes_zero else ''}: its ends come from the resampled differences, whose "
        "studentized tails are heavier than Student's t here (skewed scores, or a few runs far from the others), "
        "where the t-interval takes the scores to be normal"
    )


def _independent_comparison(table, spec, band_a, band_b, a, b, budgets):
    """Runs not paired by seed: the two groups' own (independent) resamples are resamples of the difference
    (:func:`boontrack.compare.independent_difference`), studentized with the standard errors the bands keep."""
    from boontrack.compare import Comparison, independent_differences, mann_whitney, welch_test

    chosen = [*map(int, budgets), 1]  # the mean last
    *boo, mean = independent_differences([band_a.at(k) for k in chosen], [band_b.at(k) for k in chosen])
    differences = dict(zip(chosen, boo))
    (_, a_scores), (_, b_scores) = table.arrays(table.groups[a]), table.arrays(table.groups[b])
    comparison = Comparison(
        boo_n_difference=differences[max(differences)],
        mean_difference=mean,
        welch=welch_test(a_scores, b_scores),
        mann_whitney=mann_whitney(a_scores, b_scores),
        wilcoxon=None,
    )
    return comparison, differences


def _group_arrays(table, label_a, label_b):
    """A's validation and test scores, then B's, as :func:`_paired_arrays` gives them (unaligned here)."""
    (a_val, a_test), (b_val, b_test) = table.arrays(label_a), table.arrays(label_b)
    return a_val, a_test, b_val, b_test


def _resampled_comparison(spec, arrays, has_test, paired, indices, budgets, resamples):
    """The comparison draws its own resamples, as many as the groups' intervals took: of pairs for runs paired
    by seed, so that a resample keeps them together, else of each group; one draw serves every budget (then the
    mean difference draws its own, from the same generator)."""
    from boontrack.compare import _compare_at_budgets

    a_val, a_test, b_val, b_test = arrays
    if not has_test:
        a_test = b_test = None
    return _compare_at_budgets(
        a_val,
        b_val,
        a_test,
        b_test,
        n=budgets,
        estimator=spec.estimator,
        maximize=spec.higher_is_better,
        paired=paired,
        # Differences are studentized or percentile: BCa and the smoothed bootstrap are single-group methods, and
        # the calibrated level and the k-out-of-m pivot are one group's (a difference takes the studentized-u
        # interval, whose type-I error was measured).
        method=_DIFFERENCE_METHODS.get(spec.ci_method, "percentile"),
        bounds=spec.bounds,
        confidence_level=spec.confidence_level,
        n_resamples=resamples,
        rng=_rng(spec, _COMPARE, *indices),
    )


#: The groups' interval methods whose bands do not give the difference of groups without shared seeds: the
#: k-out-of-m pivot's difference is too conservative (``bench_compare.py --groups``: type-I error 1.5-4.9 % and
#: power at m = 20 for ΔBoo_5 5.3 %, where ``"studentized-u"``'s is 4.0-6.3 % and 14.9 %), so the comparison
#: resamples the two groups for ``"studentized-u"``'s interval of the difference instead.
_RESAMPLED_DIFFERENCES = ("studentized-u-k-of-m",)
#: The interval method of a difference for each method of the groups' intervals (others: percentile).
_DIFFERENCE_METHODS = {
    "studentized-u-farther": "studentized-u",
    "studentized-u": "studentized-u",
    "studentized-u-calibrated": "studentized-u",
    "studentized-u-k-of-m": "studentized-u",
    "studentized": "studentized",
}


def _versions() -> dict[str, str]:
    from importlib.metadata import version

    import pandas

    import boontrack

    return {
        "boontrack": boontrack.__version__,
        "numpy": np.__version__,
        "scipy": version("scipy"),  # installed, not imported: a summary no longer needs it
        "pandas": pandas.__version__,
    }


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
    return _jsonable(
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


def _jsonable(value: Any) -> Any:
    """Dataclasses, mappings, sequences and numpy values as JSON-ready Python data; NaN/inf become None."""
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: _jsonable(getattr(value, f.name)) for f in fields(value) if f.compare}
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, np.ndarray):
        return [_jsonable(v) for v in value.tolist()]
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
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
    )


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
