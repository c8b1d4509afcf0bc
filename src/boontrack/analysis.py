"""From a RunTable to a Summary: per-group estimates, intervals, curves, diagnostics and comparisons.

:func:`analyze` is the one function that turns validated runs into numbers; the CLI, the post-sweep callbacks
and the scheduled job all call it. Every random draw comes from generators derived from ``Spec.seed``, so
the same runs and spec give the same :class:`Summary` (which makes writes back to a tracker idempotent).
"""

from __future__ import annotations

import contextlib
import math
import sys
import warnings
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields, is_dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from boontrack.exceptions import BoontrackWarning, FewRunsWarning, InputError
from boontrack.spec import Spec

if TYPE_CHECKING:
    from boontrack.compare import Comparison
    from boontrack.diagnostics import Diagnostics
    from boontrack.resampling import CurveBand
    from boontrack.runtable import DroppedRun, RunTable

__all__ = [
    "ComparisonSummary",
    "Curve",
    "GaussianEstimate",
    "GroupSummary",
    "IntervalEstimate",
    "Spec",
    "Summary",
    "TestResult",
    "analyze",
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
    (:class:`boontrack.resampling.CurveBand`). ``trustworthy`` is False at budgets n > m/2, and from the
    smallest budget whose estimated coverage (:attr:`GroupSummary.coverage`) is below 90 % on.
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
    """Parametric Boo_n (Bajgar et al. 2018, eq. 6) and whether the test scores look normal (Anderson-Darling)."""

    boo_n: Mapping[int, float]
    normal: bool
    normality_statistic: float
    normality_critical_5pct: float


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
    #: Estimated actual coverage of the intervals at n = 1 (the mean) and each ``Spec.n``, simulated from a
    #: smoothed fit of the runs (:func:`boontrack.simulate.coverage_check`); NaN when not estimated.
    coverage: Mapping[int, float] = field(default_factory=dict)
    #: Why the coverage was not estimated (e.g. more than 500 runs), or None.
    coverage_skipped: str | None = None


@dataclass(frozen=True)
class TestResult:
    """A hypothesis test of one comparison, with its p-value adjusted over all comparisons."""

    statistic: float
    pvalue: float
    pvalue_adjusted: float


@dataclass(frozen=True)
class ComparisonSummary:
    """Group ``group`` against ``baseline``: differences are ``group - baseline`` of the test scores."""

    group: str
    baseline: str
    #: Whether runs were paired by seed (then the bootstrap resamples pairs and Wilcoxon is computed).
    paired: bool
    boo_n_difference: Mapping[int, IntervalEstimate]
    mean_difference: IntervalEstimate
    welch: TestResult
    mann_whitney: TestResult
    #: P(group > baseline) + 0.5 P(equal), from the Mann-Whitney statistic.
    prob_superiority: float
    wilcoxon: TestResult | None
    warnings: tuple[str, ...] = ()


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

    @property
    def metric(self) -> str:
        """Name of the reported metric (the test metric, else the validation metric)."""
        return self.spec.metric

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


def analyze(table: RunTable, spec: Spec, *, progress: bool = False, source: str | None = None) -> Summary:
    """Summarize every group of ``table`` and compare the groups, as ``spec`` says.

    Per group: Boo_n at each ``spec.n`` with a bootstrap interval, the expected-best curve over n = 1..m with a
    band (and over expected compute time when durations are known), the Gaussian estimate with the normality
    verdict, the mean with an interval, and diagnostics. Then every group against the baseline (or all pairs):
    differences in Boo_n and mean with intervals, Welch, Mann-Whitney and (paired by seed) Wilcoxon tests,
    p-values adjusted over all comparisons (``spec.correction``).

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

    Raises
    ------
    InputError
        A group with fewer runs than the largest n, an unknown baseline, or invalid spec options.
    """
    _analyze_iv(table, spec)
    with _progress_bar(table.groups, enabled=progress, label="boontrack: groups") as groups:
        results = [_summarize_group(table, spec, index, label) for index, label in enumerate(groups)]
    summaries = tuple(summary for summary, _ in results)
    comparisons = _compare_groups(table, spec, {summary.label: band for summary, band in results})
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


def _analyze_iv(table: RunTable, spec: Spec) -> None:
    """InputError for spec options the analysis cannot use and for groups too small for the budgets."""
    spec.check()
    if spec.baseline is not None and spec.baseline not in table.groups:
        raise InputError(f"baseline group {spec.baseline!r} not found; groups are: {', '.join(table.groups)}")
    largest = max(spec.n)
    # BCa's jackknife evaluates U on m - 1 runs, so it needs one run more than the largest budget.
    needed = largest + 1 if _bca_with_u(spec) else largest
    counts = table.runs["group"].value_counts()
    small = [(label, int(counts[label])) for label in table.groups if counts[label] < needed]
    if small:
        listed = ", ".join(f"{label!r} has {count}" for label, count in small[:5])
        more = f" (and {len(small) - 5} more groups)" if len(small) > 5 else ""
        why = (
            "the U estimator cannot extrapolate beyond the number of runs"
            if spec.estimator == "U"
            else "Boo_n beyond the number of runs would be an extrapolation"
        )
        keys = f"; groups are split by {', '.join(table.group_by)}" if table.group_by else ""
        raise InputError(
            f"too few runs for n = {largest}: group {listed}{more} runs; {why}"
            + (" (BCa with U needs n + 1 runs)" if needed > largest else "")
            + f". Lower --n or add runs{keys}"
        )


def _bca_with_u(spec: Spec) -> bool:
    return spec.estimator == "U" and spec.ci_method == "bca"


def _curve_budgets(m: int, spec: Spec) -> np.ndarray:
    """Budgets of a group's curve: every n up to 200, else 200 log-spaced ones, plus every ``spec.n``.

    The band's cost grows with the number of budgets, and 200 log-spaced points draw a smooth curve. Every
    ``spec.n`` fits: :func:`_analyze_iv` refused groups too small for them.
    """
    from boontrack.resampling import default_budgets

    budgets = default_budgets(m, estimator=spec.estimator, method=spec.ci_method)
    return np.union1d(budgets, np.array(spec.n, dtype=np.int64))


def _rng(spec: Spec, *stream: int) -> np.random.Generator:
    """An independent generator for one computation, derived from the spec's seed and the stream's indices."""
    return np.random.default_rng(np.random.SeedSequence([spec.seed, *stream]))


# Stream ids, so that each computation has its own reproducible random numbers.
_GROUP, _COMPARE, _COVERAGE = range(3)


def _summarize_group(table: RunTable, spec: Spec, index: int, label: str) -> tuple[GroupSummary, CurveBand]:
    """One group's summary, and its bootstrap band (whose resamples the comparisons reuse)."""
    from boontrack.diagnostics import diagnose
    from boontrack.estimators import boo_n_gaussian
    from boontrack.resampling import _few_runs_messages, boo_n_curve_ci
    from boontrack.simulate import coverage_check

    val, scores = table.arrays(label)
    test = scores if table.test_column is not None else None
    common = dict(
        estimator=spec.estimator,
        maximize=spec.maximize,
        confidence_level=spec.confidence_level,
        n_resamples=spec.n_resamples,
        method=spec.ci_method,
    )
    with _collected_warnings() as caught:
        # One resampling of the group gives every interval: the band over the curve's budgets, Boo_n at each
        # spec.n (budgets of the band) and the mean (Boo_1). They agree with each other, and the runs are
        # resampled once instead of once per number.
        band = boo_n_curve_ci(val, test, n=_curve_budgets(val.size, spec), rng=_rng(spec, _GROUP, index), **common)
        boo = {int(k): IntervalEstimate.from_bootstrap(band.at(int(k))) for k in spec.n}
        mean = IntervalEstimate.from_bootstrap(band.at(1))
        gaussian_values = np.atleast_1d(boo_n_gaussian(val, test, n=list(spec.n), maximize=spec.maximize))
        diagnostics = diagnose(val, test, n=max(spec.n))
        for message in _few_runs_messages(val.size, np.asarray(spec.n)):  # the reported budgets' n / m
            warnings.warn(message, FewRunsWarning, stacklevel=1)
        # The actual coverage of these intervals, simulated from a smoothed fit of the runs (its own cost bound).
        check = coverage_check(
            val,
            test,
            n=sorted({1, *spec.n}),
            estimator=spec.estimator,
            maximize=spec.maximize,
            confidence_level=spec.confidence_level,
            method=spec.ci_method,
            rng=_rng(spec, _COVERAGE, index),
        )
    mean_duration, duration_warning = _mean_duration(table, label)
    doubtful = check.n[check.doubtful]
    curve = Curve(
        n=np.asarray(band.n, dtype=np.int64),
        estimate=np.asarray(band.estimate, dtype=np.float64),
        ci_low=np.asarray(band.low, dtype=np.float64),
        ci_high=np.asarray(band.high, dtype=np.float64),
        time=None if mean_duration is None else np.asarray(band.n, dtype=np.float64) * mean_duration,
        simultaneous_low=np.asarray(band.simultaneous_low, dtype=np.float64),
        simultaneous_high=np.asarray(band.simultaneous_high, dtype=np.float64),
        # coverage falls as n grows: from the smallest doubtful budget on, the band is doubtful too
        trustworthy=band.trustworthy & (band.n < (doubtful.min() if doubtful.size else np.inf)),
    )
    gaussian = GaussianEstimate(
        boo_n={int(k): float(v) for k, v in zip(spec.n, gaussian_values)},
        normal=bool(diagnostics.normal),
        normality_statistic=float(diagnostics.normality_statistic),
        normality_critical_5pct=float(diagnostics.normality_critical_5pct),
    )
    messages = [*diagnostics.warnings, *caught]
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
        coverage={int(k): float(c) for k, c in zip(check.n, check.coverage)},
        coverage_skipped=check.skipped,
    )
    return summary, band


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
    table: RunTable, spec: Spec, bands: Mapping[str, CurveBand]
) -> tuple[ComparisonSummary, ...]:
    from boontrack.compare import adjust_pvalues

    pairs = _comparison_pairs(table, spec)
    if not pairs:
        return ()
    raw = [_compare_pair(table, spec, bands, a, b) for a, b in pairs]
    comparisons = [comparison for _, comparison, _, _ in raw]

    def adjusted(test: str) -> dict[int, float]:
        """Adjusted p-values of one test over the comparisons where it is defined, by position.

        A test is undefined (NaN p-value) when both groups have constant scores; it takes no part in the
        correction and keeps NaN.
        """
        results = {i: getattr(c, test) for i, c in enumerate(comparisons) if getattr(c, test) is not None}
        defined = [i for i, r in results.items() if math.isfinite(r.pvalue)]
        adjusted = dict.fromkeys(results, math.nan)
        if defined:
            pvalues = [results[i].pvalue for i in defined]
            adjusted.update(zip(defined, adjust_pvalues(pvalues, method=spec.correction).tolist()))
        return adjusted

    welch, mann_whitney, wilcoxon = adjusted("welch"), adjusted("mann_whitney"), adjusted("wilcoxon")
    out = []
    for i, ((a, b), (paired, c, boo_differences, messages)) in enumerate(zip(pairs, raw)):
        out.append(
            ComparisonSummary(
                group=table.groups[a],
                baseline=table.groups[b],
                paired=paired,
                boo_n_difference=boo_differences,
                mean_difference=IntervalEstimate.from_bootstrap(c.mean_difference),
                welch=TestResult(float(c.welch.statistic), float(c.welch.pvalue), welch[i]),
                mann_whitney=TestResult(float(c.mann_whitney.statistic), float(c.mann_whitney.pvalue), mann_whitney[i]),
                prob_superiority=float(c.mann_whitney.prob_superiority),
                wilcoxon=None
                if c.wilcoxon is None
                else TestResult(float(c.wilcoxon.statistic), float(c.wilcoxon.pvalue), wilcoxon[i]),
                warnings=messages,
            )
        )
    return tuple(out)


def _compare_pair(
    table: RunTable, spec: Spec, bands: Mapping[str, CurveBand], a: int, b: int
) -> tuple[bool, Comparison, dict[int, IntervalEstimate], tuple[str, ...]]:
    """Group a against group b: differences in Boo_n at every n and in the mean, and the tests."""
    label_a, label_b = table.groups[a], table.groups[b]
    aligned = _paired_arrays(table, label_a, label_b)
    with _collected_warnings() as messages:
        if aligned is None:
            comparison, differences = _independent_comparison(table, spec, bands[label_a], bands[label_b], a, b)
        else:
            comparison, differences = _paired_comparison(spec, aligned, table.test_column is not None, a, b)
    boo_differences = {k: IntervalEstimate.from_bootstrap(r) for k, r in differences.items()}
    return aligned is not None, comparison, boo_differences, tuple(messages)


def _independent_comparison(table, spec, band_a, band_b, a, b):
    """Runs not paired by seed: the two groups' own (independent) resamples are resamples of the difference."""
    from boontrack.compare import Comparison, independent_difference, mann_whitney, welch_test

    differences = {int(k): independent_difference(band_a.at(int(k)), band_b.at(int(k))) for k in spec.n}
    (_, a_scores), (_, b_scores) = table.arrays(table.groups[a]), table.arrays(table.groups[b])
    comparison = Comparison(
        boo_n_difference=differences[max(spec.n)],
        mean_difference=independent_difference(band_a.at(1), band_b.at(1)),
        welch=welch_test(a_scores, b_scores),
        mann_whitney=mann_whitney(a_scores, b_scores),
        wilcoxon=None,
    )
    return comparison, differences


def _paired_comparison(spec, aligned, has_test, a, b):
    """Runs paired by seed: the pairs are resampled together, so the comparison draws its own resamples."""
    from boontrack.compare import boo_n_difference_ci, compare_approaches

    a_val, a_test, b_val, b_test = aligned
    if not has_test:
        a_test = b_test = None
    options = dict(
        estimator=spec.estimator,
        maximize=spec.maximize,
        paired=True,
        confidence_level=spec.confidence_level,
        n_resamples=spec.n_resamples,
    )
    largest = max(spec.n)
    comparison = compare_approaches(a_val, b_val, a_test, b_test, n=largest, rng=_rng(spec, _COMPARE, a, b), **options)
    differences = {
        int(k): comparison.boo_n_difference
        if k == largest
        else boo_n_difference_ci(
            a_val, b_val, a_test, b_test, n=int(k), rng=_rng(spec, _COMPARE, a, b, j + 1), **options
        )
        for j, k in enumerate(spec.n)
    }
    return comparison, differences


@contextlib.contextmanager
def _collected_warnings() -> Iterator[list[str]]:
    """Collect boontrack's warnings (deduplicated, in order) into the yielded list; re-emit any other warning."""
    messages: list[str] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield messages
    for w in caught:
        if issubclass(w.category, BoontrackWarning):
            if str(w.message) not in messages:
                messages.append(str(w.message))
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno, source=w.source)


@contextlib.contextmanager
def _progress_bar(items: Sequence[str], *, enabled: bool, label: str) -> Iterator[Any]:
    """A click progress bar over ``items`` on an interactive stderr; the plain items otherwise."""
    if not (enabled and sys.stderr.isatty()):
        yield items
        return
    import click

    with click.progressbar(items, label=label, file=sys.stderr) as bar:
        yield bar


def _versions() -> dict[str, str]:
    import pandas
    import scipy

    import boontrack

    return {
        "boontrack": boontrack.__version__,
        "numpy": np.__version__,
        "scipy": scipy.__version__,
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
            "coverage": {str(k): v for k, v in g.coverage.items()},
            "coverage_skipped": g.coverage_skipped,
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
