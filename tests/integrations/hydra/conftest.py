"""Fixtures for the Hydra integration: real ``--multirun`` sweeps of a small app, each in a temporary directory.

The app (``sweep_app/app.py``) returns, for each job, what a JSON table written by the test holds for its model,
learning rate and seed, so every expected number is computed from values the test wrote itself.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("hydra", reason='needs the [hydra] extra: pip install ".[hydra]"')

APP = Path(__file__).resolve().parent / "sweep_app" / "app.py"


@dataclass
class Sweep:
    """A finished multirun: where it wrote, and what the process said."""

    dir: Path
    returncode: int
    stdout: str
    stderr: str

    @property
    def out(self) -> Path:
        return self.dir / "boontrack"

    def summary(self) -> dict[str, Any]:
        return json.loads((self.out / "summary.json").read_text())


@pytest.fixture
def run_sweep(tmp_path):
    """``run_sweep(scores, *overrides)``: run the app with ``--multirun`` in ``tmp_path`` (the sweep directory
    ``tmp_path/sweep``, given to Hydra as ``sweep`` with ``relative=True``), each job returning
    ``scores["<model>/<lr>/<seed>"]``; ``multirun=False``: one run."""

    def run(scores: dict[str, Any], *overrides: str, multirun: bool = True, relative: bool = False) -> Sweep:
        table = tmp_path / "scores.json"
        table.write_text(json.dumps(scores))
        sweep_dir = tmp_path / "sweep"
        env = {k: v for k, v in os.environ.items() if not k.startswith(("WANDB_", "MLFLOW_", "HYDRA_"))}
        env["SWEEP_SCORES"] = str(table)
        done = subprocess.run(
            [
                sys.executable,
                str(APP),
                *(["--multirun"] if multirun else []),
                *overrides,
                f"hydra.sweep.dir={sweep_dir.relative_to(tmp_path) if relative else sweep_dir}",
            ],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        return Sweep(sweep_dir, done.returncode, done.stdout, done.stderr)

    return run
