"""A benchmark logged to a real MLflow store (the task a tag, the method and seed params) summarized across its
tasks: on the command line with ``--task-column task``, and by the post-sweep callback with ``task_column``,
whose summary run holds the aggregates as metrics and the across-tasks plots as artifacts."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from scipy import stats

from boontrack import cli
from boontrack_mlflow import summarize_sweep

from .mlflow_helpers import new_sweep, summary_runs

pytestmark = pytest.mark.mlflow

BENCHMARK = Path(__file__).resolve().parents[3] / "examples" / "benchmark_runs.csv"


@pytest.fixture
def benchmark_sweep(sqlite_uri):
    """The example benchmark (2 methods x 5 tasks x 10 seeds) as the child runs of one sweep."""
    frame = pd.read_csv(BENCHMARK)
    sweep = new_sweep(sqlite_uri)
    for row in frame.itertuples(index=False):
        run_id = sweep.add_child(
            val=[row.val_acc], test=[row.test_acc], params={"method": row.method, "seed": row.seed}
        )
        sweep.client.set_tag(run_id, "task", row.task)
    return sweep, frame


def _iqm(frame: pd.DataFrame, method: str) -> float:
    return float(stats.trim_mean(frame.loc[frame["method"] == method, "test_acc"].to_numpy(), 0.25))


def test_the_command_line_reads_the_task_tag_and_prints_the_aggregates(sqlite_uri, benchmark_sweep):
    sweep, frame = benchmark_sweep
    result = CliRunner().invoke(
        cli.main,
        [
            "summarize", f"mlflow:{sweep.experiment_name}", "--tracking-uri", sqlite_uri, "--parent", sweep.parent_id,
            "--val", "val_acc", "--test", "test_acc", "--seed-column", "seed", "--task-column", "task",
            "--maximize", "--resamples", "499",
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[2].split()[0] == "task=cola,method=baseline"  # grouped by the method param, within each task
    start = lines.index(next(line for line in lines if line.startswith("Across 5 tasks (task: cola, mrpc, rte")))
    rows = {line.split()[0]: line for line in lines[start:] if line.split()[:2] in (["baseline", "50"], ["new", "50"])}
    for method in ("baseline", "new"):
        assert f" {_iqm(frame, method):.4g} [" in rows[method]


def test_the_callback_writes_the_aggregates_as_metrics_and_the_plots_as_artifacts(sqlite_uri, benchmark_sweep):
    sweep, frame = benchmark_sweep
    result = summarize_sweep(
        sweep.parent_id, val="val_acc", test="test_acc", seed_column="seed", task_column="task", maximize=True,
        n_resamples=499, tracking_uri=sqlite_uri,
    )  # fmt: skip
    assert result.status == "updated", result.error
    (summary,) = summary_runs(sweep.client, sweep.experiment_id)
    metrics = summary.data.metrics
    for method in ("baseline", "new"):
        assert metrics[f"boon/test_acc/across/{method}/iqm"] == pytest.approx(_iqm(frame, method), rel=1e-12)
    task_means = frame.groupby(["method", "task"])["test_acc"].mean()
    expected = np.mean(task_means["new"]) - np.mean(task_means["baseline"])
    assert metrics["boon/test_acc/across/new/vs_baseline/mean"] == pytest.approx(expected, rel=1e-9)
    assert metrics["boon/test_acc/across/tasks"] == 5
    artifacts = {item.path for item in sweep.client.list_artifacts(summary.info.run_id)}
    assert {"across_intervals.png", "across_profiles.png", "summary.json", "report.html"} <= artifacts


def test_one_experiment_per_task_is_compared_with_the_source_as_the_task(sqlite_uri):
    """Each task logged to an experiment of its own (the method and seed params): ``compare`` of the experiments
    with ``--task-column source`` and a label per task gives the aggregates of the runs of every experiment."""
    frame = pd.read_csv(BENCHMARK)
    tasks = sorted(set(frame["task"]))
    experiments = {}
    for task in tasks:
        sweep = new_sweep(sqlite_uri, name=f"{task}-{np.random.default_rng().integers(1 << 30)}")
        for row in frame[frame["task"] == task].itertuples(index=False):
            sweep.add_child(val=[row.val_acc], test=[row.test_acc], params={"method": row.method, "seed": row.seed})
        experiments[task] = sweep.experiment_name
    sources = [f"mlflow:{experiments[task]}" for task in tasks]
    options = [arg for i in range(1, len(tasks) + 1) for arg in ("--source-option", f"{i}:tracking_uri={sqlite_uri}")]
    labels = [arg for task in tasks for arg in ("--label", task)]
    result = CliRunner().invoke(
        cli.main,
        [
            "compare", *sources, *options, *labels, "--val", "val_acc", "--test", "test_acc", "--group-by", "method",
            "--seed-column", "seed", "--task-column", "source", "--maximize", "--resamples", "499",
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    start = lines.index(next(line for line in lines if line.startswith("Across 5 tasks (source: cola, mrpc, rte")))
    rows = {line.split()[0]: line for line in lines[start:] if line.split()[:2] in (["baseline", "50"], ["new", "50"])}
    for method in ("baseline", "new"):
        assert f" {_iqm(frame, method):.4g} [" in rows[method]
