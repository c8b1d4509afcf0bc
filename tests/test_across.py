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
            values = np.r_[
                result.estimate, result.bootstrap_distribution, list(result.confidence_interval.__dict__.values())
            ]
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


def test_the_interval_is_the_percentile_interval_of_the_distribution():
    rows = [(g, t, float(s), None) for g in "AB" for t in range(3) for s in np.random.default_rng(len(g) + t).random(6)]
    res = _run(rows, maximize=True, n=2, confidence_level=0.9, n_resamples=500)
    for result in (res.aggregates["A"].iqm, res.aggregates["B"].boo_n[2], res.compare("A", "B").prob_improvement):
        assert (result.confidence_interval.low, result.confidence_interval.high) == tuple(
            np.quantile(result.bootstrap_distribution, [0.05, 0.95])
        )
        assert result.method == "percentile" and result.n_resamples == 500 == result.bootstrap_distribution.size
    difference = res.compare("A", "B").iqm_difference.bootstrap_distribution
    assert np.array_equal(
        difference, res.aggregates["A"].iqm.bootstrap_distribution - res.aggregates["B"].iqm.bootstrap_distribution
    )
    reverse = res.compare("B", "A")
    assert (
        reverse.iqm_difference.confidence_interval.low == -res.compare("A", "B").iqm_difference.confidence_interval.high
    )
    assert reverse.prob_improvement.estimate == 1 - res.compare("A", "B").prob_improvement.estimate


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
    pairs = [across._pair_index(layout, 0, 1)]
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
    ],
)
def test_bad_input_is_refused_naming_the_parameter(changes, message):
    arguments = {"scores": [0.1, 0.2, 0.3, 0.4], **GOOD, **changes}
    with pytest.raises(ValueError, match=message):
        across_tasks(**arguments)


def test_the_direction_must_be_said():
    with pytest.raises(TypeError, match="maximize"):
        across_tasks([0.1, 0.2], task=["a", "a"], group=["x", "x"])  # type: ignore[call-arg]


def test_a_single_run_on_a_task_and_a_budget_beyond_the_runs_are_said():
    with pytest.warns(FewRunsWarning, match="group 'x' has a single run on task 'b'"):
        across_tasks([0.1, 0.2, 0.3], task=["a", "a", "b"], group=["x"] * 3, maximize=True, n=1, n_resamples=10)
    with pytest.warns(ExtrapolationWarning, match="n = 3 > m = 2"):
        across_tasks(
            [0.1, 0.2, 0.3, 0.4], task=["a", "a", "b", "b"], group=["x"] * 4, maximize=True, n=3, n_resamples=10
        )


def test_few_runs_per_task_and_the_aggregate_boo_n_are_said_with_what_was_measured():
    ten = {"task": np.repeat(["a", "b"], 10), "group": ["x"] * 20, "maximize": True, "n_resamples": 10}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # 10 runs per task, n = 1: nothing to say
        across_tasks(np.arange(20.0), n=1, **ten)
    with pytest.warns(FewRunsWarning, match=r"9 runs on a task: .* covered 83.6-90.6 % at 3 runs per task"):
        across_tasks(np.arange(19.0), **{**ten, "task": np.repeat(["a", "b"], [10, 9]), "group": ["x"] * 19}, n=1)
    with pytest.warns(FewRunsWarning, match=r"Boo_n across 2 tasks: .* covered 15-85 % over 5 tasks"):
        across_tasks(np.arange(20.0), n=[1, 2], **ten)


def test_the_public_names_are_served_by_the_package():
    assert bt.across_tasks is across_tasks and bt.AcrossTasks is across.AcrossTasks
    assert {"across_tasks", "AcrossTasks", "GroupAggregates", "GroupComparison", "PerformanceProfile"} <= set(
        bt.__all__
    )


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
