"""``report.html`` on the MLflow summary run: an artifact beside ``report.md``, the page of this summary."""

from __future__ import annotations

from pathlib import Path

import pytest
from mlflow import MlflowClient

from boontrack_mlflow import summarize_sweep

from mlflow_helpers import new_sweep

pytestmark = pytest.mark.mlflow


def test_the_summary_run_holds_report_html_beside_report_md(sqlite_uri, tmp_path):
    sweep = new_sweep(sqlite_uri)
    for model, level in (("a", 0.7), ("b", 0.8)):
        for seed in range(8):
            score = level + 0.01 * ((seed * 7) % 5)
            sweep.add_child(val=[score], test=[score - 0.02], params={"model": model, "seed": seed})
    options = dict(val="val_acc", test="test_acc", group_by="model", seed_column="seed", n_resamples=99)
    result = summarize_sweep(sweep.parent_id, tracking_uri=sqlite_uri, plots=False, raise_on_error=True, **options)
    assert result.status == "updated"
    client = MlflowClient(sqlite_uri)
    (summary_run,) = client.search_runs([sweep.experiment_id], "tags.`boontrack.role` = 'summary'")
    names = {artifact.path for artifact in client.list_artifacts(summary_run.info.run_id)}
    assert {"report.md", "report.html", "summary.json"} <= names
    page = Path(client.download_artifacts(summary_run.info.run_id, "report.html", str(tmp_path))).read_text("utf-8")
    assert page.startswith("<!DOCTYPE html>") and "<h1>boontrack summary: test_acc</h1>" in page
    assert "<td>a</td>" in page and "<td>b</td>" in page
    link = f"#/experiments/{sweep.experiment_id}/runs/{summary_run.info.run_id}/artifacts/report.html"
    first, _, rest = summary_run.data.tags["mlflow.note.content"].partition("\n\n")
    assert first == f"[Open the report (report.html)]({link})"  # the description's link: 3 clicks to the page
    assert rest.startswith("**boontrack** summary of test_acc: 16 runs in 2 groups")
    again = summarize_sweep(sweep.parent_id, tracking_uri=sqlite_uri, plots=False, raise_on_error=True, **options)
    assert again.status == "unchanged"
