"""Reports: the metric-name table, JSON, Markdown, curve and terminal tables, and the outputs a sink writes."""

from __future__ import annotations

import hashlib
import html
import io
import json
import re

import numpy as np
import pandas as pd
import pytest

from boontrack.analysis import analyze
from boontrack.estimators import boo_n
from boontrack.reports import (
    curve_table,
    flat_metrics,
    format_table,
    group_names,
    metric_names,
    render_outputs,
    to_json,
    to_markdown,
)
from boontrack.runtable import RunTable
from boontrack.spec import Spec
from boontrack.summary import Summary

RESAMPLES = 99
#: Characters MLflow accepts in a metric name.
MLFLOW_NAME = re.compile(r"^[A-Za-z0-9_\-. :/]+$")


def sweep_frame() -> pd.DataFrame:
    """Two learning rates x two dropouts, 8 shared seeds each, with one failed and one metric-less run."""
    gen = np.random.default_rng(7)
    rows = []
    for lr in ("0.1", "0.01"):
        for dropout in ("0.2", "0.5"):
            for seed in range(8):
                val = 0.7 + 0.05 * (lr == "0.01") + 0.02 * gen.standard_normal()
                rows.append(
                    {
                        "params.lr": lr,
                        "params.dropout": dropout,
                        "params.seed": str(seed),
                        "metrics.val_acc": val,
                        "metrics.test_acc": val + 0.01 * gen.standard_normal(),
                        "duration_s": 10.0 + seed,
                        "status": "finished",
                    }
                )
    frame = pd.DataFrame(rows)
    frame.insert(0, "run_id", [f"run{i:02d}" for i in range(len(frame))])
    failed = pd.DataFrame(
        [
            {
                "run_id": "crashed-1",
                "params.lr": "0.1",
                "params.dropout": "0.2",
                "params.seed": "9",
                "metrics.val_acc": 0.1,
                "metrics.test_acc": 0.1,
                "duration_s": 1.0,
                "status": "failed",
            },
            {
                "run_id": "no-metric",
                "params.lr": "0.1",
                "params.dropout": "0.2",
                "params.seed": "10",
                "metrics.val_acc": np.nan,
                "metrics.test_acc": 0.5,
                "duration_s": 1.0,
                "status": "finished",
            },
        ]
    )
    return pd.concat([frame, failed], ignore_index=True)


@pytest.fixture(scope="module")
def sweep():
    frame = sweep_frame()
    spec = Spec(val="val_acc", test="test_acc", seed_column="seed", n=(1, 5), n_resamples=RESAMPLES)
    return frame, analyze(RunTable.from_frame(frame, spec), spec, source="test sweep")


@pytest.fixture(scope="module")
def single():
    gen = np.random.default_rng(1)
    frame = pd.DataFrame({"val_acc": gen.normal(0.8, 0.01, 30), "test_acc": gen.normal(0.8, 0.01, 30)})
    spec = Spec(val="val_acc", test="metrics.test_acc", n=(1, 5), n_resamples=RESAMPLES)
    frame = frame.rename(columns={"test_acc": "metrics.test_acc"})
    return frame, analyze(RunTable.from_frame(frame, spec), spec)


def test_metric_names_for_one_group(single):
    frame, summary = single
    expected = {"boon/runs", "boon/dropped", "boon/groups", "boon/test_acc/normal"}
    for stem in ("boo_1", "boo_5", "mean"):
        expected |= {f"boon/test_acc/{stem}", f"boon/test_acc/{stem}/ci_low", f"boon/test_acc/{stem}/ci_high"}
        expected.add(f"boon/test_acc/{stem}/trustworthy")
    expected |= {"boon/test_acc/gaussian/boo_1", "boon/test_acc/gaussian/boo_5"}
    expected |= {f"boon/test_acc/{s}" for s in ("sd", "median", "min", "max", "spearman_val_test")}
    metrics = flat_metrics(summary)
    assert set(metrics) == expected
    assert metric_names(summary) == list(metrics)
    assert metrics["boon/runs"] == 30 and metrics["boon/dropped"] == 0 and metrics["boon/groups"] == 1
    assert metrics["boon/test_acc/boo_5"] == pytest.approx(boo_n(frame["val_acc"], frame["metrics.test_acc"], n=5))
    assert metrics["boon/test_acc/mean"] == pytest.approx(frame["metrics.test_acc"].mean())
    assert metrics["boon/test_acc/max"] == pytest.approx(frame["metrics.test_acc"].max())
    # 30 runs, n <= m/2: nothing doubtful
    assert metrics["boon/test_acc/boo_5/trustworthy"] == metrics["boon/test_acc/mean/trustworthy"] == 1.0
    assert all(isinstance(v, float) for v in metrics.values())


def test_metric_names_for_several_groups_and_comparisons(sweep):
    frame, summary = sweep
    metrics = flat_metrics(summary, prefix="sweep/")
    assert all(MLFLOW_NAME.match(name) for name in metrics)
    labels = [g.label for g in summary.groups]
    assert labels == ["lr=0.01,dropout=0.2", "lr=0.01,dropout=0.5", "lr=0.1,dropout=0.2", "lr=0.1,dropout=0.5"]
    group = "lr_0.1_dropout_0.2"
    kept = frame[(frame["params.lr"] == "0.1") & (frame["params.dropout"] == "0.2") & (frame["status"] == "finished")]
    kept = kept.dropna(subset=["metrics.val_acc"])
    assert metrics[f"sweep/test_acc/{group}/boo_5"] == pytest.approx(
        boo_n(kept["metrics.val_acc"], kept["metrics.test_acc"], n=5)
    )
    assert metrics[f"sweep/test_acc/{group}/runs"] == len(kept) == 8
    assert metrics[f"sweep/test_acc/{group}/dropped"] == 2
    assert metrics["sweep/runs"] == 32 and metrics["sweep/dropped"] == 2 and metrics["sweep/groups"] == 4
    # Every group against the first, paired by seed.
    base = "lr_0.01_dropout_0.2"
    for other in ("lr_0.01_dropout_0.5", "lr_0.1_dropout_0.2", "lr_0.1_dropout_0.5"):
        path = f"sweep/test_acc/{other}/vs_{base}"
        for name in (
            "boo_5",
            "boo_5/ci_low",
            "boo_5/ci_high",
            "mean",
            "mean/ci_low",
            "mean/ci_high",
            "paired_t_p",
            "paired_t_p_adj",
            "wilcoxon_p",
            "wilcoxon_p_adj",
            "prob_superiority",
        ):
            assert f"{path}/{name}" in metrics
        # paired runs: the unpaired tests are not the right ones and are not written
        assert f"{path}/welch_p" not in metrics and f"{path}/mann_whitney_p" not in metrics
    first = kept_of(frame, "0.01", "0.2")
    assert metrics[f"sweep/test_acc/{group}/vs_{base}/mean"] == pytest.approx(
        kept["metrics.test_acc"].mean() - first["metrics.test_acc"].mean()
    )


def kept_of(frame: pd.DataFrame, lr: str, dropout: str) -> pd.DataFrame:
    rows = frame[(frame["params.lr"] == lr) & (frame["params.dropout"] == dropout) & (frame["status"] == "finished")]
    return rows.dropna(subset=["metrics.val_acc"])


def _summary_of_groups(labels) -> Summary:
    frame = pd.DataFrame(
        {"g": [label for label in labels for _ in range(4)], "acc": np.linspace(0, 1, 4 * len(labels))}
    )
    spec = Spec(val="acc", group_by=("g",), n=(1, 2), n_resamples=RESAMPLES)
    return analyze(RunTable.from_frame(frame, spec), spec)


def _sha8(label: str) -> str:
    return hashlib.sha256(label.encode()).hexdigest()[:8]


def test_labels_that_would_share_a_name_get_distinct_names():
    names = group_names(["a,b", "a;b", "a_b", "模型一", "模型二", "plain"])
    assert names == {
        "a_b": "a_b",  # already safe: kept
        "a,b": f"a_b_{_sha8('a,b')}",
        "a;b": f"a_b_{_sha8('a;b')}",
        "模型一": f"____{_sha8('模型一')}",
        "模型二": f"____{_sha8('模型二')}",
        "plain": "plain",
    }


@pytest.mark.parametrize("labels", [[".", ".."], ["x" * 5000, "x" * 4999], ["", " "], ["a/b", "a\\b"]])
def test_every_label_becomes_a_usable_distinct_metric_name(labels):
    metrics = flat_metrics(_summary_of_groups(labels))
    segments = {name.split("/")[2] for name in metrics if name.count("/") >= 3}
    assert len(segments) == len(labels)
    for name in metrics:
        assert MLFLOW_NAME.match(name) and len(name) <= 250, name
        assert not any(part.strip(". ") == "" for part in name.split("/")[:-1] if part != ""), name


HOSTILE = "x\n# H\n<script>alert(1)</script> *b* [l](http://e) | `c` \x1b[31m"


def test_labels_are_escaped_wherever_they_are_rendered():
    summary = _summary_of_groups([HOSTILE, "plain"])
    report = to_markdown(summary)
    assert not any(line.startswith("# H") or line.startswith("#  H") for line in report.splitlines())
    assert "<script>" not in report and "\x1b" not in report and "[l](http" not in report
    assert "&lt;script&gt;" in report and "\\*b\\*" in report
    tables = [block.splitlines() for block in report.split("\n\n") if block.startswith("|")]
    for lines in tables:  # the label stays inside its cell: every row has the header's cell borders
        assert len({len(re.findall(r"(?<!\\)\|", line)) for line in lines}) == 1, lines
    assert sum(line.startswith("| x") for lines in tables for line in lines) == 2  # Boo_n and comparison tables
    description = render_outputs(summary, plots=False).description
    assert "<script>" not in description and "\n# H" not in description and "\x1b" not in description
    table = format_table(summary)
    assert "\x1b" not in table and not any(line.startswith(("# H", "<script>")) for line in table.splitlines())
    assert "x\\n# H\\n<script>" in table  # shown literally on one line


def test_json_round_trip(sweep):
    _, summary = sweep
    data = json.loads(to_json(summary))
    assert data["source"] == "test sweep" and data["metric"] == "test_acc"
    assert data["spec"]["seed_column"] == "seed" and data["spec"]["n"] == [1, 5]
    assert list(data["groups"]) == [g.label for g in summary.groups]
    assert data["groups"]["lr=0.1,dropout=0.2"]["dropped"] == [
        {"run_id": "crashed-1", "reason": "status 'failed'", "group": "lr=0.1,dropout=0.2"},
        {"run_id": "no-metric", "reason": "missing metric 'val_acc'", "group": "lr=0.1,dropout=0.2"},
    ]
    assert len(data["comparisons"]) == 3 and all(c["paired"] for c in data["comparisons"])
    assert data["groups"]["lr=0.1,dropout=0.5"]["curve"]["time"][0] == pytest.approx(np.mean(10.0 + np.arange(8)))


def test_markdown_report_has_the_key_numbers(sweep):
    frame, summary = sweep
    text = to_markdown(summary)
    kept = kept_of(frame, "0.1", "0.5")
    boo5 = boo_n(kept["metrics.val_acc"], kept["metrics.test_acc"], n=5)
    assert f"{boo5:.4g}" in text
    assert f"{kept['metrics.test_acc'].mean():.4g}" in text
    assert "How to read Boo_n" in text and "Source: test sweep" in text
    assert "| crashed-1 | status 'failed' |" in text and "| no-metric | missing metric 'val_acc' |" in text
    assert "Anderson-Darling" in text and "adjusted by Holm over the 3 comparisons" in text
    c = summary.comparisons[0]
    p, adjusted = c.paired_t.pvalue, c.paired_t.pvalue_adjusted
    assert f"paired t {p:.3g} ({adjusted:.3g})" in text or p < 1e-4
    rows = [line for line in text.split("## Comparisons")[1].splitlines() if line.startswith("| lr=")]
    assert len(rows) == 3 and all("| paired t " in r and "| Wilcoxon " in r and "Welch" not in r for r in rows)
    assert "| lr=0.01,dropout=0.5 | lr=0.01,dropout=0.2 | yes |" in text


def test_curve_table_and_terminal_table(sweep):
    frame, summary = sweep
    table = curve_table(summary)
    assert list(table.columns) == [
        "group",
        "n",
        "estimate",
        "ci_low",
        "ci_high",
        "time",
        "simultaneous_low",
        "simultaneous_high",
        "trustworthy",
    ]
    assert len(table) == sum(g.curve.n.size for g in summary.groups) == 4 * 8
    # 8 runs per group: the band is trustworthy up to n = 4 at most (n > m/2 never)
    assert not table.loc[table["n"] > 4, "trustworthy"].any()
    assert (table["simultaneous_low"] <= table["estimate"]).all() and (
        table["estimate"] <= table["simultaneous_high"]
    ).all()
    kept = kept_of(frame, "0.01", "0.5")
    rows = table[table["group"] == "lr=0.01,dropout=0.5"]
    np.testing.assert_allclose(rows["estimate"], boo_n(kept["metrics.val_acc"], kept["metrics.test_acc"], n=rows["n"]))
    np.testing.assert_allclose(rows["time"], rows["n"] * kept["duration_s"].mean())

    text = format_table(summary)
    lines = text.splitlines()
    assert lines[0].startswith("test_acc: estimator V")
    assert all(any(line.startswith(g.label) for line in lines) for g in summary.groups)
    assert f"{boo_n(kept['metrics.val_acc'], kept['metrics.test_acc'], n=5):.4g}" in text
    c = summary.comparisons[0]  # paired by seed: the paired tests, adjusted
    row = next(line for line in lines if line.startswith(c.group) and "paired t / Wilcoxon" in line)
    assert f"{c.paired_t.pvalue_adjusted:.3g} / {c.wilcoxon.pvalue_adjusted:.3g}" in row


def test_render_outputs(sweep):
    frame, summary = sweep
    outputs = render_outputs(summary)
    assert dict(outputs.metrics) == flat_metrics(summary)
    assert [c.key for c in outputs.curves] == [
        f"boon/test_acc/{label}/curve"
        for label in ("lr_0.01_dropout_0.2", "lr_0.01_dropout_0.5", "lr_0.1_dropout_0.2", "lr_0.1_dropout_0.5")
    ]
    for curve, g in zip(outputs.curves, summary.groups):
        assert curve.n.dtype == np.int64 and np.all(np.diff(curve.n) > 0)
        np.testing.assert_array_equal(curve.values, g.curve.estimate)
    assert {"summary.json", "report.md", "curves.csv", "runs.csv", "curves.png", "distributions.png"} <= set(
        outputs.artifacts
    )
    assert json.loads(outputs.artifacts["summary.json"]) == json.loads(to_json(summary))
    runs = pd.read_csv(io.BytesIO(outputs.artifacts["runs.csv"]), keep_default_na=False)
    assert len(runs) == len(frame)
    dropped = runs[runs["dropped_reason"] != ""]
    assert dict(zip(dropped["run_id"], dropped["dropped_reason"])) == {
        "crashed-1": "status 'failed'",
        "no-metric": "missing metric 'val_acc'",
    }
    curves_csv = pd.read_csv(io.BytesIO(outputs.artifacts["curves.csv"]))
    assert len(curves_csv) == 32
    assert 3 <= len(outputs.description.splitlines()) <= 6
    columns, rows = outputs.tables["curves"]
    assert list(columns) == list(curve_table(summary).columns) and len(rows) == 32
    assert all(type(v) in (str, int, float) for v in rows[0])

    without_plots = render_outputs(summary, prefix="x/", plots=False)
    assert not any(name.endswith(".png") for name in without_plots.artifacts)
    assert all(name.startswith("x/") for name in without_plots.metrics)


def test_single_group_without_test_metric_uses_the_validation_name(shared_data):
    frame = pd.read_json(shared_data / "allentune" / "vampire_imdb_search.jsonl", lines=True)
    spec = Spec(val="best_validation_npmi", duration="training_duration", n=(1, 5, 10), n_resamples=RESAMPLES)
    summary = analyze(RunTable.from_frame(frame, spec), spec)
    outputs = render_outputs(summary, plots=False)
    assert outputs.metrics["boon/best_validation_npmi/boo_10"] == pytest.approx(
        boo_n(frame["best_validation_npmi"], n=10)
    )
    assert outputs.metrics["boon/runs"] == len(frame) == 97
    assert "boon/best_validation_npmi/spearman_val_test" not in outputs.metrics  # no test metric
    assert [c.key for c in outputs.curves] == ["boon/best_validation_npmi/curve"]


def test_no_time_plot_unless_every_group_has_durations():
    pytest.importorskip("matplotlib")
    frame = pd.DataFrame(
        {
            "model": ["a"] * 12 + ["b"] * 12,
            "acc": np.r_[np.linspace(0.5, 0.6, 12), np.linspace(0.55, 0.65, 12)],
            "duration_s": [30.0] * 12 + [0.0] * 12,  # b's times were not recorded
        }
    )
    spec = Spec(val="acc", group_by=("model",), n=(1, 5), n_resamples=100)
    outputs = render_outputs(analyze(RunTable.from_frame(frame, spec), spec))
    assert "curves.png" in outputs.artifacts and "curves_time.png" not in outputs.artifacts


# --- the Gaussian estimate is reported only when it can be trusted -----------------------------------------


def test_a_gaussian_estimate_above_the_largest_possible_accuracy_is_flagged_not_reported():
    # Bell-shaped but capped near 1, as accuracies are: Anderson-Darling does not reject normality
    accuracy = np.array([0.806, 0.85, 0.878, 0.9, 0.92, 0.94, 0.96, 0.982, 0.99, 0.99])
    mean, sd = accuracy.mean(), accuracy.std(ddof=1)
    gaussian_10 = mean + sd * 1.538753  # eq. 6 with E[max of 10 N(0, 1)]; rho = 1 without a test metric
    assert gaussian_10 > 1.0
    spec = Spec(val="acc", n=(1, 5, 10), n_resamples=RESAMPLES)
    summary = analyze(RunTable.from_frame(pd.DataFrame({"acc": accuracy}), spec), spec)
    g = summary.group("all")
    assert g.gaussian.normal and g.gaussian.boo_n[10] == pytest.approx(gaussian_10, rel=1e-5)
    assert set(g.gaussian.unreliable) == {10} and "outside [0, 1]" in g.gaussian.unreliable[10]

    metrics = flat_metrics(summary)
    assert "boon/acc/gaussian/boo_10" not in metrics
    assert metrics["boon/acc/gaussian_unreliable/boo_10"] == pytest.approx(gaussian_10, rel=1e-5)
    assert metrics["boon/acc/gaussian/boo_5"] == pytest.approx(mean + sd * 1.162964, rel=1e-5)
    assert json.loads(to_json(summary))["groups"]["all"]["gaussian"]["unreliable"] == {"10": g.gaussian.unreliable[10]}
    report = to_markdown(summary)
    assert "unreliable (see diagnostics)" in report
    assert f"Gaussian Boo_10 = {gaussian_10:.4g} is not reported: {gaussian_10:.4g} is outside [0, 1]" in report
    assert "consistent with a normal distribution" not in report  # a pass of the test is not presented as safe


def test_gaussian_doubts_follow_the_documented_rule():
    import dataclasses

    from boontrack.analysis import gaussian_doubts
    from boontrack.diagnostics import diagnose

    scores = diagnose([10.0, 11.0, 12.0, 13.0, 14.0])  # sd 1.58, observed range [10, 14]
    normal = dataclasses.replace(scores, normal=True)
    assert gaussian_doubts({1: 12.0, 5: 15.5}, normal) == {}  # within one s.d. of the observed range
    assert set(gaussian_doubts({5: 15.7}, normal)) == {5}  # more than one s.d. beyond the largest score
    assert "more than one s.d. beyond" in gaussian_doubts({5: 8.3}, normal)[5]
    rejected = dataclasses.replace(scores, normal=False)
    assert gaussian_doubts({1: 12.0, 5: 13.0}, rejected) == {5: "normality rejected (Anderson-Darling, 5 %)"}
    bounded = dataclasses.replace(diagnose([0.0, 0.2, 0.4, 0.6, 0.8, 1.0]), normal=True)
    assert set(gaussian_doubts({5: -0.01, 10: 1.01, 2: 0.9}, bounded)) == {5, 10}
    both = gaussian_doubts({10: 1.05}, dataclasses.replace(bounded, normal=False))[10]
    assert (
        both
        == "normality rejected (Anderson-Darling, 5 %); 1.05 is outside [0, 1], the range of a score whose runs all lie in it"
    )


def test_runs_csv_keeps_the_users_own_seed_column_and_wording_names_validation_scores():
    frame = pd.DataFrame(
        {
            "run_id": ["r1", "r2", "r3", "r4"],
            "seed": [7, 8, 9, 10],
            "model": ["a", "a", "b", "b"],
            "acc": [0.5, 0.6, 0.55, 0.65],
        }
    )
    spec = Spec(val="acc", group_by=("model",), n=(1,), n_resamples=RESAMPLES)
    summary = analyze(RunTable.from_frame(frame, spec), spec)
    runs = pd.read_csv(io.BytesIO(render_outputs(summary, plots=False).artifacts["runs.csv"]))
    assert runs["seed"].tolist() == [7, 8, 9, 10]
    report = to_markdown(summary)
    assert "group minus `vs` on the validation scores" in report and "- validation scores: mean" in report
    assert "test scores" not in report


# ----------------------------------------------------------------------------------------------------------
# Doubtful numbers and what the runs cannot show


@pytest.fixture(scope="module")
def small_and_large():
    """A group of 12 runs (Boo_10 is above m/2: doubtful) and one of 30, accuracies (bounded by [0, 1])."""
    gen = np.random.default_rng(0)
    frame = pd.DataFrame(
        {
            "model": ["small"] * 12 + ["large"] * 30,
            "val_acc": np.r_[gen.normal(0.8, 0.02, 12), gen.normal(0.82, 0.02, 30)],
        }
    )
    frame["test_acc"] = frame["val_acc"] + gen.normal(0, 0.01, 42)
    spec = Spec(val="val_acc", test="test_acc", group_by=("model",), n_resamples=RESAMPLES)
    return analyze(RunTable.from_frame(frame, spec), spec)


def test_doubtful_numbers_are_marked_wherever_they_are_shown(small_and_large):
    summary = small_and_large
    small = summary.group("small")
    assert small.doubts == {1: (), 5: (), 10: ("n > m/2",)} and not summary.group("large").doubts[10]
    metrics = flat_metrics(summary)
    assert metrics["boon/test_acc/small/boo_10/trustworthy"] == 0.0
    assert metrics["boon/test_acc/small/boo_5/trustworthy"] == metrics["boon/test_acc/large/boo_10/trustworthy"] == 1.0
    table = format_table(summary)
    small_row = next(line for line in table.splitlines() if line.startswith("small"))
    large_row = next(line for line in table.splitlines() if line.startswith("large"))
    assert small_row.count("]*") == 1 and "]*" not in large_row
    # the mark says what was measured there: the default's intervals wide, not "too narrow or too wide"
    assert "* doubtful: n > m/2: intervals there are wide (the default, 4.1-11.9x the percentile width)" in table
    assert format_table(json.loads(to_json(summary))) == table  # a stored summary prints the same marks
    report = to_markdown(summary)
    row = next(line for line in report.splitlines() if line.startswith("| small |"))
    assert row.count("⚠") == 1 and "- doubtful (⚠): Boo_10 (n > m/2)" in report
    description = render_outputs(summary, plots=False).description
    assert "⚠ (n > m/2)" in description and description.count("⚠") == 1
    # a difference is doubtful where either group's number is
    assert metrics["boon/test_acc/small/vs_large/boo_10/trustworthy"] == 0.0
    assert metrics["boon/test_acc/small/vs_large/boo_5/trustworthy"] == 1.0
    comparison_row = next(line for line in table.splitlines() if line.startswith("small  large"))
    assert comparison_row.count("]*") == 1


def test_what_the_runs_cannot_show_is_said_in_numbers(small_and_large):
    summary = small_and_large
    small = summary.group("small")
    # 12 runs: a kind of run at 22 % per run or more shows up in 95 % of such sweeps; failures scoring 0 (the
    # lower bound of an accuracy) at that rate would pull the mean down by 22 % of it
    assert small.unseen.rate == pytest.approx(1 - 0.05 ** (1 / 12))
    assert small.bounds == (0.0, 1.0) and small.unseen.floor == 0.0
    assert small.unseen.mean_shift == pytest.approx(small.unseen.rate * small.mean.estimate)
    assert small.unseen.top_runs[10][0] == 1  # Boo_10 of 12 runs: the best run carries over half the weight
    sentence = "a kind of run rarer than 1 in 5 (22 %) may be absent from these 12 runs"
    assert sentence in format_table(summary) and sentence in to_markdown(summary)
    assert sentence in render_outputs(summary, plots=False).description
    stored = summary.to_dict()["groups"]["small"]["unseen"]
    assert stored["rate"] == small.unseen.rate and stored["top_runs"]["10"][0] == 1


def test_a_long_tail_on_the_better_side_marks_nothing():
    # skewness far above 1 towards better scores: such sweeps covered as often as the others
    # (bench_coverage.py --flags-only), so the numbers are not marked doubtful
    rng = np.random.default_rng(2)
    frame = pd.DataFrame({"val": rng.normal(size=30), "test": np.exp(2.0 * rng.normal(size=30))})
    spec = Spec(val="val", test="test", n=(1, 5, 10), n_resamples=99, maximize=True)
    centred = frame["test"] - frame["test"].mean()
    assert (centred**3).mean() / (centred**2).mean() ** 1.5 > 2
    summary = analyze(RunTable.from_frame(frame, spec), spec)
    assert all(not reasons for reasons in summary.groups[0].doubts.values())
    assert flat_metrics(summary)["boon/test/boo_10/trustworthy"] == 1.0
    assert not any("skewed" in w for w in summary.groups[0].warnings)


def test_a_rate_below_one_percent_is_not_printed_as_zero():
    # 1,000 runs rule out kinds of run at 0.3 % per run: "(0 %)" said they rule out everything
    rng = np.random.default_rng(5)
    frame = pd.DataFrame({"val": rng.normal(size=1000), "test": rng.normal(size=1000)})
    spec = Spec(val="val", test="test", n=(1, 5), n_resamples=99, maximize=True)
    summary = analyze(RunTable.from_frame(frame, spec), spec)
    rate = 1 - 0.05 ** (1 / 1000)
    assert summary.groups[0].unseen.rate == pytest.approx(rate)
    sentence = f"a kind of run rarer than 1 in 334 ({100 * rate:.2g} %) may be absent from these 1000 runs"
    assert sentence == "a kind of run rarer than 1 in 334 (0.3 %) may be absent from these 1000 runs"
    assert sentence in format_table(summary) and sentence in to_markdown(summary)


@pytest.mark.parametrize("name", ["sweep", "single", "small_and_large", "hostile labels"])
def test_a_stored_summary_renders_as_its_analysis_did(name, request):
    summary = _summary_of_groups([HOSTILE, "plain"]) if name == "hostile labels" else request.getfixturevalue(name)
    summary = summary[1] if isinstance(summary, tuple) else summary
    stored = Summary.from_dict(json.loads(to_json(summary)))
    assert format_table(stored) == format_table(summary) == format_table(json.loads(to_json(summary)))
    assert to_markdown(stored) == to_markdown(summary)
    assert to_json(stored) == to_json(summary)
    assert flat_metrics(stored) == flat_metrics(summary)
    pd.testing.assert_frame_equal(curve_table(stored), curve_table(summary))
    assert render_outputs(stored, plots=False).description == render_outputs(summary, plots=False).description


def test_a_summary_stored_without_the_paired_t_test_prints_it_as_not_available(sweep):
    _, summary = sweep
    data = json.loads(to_json(summary))
    for comparison in data["comparisons"]:
        del comparison["paired_t"]
    rows = [line for line in format_table(data).splitlines() if "paired t / Wilcoxon" in line]
    assert len(rows) == 3 and all(" n/a / " in row for row in rows)


def _top_at_the_bound(test: np.ndarray, val: np.ndarray | None = None, **options) -> Summary:
    """A summary of 20 runs with these test scores, their validation scores rising with the run's index unless
    given (so the last runs are the best by validation)."""
    frame = pd.DataFrame({"val": np.linspace(0.5, 0.99, 20) if val is None else val, "test": test})
    spec = Spec(val="val", test="test", n_resamples=RESAMPLES, **{"maximize": True, **options})
    return analyze(RunTable.from_frame(frame, spec), spec)


def _said_everywhere(summary: Summary, statement: str) -> None:
    """``statement`` is one of the only group's warnings, stated under the terminal table (also from the stored
    summary), in report.md, report.html and summary.json, in the same words."""
    group = summary.groups[0]
    assert group.interval_limits == (statement,) and group.warnings.count(statement) == 1
    table = format_table(summary)
    assert f"Warning: {statement}." in table.splitlines()
    assert format_table(json.loads(to_json(summary))) == table
    outputs = render_outputs(summary, plots=False)
    assert f"- warning: {statement}" in outputs.artifacts["report.md"].decode().splitlines()
    assert html.escape(statement) in outputs.artifacts["report.html"].decode()
    stored = json.loads(outputs.artifacts["summary.json"])["groups"][group.label]
    assert statement in stored["warnings"] and stored["interval_limits"] == [statement]


def test_boo_n_resting_on_runs_at_the_best_score_possible_is_said_in_every_output():
    # 20 runs, the best 6 by validation scored 1: with draws with replacement they carry 1 - (14/20)^n of Boo_n's
    # weight, 83 % at n = 5 and 97 % at n = 10; the mean rests on every run and is not concerned
    summary = _top_at_the_bound(np.where(np.arange(20) >= 14, 1.0, np.linspace(0.6, 0.95, 20)))
    assert [round(100 * (1 - (14 / 20) ** n)) for n in (5, 10)] == [83, 97]
    _said_everywhere(
        summary,
        "the runs that scored 1, the best score possible (6 of 20), carry 83 % of Boo_5's and 97 % of Boo_10's "
        "weight: at the bound their scores show no spread, so their intervals cannot show how far below 1 the best "
        "runs by validation may score",
    )
    assert all(summary.groups[0].boo_n[n].ci_high <= 1 for n in (5, 10))


def test_only_the_budgets_where_runs_at_the_bound_carry_half_the_weight_are_named():
    # the best 2 of 20: 1 - (18/20)^5 = 41 % of Boo_5's weight (not said), 1 - (18/20)^10 = 65 % of Boo_10's
    summary = _top_at_the_bound(np.where(np.arange(20) >= 18, 1.0, np.linspace(0.6, 0.95, 20)))
    assert round(100 * (1 - 0.9**5)) == 41 and round(100 * (1 - 0.9**10)) == 65
    _said_everywhere(
        summary,
        "the runs that scored 1, the best score possible (2 of 20), carry 65 % of Boo_10's weight: at the bound "
        "their scores show no spread, so its interval cannot show how far below 1 the best runs by validation may "
        "score",
    )


def test_runs_tied_in_validation_share_the_weight_of_their_block():
    # the best 6 tie at 0.99 on validation, 5 of them scored 1: they carry 5/6 of the block's 1 - (14/20)^n
    val = np.r_[np.linspace(0.5, 0.9, 14), np.full(6, 0.99)]
    test = np.r_[np.linspace(0.6, 0.95, 14), [1.0, 1.0, 0.9, 1.0, 1.0, 1.0]]
    assert [round(100 * 5 / 6 * (1 - (14 / 20) ** n)) for n in (5, 10)] == [69, 81]
    _said_everywhere(
        _top_at_the_bound(test, val),
        "the runs that scored 1, the best score possible (5 of 20), carry 69 % of Boo_5's and 81 % of Boo_10's "
        "weight: at the bound their scores show no spread, so their intervals cannot show how far below 1 the best "
        "runs by validation may score",
    )


def test_an_error_at_zero_is_the_best_score_possible_when_lower_is_better():
    # lower is better: the best 6 by validation (the lowest) scored 0, the lower bound of scores in [0, 1]
    summary = _top_at_the_bound(
        np.where(np.arange(20) < 6, 0.0, np.linspace(0.05, 0.4, 20)), np.linspace(0.01, 0.5, 20), maximize=False
    )
    _said_everywhere(
        summary,
        "the runs that scored 0, the best score possible (6 of 20), carry 83 % of Boo_5's and 97 % of Boo_10's "
        "weight: at the bound their scores show no spread, so their intervals cannot show how far above 0 the best "
        "runs by validation may score",
    )


@pytest.mark.parametrize(
    "test",
    [
        np.where(np.arange(20) >= 14, 50.0, np.linspace(6.0, 45.0, 20)),  # the top ties, but no bound holds it
        np.where(np.arange(20) == 19, 1.0, np.linspace(0.6, 0.95, 20)),  # 1 of 20: 40 % of Boo_10's weight
        np.where(np.arange(20) < 6, 1.0, np.linspace(0.6, 0.95, 20)),  # at the bound, but worst by validation
    ],
)
def test_no_statement_where_the_runs_at_the_bound_carry_less_than_half_the_weight(test):
    group = _top_at_the_bound(test).groups[0]
    assert group.interval_limits == () and not any("the best score possible" in w for w in group.warnings)
    assert "Warning" not in format_table(_top_at_the_bound(test))


@pytest.mark.parametrize(("test", "scores"), [(np.full(20, 0.9), "test"), (None, "validation")])
def test_equal_scores_are_said_in_every_output(test, scores):
    # every interval is a point: the ConstantScoresWarning's case, said as a limit of the intervals
    frame = pd.DataFrame({"val": np.full(20, 0.8) if test is None else np.linspace(0.5, 0.99, 20)})
    if test is not None:
        frame["test"] = test
    spec = Spec(val="val", test=None if test is None else "test", n_resamples=RESAMPLES, maximize=True)
    summary = analyze(RunTable.from_frame(frame, spec), spec)
    assert all(i.ci_low == i.ci_high for i in summary.groups[0].boo_n.values())
    _said_everywhere(
        summary,
        f"all {scores} scores are equal: every interval is a point, which cannot show how far other runs may score "
        "from it, and rank statistics are undefined",
    )


def test_the_terminal_table_names_the_group_whose_intervals_are_points():
    frame = pd.DataFrame({"model": ["flat"] * 12 + ["spread"] * 12, "val": np.tile(np.linspace(0.5, 0.9, 12), 2)})
    frame["test"] = np.r_[np.full(12, 0.7), np.linspace(0.6, 0.8, 12)]
    spec = Spec(val="val", test="test", group_by=("model",), n_resamples=RESAMPLES, maximize=True)
    summary = analyze(RunTable.from_frame(frame, spec), spec)
    table = format_table(summary, report_written=True)  # the other warnings: counted, read there
    lines = [line for line in table.splitlines() if line.startswith("Warning")]
    assert lines == [f"Warning, flat: {summary.group('flat').interval_limits[0]}."]
    assert summary.group("spread").interval_limits == ()
