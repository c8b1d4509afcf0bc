"""``report.html`` in the W&B aggregate run: an HTML panel (the page passed through unchanged) and a file of the
summary's artifact, through the wire-protocol double."""

from __future__ import annotations

import pytest

from wandb_sweep import ENTITY, PROJECT, SWEEP

pytestmark = pytest.mark.wandb


def test_the_aggregate_run_shows_report_html_as_a_panel_and_keeps_it_as_a_file(fresh_log):
    from boontrack.backends import open_source
    from boontrack.pipeline import run_job, summary_key
    from boontrack.spec import Spec

    source = open_source(f"wandb:{ENTITY}/{PROJECT}", sweep=SWEEP)
    spec = Spec(val="val_acc", group_by=("model",), n_resamples=99)
    sink = source.sink(summary_key(source.identity(), spec))
    result = run_job(source, spec, sink=sink, plots=False, raise_on_write_error=True)
    assert result.status == "updated"
    run = fresh_log.runs[(ENTITY, PROJECT, sink.run_id)]
    panel = run.summary["boontrack/report"]
    assert panel["_type"] == "html-file"
    page = fresh_log.uploads[f"/upload/{ENTITY}/{PROJECT}/{sink.run_id}/{panel['path']}"]
    artifact = next(
        a for a in fresh_log.artifacts.values() if a["type"] == "boontrack-summary" and a["run"] == sink.run_id
    )
    assert fresh_log.artifact_files(artifact["id"])["report.html"] == page  # unchanged: nothing injected
    assert page.startswith(b"<!DOCTYPE html>") and b"<h1>boontrack summary: val_acc</h1>" in page
