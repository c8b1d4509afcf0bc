"""A summary with a task column (issue 51): each task's groups as before, and the approaches aggregated and
compared across the tasks, held to an independent computation of every aggregate (plain numpy per-task means,
``scipy.stats.trim_mean`` for the IQM, a double loop for the probability of improvement), never to numbers the
code printed."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from boontrack.analysis import analyze
from boontrack.exceptions import InputError
from boontrack.reports import flat_metrics, format_table, to_markdown
from boontrack.runtable import RunTable
from boontrack.sources import compare_sources
from boontrack.spec import Spec
from boontrack.summary import Summary

BENCHMARK = Path(__file__).resolve().parents[1] / "examples" / "benchmark_runs.csv"
RESAMPLES = 999
SPEC = {"val": "val_acc", "test": "test_acc", "group_by": ("method",), "seed_column": "seed", "task_column": "task"}


def expected_aggregates(frame: pd.DataFrame, method: str, *, scores: str = "test_acc") -> dict[str, float]:
    """The aggregates of ``method`` over the tasks, from their definitions."""
    mine = frame[frame["method"] == method]
    task_means = [mine.loc[mine["task"] == task, scores].to_numpy().mean() for task in sorted(set(frame["task"]))]
    pooled = mine[scores].to_numpy()
    return {
        "mean": float(np.mean(task_means)),
        "median": float(np.median(task_means)),
        "iqm": float(stats.trim_mean(pooled, 0.25)),
        "optimality_gap": float(np.mean([max(1.0 - x, 0.0) for x in pooled])),
    }


def expected_prob_improvement(frame: pd.DataFrame, a: str, b: str) -> float:
    """The mean over the tasks of P(a run of a beats a run of b) + 0.5 P(tie), by a double loop over the runs."""
    per_task = []
    for task in sorted(set(frame["task"])):
        on_task = frame[frame["task"] == task]
        wins = 0.0
        runs_a = on_task.loc[on_task["method"] == a, "test_acc"].tolist()
        runs_b = on_task.loc[on_task["method"] == b, "test_acc"].tolist()
        for x in runs_a:
            for y in runs_b:
                wins += 1.0 if x > y else 0.5 if x == y else 0.0
        per_task.append(wins / (len(runs_a) * len(runs_b)))
    return float(np.mean(per_task))


def _run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """``boontrack`` in a fresh process, as a user runs it."""
    env = {key: value for key, value in os.environ.items() if key not in ("MLFLOW_TRACKING_URI", "GITHUB_STEP_SUMMARY")}
    command = [sys.executable, "-c", "from boontrack.cli import main; main()", *args]
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=300, check=False)


@pytest.fixture(scope="module")
def summarized(tmp_path_factory) -> tuple[subprocess.CompletedProcess, dict]:
    """``boontrack summarize`` of the example benchmark (2 methods x 5 tasks x 10 seeds) with a task column."""
    work = tmp_path_factory.mktemp("benchmark")
    done = _run_cli(
        "summarize", str(BENCHMARK), "--val", "val_acc", "--test", "test_acc", "--group-by", "method",
        "--seed-column", "seed", "--task-column", "task", "--maximize", "--resamples", str(RESAMPLES),
        "--no-plots", "--out", "out", cwd=work,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done, json.loads((work / "out" / "summary.json").read_text(encoding="utf-8"))


def test_summarize_gives_the_aggregates_of_an_independent_computation_in_summary_json(summarized):
    _, data = summarized
    frame = pd.read_csv(BENCHMARK)
    across = data["across_tasks"]
    assert (across["task_column"], across["tasks"]) == ("task", ["cola", "mrpc", "rte", "sst2", "stsb"])
    assert [a["approach"] for a in across["aggregates"]] == ["baseline", "new"]
    for stored in across["aggregates"]:
        expected = expected_aggregates(frame, stored["approach"])
        for name, value in expected.items():
            assert stored[name]["estimate"] == pytest.approx(value, rel=1e-12), name
            assert stored[name]["ci_low"] <= value <= stored[name]["ci_high"], name
        assert stored["runs"] == 50
        methods = {name: stored[name]["method"] for name in ("mean", "median", "iqm", "optimality_gap")}
        assert methods == {
            "mean": "studentized",
            "median": "percentile",
            "iqm": "studentized",
            "optimality_gap": "studentized",
        }
    (comparison,) = across["comparisons"]
    assert (comparison["group"], comparison["baseline"]) == ("new", "baseline")
    new, base = expected_aggregates(frame, "new"), expected_aggregates(frame, "baseline")
    assert comparison["iqm_difference"]["estimate"] == pytest.approx(new["iqm"] - base["iqm"], rel=1e-9)
    assert comparison["mean_difference"]["estimate"] == pytest.approx(new["mean"] - base["mean"], rel=1e-9)
    expected_p = expected_prob_improvement(frame, "new", "baseline")
    assert comparison["prob_improvement"]["estimate"] == pytest.approx(expected_p, rel=1e-12)
    assert comparison["prob_improvement"]["method"] == "studentized"


def test_the_aggregate_boo_n_is_the_mean_of_each_tasks_boo_n(summarized):
    from boontrack import boo_n

    _, data = summarized
    frame = pd.read_csv(BENCHMARK)
    (baseline, _) = data["across_tasks"]["aggregates"]
    per_task = [
        boo_n(part["val_acc"].to_numpy(), part["test_acc"].to_numpy(), n=5, maximize=True)
        for _, part in frame[frame["method"] == "baseline"].groupby("task")
    ]
    assert baseline["boo_n"]["5"]["estimate"] == pytest.approx(np.mean(per_task), rel=1e-12)
    # Boo_10 on 10 runs a task is above 2m/3: no interval, and the warnings say why
    assert baseline["boo_n"]["10"]["method"] == "refused" and baseline["boo_n"]["10"]["ci_low"] is None
    assert any("no interval for the aggregate Boo_10" in w for w in data["across_tasks"]["warnings"])


def test_each_task_is_summarized_as_a_sweep_and_compared_within_the_task(summarized):
    _, data = summarized
    frame = pd.read_csv(BENCHMARK)
    assert len(data["groups"]) == 10
    cola = data["groups"]["task=cola,method=new"]
    expected = frame[(frame["task"] == "cola") & (frame["method"] == "new")]["test_acc"].mean()
    assert cola["mean"]["estimate"] == pytest.approx(expected, rel=1e-12)
    pairs = [(c["group"], c["baseline"]) for c in data["comparisons"]]
    assert pairs == [(f"task={t},method=new", f"task={t},method=baseline") for t in data["across_tasks"]["tasks"]]


def test_the_printed_table_has_the_across_tasks_section_with_the_same_figures(summarized):
    done, data = summarized
    frame = pd.read_csv(BENCHMARK)
    lines = done.stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Across 5 tasks (task: cola, mrpc"))
    section = lines[start:]
    rows = {line.split()[0]: line for line in section if line.split()[:2] in (["baseline", "50"], ["new", "50"])}
    for method in ("baseline", "new"):
        for value in expected_aggregates(frame, method).values():
            assert f"{value:.4g} [" in rows[method]
    comparison = next(line for line in section if line.startswith("new    baseline"))
    assert f"{expected_prob_improvement(frame, 'new', 'baseline'):.4g} [" in comparison


def _analyzed(frame: pd.DataFrame, **options) -> Summary:
    spec = Spec(**{**SPEC, "maximize": True, "n": (1, 5), "n_resamples": RESAMPLES, **options})
    return analyze(RunTable.from_frame(frame, spec), spec)


def test_a_stored_summary_prints_and_reports_what_its_analysis_did():
    summary = _analyzed(pd.read_csv(BENCHMARK))
    stored = Summary.from_dict(json.loads(json.dumps(summary.to_dict())))
    assert stored.to_dict() == summary.to_dict()
    assert format_table(stored) == format_table(summary)
    assert to_markdown(stored) == to_markdown(summary)


def test_min_max_and_reference_scores_normalize_each_task_before_the_aggregates(tmp_path):
    frame = pd.read_csv(BENCHMARK)
    lows, highs = frame.groupby("task")["test_acc"].min(), frame.groupby("task")["test_acc"].max()
    scaled = frame.assign(test_acc=(frame["test_acc"] - frame["task"].map(lows)) / frame["task"].map(highs - lows))
    summary = _analyzed(frame, normalize="min-max")
    for a in summary.across_tasks.aggregates:
        assert a.iqm.estimate == pytest.approx(expected_aggregates(scaled, a.approach)["iqm"], rel=1e-12)
    path = tmp_path / "refs.csv"
    path.write_text("task,low,high\n" + "".join(f"{t},0.5,1\n" for t in sorted(set(frame["task"]))))
    summary = _analyzed(frame, normalize_with=str(path))
    by_reference = frame.assign(test_acc=(frame["test_acc"] - 0.5) / 0.5)
    assert summary.across_tasks.normalize == "reference"
    assert summary.across_tasks.normalization == ((0.5, 1.0),) * 5
    for a in summary.across_tasks.aggregates:
        assert a.mean.estimate == pytest.approx(expected_aggregates(by_reference, a.approach)["mean"], rel=1e-12)


def test_the_baseline_is_an_approach_and_all_pairs_compares_every_pair_across_tasks():
    frame = pd.read_csv(BENCHMARK)
    third = frame[frame["method"] == "new"].assign(method="zeta", test_acc=lambda f: f["test_acc"] - 0.01)
    frame = pd.concat([frame, third], ignore_index=True)
    summary = _analyzed(frame, baseline="new")
    assert [(c.group, c.baseline) for c in summary.across_tasks.comparisons] == [("baseline", "new"), ("zeta", "new")]
    assert {(c.group.split(",")[1], c.baseline.split(",")[1]) for c in summary.comparisons} == {
        ("method=baseline", "method=new"),
        ("method=zeta", "method=new"),
    }
    summary = _analyzed(frame, compare="all-pairs")
    pairs = [(c.group, c.baseline) for c in summary.across_tasks.comparisons]
    assert pairs == [("new", "baseline"), ("zeta", "baseline"), ("zeta", "new")]
    zeta = summary.across_tasks.comparisons[2]
    assert zeta.prob_improvement.estimate == pytest.approx(expected_prob_improvement(frame, "zeta", "new"))
    with pytest.raises(InputError, match="baseline group 'task=cola,method=new' not found; groups are: baseline, new"):
        _analyzed(frame, baseline="task=cola,method=new")


def test_the_aggregates_are_metrics_of_the_summary_under_the_across_segment():
    frame = pd.read_csv(BENCHMARK)
    summary = _analyzed(frame)
    metrics = flat_metrics(summary)
    expected = expected_aggregates(frame, "new")
    assert metrics["boon/test_acc/across/new/iqm"] == pytest.approx(expected["iqm"], rel=1e-12)
    assert metrics["boon/test_acc/across/new/median"] == pytest.approx(expected["median"], rel=1e-12)
    assert metrics["boon/test_acc/across/tasks"] == 5
    probability = metrics["boon/test_acc/across/new/vs_baseline/prob_improvement"]
    assert probability == pytest.approx(expected_prob_improvement(frame, "new", "baseline"), rel=1e-12)
    interval = summary.across_tasks.comparisons[0].iqm_difference
    assert metrics["boon/test_acc/across/new/vs_baseline/iqm/ci_low"] == interval.ci_low


@pytest.fixture(scope="module")
def two_sides(tmp_path_factory) -> Path:
    """The benchmark split into two files, one per method, as a branch's and main's runs."""
    work = tmp_path_factory.mktemp("sides")
    frame = pd.read_csv(BENCHMARK)
    for method, name in (("baseline", "main"), ("new", "branch")):
        frame[frame["method"] == method].drop(columns="method").to_csv(work / f"{name}.csv", index=False)
    return work


@pytest.mark.parametrize(("order", "passed"), [(("main", "branch"), True), (("branch", "main"), False)])
def test_require_better_gates_on_the_iqm_difference_across_tasks(two_sides, order, passed):
    args = [f"{name}.csv" for name in order]
    done = _run_cli(
        "compare", *args, "--val", "val_acc", "--test", "test_acc", "--seed-column", "seed", "--task-column",
        "task", "--maximize", "--resamples", str(RESAMPLES), "--require", "better", cwd=two_sides,
    )  # fmt: skip
    result = compare_sources(
        [two_sides / name for name in args], require="better", task_column="task", maximize=True,
        n_resamples=RESAMPLES, **{key: SPEC[key] for key in ("val", "test", "seed_column")},
    )  # fmt: skip
    (comparison,) = result.summary.across_tasks.comparisons
    interval = comparison.iqm_difference
    assert (result.gate.passed, interval.ci_low > 0) == (passed, passed)
    assert (result.gate.quantity, result.gate.bound) == ("ΔIQM across tasks", interval.ci_low)
    assert done.returncode == (0 if passed else 3), done.stderr
    verdict = done.stdout.splitlines()[-1]
    assert verdict.startswith(f"{'passed' if passed else 'not supported'}: {order[1]} better than {order[0]} across 5")
    assert f"ΔIQM across tasks is [{interval.ci_low:.4g}, {interval.ci_high:.4g}]" in verdict


def test_the_probability_of_improvement_gate_needs_its_interval_above_one_half(two_sides):
    options = {key: SPEC[key] for key in ("val", "test", "seed_column", "task_column")}
    result = compare_sources(
        [two_sides / "main.csv", two_sides / "branch.csv"], require="better", gate_on="prob-improvement",
        maximize=True, n_resamples=RESAMPLES, **options,
    )  # fmt: skip
    interval = result.summary.across_tasks.comparisons[0].prob_improvement
    assert (result.gate.threshold, result.gate.bound, result.gate.passed) == (
        0.5,
        interval.ci_low,
        interval.ci_low > 0.5,
    )
    with pytest.raises(InputError, match="decides `require='better'` only"):
        compare_sources(
            [two_sides / "main.csv", two_sides / "branch.csv"], require="not-worse", margin=0.01,
            gate_on="prob-improvement", **options,
        )  # fmt: skip


def test_the_reports_and_plots_hold_the_across_tasks_section():
    pytest.importorskip("matplotlib")
    from boontrack.reports import render_outputs

    frame = pd.read_csv(BENCHMARK)
    outputs = render_outputs(_analyzed(frame))
    iqm = f"{expected_aggregates(frame, 'new')['iqm']:.4g} ["
    page = outputs.artifacts["report.html"].decode()
    section = page[page.index("<h2>Across tasks</h2>") :]
    assert iqm in section and section.count("<svg") == 5  # four panels of error bars, the profiles
    curves = page[page.index("<h2>Expected best score against n</h2>") : page.index("<h2>Comparisons</h2>")]
    headings = re.findall(r"<h3>task = (\w+)</h3><svg", curves)
    assert headings == sorted(set(frame["task"]))  # one plot per task, each under its heading
    legends = re.findall(r"<svg.*?</svg>", curves, flags=re.S)
    assert all(">baseline</text>" in svg and ">new</text>" in svg for svg in legends)  # the approaches, by name
    report = outputs.artifacts["report.md"].decode()
    assert iqm in report[report.index("## Across tasks") :]
    assert (
        f"- across 5 tasks, IQM: baseline {expected_aggregates(frame, 'baseline')['iqm']:.4g} [" in outputs.description
    )
    for name in ("across_intervals.png", "across_profiles.png"):
        assert outputs.artifacts[name].startswith(b"\x89PNG")


@pytest.fixture(scope="module")
def one_file_per_task(tmp_path_factory) -> Path:
    """The benchmark split into one file per task (as one experiment or study per task), without a task column."""
    work = tmp_path_factory.mktemp("tasks")
    frame = pd.read_csv(BENCHMARK)
    for task, runs in frame.groupby("task"):
        runs.drop(columns="task").to_csv(work / f"{task}.csv", index=False)
    return work


def test_sources_are_the_tasks_with_the_source_column(one_file_per_task):
    """``compare`` of one source per task with ``--task-column source`` (each source's label its task) compares the
    approaches within each task and across the tasks, and gates, in a fresh process: the across-tasks figures are
    those of the one file with its task column, run for run."""
    frame = pd.read_csv(BENCHMARK)
    tasks = sorted(set(frame["task"]))
    labels = [arg for task in tasks for arg in ("--label", task)]
    done = _run_cli(
        "compare", *(f"{task}.csv" for task in tasks), *labels, "--val", "val_acc", "--test", "test_acc",
        "--seed-column", "seed", "--group-by", "method", "--task-column", "source", "--maximize",
        "--resamples", str(RESAMPLES), "--require", "better", cwd=one_file_per_task,
    )  # fmt: skip
    result = compare_sources(
        [one_file_per_task / f"{task}.csv" for task in tasks], labels=tasks, task_column="source", maximize=True,
        n_resamples=RESAMPLES, **{key: SPEC[key] for key in ("val", "test", "seed_column", "group_by")},
    )  # fmt: skip
    across = result.summary.across_tasks
    assert across.tasks == tuple(tasks)
    for stored in across.aggregates:
        expected = expected_aggregates(frame, stored.approach)
        assert stored.iqm.estimate == pytest.approx(expected["iqm"], rel=1e-12)
        assert stored.mean.estimate == pytest.approx(expected["mean"], rel=1e-12)
    (comparison,) = across.comparisons
    assert (comparison.group, comparison.baseline) == ("new", "baseline")
    expected_p = expected_prob_improvement(frame, "new", "baseline")
    assert comparison.prob_improvement.estimate == pytest.approx(expected_p, rel=1e-12)
    within = {(c.group, c.baseline) for c in result.summary.comparisons}
    assert within == {(f"source={task},method=new", f"source={task},method=baseline") for task in tasks}
    assert done.returncode == (0 if comparison.iqm_difference.ci_low > 0 else 3), done.stderr
    assert "new better than baseline across 5 tasks" in done.stdout.splitlines()[-1]


def test_approaches_that_ran_the_same_seeds_are_paired_on_each_task_and_said_so():
    """With the seed column, the approaches of the example ran seeds 0-9 on every task: the resamples are paired
    there, as the heading says; one approach's seeds renamed on one task leaves that task unpaired."""
    frame = pd.read_csv(BENCHMARK)
    summary = _analyzed(frame)
    assert summary.across_tasks.paired_tasks == ("cola", "mrpc", "rte", "sst2", "stsb")
    assert "runs paired by seed on 5 of 5 tasks." in format_table(summary)
    renamed = frame.assign(
        seed=np.where((frame["task"] == "rte") & (frame["method"] == "new"), frame["seed"] + 100, frame["seed"])
    )
    partly = _analyzed(renamed)
    assert partly.across_tasks.paired_tasks == ("cola", "mrpc", "sst2", "stsb")
    assert "runs paired by seed on 4 of 5 tasks." in format_table(partly)
    unpaired = _analyzed(frame, seed_column=None)
    assert unpaired.across_tasks.paired_tasks == () and "paired by seed" not in format_table(unpaired)
