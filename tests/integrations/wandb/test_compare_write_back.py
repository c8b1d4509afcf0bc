"""A comparison of two sources written to W&B (``write_comparison``, ``boontrack compare --write-to
wandb:ENTITY/PROJECT``): its own aggregate run in that project, the numbers as summary metrics, the report as files
of its artifact, rewritten only when the runs change. Through the real ``wandb.init`` and ``wandb.Api`` against
the wire-protocol double; the sources are two files, one a copy of the other shifted by a known amount."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from boontrack import cli
from boontrack.exceptions import InputError
from boontrack.sources import compare_sources, curve_files, to_markdown, write_comparison

from wandb_sweep import ENTITY

pytestmark = pytest.mark.wandb

DIGITS = Path(__file__).resolve().parents[3] / "examples" / "digits_sweep.csv"
SHIFT = 0.25
#: What a write of the aggregate run sends; a comparison found up to date sends none of it.
WRITES = {"UpsertBucket", "RunResumeStatus", "CreateArtifact", "file_stream", "CreateRunFiles"}


@pytest.fixture
def shifted(tmp_path) -> tuple[Path, Path]:
    """The demo's logistic-regression runs (main.csv), and a copy with every score SHIFT higher (branch.csv)."""
    runs = pd.read_csv(DIGITS).query("model == 'logistic-regression'")
    main, branch = tmp_path / "main.csv", tmp_path / "branch.csv"
    runs.to_csv(main, index=False)
    runs.assign(val_acc=runs["val_acc"] + SHIFT, test_acc=runs["test_acc"] + SHIFT).to_csv(branch, index=False)
    return main, branch


def _compared(main: Path, branch: Path):
    return compare_sources(
        [main, branch], val="val_acc", test="test_acc", seed_column="seed", n=(1, 5), n_resamples=99, require="better"
    )


def _comparison_runs(double, project: str) -> list:
    return [run for (_, of, _), run in double.runs.items() if of == project and run.job_type == "boontrack"]


@pytest.mark.slow  # three writes through wandb's service process, 10-20 s on a loaded machine
def test_a_comparison_written_to_wandb_is_its_own_run_rewritten_only_when_the_runs_change(fresh_log, shifted):
    project = f"comparisons-{uuid.uuid4().hex[:8]}"
    destination = f"wandb:{ENTITY}/{project}"
    result = _compared(*shifted)
    assert write_comparison(result, destination) == "updated"
    (run,) = _comparison_runs(fresh_log, project)
    assert run.state == "finished" and run.config["boontrack.role"] == "summary"
    assert run.summary["boon/test_acc/branch/vs_main/boo_5"] == pytest.approx(SHIFT, abs=1e-12)
    assert run.summary["boon/gate/passed"] == 1.0 and run.summary["boon/gate/threshold"] == 0.0
    assert run.summary["boon/gate/bound"] == result.gate.bound
    artifact = next(
        a for a in fresh_log.artifacts.values() if a["type"] == "boontrack-summary" and a["run"] == run.name
    )
    files = fresh_log.artifact_files(artifact["id"])
    assert files["report.md"].decode() == to_markdown(result, svg=True)
    assert files["curves_test_acc.svg"] == curve_files(result)["curves_test_acc.svg"]  # the plot it links
    assert json.loads(files["comparison.json"])["labels"] == ["main", "branch"]

    # the command line, the same comparison: the same run, found up to date (nothing sent that writes)
    fresh_log.reset_log()
    typed = CliRunner().invoke(
        cli.main,
        [
            *("compare", *map(str, shifted), "--val", "val_acc", "--test", "test_acc", "--seed-column", "seed"),
            *("--n", "1,5", "--resamples", "99", "--require", "better"),
            *("--write-to", destination, "--write-option", "timeout=30"),
        ],
    )
    assert typed.exit_code == 0, typed.output
    assert f"Comparison up to date, nothing written: {destination}" in typed.stderr
    assert not WRITES & set(fresh_log.operations())

    # the copy shifted by twice as much: the same comparison, its run rewritten with the new numbers
    copy = pd.read_csv(shifted[1])
    copy.assign(val_acc=copy["val_acc"] + SHIFT, test_acc=copy["test_acc"] + SHIFT).to_csv(shifted[1], index=False)
    assert write_comparison(_compared(*shifted), destination) == "updated"
    (rewritten,) = _comparison_runs(fresh_log, project)
    assert rewritten.name == run.name
    assert rewritten.summary["boon/test_acc/branch/vs_main/boo_5"] == pytest.approx(2 * SHIFT, abs=1e-12)


def test_a_wandb_destination_is_a_project_and_takes_the_timeout_only(shifted):
    from boontrack_wandb import WandbBackend

    with pytest.raises(InputError, match=r"^wandb: expected wandb:ENTITY/PROJECT, got wandb:comparisons$"):
        WandbBackend().open_sink("comparisons", "0" * 32)
    refused = CliRunner().invoke(
        cli.main,
        [
            *("compare", *map(str, shifted), "--val", "val_acc"),
            *("--write-to", f"wandb:{ENTITY}/comparisons", "--write-option", "tracking-uri=sqlite:///m.db"),
        ],
    )
    assert refused.exit_code == 2 and refused.stdout == "" and refused.stderr.count("\n") == 1
    assert "--write-option: wandb destinations take no option 'tracking_uri' (known: timeout)" in refused.stderr


@pytest.mark.slow  # one write through wandb's service process, 5-10 s on a loaded machine
def test_a_comparison_across_tasks_writes_the_aggregates_as_summary_metrics(fresh_log, tmp_path):
    from scipy import stats

    frame = pd.read_csv(DIGITS.with_name("benchmark_runs.csv"))
    paths = []
    for method, name in (("baseline", "main"), ("new", "branch")):
        paths.append(tmp_path / f"{name}.csv")
        frame[frame["method"] == method].drop(columns="method").to_csv(paths[-1], index=False)
    result = compare_sources(
        paths, val="val_acc", test="test_acc", seed_column="seed", task_column="task", maximize=True, n=(1, 5),
        n_resamples=99, require="better",
    )  # fmt: skip
    project = f"across-{uuid.uuid4().hex[:8]}"
    assert write_comparison(result, f"wandb:{ENTITY}/{project}") == "updated"
    (run,) = _comparison_runs(fresh_log, project)
    iqm = {m: stats.trim_mean(frame.loc[frame["method"] == m, "test_acc"], 0.25) for m in ("baseline", "new")}
    assert run.summary["boon/test_acc/across/branch/iqm"] == pytest.approx(iqm["new"], rel=1e-12)
    difference = run.summary["boon/test_acc/across/branch/vs_main/iqm"]
    assert difference == pytest.approx(iqm["new"] - iqm["baseline"], rel=1e-9)
    assert (
        run.summary["boon/gate/bound"]
        == result.gate.bound
        == run.summary["boon/test_acc/across/branch/vs_main/iqm/ci_low"]
    )
