"""The example scripts run as documented, each in a temporary working directory."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def run_example(name: str, *args: str, cwd: Path) -> str:
    # A user's environment: nothing of the tracker settings other tests point at their doubles and tmp dirs.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WANDB_", "MLFLOW_"))}
    env.update(WANDB_SILENT="true", WANDB_MODE="offline", MLFLOW_LOGGING_LEVEL="WARNING")
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / name), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_boon_paper(shared_data, tmp_path):
    out = run_example("boon_paper.py", str(shared_data), cwd=tmp_path)
    assert "AS Reader, fixed hyperparameters: 370 runs, 316 tied validation scores" in out
    assert out.count("Boo_5 (V)") == 3


@pytest.mark.slow
def test_mlflow_sweep(tmp_path):
    pytest.importorskip("mlflow")
    pytest.importorskip("sklearn")
    out = run_example("mlflow_sweep.py", "6", cwd=tmp_path)
    assert "6 trials" in out and "Boo_5 = " in out and "summary: updated, MLflow run" in out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mlflow-example"]  # nothing in ./mlruns


@pytest.mark.slow
def test_wandb_offline_sweep(tmp_path):
    pytest.importorskip("wandb")
    pytest.importorskip("sklearn")
    out = run_example("wandb_offline_sweep.py", "6", cwd=tmp_path)
    assert "logistic-regression  6" in out and "mlp" in out and "ΔBoo_5" in out


@pytest.mark.slow
def test_hydra_sweep(tmp_path):
    pytest.importorskip("hydra")
    pytest.importorskip("sklearn")
    out = run_example("hydra/app.py", "--multirun", "model=logreg,forest", "seed=0,1,2,3,4", cwd=tmp_path)
    (sweep,) = tmp_path.glob("multirun/*/*")  # Hydra's default sweep directory, named by date and time
    assert f"boontrack: 10 jobs summarized in {sweep / 'boontrack'} (updated)" in out
    assert "forest  5" in out and "logreg  5" in out and "ΔBoo_5" in out
    assert "Boo_10" not in out  # the config's budgets: 1 and 5
    assert "]*" in out and "* doubtful: fewer than 8 runs" in out  # 5 jobs a model: marked, and said why
    assert (sweep / "boontrack" / "summary.json").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["multirun"]


def test_show_your_work_tasks_gives_the_guide_its_output(shared_data, tmp_path):
    """The across-tasks guide's example on the papers' searches, run as the guide runs it: its printed output is
    the one the guide shows (a block the docs tests cannot run, as it reads ../shared)."""
    import re

    guide = (EXAMPLES.parent / "docs" / "guide" / "across-tasks.md").read_text()
    command, shown = re.search(
        r"```bash\n(python examples/show_your_work_tasks\.py.*?)```\n\n<!-- output -->\n```text\n(.*?)```", guide, re.S
    ).groups()
    (tmp_path / "show_your_work.csv").write_text(run_example("show_your_work_tasks.py", str(shared_data), cwd=tmp_path))
    summarize = command.split("\n", 1)[1]  # the second command, on the file the first one wrote
    scripts = Path(sys.executable).parent
    env = {**os.environ, "PATH": f"{scripts}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", summarize],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout == shown
