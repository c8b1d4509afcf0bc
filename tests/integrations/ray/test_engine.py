"""``boontrack reaggregate --engine ray``: jobs as tasks of a real local Ray, retried when their worker dies."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from boontrack import cli
from boontrack.reaggregate import load_config, run_job_line, run_jobs

pytestmark = pytest.mark.ray

JOBS = """
[[jobs]]
name = "{name}"
source = "{name}.csv"
val = "acc"
test = "test_acc"
n = [1, 3]
n_resamples = 99
plots = false
out = "summaries/{name}"
"""
NAMES = ("alpha", "beta", "gamma")


@pytest.fixture
def workdir(tmp_path) -> Path:
    """Three jobs over three small CSV files."""
    rng = np.random.default_rng(1)
    for name in NAMES:
        pd.DataFrame(
            {
                "run_id": [f"r{i}" for i in range(8)],
                "acc": rng.uniform(0.5, 0.9, 8),
                "test_acc": rng.uniform(0.5, 0.9, 8),
            }
        ).to_csv(tmp_path / f"{name}.csv", index=False)
    (tmp_path / "boontrack.toml").write_text("".join(JOBS.format(name=name) for name in NAMES))
    return tmp_path


def _outcomes(lines):
    return sorted(line.split(" (")[0] for line in lines)


def test_a_pass_on_ray_gives_the_lines_and_exit_status_of_a_serial_pass(ray_local, workdir):
    config = str(workdir / "boontrack.toml")
    first = CliRunner().invoke(cli.main, ["reaggregate", "--config", config, "--engine", "ray", "--workers", "2"])
    assert first.exit_code == 0, first.output
    assert sorted(first.stdout.splitlines()) == [f"{n}: updated ({workdir / 'summaries' / n})" for n in NAMES]
    second = CliRunner().invoke(cli.main, ["reaggregate", "--config", config, "--engine", "ray", "--workers", "2"])
    assert (second.exit_code, _outcomes(second.stdout.splitlines())) == (0, [f"{n}: unchanged" for n in NAMES])

    (workdir / "beta.csv").unlink()
    third = CliRunner().invoke(cli.main, ["reaggregate", "--config", config, "--engine", "ray"])
    assert third.exit_code == 1
    assert f"beta: failed: cannot read {workdir / 'beta.csv'}: no such file" in third.stdout.splitlines()


def _dying(marker: Path, *, every_time: bool = False):
    """A task body whose worker process dies (the first time, or every time, for jobs named beta)."""

    def run(job, **options):
        if job.name == "beta" and (every_time or not marker.exists()):
            marker.touch()
            os._exit(1)
        return run_job_line(job, **options)

    return run


def test_a_task_whose_worker_dies_is_retried(ray_local, workdir):
    from boontrack_ray.engine import RayEngine

    lines = []
    engine = RayEngine(2, max_retries=1, run=_dying(workdir / "died-once"))
    assert run_jobs(load_config(workdir / "boontrack.toml"), engine=engine, log=lines.append) == 0
    assert (workdir / "died-once").exists()
    assert _outcomes(lines) == [f"{n}: updated" for n in NAMES]


def test_an_interrupted_pass_fails_its_lost_job_only_and_a_rerun_finishes_it(ray_local, workdir):
    from boontrack_ray.engine import RayEngine

    lines = []
    engine = RayEngine(2, max_retries=1, run=_dying(workdir / "died", every_time=True))
    assert run_jobs(load_config(workdir / "boontrack.toml"), engine=engine, log=lines.append) == 1
    lost = next(line for line in lines if line.startswith("beta: "))
    assert lost.startswith("beta: failed: Ray task lost after 1 retries")
    assert not (workdir / "summaries" / "beta").exists()

    lines.clear()
    assert run_jobs(load_config(workdir / "boontrack.toml"), engine=RayEngine(2), log=lines.append) == 0
    assert _outcomes(lines) == ["alpha: unchanged", "beta: updated", "gamma: unchanged"]


def test_without_ray_the_engine_names_the_extra(workdir, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)
    result = CliRunner().invoke(
        cli.main, ["reaggregate", "--config", str(workdir / "boontrack.toml"), "--engine", "ray"]
    )
    assert result.exit_code == 2
    assert result.stderr == 'Error: --engine ray needs ray: pip install "boontrack[ray]"\n'
    assert not (workdir / "summaries").exists()
