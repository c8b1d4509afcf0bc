"""analyze(): per-group numbers against direct calls of the core on arrays selected here, comparisons, errors."""

from __future__ import annotations

import dataclasses
import html
import json
import math
import re
import subprocess
import sys
import textwrap
import threading
import warnings
from dataclasses import fields, is_dataclass

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from boontrack.analysis import analyze
from boontrack.estimators import boo_n, boo_n_gaussian
from boontrack.exceptions import InputError
from boontrack.runtable import RunTable
from boontrack.spec import Spec
from boontrack.summary import Summary

ARCH = "model.encoder.architecture.type"
VAL = "best_validation_accuracy"
RESAMPLES = 499


@pytest.fixture(scope="module")
def sst5(shared_data) -> pd.DataFrame:
    return pd.read_csv(shared_data / "show-your-work" / "sst5_cnn_lr_search.tsv", sep="\t")


@pytest.fixture(scope="module")
def sst5_spec() -> Spec:
    return Spec(val=VAL, group_by=(ARCH,), duration="training_duration", n=(1, 5), n_resamples=RESAMPLES)


@pytest.fixture(scope="module")
def sst5_summary(sst5, sst5_spec):
    return analyze(RunTable.from_frame(sst5, sst5_spec), sst5_spec, source="sst5 search")


def seeded_frame(groups: dict[str, tuple[float, list]], *, runs: int = 12, rng: int = 0) -> pd.DataFrame:
    """Runs of several groups sharing seeds 0..runs-1 (each group's rows in a shuffled seed order)."""
    gen = np.random.default_rng(rng)
    parts = []
    for name, (mu, seeds) in groups.items():
        seeds = gen.permutation(seeds if seeds is not None else np.arange(runs))
        val = mu + 0.01 * gen.standard_normal(seeds.size)
        parts.append(
            pd.DataFrame(
                {
                    "params.model": name,
                    "params.seed": seeds.astype(str),
                    "metrics.val_acc": val,
                    "metrics.test_acc": val + 0.005 * gen.standard_normal(seeds.size),
                }
            )
        )
    frame = pd.concat(parts, ignore_index=True)
    frame.insert(0, "run_id", [f"run-{i}" for i in range(len(frame))])
    return frame


# --- per group -------------------------------------------------------------------------------------------------


def test_group_numbers_match_the_core_on_arrays_selected_with_pandas(sst5, sst5_summary):
    from boontrack.resampling import boo_n_ci

    assert [g.label for g in sst5_summary.groups] == ["CNN", "LR"]
    for arch in ("CNN", "LR"):
        rows = sst5[sst5[ARCH] == arch]
        val = rows[VAL].to_numpy()
        g = sst5_summary.group(arch)
        assert g.runs == len(rows) == 50
        assert g.mean.estimate == pytest.approx(rows[VAL].mean(), rel=1e-12)
        assert g.boo_n[1].estimate == pytest.approx(rows[VAL].mean(), rel=1e-12)
        assert g.boo_n[5].estimate == pytest.approx(boo_n(val, n=5), rel=1e-12)
        assert g.gaussian.boo_n[5] == pytest.approx(boo_n_gaussian(val, n=5), rel=1e-12)
        # The whole curve, n = 1..m, and the time axis from the mean training duration.
        np.testing.assert_array_equal(g.curve.n, np.arange(1, 51))
        np.testing.assert_allclose(g.curve.estimate, boo_n(val, n=np.arange(1, 51)), rtol=1e-12)
        assert g.mean_duration_s == pytest.approx(rows["training_duration"].mean())
        np.testing.assert_allclose(g.curve.time, np.arange(1, 51) * rows["training_duration"].mean())
        assert np.all(g.curve.ci_low <= g.curve.estimate) and np.all(g.curve.estimate <= g.curve.ci_high)
        # The interval agrees with an independent bootstrap of the same size up to Monte Carlo error.
        own = boo_n_ci(val, n=5, n_resamples=RESAMPLES, rng=12345)
        width = g.boo_n[5].ci_high - g.boo_n[5].ci_low
        assert g.boo_n[5].ci_low <= g.boo_n[5].estimate <= g.boo_n[5].ci_high
        assert g.boo_n[5].ci_low == pytest.approx(own.confidence_interval.low, abs=0.3 * width)
        assert g.boo_n[5].ci_high == pytest.approx(own.confidence_interval.high, abs=0.3 * width)
        assert g.diagnostics.runs == 50
        assert g.diagnostics.max == pytest.approx(val.max())


def test_lr_against_cnn_baseline(sst5, sst5_summary):
    lr = sst5.loc[sst5[ARCH] == "LR", VAL].to_numpy()
    cnn = sst5.loc[sst5[ARCH] == "CNN", VAL].to_numpy()
    (c,) = sst5_summary.comparisons
    assert (c.group, c.baseline, c.paired) == ("LR", "CNN", False)
    assert c.mean_difference.estimate == pytest.approx(lr.mean() - cnn.mean())
    assert c.boo_n_difference[5].estimate == pytest.approx(boo_n(lr, n=5) - boo_n(cnn, n=5))
    assert c.welch.pvalue == pytest.approx(stats.ttest_ind(lr, cnn, equal_var=False).pvalue, rel=1e-9)
    # One comparison: the adjusted p-values are the raw ones.
    assert c.welch.pvalue_adjusted == pytest.approx(c.welch.pvalue)
    assert c.mann_whitney.pvalue_adjusted == pytest.approx(c.mann_whitney.pvalue)
    wins = (lr[:, None] > cnn[None, :]).mean() + 0.5 * (lr[:, None] == cnn[None, :]).mean()
    assert c.prob_superiority == pytest.approx(wins)
    assert c.wilcoxon is None


def test_same_inputs_same_numbers_and_the_seed_matters(sst5, sst5_spec, sst5_summary):
    table = RunTable.from_frame(sst5, sst5_spec)
    again = analyze(table, sst5_spec, source="sst5 search")
    assert json.dumps(again.to_dict()) == json.dumps(sst5_summary.to_dict())
    other = analyze(table, Spec(**{**sst5_spec.__dict__, "seed": 1}))
    g, h = sst5_summary.group("CNN"), other.group("CNN")
    assert g.boo_n[5].estimate == h.boo_n[5].estimate
    assert g.boo_n[5].ci_low != h.boo_n[5].ci_low


def test_to_dict_is_json_with_every_required_field(sst5_spec, sst5_summary):
    data = json.loads(json.dumps(sst5_summary.to_dict(), allow_nan=False))
    assert data["source"] == "sst5 search"
    assert data["spec"] == sst5_spec.resolve_direction().to_dict()  # with the direction used, and who said it
    assert set(data["versions"]) == {"boontrack", "numpy", "scipy", "pandas"}
    group = data["groups"]["LR"]
    assert group["runs"] == 50 and group["dropped"] == []
    assert set(group["boo_n"]) == {"1", "5"}
    assert {"estimate", "ci_low", "ci_high", "standard_error"} <= set(group["boo_n"]["5"])
    assert group["boo_n"]["5"]["estimate"] == sst5_summary.group("LR").boo_n[5].estimate
    assert {"n", "estimate", "ci_low", "ci_high", "time"} <= set(group["curve"])
    assert len(group["curve"]["n"]) == len(group["curve"]["time"]) == 50
    assert {"boo_n", "normal"} <= set(group["gaussian"]) and "estimate" in group["mean"]
    assert {"runs", "ties", "sd", "normal", "spearman_val_test"} <= set(group["diagnostics"])
    (comparison,) = data["comparisons"]
    assert comparison["group"] == "LR" and comparison["welch"]["pvalue_adjusted"] is not None


def test_dropped_runs_are_carried_into_the_summary(sst5):
    spec = Spec(val=VAL, test="accuracy", group_by=(ARCH,), n=(1, 5), n_resamples=99)
    summary = analyze(RunTable.from_frame(sst5, spec), spec)
    # CNN rows have no test accuracy: all dropped, so CNN is not analyzed but its runs are listed.
    assert [g.label for g in summary.groups] == ["LR"]
    assert len(summary.dropped) == int(sst5["accuracy"].isna().sum())
    assert {d.group for d in summary.dropped} == {"CNN"}
    assert summary.comparisons == ()
    lr = sst5[sst5[ARCH] == "LR"]
    g = summary.group("LR")
    assert g.boo_n[5].estimate == pytest.approx(boo_n(lr[VAL], lr["accuracy"], n=5))
    assert g.diagnostics.spearman_val_test == pytest.approx(stats.spearmanr(lr[VAL], lr["accuracy"]).statistic)


@pytest.mark.parametrize(
    ("name", "mean", "sd", "spearman"),
    [("fixed", 0.6316, 0.0094, 0.18), ("random search", 0.6126, 0.0248, 0.83)],
)
def test_diagnostics_reproduce_the_boon_paper_statistics(shared_data, name, mean, sd, spearman):
    """Bajgar et al. (2018), Appendix C.4: test mean, s.d. and validation-test Spearman correlation."""
    folder = shared_data / "boon-paper"
    if name == "fixed":
        raw = pd.read_csv(folder / "cbt_fixed_hyppar.csv")
        runs = raw[raw["log_path"].str.contains("/cbt-dist/", regex=False) & (raw["epoch"] > 0)]
        spec = Spec(val="valid.accuracy", test="accuracy", n=(1, 5), n_resamples=49)
    else:
        raw = pd.read_csv(folder / "cbtrs_results.csv")
        runs = raw.loc[raw.groupby("log")["best_valid_accuracy"].idxmax()]
        runs = runs[runs["iterations_done"] > 0]
        spec = Spec(val="best_valid_accuracy", test="cbtest_CN_test_2500ex.txt_accuracy", n=(1, 5), n_resamples=49)
    g = analyze(RunTable.from_frame(runs, spec), spec).group("all")
    assert g.diagnostics.mean == pytest.approx(mean, abs=5e-5)
    assert g.diagnostics.sd == pytest.approx(sd, abs=4e-4)
    assert g.diagnostics.spearman_val_test == pytest.approx(spearman, abs=0.01)


# --- comparisons -----------------------------------------------------------------------------------------------


def _holm(p: np.ndarray) -> np.ndarray:
    order = np.argsort(p)
    scaled = np.maximum.accumulate((p.size - np.arange(p.size)) * p[order])
    out = np.empty(p.size)
    out[order] = np.minimum(scaled, 1.0)
    return out


def test_paired_by_seed_against_a_named_baseline_with_holm():
    frame = seeded_frame({"a": (0.80, None), "b": (0.81, None), "c": (0.79, None)})
    spec = Spec(val="val_acc", test="test_acc", seed_column="seed", baseline="b", n=(1, 3), n_resamples=199)
    table = RunTable.from_frame(frame, spec)
    assert table.group_by == ("params.model",)
    summary = analyze(table, spec)

    assert [(c.group, c.baseline, c.paired) for c in summary.comparisons] == [("a", "b", True), ("c", "b", True)]
    wilcoxon_p = []
    for c in summary.comparisons:
        merged = frame[frame["params.model"] == c.group].merge(
            frame[frame["params.model"] == "b"], on="params.seed", suffixes=("", "_base")
        )
        diff = merged["metrics.test_acc"] - merged["metrics.test_acc_base"]
        assert c.mean_difference.estimate == pytest.approx(diff.mean())
        assert c.wilcoxon.pvalue == pytest.approx(
            stats.wilcoxon(merged["metrics.test_acc"], merged["metrics.test_acc_base"]).pvalue, rel=1e-6
        )
        assert c.paired_t.pvalue == pytest.approx(
            stats.ttest_rel(merged["metrics.test_acc"], merged["metrics.test_acc_base"]).pvalue, rel=1e-9
        )
        # paired runs: the paired tests are the headline ones, Welch and Mann-Whitney are not reported
        assert c.welch is None and c.mann_whitney is None and list(c.tests) == ["paired_t", "wilcoxon"]
        wilcoxon_p.append(c.wilcoxon.pvalue)
    np.testing.assert_allclose([c.wilcoxon.pvalue_adjusted for c in summary.comparisons], _holm(np.array(wilcoxon_p)))
    paired_t_p = np.array([c.paired_t.pvalue for c in summary.comparisons])
    np.testing.assert_allclose([c.paired_t.pvalue_adjusted for c in summary.comparisons], _holm(paired_t_p))


def test_all_pairs_with_benjamini_hochberg_and_unpaired_when_seeds_differ():
    frame = seeded_frame({"a": (0.80, np.arange(10)), "b": (0.82, np.arange(10)), "c": (0.79, np.arange(5, 15))})
    spec = Spec(val="val_acc", seed_column="seed", compare="all-pairs", correction="bh", n=(1, 2), n_resamples=99)
    summary = analyze(RunTable.from_frame(frame, spec), spec)
    pairs = {(c.group, c.baseline): c for c in summary.comparisons}
    assert set(pairs) == {("b", "a"), ("c", "a"), ("c", "b")}
    assert pairs[("b", "a")].paired and not pairs[("c", "a")].paired and not pairs[("c", "b")].paired
    assert pairs[("c", "a")].wilcoxon is None and pairs[("c", "a")].paired_t is None
    assert pairs[("b", "a")].mann_whitney is None and pairs[("b", "a")].welch is None
    # one family per kind of test over every comparison: each comparison's own t-test, then its rank test
    for kind in (0, 1):
        results = [list(c.tests.values())[kind] for c in summary.comparisons]
        np.testing.assert_allclose(
            [r.pvalue_adjusted for r in results], stats.false_discovery_control([r.pvalue for r in results])
        )


def test_minimized_metric_uses_the_lowest_validation_score():
    frame = seeded_frame({"only": (0.5, None)}, runs=15)
    spec = Spec(val="val_acc", test="test_acc", maximize=False, n=(3,), n_resamples=99)
    summary = analyze(RunTable.from_frame(frame, spec), spec)
    g = summary.group("all")
    expected = boo_n(frame["metrics.val_acc"], frame["metrics.test_acc"], n=3, maximize=False)
    assert g.boo_n[3].estimate == pytest.approx(expected)
    assert expected < frame["metrics.test_acc"].mean()  # picking the lowest validation score picks low tests


# --- curves for many runs, warnings, progress ------------------------------------------------------------------


def test_many_runs_curve_is_log_spaced_with_the_requested_budgets():
    gen = np.random.default_rng(3)
    frame = pd.DataFrame({"acc": gen.normal(size=1500)})
    spec = Spec(val="acc", n=(1, 7, 20), n_resamples=49)
    g = analyze(RunTable.from_frame(frame, spec), spec).group("all")
    assert g.curve.n.size <= 250
    assert {1, 7, 20, 1500} <= set(g.curve.n.tolist())
    assert np.all(np.diff(g.curve.n) > 0)
    np.testing.assert_allclose(g.curve.estimate, boo_n(frame["acc"], n=g.curve.n), rtol=1e-10)
    assert g.curve.time is None


def test_few_runs_warn_in_the_summary_and_progress_is_silent_off_a_terminal(capfd):
    frame = pd.DataFrame({"acc": [0.1, 0.5, 0.3, 0.4, 0.2, 0.35]})
    spec = Spec(val="acc", n=(1, 3), n_resamples=49)
    summary = analyze(RunTable.from_frame(frame, spec), spec, progress=True)
    assert any("runs" in w for w in summary.group("all").warnings)
    captured = capfd.readouterr()
    assert captured.out == "" and captured.err == ""


# --- errors ----------------------------------------------------------------------------------------------------


def test_analyses_in_several_threads_each_keep_their_own_warnings():
    # Each analysis collects its warnings in its own context; analyses running at once in several threads must
    # each keep theirs, none escaping (as an error under this suite's filter) or lost.
    frame = pd.DataFrame({"acc": [0.1, 0.5, 0.3, 0.4, 0.2, 0.35]})
    spec = Spec(val="acc", n=(1, 4), n_resamples=2000)
    table = RunTable.from_frame(frame, spec)
    results, errors = [], []

    def summarize() -> None:
        try:
            results.append(analyze(table, spec))
        except Exception as exc:  # noqa: BLE001 - the assertion below shows it
            errors.append(exc)

    threads = [threading.Thread(target=summarize) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    alone = analyze(table, spec).group("all").warnings
    assert alone and all(r.group("all").warnings == alone for r in results)


def test_group_smaller_than_n_names_the_group_and_counts():
    frame = seeded_frame({"a": (0.8, np.arange(10)), "b": (0.8, np.arange(4))})
    spec = Spec(val="val_acc", seed_column="seed", n=(1, 5), n_resamples=49)
    with pytest.raises(InputError, match=r"n = 5: group 'b' has 4 runs.*extrapolation.*smaller `n`.*params.model"):
        analyze(RunTable.from_frame(frame, spec), spec)
    spec_u = Spec(val="val_acc", seed_column="seed", n=(1, 5), estimator="U", n_resamples=49)
    with pytest.raises(InputError, match="U estimator cannot extrapolate"):
        analyze(RunTable.from_frame(frame, spec_u), spec_u)


def test_unknown_baseline_and_invalid_spec_options():
    frame = seeded_frame({"a": (0.8, None), "b": (0.8, None)})
    table_spec = Spec(val="val_acc", seed_column="seed")
    table = RunTable.from_frame(frame, table_spec)
    with pytest.raises(InputError, match=r"baseline group 'z' not found; groups are: a, b"):
        analyze(table, Spec(val="val_acc", seed_column="seed", baseline="z"))
    # a spec checks itself when it is built, before any analysis
    with pytest.raises(InputError, match=r"^`n` must be a list of integers >= 1, got \(1, 0\)$"):
        Spec(val="val_acc", n=(1, 0))
    with pytest.raises(InputError, match=r"^`estimator` must be one of V, U, W, got 'X'$"):
        Spec(val="val_acc", estimator="X")


def test_a_spec_other_than_the_tables_is_refused():
    frame = seeded_frame({"a": (0.8, None), "b": (0.7, None)})
    table = RunTable.from_frame(frame, Spec(val="val_acc", test="test_acc", seed_column="seed"))
    with pytest.raises(
        InputError, match=r"^spec.val is 'test_acc' but the table was built with column 'metrics.val_acc'"
    ):
        analyze(table, Spec(val="test_acc", test="val_acc", seed_column="seed"))
    with pytest.raises(InputError, match=r"^spec.test is None but the table was built with column 'metrics.test_acc'"):
        analyze(table, Spec(val="val_acc", seed_column="seed"))
    with pytest.raises(
        InputError, match=r"^spec.group_by is 'seed' but the table was built with column 'params.model'"
    ):
        analyze(table, Spec(val="val_acc", test="test_acc", seed_column="seed", group_by=("seed",)))


@pytest.mark.parametrize("table", [pd.DataFrame({"val_acc": [0.1]}), {"val_acc": [0.1]}, None])
def test_analyze_refuses_a_table_that_is_not_a_run_table(table):
    with pytest.raises(ValueError, match=r"^table must be a RunTable \(build one with RunTable.from_frame"):
        analyze(table, Spec(val="val_acc"))


def test_analyze_refuses_a_spec_that_is_not_a_spec():
    table = RunTable.from_frame(seeded_frame({"a": (0.8, None)}), Spec(val="val_acc", seed_column="seed"))
    with pytest.raises(ValueError, match="^spec must be a boontrack Spec, got dict$"):
        analyze(table, {"val": "val_acc"})


def test_groups_with_constant_scores_leave_their_tests_undefined_not_failed():
    frame = pd.DataFrame(
        {
            "run_id": [f"r{i}" for i in range(30)],
            "model": ["a"] * 10 + ["b"] * 10 + ["c"] * 10,
            "acc": [0.5] * 20 + list(np.linspace(0.4, 0.6, 10)),
        }
    )
    spec = Spec(val="acc", group_by=("model",), n=(1, 5), n_resamples=200)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # no numerical noise from scipy reaches the user
        summary = analyze(RunTable.from_frame(frame, spec), spec)
    by_group = {c.group: c for c in summary.comparisons}
    assert math.isnan(by_group["b"].welch.pvalue) and math.isnan(by_group["b"].welch.pvalue_adjusted)
    # the one defined Welch test is corrected alone (Holm over one p-value leaves it as it is)
    assert by_group["c"].welch.pvalue_adjusted == pytest.approx(by_group["c"].welch.pvalue)


def test_zero_durations_are_unknown_so_there_is_no_time_axis():
    frame = pd.DataFrame({"acc": np.linspace(0.5, 0.6, 12), "duration_s": 0.0})
    spec = Spec(val="acc", n=(1, 5), n_resamples=100)
    summary = analyze(RunTable.from_frame(frame, spec), spec)
    assert summary.groups[0].curve.time is None and summary.groups[0].mean_duration_s is None


# --- default budgets -------------------------------------------------------------------------------------------


def test_default_budgets_are_those_each_group_has_runs_for():
    frame = seeded_frame({"a": (0.8, np.arange(12)), "b": (0.8, np.arange(6))})
    spec = Spec(val="val_acc", test="test_acc", seed_column="seed", n_resamples=49)
    assert spec.n is None and spec.budgets == (1, 5, 10)
    summary = analyze(RunTable.from_frame(frame, spec), spec)
    a, b = summary.group("a"), summary.group("b")
    assert (sorted(a.boo_n), a.left_out_budgets) == ([1, 5, 10], ())
    assert (sorted(b.boo_n), b.left_out_budgets) == ([1, 5], (10,))
    assert sorted(b.gaussian.boo_n) == [1, 5] and b.diagnostics.n == 5
    assert "Boo_10 left out: 6 runs are too few" in " ".join(b.warnings)
    assert summary.common_budgets == (1, 5)
    rows = frame[frame["params.model"] == "b"]
    assert b.boo_n[5].estimate == pytest.approx(boo_n(rows["metrics.val_acc"], rows["metrics.test_acc"], n=5))
    (c,) = summary.comparisons
    assert not c.paired and sorted(c.boo_n_difference) == [1, 5]
    assert c.boo_n_difference[5].estimate == pytest.approx(b.boo_n[5].estimate - a.boo_n[5].estimate)


def test_u_with_bca_leaves_out_the_budget_its_jackknife_cannot_reach():
    frame = pd.DataFrame({"acc": [0.1, 0.5, 0.3, 0.4, 0.2]})
    spec = Spec(val="acc", estimator="U", ci_method="bca", n_resamples=49)
    assert spec.budgets_for(5) == ((1,), (5, 10)) and spec.budgets_for(6) == ((1, 5), (10,))
    g = analyze(RunTable.from_frame(frame, spec), spec).group("all")
    assert sorted(g.boo_n) == [1] and "(BCa with U needs n + 1)" in " ".join(g.warnings)
    one_run = pd.DataFrame({"acc": [0.5]})
    with pytest.raises(InputError, match="too few runs for n = 1: group 'all' has 1 runs"):
        analyze(RunTable.from_frame(one_run, spec), spec)


def test_the_thread_count_changes_no_number(monkeypatch):
    """The bootstrap's batches are drawn in order in one thread, whatever the count: the same summary."""
    from boontrack._bootstrap import kernels

    monkeypatch.setattr(kernels, "BATCH_ELEMENTS", 12 * 50)  # 50 resamples per batch: several batches
    frame = seeded_frame({"a": (0.80, None), "b": (0.81, None)})
    spec = Spec(val="val_acc", test="test_acc", seed_column="seed", n=(1, 3), n_resamples=RESAMPLES)
    table = RunTable.from_frame(frame, spec)
    one, three = (analyze(table, spec, threads=threads).to_dict() for threads in (1, 3))
    assert json.dumps(one, sort_keys=True) == json.dumps(three, sort_keys=True)


def warned_frame() -> pd.DataFrame:
    """Groups whose summaries warn differently: few runs, constant test scores, a paired baseline, plain."""
    frame = seeded_frame({"a": (0.80, None), "b": (0.81, None), "c": (0.82, np.arange(6)), "d": (0.79, None)})
    frame.loc[frame["params.model"] == "d", "metrics.test_acc"] = 0.75
    return frame


def test_groups_side_by_side_give_one_threads_summary_and_warnings(monkeypatch):
    """Groups summarized on 2 or 4 threads at once: the same numbers and, per group, the same warnings in the same
    order as on one thread (each group draws from its own generator and collects its own warnings)."""
    from boontrack._bootstrap import kernels

    monkeypatch.setattr(kernels, "BATCH_ELEMENTS", 12 * 50)  # several batches per group
    spec = Spec(val="val_acc", test="test_acc", seed_column="seed", n=(1, 3), n_resamples=RESAMPLES)
    table = RunTable.from_frame(warned_frame(), spec)
    one, two, four = (analyze(table, spec, threads=threads) for threads in (1, 2, 4))
    assert all(one.group(label).warnings for label in ("c", "d"))  # something to keep apart
    assert one.group("c").warnings != one.group("d").warnings
    for other in (two, four):
        assert json.dumps(other.to_dict(), sort_keys=True) == json.dumps(one.to_dict(), sort_keys=True)
        assert [g.warnings for g in other.groups] == [g.warnings for g in one.groups]


def test_other_libraries_warnings_from_groups_on_threads_reach_the_caller(monkeypatch):
    """A warning that is not boontrack's, raised while groups are summarized on threads, reaches the caller once
    per group and stays out of the groups' warnings."""
    from boontrack import diagnostics

    diagnose = diagnostics.diagnose

    def warning_diagnose(val, *args, **kwargs):
        warnings.warn(f"elsewhere: {val.size} runs", RuntimeWarning, stacklevel=1)
        return diagnose(val, *args, **kwargs)

    monkeypatch.setattr(diagnostics, "diagnose", warning_diagnose)
    spec = Spec(val="val_acc", test="test_acc", seed_column="seed", n=(1, 3), n_resamples=RESAMPLES)
    table = RunTable.from_frame(warned_frame(), spec)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        summary = analyze(table, spec, threads=2)
    elsewhere = sorted(str(w.message) for w in caught if w.category is RuntimeWarning)
    assert elsewhere == ["elsewhere: 12 runs"] * 3 + ["elsewhere: 6 runs"]
    assert not any("elsewhere" in message for g in summary.groups for message in g.warnings)


@pytest.mark.parametrize("threads", [0, -2, 1.5, True, "2"])
def test_a_thread_count_below_one_or_not_whole_is_refused(threads):
    frame = seeded_frame({"a": (0.80, None)})
    spec = Spec(val="val_acc", n=(1,), n_resamples=RESAMPLES)
    with pytest.raises(InputError, match="threads must be a whole number >= 1"):
        analyze(RunTable.from_frame(frame, spec), spec, threads=threads)


# --- the stored summary: Summary.from_dict, the inverse of Summary.to_dict ------------------------------------


def _with_dropped_and_durations(frame: pd.DataFrame) -> pd.DataFrame:
    frame = frame.copy()
    frame.loc[frame.index[-2:], "metrics.val_acc"] = np.nan  # two dropped runs of the last group: it is not paired
    frame["duration_s"] = np.linspace(10.0, 40.0, len(frame))
    return frame


def _stored_cases() -> dict[str, tuple[pd.DataFrame, Spec]]:
    """Summaries that fill every kind of field: paired and unpaired comparisons, dropped runs, left-out and
    doubtful budgets, bounds, flagged Gaussian estimates, undefined (NaN) tests and None fields."""
    skewed = np.random.default_rng(3).lognormal(0.0, 1.0, 40)
    return {
        "paired, dropped, durations": (
            _with_dropped_and_durations(seeded_frame({"a": (0.80, None), "b": (0.81, None), "c": (0.79, None)})),
            Spec(val="val_acc", test="test_acc", seed_column="seed", baseline="b", n=(1, 3), n_resamples=49),
        ),
        "unpaired, default budgets, doubts": (
            seeded_frame({"a": (0.8, np.arange(12)), "b": (0.8, np.arange(6))}),
            Spec(val="val_acc", test="test_acc", seed_column="seed", n_resamples=49),
        ),
        "constant scores, no test": (
            pd.DataFrame({"model": ["a"] * 10 + ["b"] * 10, "acc": [0.5] * 20}),
            Spec(val="acc", group_by=("model",), n=(1, 5), n_resamples=49),
        ),
        "minimized, skewed, bounded": (
            pd.DataFrame({"loss": skewed, "test_loss": skewed * 1.01}),
            Spec(val="loss", test="test_loss", maximize=False, bounds=(0.0, None), n=(1, 5, 30), n_resamples=49),
        ),
    }


@pytest.fixture(scope="module", params=list(_stored_cases()))
def stored_case(request):
    frame, spec = _stored_cases()[request.param]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return analyze(RunTable.from_frame(frame, spec), spec, source=request.param)


def assert_same_result(back, original, where="summary"):
    """Field by field over the result types: NaN equals NaN, arrays compare elementwise with their kind."""
    if is_dataclass(original):
        assert type(back) is type(original), where
        for f in fields(original):
            if f.compare:
                assert_same_result(getattr(back, f.name), getattr(original, f.name), f"{where}.{f.name}")
    elif isinstance(original, np.ndarray):
        assert isinstance(back, np.ndarray) and back.dtype.kind == original.dtype.kind, where
        np.testing.assert_array_equal(back, original, err_msg=where)
    elif isinstance(original, dict):
        assert isinstance(back, dict) and list(back) == list(original), where
        for key in original:
            assert_same_result(back[key], original[key], f"{where}[{key!r}]")
    elif isinstance(original, tuple):
        assert isinstance(back, tuple) and len(back) == len(original), where
        for i, (b, o) in enumerate(zip(back, original)):
            assert_same_result(b, o, f"{where}[{i}]")
    elif isinstance(original, float) and math.isnan(original):
        assert isinstance(back, float) and math.isnan(back), where
    else:
        assert back == original and type(back) is type(original) or isinstance(original, np.generic), where


def test_the_cases_fill_every_kind_of_field(stored_case):
    """What the round trip below covers, case by case (a case that stopped covering it would hide a field)."""
    s, name = stored_case, stored_case.source
    groups = s.groups
    if name.startswith("paired"):
        assert len(s.dropped) == 2 and [(c.paired, c.paired_t is not None) for c in s.comparisons] == [
            (True, True),
            (False, False),
        ]
        assert all(g.curve.time is not None and g.mean_duration_s is not None for g in groups)
    if name.startswith("unpaired"):
        assert s.group("b").left_out_budgets == (10,) and s.group("b").doubts[5] and not s.comparisons[0].paired
        assert s.group("a").bounds == (0.0, 1.0) and s.group("a").unseen.floor == 0.0
    if name.startswith("constant"):
        assert math.isnan(s.comparisons[0].welch.pvalue) and math.isnan(groups[0].diagnostics.normality_statistic)
        assert groups[0].diagnostics.spearman_val_test is None and not s.has_test
    if name.startswith("minimized"):
        assert groups[0].gaussian.unreliable and groups[0].bounds == (0.0, None) and groups[0].doubts[30]


def test_a_summary_comes_back_from_its_data(stored_case):
    data = stored_case.to_dict()
    back = Summary.from_dict(data)
    assert back.to_dict() == data
    assert_same_result(back, stored_case)
    assert back.spec == stored_case.spec and back.dropped == stored_case.dropped and back.table is None
    # JSON holds no NaN: a stored summary reads the same, and writes the same text again
    stored = json.loads(json.dumps(data, allow_nan=False))
    again = Summary.from_dict(stored)
    assert_same_result(again, stored_case)
    assert json.dumps(again.to_dict(), allow_nan=False) == json.dumps(data, allow_nan=False)


def test_finite_results_are_equal_as_objects(stored_case):
    back = Summary.from_dict(json.loads(json.dumps(stored_case.to_dict())))
    for g, original in zip(back.groups, stored_case.groups):
        assert (g.label, g.boo_n, g.mean, g.doubts, g.unseen, g.bounds) == (
            original.label,
            original.boo_n,
            original.mean,
            original.doubts,
            original.unseen,
            original.bounds,
        )
    if stored_case.source.startswith("paired"):
        assert back.comparisons == stored_case.comparisons  # every number finite: dataclass equality holds


def _summary_data_with(change) -> dict:
    frame, spec = _stored_cases()["paired, dropped, durations"]
    data = json.loads(json.dumps(analyze(RunTable.from_frame(frame, spec), spec).to_dict()))
    change(data)
    return data


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.pop("groups"), "summary has no 'groups'"),
        (lambda d: d["groups"]["a"].pop("mean"), "summary.groups.a has no 'mean'"),
        (lambda d: d["groups"]["a"]["mean"].pop("ci_low"), "summary.groups.a.mean has no 'ci_low'"),
        (lambda d: d["comparisons"][1].update(paired="yes"), "summary.comparisons[1].paired must be bool, got 'yes'"),
        (lambda d: d["groups"]["b"].update(boo_n=[]), "summary.groups.b.boo_n must be a JSON object, got list"),
        (lambda d: d["groups"]["b"]["boo_n"].update(five={}), "summary.groups.b.boo_n must be keyed by budgets"),
        (lambda d: d["groups"]["c"]["diagnostics"].update(runs=1.5), "summary.groups.c.diagnostics.runs must be int"),
        (lambda d: d["groups"]["c"]["curve"].pop("estimate"), "summary.groups.c.curve has no 'estimate'"),
        (lambda d: d["dropped"][0].pop("reason"), "summary.dropped[0] has no 'reason'"),
        (lambda d: d["groups"]["a"]["boo_n"]["3"].pop("estimate"), "summary.groups.a.boo_n['3'] has no 'estimate'"),
        (lambda d: d["groups"]["a"].update(bounds=[0.0]), "summary.groups.a.bounds must be [low, high], got [0.0]"),
        (lambda d: d["groups"].pop("b"), "summary.comparisons[0].baseline is 'b', which is not a group's label"),
    ],
)
def test_malformed_summary_data_is_a_value_error_that_says_where(change, message):
    with pytest.raises(ValueError, match="^malformed summary data: " + re.escape(message)):
        Summary.from_dict(_summary_data_with(change))


def test_summary_data_that_is_not_an_object_is_refused():
    with pytest.raises(ValueError, match="summary must be a JSON object, got list"):
        Summary.from_dict([])  # type: ignore[arg-type]


def test_a_summary_stored_before_doubts_bounds_and_paired_t_reads_with_their_defaults():
    def earlier(data):
        for g in data["groups"].values():
            for key in ("doubts", "unseen", "bounds", "left_out_budgets"):
                del g[key]
        for c in data["comparisons"]:
            del c["paired_t"]

    back = Summary.from_dict(_summary_data_with(earlier))
    assert all(g.doubts == {} and g.unseen is None and g.bounds == (None, None) for g in back.groups)
    assert back.comparisons[0].paired and [c.paired_t for c in back.comparisons] == [None, None]


def test_groups_and_batches_are_summarized_in_an_exit_handler(tmp_path):
    """Once the interpreter shuts down, a thread pool takes no new work: a summary written by an exit handler (as
    Hydra's callback writes one when a multirun stops early) runs its groups and batches in the calling thread."""
    script = tmp_path / "at_exit.py"
    script.write_text(
        textwrap.dedent(
            """
            import atexit
            import numpy as np
            import pandas as pd
            from boontrack._bootstrap import kernels
            from boontrack.analysis import analyze
            from boontrack.runtable import RunTable
            from boontrack.spec import Spec

            kernels.BATCH_ELEMENTS = 12 * 50  # several batches per group
            rng = np.random.default_rng(0)
            frame = pd.DataFrame({"params.model": np.repeat(["a", "b", "c"], 12), "metrics.val_acc": rng.random(36)})
            spec = Spec(val="val_acc", group_by=("model",), n=(1, 3), n_resamples=199)

            def summarize():
                summary = analyze(RunTable.from_frame(frame, spec), spec, threads=2)
                print("groups:", len(summary.groups))

            atexit.register(summarize)
            """
        )
    )
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert done.stdout == "groups: 3\n"


def test_a_share_in_percent_gets_intervals_inside_0_100_and_the_summary_says_so():
    from boontrack.report_html import to_html
    from boontrack.reports import format_table, markdown_literal, to_json, to_markdown

    rng = np.random.default_rng(4)
    val = rng.uniform(90, 99.8, 15)
    frame = pd.DataFrame({"val_acc": val, "test_acc": np.clip(val + rng.normal(0, 0.5, 15), 0, 99.9)})
    options = dict(val="val_acc", test="test_acc", n_resamples=RESAMPLES)
    unbounded = Spec(**options, bounds=(None, None))  # declared unbounded: the upper ends pass 100
    assert (
        max(i.ci_high for i in analyze(RunTable.from_frame(frame, unbounded), unbounded).groups[0].boo_n.values()) > 100
    )
    spec = Spec(**options)
    summary = analyze(RunTable.from_frame(frame, spec), spec)
    group = summary.groups[0]
    assert summary.spec.bounds == group.bounds == (0.0, 100.0) and group.unseen.floor == 0.0
    ends = [i.ci_high for i in (*group.boo_n.values(), group.mean)]
    assert max(ends) <= 100 and group.curve.ci_high.max() <= 100 and group.curve.simultaneous_high.max() <= 100
    said = "; bounds [0, 100]: 'test_acc' names a share ('acc') and its scores lie in [0, 100], above 1: percentages"
    header = format_table(summary).splitlines()[0]
    assert header.endswith(said) and format_table(json.loads(to_json(summary))).splitlines()[0] == header
    in_markdown, in_html = markdown_literal(said[2:]), html.escape(said[2:])  # the same words, each format's escape
    assert in_markdown in to_markdown(summary) and in_html in to_html(summary)
    fractions = frame / 100  # the same runs as fractions: [0, 1] as before, nothing more to say
    as_fractions = analyze(RunTable.from_frame(fractions, spec), spec)
    assert as_fractions.spec.bounds is None and as_fractions.groups[0].bounds == (0.0, 1.0)
    assert "bounds" not in format_table(as_fractions).splitlines()[0]


def test_names_that_disagree_on_the_direction_are_refused_before_any_work():
    frame = pd.DataFrame({"val_score": [0.5, 0.6, 0.7, 0.8], "test_loss": [0.9, 0.8, 0.7, 0.6]})
    spec = Spec(val="val_score", test="test_loss", n=(1, 2), n_resamples=RESAMPLES)
    with pytest.raises(
        ValueError, match=r"^'val_score' and 'test_loss' disagree .* `maximize=True` or `maximize=False`$"
    ):
        analyze(RunTable.from_frame(frame, spec), spec)
    said = dataclasses.replace(spec, maximize=False)
    assert analyze(RunTable.from_frame(frame, said), said).spec.direction == "lower is better, as asked"


def test_the_unseen_figures_say_what_boo_n_is_without_the_best_runs_by_validation():
    """Boo_n without the best one and two runs by validation, recomputed here from the runs left: the best by
    validation score, a tie at the top broken by test score as the bootstrap ranks runs."""
    val = np.array([0.70, 0.71, 0.72, 0.73, 0.74, 0.75, 0.76, 0.77, 0.80, 0.80])
    test = np.array([0.60, 0.62, 0.61, 0.66, 0.63, 0.67, 0.64, 0.70, 0.50, 0.68])
    spec = Spec(val="val", test="test", n=(1, 2, 5), n_resamples=99)
    summary = analyze(RunTable.from_frame(pd.DataFrame({"val": val, "test": test}), spec), spec)
    unseen = summary.groups[0].unseen
    # the two tied best by validation: 0.68 ranks above 0.50 (ties by test), so it is "the best" left out first
    without_one, without_two = [True] * 10, [True] * 10
    without_one[9] = without_two[9] = without_two[8] = False
    for n in (2, 5):
        expected = (
            float(boo_n(val[without_one], test[without_one], n=n)),
            float(boo_n(val[without_two], test[without_two], n=n)),
        )
        assert unseen.without_best[n] == pytest.approx(expected, rel=1e-12)
    assert 1 not in unseen.without_best
    few = Spec(val="val", test="test", n=(1, 9), n_resamples=99)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # n > m / 2
        tight = analyze(RunTable.from_frame(pd.DataFrame({"val": val, "test": test}), few), few).groups[0].unseen
    assert tight.without_best[9][0] is not None and tight.without_best[9][1] is None  # 8 runs left: fewer than 9


@pytest.mark.parametrize(
    ("bounds", "assumed", "floor_is"),
    [
        (None, (0.0, 1.0), "the worst score if the scores are bounded by [0, 1], as these scores suggest"),
        ((-1.0, 1.0), None, "the worst score possible"),
    ],
)
def test_the_unseen_floor_is_the_worst_score_possible_only_where_the_bounds_were_declared(bounds, assumed, floor_is):
    """Scores that all lie in [0, 1] are taken to be bounded by it, which an NPMI in [-1, 1] is not: "Not ruled
    out" says the floor is an assumption there, and the worst score possible only where the bounds were given."""
    from boontrack.reports import format_table

    frame = pd.DataFrame({"val": np.linspace(0.05, 0.3, 12), "test": np.linspace(0.1, 0.2, 12)})
    spec = Spec(val="val", test="test", n=(1, 2), n_resamples=99, bounds=bounds)
    summary = analyze(RunTable.from_frame(frame, spec), spec)
    unseen = summary.groups[0].unseen
    assert unseen.assumed_bounds == assumed
    assert unseen.floor == (0.0 if bounds is None else -1.0)
    line = next(line for line in format_table(summary).splitlines() if line.startswith("Not ruled out"))
    assert f"scoring {unseen.floor:g} ({floor_is}) would lower the mean" in line
    assert Summary.from_dict(json.loads(json.dumps(summary.to_dict()))).groups[0].unseen == unseen


@pytest.mark.parametrize("paired", [False, True])
@pytest.mark.parametrize("level", [0.9, 0.95])
def test_the_mean_difference_is_the_t_interval_of_the_t_test_beside_it(paired, level):
    """Δmean's interval is scipy's t-interval of the same runs (ttest_rel's for runs paired by seed, else
    Welch's), so it excludes 0 exactly when the t-test's p-value is below 1 - level; a rare run far below the
    others (heavy studentized tails) does not change that."""
    from scipy import stats

    rng = np.random.default_rng(3)
    a = np.where(rng.random(30) < 0.1, 0.3, rng.normal(0.85, 0.02, 30))
    b = rng.normal(0.83, 0.02, 30)
    frame = pd.DataFrame({"val": np.r_[a, b], "test": np.r_[a, b], "model": ["a"] * 30 + ["b"] * 30})
    if paired:
        frame["seed"] = np.r_[np.arange(30), np.arange(30)]
    spec = Spec(
        val="val",
        test="test",
        group_by=("model",),
        baseline="b",
        seed_column="seed" if paired else None,
        confidence_level=level,
        n_resamples=199,
    )
    comparison = analyze(RunTable.from_frame(frame, spec), spec).comparisons[0]
    test = stats.ttest_rel(a, b) if paired else stats.ttest_ind(a, b, equal_var=False)
    expected = test.confidence_interval(level)
    interval = comparison.mean_difference
    assert interval.estimate == pytest.approx(a.mean() - b.mean(), abs=1e-12)
    assert (interval.ci_low, interval.ci_high) == pytest.approx((expected.low, expected.high), rel=1e-9)
    p_value = (comparison.paired_t if paired else comparison.welch).pvalue
    assert p_value == pytest.approx(test.pvalue, rel=1e-9)
    assert (interval.ci_low > 0 or interval.ci_high < 0) == (p_value < 1 - level)
