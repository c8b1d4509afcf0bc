"""Aggregates across tasks (:mod:`boontrack.across`): each against an independent computation, the stratified
bootstrap against the resamples it stands for, invariants, the refusals, and the example benchmark."""

from __future__ import annotations

import csv
import importlib.util
import warnings
from pathlib import Path

import across_oracles as oracle
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import boontrack as bt
from boontrack import across
from boontrack.across import across_tasks
from boontrack.exceptions import ExtrapolationWarning, FewRunsWarning

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
FAST = {"n_resamples": 200, "rng": 0}
#: A float result equals its exact value up to rounding of a few operations.
CLOSE = 1e-12


def _columns(rows):
    group, task, score, validation = zip(*rows)
    return np.array(score), list(task), list(group), (None if validation[0] is None else np.array(validation))


def _run(rows, **options):
    """across_tasks on the rows, without the measured warnings every small benchmark gets (tested on their own)."""
    score, task, group, validation = _columns(rows)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FewRunsWarning)
        return across_tasks(score, task=task, group=group, validation=validation, **{**FAST, **options})


def _close(value, exact):
    assert abs(float(value) - exact) <= CLOSE * max(1.0, abs(float(exact))), (value, exact, float(exact))


# -- small benchmarks: dyadic scores (exact in floating point), ties likely ---------------------------------------

score = st.sampled_from([0.0, 0.25, 0.5, 0.625, 0.75, 1.0, 1.5, -0.5])


@st.composite
def benchmarks(draw, validation: bool | None = None, min_runs: int = 1, max_runs: int = 4):
    """Rows (group, task, score, validation) of 1-3 groups on 1-4 tasks, every group on every task."""
    groups = draw(st.sampled_from([["A"], ["A", "B"], ["A", "B", "C"]]))
    tasks = draw(st.sampled_from([["t1"], ["t1", "t2"], ["t1", "t2", "t3"], ["t1", "t2", "t3", "t4"]]))
    with_validation = draw(st.booleans()) if validation is None else validation
    rows = []
    for g in groups:
        for t in tasks:
            for _ in range(draw(st.integers(min_runs, max_runs))):
                rows.append((g, t, draw(score), draw(score) if with_validation else None))
    return draw(st.permutations(rows))


def _spread_on_every_task(rows):
    return all(len({s for _, t, s, _ in rows if t == task}) > 1 for task in {t for _, t, _, _ in rows})


@settings(max_examples=60, deadline=None)
@given(benchmarks(), st.booleans(), st.sampled_from(["none", "min-max", "reference"]), st.integers(1, 3))
def test_every_aggregate_equals_the_exact_oracle(rows, maximize, normalize, n):
    if normalize == "min-max" and not _spread_on_every_task(rows):
        return  # refused (tested below)
    if normalize == "reference":
        normalize = {t: (-1.0, 2.0 + i) for i, t in enumerate(sorted({t for _, t, _, _ in rows}))}
    tau = [0.0, 0.5, 0.75]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ExtrapolationWarning)
        warnings.simplefilter("ignore", FewRunsWarning)
        res = _run(rows, maximize=maximize, normalize=normalize, n=n, tau=tau)
    exact = oracle.aggregates(rows, maximize=maximize, normalize=normalize, n=n, tau=tau)
    for group, expected in exact.items():
        got = res.aggregates[group]
        for name in ("mean", "median", "iqm", "optimality_gap"):
            _close(getattr(got, name).estimate, expected[name])
        _close(got.boo_n[n].estimate, expected["boo_n"])
        for share, want in zip(got.profile.share, expected["profile"]):
            _close(share, want)
    for a, b in res.comparisons:
        _close(res.compare(a, b).prob_improvement.estimate, oracle.prob_improvement(rows, a, b, maximize=maximize))
        _close(res.compare(b, a).prob_improvement.estimate, oracle.prob_improvement(rows, b, a, maximize=maximize))
        _close(res.compare(a, b).iqm_difference.estimate, exact[a]["iqm"] - exact[b]["iqm"])
        _close(res.compare(a, b).boo_n_difference[n].estimate, exact[a]["boo_n"] - exact[b]["boo_n"])


@settings(max_examples=40, deadline=None)
@given(benchmarks(validation=False), st.sampled_from(["V", "U", "W"]))
def test_the_aggregate_boo_n_is_the_mean_of_the_tasks_boo_n_of_the_estimators(rows, estimator):
    """Without validation scores, each task's Boo_n is boontrack.boo_n of its scores alone (the expected best
    score of n runs); with reference scores, normalized as (Boo_n - low) / (high - low)."""
    smallest = min(sum(1 for g, t, _, _ in rows if (g, t) == cell) for cell in {(g, t) for g, t, _, _ in rows})
    n = min(2, smallest)
    reference = {t: (-1.0, 3.0) for _, t, _, _ in rows}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FewRunsWarning)
        res = _run(rows, maximize=True, normalize=reference, n=[1, n], estimator=estimator)
    for group in res.groups:
        per_task = [
            (bt.boo_n([s for g, t, s, _ in rows if (g, t) == (group, task)], n=n, estimator=estimator) + 1.0) / 4.0
            for task in res.tasks
        ]
        assert res.aggregates[group].task_boo_n[n] == pytest.approx(per_task, abs=1e-12)
        assert res.aggregates[group].boo_n[n].estimate == pytest.approx(np.mean(per_task), abs=1e-12)
        # Boo_1 is the mean of each task's scores: the aggregate mean
        assert res.aggregates[group].boo_n[1].estimate == pytest.approx(res.aggregates[group].mean.estimate, abs=1e-12)


def test_boo_n_picks_by_the_validation_scores():
    # task t: the best validation run has the worst test score; Boo_n at n = m (U) is that run's test score
    rows = [("A", "t", 0.9, 0.1), ("A", "t", 0.5, 0.2), ("A", "t", 0.1, 0.3)]
    res = _run(rows, maximize=True, n=3, estimator="U")
    assert res.aggregates["A"].boo_n[3].estimate == pytest.approx(0.1)
    res = _run(rows, maximize=False, n=3, estimator="U")  # lowest validation is best
    assert res.aggregates["A"].boo_n[3].estimate == pytest.approx(0.9)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.floats(-5, 5), min_size=1, max_size=9), min_size=1, max_size=6))
def test_the_iqm_is_scipys_trimmed_mean_of_the_pooled_runs(tasks):
    """Tasks of unequal numbers of runs: the IQM pools every run, as scipy.stats.trim_mean(x, 0.25)."""
    scores = np.concatenate([np.array(t) for t in tasks])
    labels = np.repeat(np.arange(len(tasks)), [len(t) for t in tasks])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FewRunsWarning)
        warnings.simplefilter("ignore", ExtrapolationWarning)
        res = across_tasks(scores, task=labels, group=["g"] * scores.size, maximize=True, n_resamples=20, rng=0)
    iqm = res.aggregates["g"].iqm
    assert iqm.estimate == pytest.approx(stats.trim_mean(scores, 0.25), abs=1e-12)
    assert scores.min() <= iqm.estimate <= scores.max()
    assert scores.min() <= iqm.confidence_interval.low <= iqm.confidence_interval.high <= scores.max()


def test_the_probability_of_improvement_counts_ties_as_halves():
    # A = [1, 2, 2], B = [2, 3]: of the 6 pairs, A wins none and ties two -> 1/6; lower is better: 5/6
    rows = [("A", "t", 1.0, None), ("A", "t", 2.0, None), ("A", "t", 2.0, None), ("B", "t", 2.0, None)]
    rows += [("B", "t", 3.0, None)]
    assert _run(rows, maximize=True, n=1).compare("A", "B").prob_improvement.estimate == pytest.approx(1 / 6)
    assert _run(rows, maximize=False, n=1).compare("A", "B").prob_improvement.estimate == pytest.approx(5 / 6)
    # every score equal: each pair a tie, 1/2
    rows = [(g, t, 0.5, None) for g in "AB" for t in ("t1", "t2") for _ in range(3)]
    res = _run(rows, maximize=True, n=1)
    assert res.compare("A", "B").prob_improvement.estimate == 0.5
    assert np.all(res.compare("A", "B").prob_improvement.bootstrap_distribution == 0.5)


def test_the_probability_of_improvement_is_the_mean_over_tasks_of_mann_whitney():
    rng = np.random.default_rng(3)
    rows = []
    a_scores, b_scores = {}, {}
    for t in range(4):
        a_scores[t] = np.round(rng.normal(0.1 * t, 1, size=5 + t), 1)  # rounded: ties
        b_scores[t] = np.round(rng.normal(0, 1, size=7), 1)
        rows += [("A", t, float(s), None) for s in a_scores[t]] + [("B", t, float(s), None) for s in b_scores[t]]
    res = _run(rows, maximize=True, n=1)
    expected = [
        stats.mannwhitneyu(a_scores[t], b_scores[t]).statistic / (a_scores[t].size * b_scores[t].size) for t in range(4)
    ]
    assert res.compare("A", "B").task_prob_improvement == pytest.approx(expected, abs=1e-12)
    assert res.compare("A", "B").prob_improvement.estimate == pytest.approx(np.mean(expected), abs=1e-12)


# -- invariants ---------------------------------------------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(benchmarks(min_runs=2), st.booleans())
def test_either_orientation_of_a_comparison_sums_to_one(rows, maximize):
    """P(A > B) + P(B > A) = 1 with ties halved, computed with either group first (relabelled so that the
    other group sorts first)."""
    if len({g for g, _, _, _ in rows}) < 2:
        return
    swapped = [({"A": "B", "B": "A"}.get(g, g), t, s, v) for g, t, s, v in rows]
    first = _run(rows, maximize=maximize, n=1).compare("A", "B").prob_improvement.estimate
    second = _run(swapped, maximize=maximize, n=1).compare("A", "B").prob_improvement.estimate  # B's runs as A
    assert first + second == pytest.approx(1.0, abs=1e-12)


@settings(max_examples=30, deadline=None)
@given(benchmarks(min_runs=2), st.randoms(use_true_random=False))
def test_the_order_of_the_rows_and_the_names_of_the_tasks_change_nothing(rows, random):
    """Rows in another order: the same numbers, resamples included (the runs are drawn in a canonical order).
    Tasks renamed so that they sort in another order: the same estimates."""
    shuffled = list(rows)
    random.shuffle(shuffled)
    first, second = _run(rows, maximize=True, n=2), _run(shuffled, maximize=True, n=2)
    for group in first.groups:
        for name in ("mean", "median", "iqm", "optimality_gap"):
            a, b = getattr(first.aggregates[group], name), getattr(second.aggregates[group], name)
            assert a.estimate == b.estimate
            assert np.array_equal(a.bootstrap_distribution, b.bootstrap_distribution)
        assert np.array_equal(first.aggregates[group].profile.share, second.aggregates[group].profile.share)
    tasks = sorted({t for _, t, _, _ in rows})
    renamed = {t: f"z{len(tasks) - i}" for i, t in enumerate(tasks)}  # reversed sort order
    third = _run([(g, renamed[t], s, v) for g, t, s, v in rows], maximize=True, n=2)
    for group in first.groups:
        for name in ("mean", "median", "iqm", "optimality_gap"):
            assert getattr(third.aggregates[group], name).estimate == pytest.approx(
                getattr(first.aggregates[group], name).estimate, abs=1e-12
            )
        assert third.aggregates[group].boo_n[2].estimate == pytest.approx(first.aggregates[group].boo_n[2].estimate)


@settings(max_examples=40, deadline=None)
@given(benchmarks(min_runs=2))
def test_min_max_normalization_maps_each_task_to_zero_one(rows):
    if not _spread_on_every_task(rows):
        return
    res = _run(rows, maximize=True, normalize="min-max", n=[1, 2])
    for t, task in enumerate(res.tasks):
        scores = [s for _, tk, s, _ in rows if tk == task]
        assert tuple(res.normalization[t]) == (min(scores), max(scores))
    for group in res.groups:
        agg = res.aggregates[group]
        for result in (agg.mean, agg.median, agg.iqm, agg.optimality_gap, *agg.boo_n.values()):
            ends = [] if result.method == "refused" else list(result.confidence_interval.__dict__.values())
            values = np.r_[result.estimate, result.bootstrap_distribution, ends]
            assert np.all((values >= 0) & (values <= 1)), (group, result.estimate)
        assert np.all((agg.task_means >= 0) & (agg.task_means <= 1))


@settings(max_examples=30, deadline=None)
@given(benchmarks(min_runs=2, validation=True))
def test_lower_is_better_is_higher_is_better_on_negated_scores(rows):
    up = _run(rows, maximize=True, n=2, gamma=0.5, tau=[-0.5, 0.0, 0.7])
    down = _run([(g, t, -s, -v) for g, t, s, v in rows], maximize=False, n=2, gamma=-0.5, tau=[0.5, 0.0, -0.7])
    for group in up.groups:
        a, b = up.aggregates[group], down.aggregates[group]
        for name in ("mean", "median", "iqm"):
            assert getattr(b, name).estimate == pytest.approx(-getattr(a, name).estimate, abs=1e-12)
        assert b.optimality_gap.estimate == pytest.approx(a.optimality_gap.estimate, abs=1e-12)
        assert b.boo_n[2].estimate == pytest.approx(-a.boo_n[2].estimate, abs=1e-12)
        assert b.profile.share[::-1] == pytest.approx(a.profile.share, abs=1e-12)  # tau sorted: reversed
    for pair, comparison in up.comparisons.items():
        assert down.comparisons[pair].prob_improvement.estimate == pytest.approx(comparison.prob_improvement.estimate)


def test_the_median_has_a_percentile_interval_and_the_rest_studentized_ones():
    rows = [(g, t, float(s), None) for g in "AB" for t in range(3) for s in np.random.default_rng(len(g) + t).random(6)]
    res = _run(rows, maximize=True, n=2, confidence_level=0.9, n_resamples=500)
    median = res.aggregates["A"].median
    assert (median.confidence_interval.low, median.confidence_interval.high) == pytest.approx(
        tuple(np.quantile(median.bootstrap_distribution, [0.05, 0.95])), abs=1e-12
    )
    assert median.method == "percentile" and median.n_resamples == 500 == median.bootstrap_distribution.size
    pair = res.compare("A", "B")
    for result in (res.aggregates["A"].mean, res.aggregates["A"].iqm, pair.iqm_difference, pair.prob_improvement):
        assert result.method == "studentized"
    ends = pair.prob_improvement.confidence_interval
    assert 0.0 <= ends.low <= pair.prob_improvement.estimate <= ends.high <= 1.0
    assert res.aggregates["B"].boo_n[2].method == res.compare("A", "B").boo_n_difference[2].method == "studentized-u"
    difference = res.compare("A", "B").iqm_difference.bootstrap_distribution
    assert np.array_equal(
        difference, res.aggregates["A"].iqm.bootstrap_distribution - res.aggregates["B"].iqm.bootstrap_distribution
    )
    reverse = res.compare("B", "A")
    assert (
        reverse.iqm_difference.confidence_interval.low == -res.compare("A", "B").iqm_difference.confidence_interval.high
    )
    assert reverse.prob_improvement.estimate == 1 - res.compare("A", "B").prob_improvement.estimate


def test_the_studentized_interval_of_the_mean_by_hand():
    """Two tasks of three runs: each resample's pivot (mean* - mean) / se*, se*^2 = sum_t s*_t^2 / 3 / 2^2 from the
    draws themselves, and the interval mean - t_hi se .. mean - t_lo se, computed here run by run."""
    rows = [("A", "a", 0.1, None), ("A", "a", 0.4, None), ("A", "a", 0.5, None)]
    rows += [("A", "b", 0.7, None), ("A", "b", 0.9, None), ("A", "b", 0.75, None)]
    res = _run(rows, maximize=True, n=1, n_resamples=300, rng=4)
    layout, canonical = _canonical(rows, maximize=True)
    counts = across._draw_counts(layout, np.random.default_rng(4), 300)
    by_task = {t: [s for _, tt, s, _ in rows if tt == t] for t in ("a", "b")}
    mean = np.mean([np.mean(v) for v in by_task.values()])
    se = np.sqrt(sum(np.var(v, ddof=1) / 3 for v in by_task.values())) / 2
    pivots = []
    for r in range(300):
        drawn = _resample_rows(rows, counts[r], canonical)
        cells = [[s for _, t, s, _ in drawn if t == task] for task in ("a", "b")]
        centre = np.mean([np.mean(c) for c in cells])
        assert res.aggregates["A"].mean.bootstrap_distribution[r] == pytest.approx(centre, abs=1e-12)
        error = np.sqrt(sum(np.var(c, ddof=1) / 3 for c in cells)) / 2
        pivots.append((centre - mean) / error if error > 0 else np.sign(centre - mean) * np.inf)
    low_t, high_t = np.quantile(np.array(pivots), [0.025, 0.975])
    got = res.aggregates["A"].mean.confidence_interval
    expected = (max(mean - high_t * se, 0.1), min(mean - low_t * se, 0.9))  # cut to the runs' range
    assert (got.low, got.high) == pytest.approx(expected, abs=1e-12)


# -- the stratified bootstrap against the resamples it stands for -------------------------------------------------


def _resample_rows(rows, counts, layout_order):
    """The runs of one resample, each run of the canonical order repeated as often as it was drawn."""
    return [row for row, c in zip(layout_order, counts) for _ in range(int(c))]


@settings(max_examples=15, deadline=None)
@given(benchmarks(min_runs=1, max_runs=5), st.booleans(), st.integers(0, 2**32 - 1))
def test_each_resample_gives_what_its_runs_give(rows, maximize, seed):
    """The aggregates of resample r, computed from counts, equal across_tasks' estimates on the runs that
    resample drew (materialized, with the data's normalization): every kernel against the direct definitions."""
    score, task, group, validation = _columns(rows)
    reference = {t: (-1.0, 2.0) for t in set(task)}
    tau = np.array([0.0, 0.5])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FewRunsWarning)
        warnings.simplefilter("ignore", ExtrapolationWarning)
        res = across_tasks(
            score,
            task=task,
            group=group,
            validation=validation,
            maximize=maximize,
            normalize=reference,
            n=[1, 2],
            tau=tau,
            n_resamples=6,
            rng=seed,
        )
        # the canonical order the draws index, and the draws themselves, from a generator seeded alike
        checked = across._across_tasks_iv(
            score, task, group, maximize, validation, reference, None, [1, 2], "V", tau, 0.95, 6, seed
        )
        x_raw, val, task_index, tasks, group_index, groups, runs, *_ = checked
        x = (x_raw + 1.0) / 3.0
        layout = across._layout(x, val, task_index, group_index, len(groups), len(tasks), maximize)
        sign = 1.0 if maximize else -1.0
        order = np.lexsort((sign * x, sign * val, task_index, group_index))
        canonical = [(groups[group_index[i]], tasks[task_index[i]], x_raw[i], val[i]) for i in order]
        counts = across._draw_counts(layout, np.random.default_rng(seed), 6)
        for r in range(6):
            drawn = _resample_rows(rows, counts[r], canonical)
            s, t, g, v = _columns(drawn)
            again = across_tasks(
                s,
                task=t,
                group=g,
                validation=v,
                maximize=maximize,
                normalize=reference,
                n=[1, 2],
                tau=tau,
                n_resamples=1,
                rng=0,
            )
            for label in groups:
                mine, theirs = res.aggregates[label], again.aggregates[label]
                for name in ("mean", "median", "iqm", "optimality_gap"):
                    assert getattr(mine, name).bootstrap_distribution[r] == pytest.approx(
                        getattr(theirs, name).estimate, abs=1e-12
                    )
                for k in (1, 2):
                    assert mine.boo_n[k].bootstrap_distribution[r] == pytest.approx(theirs.boo_n[k].estimate, abs=1e-12)
                assert mine.profile.bootstrap_distribution[r] == pytest.approx(theirs.profile.share, abs=1e-12)
            for pair, comparison in res.comparisons.items():
                assert comparison.prob_improvement.bootstrap_distribution[r] == pytest.approx(
                    again.comparisons[pair].prob_improvement.estimate, abs=1e-12
                )


def _canonical(rows, maximize, normalize="none"):
    """The layout of the rows and the rows in its canonical order (what a resample's counts refer to)."""
    score, task, group, validation = _columns(rows)
    checked = across._across_tasks_iv(
        score, task, group, maximize, validation, normalize, None, [1], "V", None, 0.95, 1, 0
    )
    x, val, task_index, tasks, group_index, groups = checked[:6]
    layout = across._layout(x, val, task_index, group_index, len(groups), len(tasks), maximize)
    sign = 1.0 if maximize else -1.0
    order = np.lexsort((sign * x, sign * val, task_index, group_index))
    canonical = [(groups[group_index[i]], tasks[task_index[i]], x[i], val[i]) for i in order]
    return layout, canonical


@settings(max_examples=15, deadline=None)
@given(benchmarks(min_runs=2, max_runs=5), st.booleans(), st.integers(0, 2**32 - 1))
def test_each_resample_s_standard_errors_are_those_of_its_draws(rows, maximize, seed):
    """What the studentized intervals take from resample r, computed from counts, equals the same computed on the
    runs it drew: the variance of the mean over tasks (sum_t s_t^2 / m_t / T^2), of the IQM (the winsorized
    draws' variance per cell over the share kept squared), and U over tasks with its delta-method variance as the
    core computes it for one sweep (RankedRuns.boo_n_studentized)."""
    from boontrack._bootstrap import RankedRuns
    from boontrack._bootstrap.kernels import cdf_table, slope_of

    layout, canonical = _canonical(rows, maximize)
    budgets = np.array([1, 2])
    unbiased = across._unbiased_tables(layout, budgets)
    counts = across._draw_counts(layout, np.random.default_rng(seed), 4)
    gap = np.zeros(layout.x.size)
    pairs = [
        (across._pair_index(layout, a, b), across._pair_index(layout, b, a))
        for a in range(layout.groups)
        for b in range(a + 1, layout.groups)
    ]
    got = across._errors(layout, counts, unbiased, gap, np.ones(layout.cell_sizes.size), pairs)
    groups = sorted({g for g, *_ in rows})
    tasks = sorted({t for _, t, *_ in rows})
    for r in range(4):
        drawn = _resample_rows(rows, counts[r], canonical)
        for p, (pair, _) in enumerate(pairs):
            variance = 0.0
            for task in tasks:
                a, b = ([s for gg, t, s, _ in drawn if (gg, t) == (groups[g], task)] for g in (pair.a, pair.b))
                up = 1.0 if maximize else -1.0
                wins = [[(up * x > up * y) + 0.5 * (x == y) for y in b] for x in a]
                place_a, place_b = np.mean(wins, axis=1), 1.0 - np.mean(wins, axis=0)  # DeLong's placements
                for places in (place_a, place_b):
                    variance += (np.var(places, ddof=1) if places.size > 1 else 0.0) / places.size
            assert got["prob_improvement_var"][r, p] == pytest.approx(variance / len(tasks) ** 2, abs=1e-12)
        for g, group in enumerate(groups):
            cells = [[(s, v) for gg, t, s, v in drawn if (gg, t) == (group, task)] for task in tasks]
            scores = [np.array([s for s, _ in c]) for c in cells]
            variance = sum(np.var(c, ddof=1) / c.size for c in scores) / len(tasks) ** 2
            assert got["mean_var"][r, g] == pytest.approx(variance, abs=1e-12)
            pooled = np.sort(np.concatenate(scores))
            cut = pooled.size // 4
            low, high = pooled[cut], pooled[pooled.size - cut - 1]
            kept = (pooled.size - 2 * cut) / pooled.size
            iqm = sum((c.size / pooled.size) ** 2 * np.var(np.clip(c, low, high), ddof=1) / c.size for c in scores)
            assert got["iqm_var"][r, g] == pytest.approx(iqm / kept**2, abs=1e-12)
            for j, k in enumerate(budgets):
                u, var = [], []
                for c in cells:
                    picked = np.array([s if v is None else v for s, v in c])
                    test = np.array([s for s, _ in c])
                    cdf = cdf_table(test.size, np.array([k]), "U")
                    value, error = RankedRuns(picked, test, maximize).boo_n_studentized(
                        np.arange(test.size)[None, :], cdf, slope_of(cdf)
                    )
                    assert value[0, 0] == pytest.approx(
                        bt.boo_n(picked, test, n=int(k), estimator="U", maximize=maximize), abs=1e-12
                    )
                    u.append(value[0, 0])
                    var.append(error[0, 0] ** 2)
                assert got["boo_u"][r, j, g] == pytest.approx(np.mean(u), abs=1e-12)
                assert got["boo_var"][r, j, g] == pytest.approx(np.sum(var) / len(tasks) ** 2, abs=1e-12)


def test_the_aggregate_boo_n_is_refused_above_two_thirds_of_the_runs_saying_why():
    rng = np.random.default_rng(2)
    scores, task = rng.random(12), np.repeat(["a", "b"], [6, 6])
    task[:3] = "c"  # task c: 3 runs, a: 3, b: 6
    with pytest.warns(FewRunsWarning) as caught:
        res = across_tasks(scores, task=task, group=["x"] * 12, maximize=True, n=[1, 2, 3], n_resamples=50, rng=0)
    said = [str(w.message) for w in caught if "no interval" in str(w.message)]
    assert len(said) == 1 and "Boo_3: group 'x' has 3 runs on task 'a', and n = 3 is above 2m/3 = 2" in said[0]
    assert "covered 91.0-99.2 % at n = m" in said[0]
    refused = res.aggregates["x"].boo_n[3]
    assert refused.method == "refused" and np.isnan(refused.confidence_interval.low)
    assert np.isnan(refused.confidence_interval.high) and refused.estimate == refused.estimate  # kept
    assert res.refused == {"boo_n[3]": said[0]}
    assert res.aggregates["x"].boo_n[2].method == "studentized-u"  # 2 <= 2m/3 = 2


def test_resamples_keep_each_task_s_runs_within_the_task():
    # two tasks far apart: a resample that mixed runs across tasks would move a task's mean
    rows = [("A", "low", float(s), None) for s in (0, 1, 2)] + [("A", "high", float(s), None) for s in (100, 101, 102)]
    res = _run(rows, maximize=True, n=1, n_resamples=2000)
    means = res.aggregates["A"].mean.bootstrap_distribution
    assert means.min() >= 50.0 and means.max() <= 52.0  # (mean of 0..2 draws + mean of 100..102 draws) / 2


def test_the_batch_size_does_not_change_the_resamples():
    rng = np.random.default_rng(5)
    x, v = rng.normal(size=60), rng.normal(size=60)
    task, group = np.tile(np.repeat(np.arange(6), 5), 2), np.repeat(["a", "b"], 30)
    checked = across._across_tasks_iv(x, task, group, True, v, "none", None, [2, 4], "V", None, 0.95, 50, 0)
    x, val, task_index, tasks, group_index, groups = checked[:6]
    layout = across._layout(x, val, task_index, group_index, len(groups), len(tasks), True)
    cdf = across._cdf_tables(layout, np.array([2, 4]), "V")
    pairs = [(across._pair_index(layout, 0, 1), across._pair_index(layout, 1, 0))]
    whole = across._resampled(layout, cdf, pairs, np.array([0.0]), np.zeros(60), 50, np.random.default_rng(1))
    batched = across._resampled(
        layout, cdf, pairs, np.array([0.0]), np.zeros(60), 50, np.random.default_rng(1), 7 * 120
    )
    for key in whole:
        assert np.array_equal(whole[key], batched[key]), key


# -- refusals and warnings ----------------------------------------------------------------------------------------

GOOD = {"task": ["a", "a", "b", "b"], "group": ["x", "x", "x", "x"], "maximize": True, "n": 1, "n_resamples": 10}


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"scores": [0.1, np.nan, 0.3, 0.4]}, "`scores` must be finite; position 1"),
        ({"scores": [0.1, 0.2]}, "`task` must be 1-D with one label per score"),
        ({"task": ["a", None, "b", "b"]}, "`task` holds a missing label"),
        ({"task": [1.0, np.nan, 2.0, 2.0]}, r"`task` holds a missing label \(NaN\)"),
        ({"group": ["x", 1, "x", "x"]}, "`group` must hold labels of one kind"),
        ({"group": ["x", "x", "x", "y"]}, "group 'y' has no runs on task 'a'"),
        ({"maximize": "yes"}, "`maximize` must be True or False"),
        ({"validation": [0.1, 0.2, 0.3]}, "`validation` must have one score per run"),
        ({"validation": [0.1, 0.2, np.inf, 0.3]}, "`validation` must be finite"),
        ({"normalize": "z-score"}, "`normalize` must be one of 'none', 'min-max'"),
        ({"normalize": {"a": (0, 1)}}, "`normalize` has no reference scores .* task 'b'"),
        ({"normalize": {"a": (0, 1), "b": (1, 0)}}, r"`normalize`\['b'\] must have low < high"),
        ({"normalize": {"a": (0, 1), "b": (0, np.inf)}}, r"`normalize`\['b'\] must be two finite numbers"),
        ({"normalize": {"a": (0, 1), "b": 3}}, r"`normalize`\['b'\] must be a pair"),
        ({"normalize": 3}, "`normalize` must be 'none', 'min-max' or a mapping"),
        ({"scores": [0.1, 0.2, 0.5, 0.5], "normalize": "min-max"}, "every run of task 'b' scored 0.5"),
        ({"gamma": "1"}, "`gamma` must be a finite number"),
        ({"gamma": np.nan}, "`gamma` must be a finite number"),
        ({"n": 0}, "`n` must be an integer >= 1"),
        ({"n": 3, "estimator": "U"}, "`n` = 3 exceeds the number of runs m = 2"),
        ({"estimator": "Z"}, "`estimator` must be one of"),
        ({"tau": [0.1, np.nan]}, "`tau` must be finite"),
        ({"confidence_level": 1.0}, "`confidence_level` must be in"),
        ({"n_resamples": 0}, "`n_resamples` must be an integer >= 1"),
        ({"n_resamples": 10.0}, "`n_resamples` must be an integer >= 1"),
        ({"rng": "seed"}, "`rng` must be None, an int seed"),
        ({"seed": [0, 1, 0]}, "`seed` must be 1-D with one label per score"),
        ({"seed": [0, None, 0, 1]}, "`seed` holds a missing label"),
    ],
)
def test_bad_input_is_refused_naming_the_parameter(changes, message):
    arguments = {"scores": [0.1, 0.2, 0.3, 0.4], **GOOD, **changes}
    with pytest.raises(ValueError, match=message):
        across_tasks(**arguments)


def test_the_direction_must_be_said():
    with pytest.raises(TypeError, match="maximize"):
        across_tasks([0.1, 0.2], task=["a", "a"], group=["x", "x"])  # type: ignore[call-arg]


def _said(**arguments) -> list[tuple[type, str]]:
    """Every warning across_tasks gives for these arguments: (category, message)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        across_tasks(**arguments)
    return [(w.category, str(w.message)) for w in caught]


def test_a_single_run_on_a_task_and_a_budget_beyond_the_runs_are_said():
    said = _said(scores=[0.1, 0.2, 0.3], task=["a", "a", "b"], group=["x"] * 3, maximize=True, n=1, n_resamples=10)
    assert [category for category, _ in said] == [FewRunsWarning, FewRunsWarning]
    assert any("group 'x' has a single run on task 'b'" in message for _, message in said)
    assert any("1 runs on a task: the intervals were measured at 3-10 runs per task" in message for _, message in said)
    said = _said(
        scores=[0.1, 0.2, 0.3, 0.4], task=["a", "a", "b", "b"], group=["x"] * 4, maximize=True, n=3, n_resamples=10
    )
    assert (ExtrapolationWarning, "n = 3 > m = 2") in [(c, m[: len("n = 3 > m = 2")]) for c, m in said]
    assert any("no interval for the aggregate Boo_3" in message for _, message in said)
    assert {category for category, _ in said} == {ExtrapolationWarning, FewRunsWarning}


def test_few_runs_per_task_and_the_aggregate_boo_n_are_said_with_what_was_measured():
    three = {"task": np.repeat(["a", "b"], 3), "group": ["x"] * 6, "maximize": True, "n_resamples": 10}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # 3 runs per task, n = 1, or U at n = 2 <= 2m/3: nothing to say
        across_tasks(np.arange(6.0), n=1, **three)
        across_tasks(np.arange(6.0), n=[1, 2], estimator="U", **three)
    with pytest.warns(FewRunsWarning, match=r"2 runs on a task: the intervals were measured at 3-10 runs per task"):
        across_tasks(np.arange(5.0), **{**three, "task": np.repeat(["a", "b"], [3, 2]), "group": ["x"] * 5}, n=1)
    with pytest.warns(FewRunsWarning, match=r"Boo_n across 2 tasks: the estimate is Boo_n with the V or W weights"):
        across_tasks(np.arange(6.0), n=[1, 2], **three)


def test_the_module_is_experimental_and_not_in_the_stable_api():
    """boontrack.across is imported from there (docs/api/index.md, "Stability"), not from boontrack."""
    assert across.__doc__.split("\n\n")[1].startswith("Experimental")
    assert not {"across_tasks", "AcrossTasks", "GroupAggregates", "GroupComparison", "PerformanceProfile"} & set(
        bt.__all__
    )
    assert set(across.__all__) == {
        "AcrossTasks",
        "GroupAggregates",
        "GroupComparison",
        "Normalize",
        "PerformanceProfile",
        "across_tasks",
    }


# -- the example benchmark: 2 approaches x 5 tasks x 10 seeds -------------------------------------------------------


def _example_rows(path: Path = EXAMPLES / "benchmark_runs.csv"):
    with path.open(newline="", encoding="utf-8") as f:
        return [(r["method"], r["task"], float(r["test_acc"]), float(r["val_acc"])) for r in csv.DictReader(f)]


def test_the_example_csv_is_what_its_script_writes():
    spec = importlib.util.spec_from_file_location("benchmark_runs", EXAMPLES / "benchmark_runs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    expected = (EXAMPLES / "benchmark_runs.csv").read_text(encoding="utf-8")
    assert "\n".join(module.rows()) + "\n" == expected


@pytest.mark.parametrize("normalize", ["none", "min-max"])
def test_the_example_benchmark_s_aggregates(normalize):
    rows = _example_rows()
    assert len(rows) == 100 and {g for g, *_ in rows} == {"baseline", "new"} and len({t for _, t, *_ in rows}) == 5
    res = _run(rows, maximize=True, normalize=normalize, n=[1, 5], n_resamples=2000)
    exact = oracle.aggregates(rows, maximize=True, normalize=normalize, n=5, tau=[0.5, 0.8])
    for group in ("baseline", "new"):
        for name in ("mean", "median", "iqm", "optimality_gap"):
            _close(getattr(res.aggregates[group], name).estimate, exact[group][name])
        _close(res.aggregates[group].boo_n[5].estimate, exact[group]["boo_n"])
    pooled = {g: np.array([s for gg, _, s, _ in rows if gg == g]) for g in ("baseline", "new")}
    if normalize == "none":
        assert res.aggregates["new"].iqm.estimate == pytest.approx(stats.trim_mean(pooled["new"], 0.25), abs=1e-12)
    comparison = res.compare("new", "baseline")
    _close(comparison.prob_improvement.estimate, oracle.prob_improvement(rows, "new", "baseline", maximize=True))
    # the made-up effect (one s.d. of a task's runs for "new") shows: every interval of the difference is above 0
    assert comparison.mean_difference.confidence_interval.low > 0
    assert comparison.iqm_difference.confidence_interval.low > 0
    assert comparison.prob_improvement.confidence_interval.low > 0.5


def test_a_task_holding_most_of_the_spread_with_few_runs_is_said_to_decide_the_intervals():
    """Task b's runs spread 20x as far as the others': it holds (20^2 / (20^2 + 2)) of the variance of the mean,
    which is said with its runs while they are fewer than 10, and not with 10."""
    rng = np.random.default_rng(5)
    for runs, said in ((5, True), (10, False)):
        spread = np.repeat([0.01, 0.2, 0.01], runs)
        scores = 0.7 + spread * rng.standard_normal(3 * runs)
        task = np.repeat(["a", "b", "c"], runs)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            across_tasks(scores, task=task, group=["x"] * scores.size, maximize=True, n=1, n_resamples=99, rng=0)
        lines = [str(w.message) for w in caught if "of the variance of group" in str(w.message)]
        assert bool(lines) == said
        if said:
            x = scores.reshape(3, runs)
            parts = x.var(axis=1, ddof=1) / runs
            share = parts[1] / parts.sum()
            assert lines == [
                f"task 'b' holds {share:.0%} of the variance of group 'x''s mean over the tasks, with {runs} runs: "
                "those runs decide its intervals, and a few runs of a task whose runs fall in clusters often show "
                f"one cluster ({across.MEASURED_DOMINANT})"
            ]


def test_groups_sharing_their_seeds_on_a_task_are_drawn_by_seed_together():
    """Seeds shared by both groups on task a pair them there: in every resample each seed is drawn as often for
    one group as for the other; task b, whose groups ran different seeds, draws each group on its own; without
    seeds the draws are those of independent cells, the same numbers as before seeds existed."""
    rng = np.random.default_rng(0)
    scores = rng.random(16)
    task = np.repeat(["a", "b"], 8)
    group = np.tile(np.repeat(["x", "y"], 4), 2)
    seed = np.r_[[3, 1, 2, 0], [0, 1, 2, 3], [0, 1, 2, 3], [4, 5, 6, 7]]
    checked = across._across_tasks_iv(scores, task, group, True, None, "none", None, [1], "V", None, 0.95, 1, 0, seed)
    x, val, task_index, tasks, group_index, groups = checked[:6]
    sign_order = np.lexsort((x, x, task_index, group_index))  # the canonical order (maximize: by val, then x)
    layout = across._layout(x, val, task_index, group_index, 2, 2, True, checked[-1])
    assert layout.paired.tolist() == [True, False]
    counts = across._draw_counts(layout, np.random.default_rng(1), 200)
    seeds_in_order, cells = seed[sign_order], layout.run_cell
    for r in range(200):
        per_seed = {}
        for c in (0, 2):  # (x, a) and (y, a)
            mine = cells == c
            per_seed[c] = dict(zip(seeds_in_order[mine].tolist(), counts[r, mine].tolist()))
        assert per_seed[0] == per_seed[2]
    unpaired = across._layout(x, val, task_index, group_index, 2, 2, True)
    plain = across._draw_counts(unpaired, np.random.default_rng(1), 50)
    positions = np.random.default_rng(1).integers(0, unpaired.cell_sizes[unpaired.run_cell], size=(50, 16))
    expected = np.zeros((50, 16))
    for r in range(50):
        np.add.at(expected[r], positions[r] + unpaired.cell_starts[unpaired.run_cell], 1)
    np.testing.assert_array_equal(plain, expected)
    with pytest.warns(FewRunsWarning, match="task 'b' holds 91% of the variance"):  # 4 runs of one far spread
        result = across_tasks(scores, task=task, group=group, maximize=True, n=1, seed=seed, n_resamples=99, rng=0)
    assert result.paired.tolist() == [True, False]


def test_pairing_by_seed_narrows_a_difference_the_seeds_share():
    """A seed effect 10x the approaches' shared by both groups: paired, the interval of Δmean is far narrower
    and excludes 0; drawn apart, it holds 0."""
    rng = np.random.default_rng(3)
    seeds = np.arange(10)
    effect = {t: rng.normal(0, 0.05, 10) for t in ("a", "b", "c")}
    rows = [
        (t, g, s, 0.7 + effect[t][s] + (0.01 if g == "new" else 0.0) + rng.normal(0, 0.002))
        for t in effect
        for g in ("old", "new")
        for s in seeds
    ]
    task, group, seed, scores = (np.array(column) for column in zip(*rows))
    options = {"task": task, "group": group, "maximize": True, "n": 1, "n_resamples": 999, "rng": 0}
    paired = across_tasks(scores.astype(float), seed=seed, **options).compare("new", "old").mean_difference
    apart = across_tasks(scores.astype(float), **options).compare("new", "old").mean_difference
    assert paired.confidence_interval.low > 0 > apart.confidence_interval.low
    paired_width = paired.confidence_interval.high - paired.confidence_interval.low
    assert paired_width < 0.2 * (apart.confidence_interval.high - apart.confidence_interval.low)
