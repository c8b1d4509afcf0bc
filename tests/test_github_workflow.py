"""The example GitHub Actions workflow (``examples/github/``): its steps check out main and the branch and call the
script, and the script, run as the workflow's step runs it, gates the branch on the comparison with main and posts
the report to the job's summary page (``GITHUB_STEP_SUMMARY``)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "github"
SCRIPT = "examples/github/compare.sh"


def _steps() -> list[dict]:
    yaml = pytest.importorskip("yaml")
    workflow = yaml.safe_load((EXAMPLE / "compare.yml").read_text(encoding="utf-8"))
    assert "pull_request" in workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on` as true
    return workflow["jobs"]["compare"]["steps"]


def _script_step(steps: list[dict]) -> list[str]:
    """The words of the one step that runs the script: ``bash BRANCH/examples/github/compare.sh MAIN BRANCH RUNS``."""
    (run,) = [step["run"].split() for step in steps if SCRIPT in step.get("run", "")]
    return run


def test_the_workflow_checks_out_both_sides_calls_the_script_and_keeps_the_runs():
    steps = _steps()
    checkouts = [step["with"]["path"] for step in steps if step.get("uses", "").startswith("actions/checkout@")]
    assert checkouts == ["branch", "main"]
    bash, script, main, branch, runs = _script_step(steps)
    assert (bash, script, main, branch) == ("bash", f"branch/{SCRIPT}", "main", "branch")
    (kept,) = [step for step in steps if step.get("uses", "").startswith("actions/upload-artifact@")]
    assert kept["with"]["path"].rstrip("/") == runs and kept["if"] == "always()"


@pytest.mark.slow  # two sweeps and `boontrack compare`, each its own process
def test_the_script_fails_a_regression_and_posts_the_report(tmp_path):
    # the workspace as the job lays it out: main's checkout and the branch's, whose training code got worse
    for side in ("main", "branch"):
        shutil.copytree(EXAMPLE, tmp_path / side / "examples" / "github")
    sweep = tmp_path / "branch" / "examples" / "github" / "sweep.py"
    code = sweep.read_text(encoding="utf-8")
    assert "\nEPOCHS = 40 " in code
    sweep.write_text(code.replace("\nEPOCHS = 40 ", "\nEPOCHS = 2 "), encoding="utf-8")
    step_summary = tmp_path / "step-summary.md"
    scripts = Path(sys.executable).parent  # `boontrack` and `python` of the environment running the tests
    env = {**os.environ, "PATH": f"{scripts}{os.pathsep}{os.environ.get('PATH', '')}"}
    env["GITHUB_STEP_SUMMARY"] = str(step_summary)
    run = _script_step(_steps())
    done = subprocess.run(run, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 3, done.stderr  # the job fails
    report = step_summary.read_text(encoding="utf-8")
    assert report == done.stdout and report.startswith("# boontrack compare: test_acc\n")
    assert "❌ not supported: branch not worse by more than 0.02 than main in test_acc" in report
    assert "| branch | main | yes |" in report  # the two sweeps share their seeds: compared as pairs
    for side in ("main", "branch"):
        assert len((tmp_path / run[-1] / f"{side}.csv").read_text(encoding="utf-8").splitlines()) == 21
