"""The simulation study (boontrack.simulate): comparisons of two approaches on simulated sweeps, the errors of
the estimators, "how many runs do I need", and the ``boontrack simulate`` command."""

from __future__ import annotations

import csv
import math
import warnings

import numpy as np
import pytest
from click.testing import CliRunner
from scipy import stats

from boontrack import cli
from boontrack._bootstrap import BudgetGroup, difference_interval, kernels, percentile_interval
from boontrack._validation import as_bounds
from boontrack.compare import boo_n_difference_ci, mean_difference_ci
from boontrack.estimators import boo_n, boo_n_gaussian
from boontrack.simulate import (
    comparison_rates,
    estimator_errors,
    format_study,
    kernel_fit,
    population,
    replicated,
    sample_comparison,
    study,
)
from boontrack.simulate.coverage import wilcoxon_pvalues
from boontrack.simulate.replicated import difference_ends
from boontrack.simulate.study import _boo_n_rows, _gaussian_rows

#: E[max of 3 N(0, 1)] = 3 / (2 sqrt(pi)) (David & Nagaraja, Order Statistics, §3.2).
EXPECTED_MAX_OF_3 = 3 / (2 * math.sqrt(math.pi))


def invoke(*args: str):
    return CliRunner().invoke(cli.main, list(args))


# ----------------------------------------------------------------------------------------------------------
# Vectorised estimates of many sweeps


@pytest.mark.parametrize("name", ["normal", "beta_binomial"])  # beta-binomial: tied validation scores
def test_rows_of_sweeps_match_the_estimators_sweep_by_sweep(name):
    val, test = population(name).sample(12, replications=6, rng=3)
    budgets = np.array([1, 3, 12])
    for estimator in ("V", "U", "W"):
        expected = [boo_n(val[r], test[r], n=budgets, estimator=estimator) for r in range(6)]
        np.testing.assert_allclose(_boo_n_rows(val, test, budgets, estimator), expected, rtol=0, atol=1e-13)
    expected = [boo_n_gaussian(val[r], test[r], n=budgets) for r in range(6)]
    np.testing.assert_allclose(_gaussian_rows(val, test, budgets), expected, rtol=0, atol=1e-13)


def test_estimator_errors_of_the_mean_are_the_sampling_error_of_a_mean():
    """At n = 1 every estimator is the mean test score: bias 0 and variance sd^2 / m = 1 / m (normal, sd 1)."""
    errors = estimator_errors(population("normal"), m=10, n=(1, 3), replications=4000, rng=1)
    at_one = [e for e in errors if e.n == 1]
    assert [e.estimator for e in at_one] == ["V", "U", "W", "gaussian"]
    for e in at_one:
        assert e.truth == pytest.approx(0.0, abs=1e-12)
        assert abs(e.bias) < 3 * math.sqrt(0.1 / 4000)
        assert e.variance == pytest.approx(0.1, rel=0.08)  # the variance's relative sd is sqrt(2 / 4000) = 2.2 %
        assert e.mse == pytest.approx(e.bias**2 + e.variance, rel=1e-12)
    at_three = {e.estimator: e for e in errors if e.n == 3}
    assert at_three["V"].truth == pytest.approx(0.5 * EXPECTED_MAX_OF_3, rel=1e-9)
    # U is unbiased (Dodge et al. 2021, §3): within three standard errors of the truth
    assert abs(at_three["U"].bias) < 3 * math.sqrt(at_three["U"].variance / 4000)
    assert at_three["V"].bias < 0  # V is biased downwards at small m


# ----------------------------------------------------------------------------------------------------------
# Comparisons on simulated sweeps


def test_paired_sweeps_share_their_seed_and_the_shift_is_exact():
    pop = population("normal", rho=1.0)
    for share, correlation in ((0.5, 0.5), (0.75, 0.9)):
        a_val, a_test, b_val, b_test = sample_comparison(pop, 20_000, paired=True, seed_share=share, rng=2)
        assert np.corrcoef(a_test[0], b_test[0])[0, 1] == pytest.approx(correlation, abs=0.02)
    a_val, a_test, b_val, b_test = sample_comparison(pop, 20_000, paired=False, shift=0.25, rng=2)
    assert abs(np.corrcoef(a_test[0], b_test[0])[0, 1]) < 0.03
    assert (a_test.mean() - b_test.mean()) == pytest.approx(0.25, abs=0.05)
    # beta-binomial scores on a grid of 1/50 stay on a grid (of 1/100): ties remain
    a_val, *_ = sample_comparison(population("beta_binomial"), 50, paired=True, rng=3)
    np.testing.assert_allclose(a_val * 100, np.round(a_val * 100), atol=1e-9)


@pytest.mark.parametrize("paired", [True, False])
def test_comparison_rates_are_the_public_functions_replication_by_replication(paired):
    """The same seed gives the same sweeps, then the resamples of each replication's Boo_n difference, then of
    each one's mean difference: the rejections are those of boo_n_difference_ci, mean_difference_ci and scipy's tests."""
    pop, replications = population("normal"), 12
    rates = {
        r.statistic: r
        for r in comparison_rates(
            pop, m=10, n=3, paired=paired, shift=0.8, replications=replications, n_resamples=99, rng=5
        )
    }
    rng = np.random.default_rng(5)
    a_val, a_test, b_val, b_test = sample_comparison(
        pop, 10, paired=paired, shift=0.8, replications=replications, rng=rng
    )
    options = dict(paired=paired, n_resamples=99, rng=rng)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # the Boo_n differences of every replication are resampled first, then the mean differences
        boo = [
            boo_n_difference_ci(a_val[r], b_val[r], a_test[r], b_test[r], n=3, **options) for r in range(replications)
        ]
        mean = [mean_difference_ci(a_test[r], b_test[r], **options) for r in range(replications)]

    def excludes_zero(results):
        return np.mean([not (x.confidence_interval.low <= 0 <= x.confidence_interval.high) for x in results])

    assert rates["boo_3 studentized-u"].rejection == excludes_zero(boo)
    assert rates["mean studentized-u"].rejection == excludes_zero(mean)
    widths = [x.confidence_interval.high - x.confidence_interval.low for x in boo]
    assert rates["boo_3 studentized-u"].median_width == pytest.approx(np.median(widths), rel=1e-12)
    if paired:
        expected = {
            "paired t": stats.ttest_rel(a_test, b_test, axis=1).pvalue,
            "wilcoxon": stats.wilcoxon(a_test, b_test, axis=1).pvalue,
        }
    else:
        expected = {
            "welch": stats.ttest_ind(a_test, b_test, equal_var=False, axis=1).pvalue,
            "mann-whitney": stats.mannwhitneyu(a_test, b_test, axis=1).pvalue,
        }
    for name, pvalues in expected.items():
        assert rates[name].rejection == np.mean(pvalues < 0.05)
        assert math.isnan(rates[name].median_width)


#: (population, m, n, paired, method): ties (beta-binomial) and none, both designs, both studentized methods.
REPLICATED_CELLS = [
    ("beta_binomial", 10, 5, True, "studentized-u"),
    ("beta_binomial", 12, 3, False, "studentized-u"),
    ("beta_binomial", 9, 1, True, "studentized"),
    ("normal", 8, 4, False, "studentized"),
    ("normal", 11, 11, True, "studentized-u"),
]


@pytest.mark.parametrize(("name", "m", "n", "paired", "method"), REPLICATED_CELLS)
def test_difference_ends_are_difference_interval_replication_by_replication(monkeypatch, name, m, n, paired, method):
    """Every replication's studentized and percentile interval of Boo_n(A) - Boo_n(B) is the one
    difference_interval gives it with the same draws (to rounding: sums taken in another order), also when the
    replications come in several chunks and each one's resamples in several batches."""
    monkeypatch.setattr(kernels, "BATCH_ELEMENTS", 2 * m * 40)  # batches of 40 resamples
    monkeypatch.setattr(replicated, "CHUNK_ELEMENTS", 3 * 99 * m)  # chunks of 3 or 1 replications
    a_val, a_test, b_val, b_test = sample_comparison(population(name), m, paired=paired, replications=7, rng=6)
    rng = np.random.default_rng(9)
    expected = np.empty((2, 7, 2))
    for r in range(7):
        groups = (
            BudgetGroup(a_val[r], a_test[r], True, n, "V", method, as_bounds(None, a_test[r])),
            BudgetGroup(b_val[r], b_test[r], True, n, "V", method, as_bounds(None, b_test[r])),
        )
        _, dist, expected[0, r] = difference_interval(*groups, paired, method, 0.9, 99, rng)
        expected[1, r] = percentile_interval(dist, 0.9)
    batch_rng = np.random.default_rng(9)
    ends = difference_ends((a_val, a_test), (b_val, b_test), n, paired, method, 0.9, 99, batch_rng)
    np.testing.assert_allclose(ends, expected, rtol=0, atol=1e-12)
    assert batch_rng.integers(1 << 30) == rng.integers(1 << 30)  # both drew exactly as many


@pytest.mark.parametrize(("name", "m"), [("beta_binomial", 7), ("beta_binomial", 14), ("normal", 8)])
def test_wilcoxon_pvalues_are_scipys(name, m):
    """Row by row the p-values of scipy.stats.wilcoxon: by its exact sign-flip permutation test where paired
    beta-binomial scores tie or coincide (m <= 13), else by its exact or normal test."""
    _, a_test, _, b_test = sample_comparison(
        population(name), m, paired=True, replications=20, rng=np.random.default_rng([8, m])
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        expected = stats.wilcoxon(a_test, b_test, axis=1).pvalue
    np.testing.assert_array_equal(wilcoxon_pvalues(a_test, b_test), expected)


def test_wilcoxon_pvalues_count_the_sign_flips():
    """Differences (1, 1, 1, 0, 0, 0, 0, 0): zeros dropped, three tied ranks of 2; of the 2^3 sign patterns of
    the non-zero ones only the observed and its mirror are as extreme, so p = 2 x 1/8; no difference at all:
    p = 1."""
    a = np.zeros((2, 8))
    a[0, :3] = 1.0
    np.testing.assert_array_equal(wilcoxon_pvalues(a, np.zeros((2, 8))), [0.25, 1.0])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"m": 5, "n": 6}, "`n` = 6 exceeds `m` = 5"),
        ({"paired": 1}, "`paired` must be True or False"),
        ({"shift": math.inf}, "`shift` must be a finite number"),
        ({"seed_share": 1.0}, r"`seed_share` must be in \[0, 1\)"),
        ({"replications": 0}, "`replications` must be an integer >= 1"),
    ],
)
def test_comparison_rates_rejects(kwargs, message):
    with pytest.raises(ValueError, match=message):
        comparison_rates(population("normal"), **{"m": 10, **kwargs})


#: (population, m, paired): 8 cells x 400 replications = 3,200 pairs of sweeps.
NULL_CELLS = [(name, m, paired) for name in ("normal", "beta_binomial") for m in (10, 20) for paired in (True, False)]


@pytest.mark.slow
def test_studentized_difference_intervals_hold_their_level_on_null_populations():
    """A and B from the same population, nominal 5 %: the default (studentized-u) interval of ΔBoo_5 never
    rejects significantly more than 6 % in a cell, and over all cells it rejects between 3 and 6 % (pooled
    standard error 0.4 points; conservative at m = 10, 2-4 %), where the percentile interval rejects too often
    (5-12 % per cell at m = 10-20, 9 % pooled)."""
    studentized, percentile = [], []
    for name, m, paired in NULL_CELLS:
        rates = comparison_rates(
            population(name),
            m=m,
            n=5,
            paired=paired,
            replications=400,
            n_resamples=499,
            rng=np.random.default_rng([7, m, paired]),
        )
        default, plain = rates[0], rates[1]
        assert (default.statistic, plain.statistic) == ("boo_5 studentized-u", "boo_5 percentile")
        assert default.rejection <= 0.06 + 2 * math.sqrt(0.05 * 0.95 / 400), (name, m, paired, default.rejection)
        studentized.append(default.rejection)
        percentile.append(plain.rejection)
    assert 0.03 <= np.mean(studentized) <= 0.06
    assert np.mean(percentile) > 0.065


# ----------------------------------------------------------------------------------------------------------
# The study and the command


def test_study_runs_needed_for_a_width_and_for_a_power():
    result = study(
        population("normal"),
        m=10,
        n=(1, 3),
        methods=("studentized",),
        width=1.5,
        shift=1.0,
        plan_runs=(5, 10, 40),
        replications=30,
        n_resamples=99,
        rng=4,
    )
    assert result.width.m == (5, 10, 40) and result.power.m == (5, 10, 40)
    assert result.width.value[0] > result.width.value[-1]  # more runs, narrower
    reached = [m for m, w in zip(result.width.m, result.width.value) if w <= 1.5]
    assert result.width.m_needed == min(reached, default=None)
    reached = [m for m, p in zip(result.power.m, result.power.value) if p >= 0.8]
    assert result.power.m_needed == min(reached, default=None)
    assert [c.n for c in result.coverage] == [1, 3]


def test_simulate_command_on_a_named_population(tmp_path):
    args = [
        "--m",
        "10",
        "--n",
        "1,3",
        "--ci-method",
        "studentized",
        "--ci-method",
        "percentile",
        "--replications",
        "20",
        "--resamples",
        "49",
        "--seed",
        "3",
    ]
    result = invoke("simulate", "--population", "normal", *args, "--out", str(tmp_path / "out"), "--no-plots")
    assert result.exit_code == 0, result.output
    direct = study(
        population("normal"),
        m=10,
        n=(1, 3),
        methods=("studentized", "percentile"),
        replications=20,
        n_resamples=49,
        rng=3,
    )
    assert result.stdout == format_study(direct) + "\n"
    with open(tmp_path / "out" / "study.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    intervals = [r for r in rows if r["section"] == "interval"]
    assert [(r["name"], int(r["n"])) for r in intervals] == [
        ("studentized", 1),
        ("studentized", 3),
        ("percentile", 1),
        ("percentile", 3),
    ]
    assert float(intervals[1]["truth"]) == pytest.approx(0.5 * EXPECTED_MAX_OF_3, rel=1e-9)  # rho sd E[max of 3]
    assert float(intervals[0]["coverage"]) == direct.coverage[0].coverage
    assert not (tmp_path / "out" / "study.png").exists()


def test_simulate_command_on_a_fit_of_the_users_runs(tmp_path):
    rng = np.random.default_rng(0)
    val = rng.normal(0.7, 0.02, 16)
    path = tmp_path / "runs.csv"
    path.write_text("run_id,val,test\n" + "".join(f"r{i},{v},{v + 0.01 * i % 3}\n" for i, v in enumerate(val)))
    result = invoke(
        "simulate",
        str(path),
        "--val",
        "val",
        "--test",
        "test",
        "--n",
        "1,4",
        "--ci-method",
        "studentized",
        "--replications",
        "10",
        "--resamples",
        "49",
    )
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("kernel: m = 16 runs")
    test = np.array([v + 0.01 * i % 3 for i, v in enumerate(val)])
    truth = kernel_fit(val, test).boo_n(4)
    assert f"4  V          {truth:.4g}" in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "give either SOURCE or --population, not both or neither"),
        (["runs.csv", "--population", "normal"], "give either SOURCE or --population"),
        (["--population", "normal", "--val", "acc"], "describe SOURCE; none was given"),
        (["runs.csv"], "SOURCE needs --val"),
        (["--population", "cauchy"], "'cauchy' is not one of"),
        (["--population", "normal", "--replications", "0"], "--replications must be an integer >= 1, got 0"),
        (["--population", "normal", "--width", "-1"], "--width must be a number > 0"),
        (["--population", "normal", "--n", "0"], "budgets must be >= 1"),
    ],
)
def test_simulate_command_refuses_bad_options_in_one_line(args, message):
    result = invoke("simulate", *args)
    assert result.exit_code == 2
    assert len(result.stderr.strip().splitlines()) == 1 and message in result.stderr


def test_simulate_command_needs_one_group_of_runs(tmp_path):
    path = tmp_path / "runs.csv"
    path.write_text("run_id,model,acc\n" + "".join(f"r{i},{'ab'[i % 2]},{0.5 + 0.01 * i}\n" for i in range(12)))
    base = [
        "simulate",
        str(path),
        "--val",
        "acc",
        "--group-by",
        "model",
        "--replications",
        "5",
        "--resamples",
        "19",
        "--ci-method",
        "percentile",
        "--n",
        "1",
    ]
    result = invoke(*base)
    assert result.exit_code == 2
    assert result.stderr == "Error: the runs form 2 groups (a, b): choose one with --fit-group\n"
    result = invoke(*base, "--fit-group", "nope")
    assert result.exit_code == 2
    assert result.stderr == "Error: --fit-group 'nope' is not a group of the runs; groups: a, b\n"
    result = invoke(*base, "--fit-group", "b")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("kernel: m = 6 runs")
