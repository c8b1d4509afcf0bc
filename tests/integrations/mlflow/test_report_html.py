"""``report.html`` on the MLflow summary run: an artifact beside ``report.md``, the page of this summary."""

from __future__ import annotations

import re
import urllib.parse
from pathlib import Path

import pytest
from mlflow import MlflowClient

from boontrack_mlflow import summarize_sweep
from boontrack_mlflow._sink import ui_route

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
    first, _, rest = summary_run.data.tags["mlflow.note.content"].partition("\n\n")
    link = re.fullmatch(r"\[Open the report \(report\.html\)\]\((.+)\)", first).group(1)  # 3 clicks to the page
    assert _ui_page(link) == (
        f"/experiments/{sweep.experiment_id}/runs/{summary_run.info.run_id}/artifacts/report.html",
        {"workflowType": ["machine_learning"]},
    )
    assert rest.startswith("**boontrack** summary of test_acc: 16 runs in 2 groups")
    again = summarize_sweep(sweep.parent_id, tracking_uri=sqlite_uri, plots=False, raise_on_error=True, **options)
    assert again.status == "unchanged"


def _ui_page(link: str) -> tuple[str, dict[str, list[str]]]:
    """The page of the MLflow UI that a link relative to its root opens, as its router reads it: the path (matched
    against the route ``/experiments/:experimentId/runs/:runUuid/*``, whose ``artifacts/PATH`` tab shows an
    artifact) and the query (``workflowType=machine_learning`` opens the "Model training" view; without it MLflow 3
    opens the page in its GenAI view, unless the browser remembers that the user last chose the other)."""
    assert link.startswith("#/"), link  # a hash route: the UI's router reads everything after the '#'
    path, _, query = link.removeprefix("#").partition("?")
    return path, urllib.parse.parse_qs(query)


def test_every_ui_link_opens_the_model_training_view():
    assert _ui_page(ui_route("7")) == ("/experiments/7", {"workflowType": ["machine_learning"]})
    assert _ui_page(ui_route("7", "/runs/abc")) == ("/experiments/7/runs/abc", {"workflowType": ["machine_learning"]})
