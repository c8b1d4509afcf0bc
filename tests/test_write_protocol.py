"""The one write protocol (``pipeline.publish``): a summary of one source and a comparison of two are written
alike, fingerprint last with the change token beside it, and a write that fails at any step is redone by the next
run, which then leaves the destination up to date.

A comparison's destination is a tracker (``write_to``); here ``sink_at`` hands it a directory, whose sink keeps
the same fingerprint and change token a tracker's does, so that both jobs are held to the same steps.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from boontrack import backends, pipeline
from boontrack.directory import DirectorySink
from boontrack.files import FileSource
from boontrack.sources import compare_sources
from boontrack.spec import Spec

DIGITS = Path(__file__).resolve().parents[1] / "examples" / "digits_sweep.csv"
OPTIONS = {"val": "val_acc", "test": "test_acc", "n": (1, 5), "n_resamples": 99}
STEPS = ("write", "write_change_token", "write_fingerprint")


@pytest.fixture
def files(tmp_path) -> tuple[Path, Path]:
    """The demo's logistic regression, and a copy of its runs scored a little higher."""
    runs = pd.read_csv(DIGITS)
    runs = runs[runs["model"] == "logistic-regression"]
    base, branch = tmp_path / "main.csv", tmp_path / "branch.csv"
    runs.to_csv(base, index=False)
    runs.assign(test_acc=runs["test_acc"] + 0.01).to_csv(branch, index=False)
    return base, branch


def _summary(files: tuple[Path, Path], out: Path) -> str:
    """The summary of one source, written to ``out``: what the job found."""
    result = pipeline.run_job(FileSource(files[1]), Spec(**OPTIONS), sink=DirectorySink(out), raise_on_write_error=True)
    return result.status


def _comparison(files: tuple[Path, Path], out: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """The comparison of two sources, written to ``out`` (as its tracker's sink): what the write found."""
    monkeypatch.setattr(backends, "sink_at", lambda destination, key, **options: DirectorySink(out))
    result = compare_sources(list(files), labels=["main", "branch"], write_to="mlflow:comparisons", **OPTIONS)
    assert result.written is not None
    return result.written


JOBS = {"summary": lambda files, out, monkeypatch: _summary(files, out), "comparison": _comparison}


@pytest.mark.parametrize("step", STEPS)
@pytest.mark.parametrize("job", sorted(JOBS))
def test_a_write_that_fails_at_any_step_is_redone_by_the_next_run(files, tmp_path, monkeypatch, job, step):
    run = JOBS[job]
    out = tmp_path / "out"
    assert run(files, out, monkeypatch) == "updated"
    old = DirectorySink(out).read_fingerprint()
    runs = pd.read_csv(files[1])
    runs.assign(test_acc=runs["test_acc"] + 0.01).to_csv(files[1], index=False)  # the next write supersedes it

    original = getattr(DirectorySink, step)
    with monkeypatch.context() as crashing:

        def crash(self, *args):
            raise OSError("disk full")

        crashing.setattr(DirectorySink, step, crash)
        with pytest.raises(OSError, match="disk full"):
            run(files, out, monkeypatch)
    assert getattr(DirectorySink, step) is original
    assert DirectorySink(out).read_fingerprint() == old  # never "up to date" over a write that did not finish

    assert run(files, out, monkeypatch) == "updated"
    sink = DirectorySink(out)
    new = sink.read_fingerprint()
    assert new not in (None, old)
    token = sink.read_change_token()
    assert token is not None and token[1] == new  # the sources' change token, published with the fingerprint
    assert run(files, out, monkeypatch) == "unchanged"


def test_the_summary_and_the_comparison_are_written_by_one_function(files, tmp_path, monkeypatch):
    written = []
    publish = pipeline.publish

    def spy(sinks, fp, render, **options):
        outcomes = publish(sinks, fp, render, **options)
        written.append((fp, options["token"] is not None, [outcome.status for outcome in outcomes]))
        return outcomes

    monkeypatch.setattr(pipeline, "publish", spy)
    assert _summary(files, tmp_path / "summary") == "updated"
    assert _comparison(files, tmp_path / "comparison", monkeypatch) == "updated"
    assert [(token, statuses) for _, token, statuses in written] == [(True, ["updated"])] * 2
    assert written[0][0] != written[1][0]


def test_a_comparison_written_after_the_fact_carries_no_change_token(files, tmp_path, monkeypatch):
    from boontrack.sources import write_comparison

    monkeypatch.setattr(backends, "sink_at", lambda destination, key, **options: DirectorySink(tmp_path / "out"))
    result = compare_sources(list(files), labels=["main", "branch"], **OPTIONS)
    assert result.change_token is None  # asked only when the comparison is written, before its runs are read
    assert write_comparison(result, "mlflow:comparisons") == "updated"
    assert DirectorySink(tmp_path / "out").read_change_token() is None
    assert write_comparison(result, "mlflow:comparisons") == "unchanged"
