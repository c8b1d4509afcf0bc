"""From a RunTable to a Summary: per-group estimates, intervals, curves, diagnostics and comparisons.

:func:`analyze` is the one function that turns validated runs into numbers; the CLI, the post-sweep callbacks
and the scheduled job all call it. Every random draw comes from generators derived from ``Spec.seed``, so
the same runs and spec give the same :class:`~boontrack.summary.Summary` (which makes writes back to a tracker
idempotent). The result types, and their JSON round trip, are :mod:`boontrack.summary`'s.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from boontrack import vocabulary
from boontrack._collector import collected, warn
from boontrack._progress import progress_bar
from boontrack.across_analysis import summarize_across_tasks, task_pairs
from boontrack.exceptions import FewRunsWarning, InputError
from boontrack.spec import Spec
from boontrack.summary import (
    ComparisonSummary,
    Curve,
    GaussianEstimate,
    GroupSummary,
    IntervalEstimate,
    Summary,
    TestResult,
    Unseen,
)

if TYPE_CHECKING:
    from boontrack._bootstrap.compiled import Work
    from boontrack.compare import Comparison
    from boontrack.diagnostics import Diagnostics
    from boontrack.resampling import CurveBand
    from boontrack.runtable import RunTable

__all__ = ["analyze", "gaussian_doubts"]


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

    With a task column (``spec.task_column``), each group is one approach on one task, the approaches are
    compared within each task (``spec.compare`` and ``spec.baseline`` name approaches), and
    :attr:`Summary.across_tasks` aggregates and compares them across the tasks
    (:func:`boontrack.across_analysis.summarize_across_tasks`).

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
    if table.task_cells is not None and pairs is None:
        pairs = task_pairs(table.task_cells, spec)  # the approaches within each task
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
    across = None if table.task_cells is None else summarize_across_tasks(table, spec, pairs or ())
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
        across_tasks=across,
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
    # with a task column, the baseline is an approach: the groups are its cells on the tasks
    known = table.groups if table.task_cells is None else table.task_cells.approaches
    if spec.baseline is not None and spec.baseline not in known:
        raise InputError(f"baseline group {spec.baseline!r} not found; groups are: {', '.join(known)}")
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
    task_column = None if table.task_cells is None else table.task_cells.column
    pairs.append(("task_column", task_column, spec.task_column, param))
    group_by = table.group_by if task_column is None else table.group_by[1:]  # the task's key first
    if spec.group_by is not None:
        pairs += [("group_by", resolved, name, param) for resolved, name in zip(group_by, spec.group_by)]
        if len(group_by) != len(spec.group_by):
            pairs.append(("group_by", ", ".join(group_by), ", ".join(spec.group_by), ()))
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
    from boontrack.resampling import summary_band

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
        band = summary_band(val, test, [1, *budgets], n=curve_budgets, rng=_rng(spec, _GROUP, index), **common)
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
    from boontrack.diagnostics import equal_scores_message

    if scores.size > 1 and np.ptp(scores) == 0:
        return (equal_scores_message(test_given),)
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
        assumed_bounds=bounds if known and (spec.bounds is None or spec.bounds_from is not None) else None,
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
                mean_difference=_mean_difference(c),
                welch=results.get("welch"),
                mann_whitney=results.get("mann_whitney"),
                prob_superiority=float(c.mann_whitney.prob_superiority),
                wilcoxon=results.get("wilcoxon"),
                paired_t=results.get("paired_t"),
                warnings=messages,
            )
        )
    return tuple(out)


def _mean_difference(comparison: Any) -> IntervalEstimate:
    """Δmean with the t-interval of the t-test reported beside it (the paired t-test's for runs paired by seed,
    else Welch's): at m = 10 it rejected a shift of half a standard deviation more often than the studentized
    bootstrap interval (49.5 % against 44.7 % paired), erring as rarely under the null (at most 5.5 %;
    docs/statistics/comparing.md), and it excludes 0 exactly when the t-test's p-value is below 1 - level."""
    t_test = comparison.paired_t or comparison.welch
    ci = t_test.confidence_interval
    return IntervalEstimate(float(comparison.mean_difference.estimate), ci.low, ci.high, t_test.standard_error)


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


def adjusted_across(summaries: Sequence[Summary]) -> tuple[Summary, ...]:
    """The summaries with every p-value adjusted over the comparisons of all of them (one metric: unchanged): the
    metrics of a comparison of sources (:func:`boontrack.sources.compare_sources`) form one family."""
    everyone = [comparison for summary in summaries for comparison in summary.comparisons]
    tests = [list(comparison.tests.items()) for comparison in everyone]
    correction = summaries[0].spec.correction
    # one family per kind of test, as within a summary: the t-tests (paired t or Welch), then the rank tests
    adjusted = [_adjusted({i: each[kind] for i, each in enumerate(tests)}, correction) for kind in (0, 1)]
    replaced = []
    for i, comparison in enumerate(everyone):
        results: dict[str, Any] = {
            name: TestResult(result.statistic, result.pvalue, adjusted[kind][i])
            for kind, (name, result) in enumerate(tests[i])
        }
        replaced.append(dataclasses.replace(comparison, **results))
    remaining = iter(replaced)
    return tuple(
        dataclasses.replace(summary, comparisons=tuple(itertools.islice(remaining, len(summary.comparisons))))
        for summary in summaries
    )


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
    boo_differences = {k: IntervalEstimate.from_bootstrap(r) for k, r in differences.items()}
    return aligned is not None, comparison, boo_differences, tuple(messages)


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
        welch=welch_test(a_scores, b_scores, confidence_level=spec.confidence_level),
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
    from boontrack.compare import compare_at_budgets

    a_val, a_test, b_val, b_test = arrays
    if not has_test:
        a_test = b_test = None
    return compare_at_budgets(
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
