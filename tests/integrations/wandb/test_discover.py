"""Discovering the sweeps and groups of a W&B project, and the change token, through the real ``wandb.Api``
against the wire-protocol double."""

from __future__ import annotations

import dataclasses
import json
import re

import pytest

from boontrack.directory import DirectorySink
from boontrack.exceptions import InputError
from boontrack.pipeline import run_job, summary_key
from boontrack.reaggregate import discover_jobs, load_config, run_jobs

from wandb_double import FakeRun
from wandb_sweep import ENTITY

pytestmark = pytest.mark.wandb

PROJECT = "proj-discover"
TEMPLATE = """
[[jobs]]
name = "team"
source = "wandb:{path}"
val = "val_acc"
test = "test_acc"
n = [1, 2]
n_resamples = 99
plots = false
out = "summaries"
{extra}
"""


@pytest.fixture(scope="module")
def project(double):
    """Two sweeps (4 and 3 runs, groups g1 and g2), a run of g2 outside any sweep, and an aggregate run."""
    layout = [("swA", "g1")] * 4 + [("swB", "g2")] * 3 + [(None, "g2")]
    for i, (sweep, group) in enumerate(layout):
        double.add_run(
            FakeRun(
                name=f"dr{i:06d}",
                entity=ENTITY,
                project=PROJECT,
                sweep=sweep,
                group=group,
                job_type="train",
                config={"seed": i},
                summary={"val_acc": 0.5 + 0.01 * i, "test_acc": 0.4 + 0.02 * i},
                created_at=f"2026-02-01T00:00:{i:02d}",
            )
        )
    double.add_run(
        FakeRun(
            name="boon-agg0001",
            entity=ENTITY,
            project=PROJECT,
            group="g1",
            job_type="boontrack",
            config={"boontrack.role": "summary"},
            created_at="2026-02-01T00:01:00",
        )
    )
    return double


def _config(tmp_path, extra):
    path = tmp_path / "boontrack.toml"
    path.write_text(TEMPLATE.format(path=f"{ENTITY}/{PROJECT}", extra=extra))
    return path


def test_each_sweep_is_the_job_written_by_hand(project, tmp_path):
    (template,) = load_config(_config(tmp_path, "discover = true"))
    project.reset_log()
    lines = []
    jobs, failed = discover_jobs([template], log=lines.append)
    assert (failed, lines) == (0, ["team: 2 sweeps found"])
    assert [(job.name, job.label, job.out) for job in jobs] == [
        (f"team/sweep-{s}", f"sweep {s}", tmp_path / "summaries" / f"sweep-{s}") for s in ("swA", "swB")
    ]
    assert "GetSweeps" in project.operations() and "GetSweep" not in project.operations()  # no request per sweep
    by_hand = tmp_path / "by-hand.toml"
    by_hand.write_text(TEMPLATE.format(path=f"{ENTITY}/{PROJECT}", extra='sweep = "swB"'))
    (written,) = load_config(by_hand)
    assert dataclasses.replace(jobs[1], name="team", label="", out=written.out) == written


def test_each_group_becomes_a_job_and_boontrack_runs_make_none(project, tmp_path):
    (template,) = load_config(_config(tmp_path, 'discover = { by = "group" }'))
    jobs, _ = discover_jobs([template], log=lambda line: None)
    assert [(job.name, dict(job.source_options)) for job in jobs] == [
        ("team/group-g1", {"group": "g1"}),
        ("team/group-g2", {"group": "g2"}),
    ]
    lines = []
    assert run_jobs(jobs, log=lines.append) == 0
    summary = json.loads((tmp_path / "summaries" / "group-g2" / "summary.json").read_text())
    assert summary["runs"] == 4  # swB's three runs and the one outside any sweep


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ('discover = { by = "tag" }', 'discover \'by\' must be "sweep" or "group"'),
        ('discover = true\nsweep = "swA"', "give no sweep option"),
    ],
)
def test_a_discovery_that_cannot_be_made_is_refused_with_the_config(project, tmp_path, extra, message):
    with pytest.raises(InputError, match="^job 'team': wandb: .*" + re.escape(message)):
        load_config(_config(tmp_path, extra))  # bad input: the pass exits 2 and runs nothing


def _full_reads(double) -> int:
    return sum(1 for name, variables in double.log if name == "Runs" and variables.get("perPage") == 500)


def test_an_unchanged_sweep_costs_one_light_request_and_a_heartbeat_is_a_change(project, tmp_path):
    from boontrack.backends import open_source
    from boontrack.spec import Spec

    source = open_source(f"wandb:{ENTITY}/{PROJECT}", sweep="swA")
    spec = Spec(val="val_acc", test="test_acc", n=(1, 2), n_resamples=99)
    out = tmp_path / "out"
    project.reset_log()
    assert run_job(source, spec, sink=DirectorySink(out), plots=False).status == "updated"
    assert _full_reads(project) == 1

    project.reset_log()
    assert run_job(source, spec, sink=DirectorySink(out), plots=False).status == "unchanged"
    (token_request,) = [v for name, v in project.log if name == "Runs"]
    assert (token_request["order"], token_request["perPage"], json.loads(token_request["filters"])) == (
        "-heartbeat_at",
        10,
        {"sweep": "swA"},
    )

    project.runs[(ENTITY, PROJECT, "dr000002")].heartbeat_at = "2026-03-01T00:00:00"
    project.reset_log()
    assert run_job(source, spec, sink=DirectorySink(out), plots=False).status == "unchanged"  # read, same inputs
    assert _full_reads(project) == 1
    project.reset_log()
    assert run_job(source, spec, sink=DirectorySink(out), plots=False).status == "unchanged"
    assert _full_reads(project) == 0


@pytest.mark.slow  # a write-back through wandb.init
def test_the_aggregate_run_keeps_the_token_beside_its_fingerprint(project):
    from boontrack.backends import open_source
    from boontrack.spec import Spec
    from boontrack_wandb._sink import CHANGE_TOKEN_KEY, FINGERPRINT_KEY

    source = open_source(f"wandb:{ENTITY}/{PROJECT}", sweep="swB")
    spec = Spec(val="val_acc", test="test_acc", n=(1, 2), n_resamples=99)
    sink = source.sink(summary_key(source.identity(), spec))
    first = run_job(source, spec, sink=sink, plots=False, raise_on_write_error=True)
    assert first.status == "updated"
    run = project.runs[(ENTITY, PROJECT, sink.run_id)]
    stored = json.loads(run.summary[CHANGE_TOKEN_KEY])
    assert stored["fingerprint"] == run.summary[FINGERPRINT_KEY] == first.fingerprint

    project.reset_log()
    assert run_job(source, spec, sink=sink, plots=False).status == "unchanged"
    assert _full_reads(project) == 0 and "UpsertBucket" not in project.operations()

    run.summary[CHANGE_TOKEN_KEY] = json.dumps({**stored, "fingerprint": "0" * 64})  # not this summary's
    project.reset_log()
    assert run_job(source, spec, sink=sink, plots=False).status == "unchanged"
    assert _full_reads(project) == 1 and json.loads(run.summary[CHANGE_TOKEN_KEY]) == stored
