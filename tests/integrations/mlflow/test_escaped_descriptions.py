"""The descriptions MLflow shows (``mlflow.note.content``, rendered as Markdown) of a summary run, its curve runs
and a written comparison, with hostile group labels, source labels and experiment names: each renders as it does
with plain names and shows them as text (:mod:`rendered`). MLflow refuses such metric and parameter names, so
those go through the core's outputs (``tests/test_outputs_escaped.py``)."""

from __future__ import annotations

import uuid

import numpy as np
import pandas as pd
import pytest
from mlflow import MlflowClient

from boontrack.sources import compare_sources
from boontrack_mlflow import summarize_sweep

from mlflow_helpers import new_sweep
from rendered import HOSTILE, assert_renders_alike, markdown_page

pytestmark = pytest.mark.mlflow

NOTE = "mlflow.note.content"


def shown(name: str) -> str:
    return name.replace("\n", "\\n")


def _summary_notes(sqlite_uri: str, name: str) -> list[str]:
    """The descriptions of the summary run and its curve runs, for a sweep whose first group is ``a NAME``."""
    sweep = new_sweep(sqlite_uri)
    for group, level in ((f"a {name}", 0.7), ("z", 0.8)):
        for seed in range(8):
            score = level + 0.01 * ((seed * 7) % 5)
            sweep.add_child(val=[score], test=[score - 0.02], params={"model": group, "seed": seed})
    options = dict(val="val_acc", test="test_acc", group_by="model", seed_column="seed", n_resamples=99)
    summarize_sweep(sweep.parent_id, tracking_uri=sqlite_uri, plots=False, raise_on_error=True, **options)
    runs = MlflowClient(sqlite_uri).search_runs([sweep.experiment_id], "tags.`boontrack.role` != ''")
    return [run.data.tags[NOTE] for run in sorted(runs, key=lambda run: run.data.tags["boontrack.role"])]


def test_the_summary_and_curve_runs_descriptions_show_hostile_group_labels_as_text(sqlite_uri):
    name = HOSTILE["all"]
    plain = _summary_notes(sqlite_uri, "plain")
    hostile = _summary_notes(sqlite_uri, name)
    assert len(hostile) == len(plain) == 3  # the summary run and the two groups' curve runs
    for note, plain_note in zip(hostile, plain):
        assert_renders_alike(markdown_page(note), markdown_page(plain_note), [], allowed=frozenset({"a"}))
    assert sum(shown(f"a {name}") in "".join(markdown_page(note).text) for note in hostile) == 2


def _comparison_note(sqlite_uri: str, name: str, directory) -> str:
    """The description of a comparison written to MLflow, its sides labelled with ``name``."""
    paths = []
    for side, shift in (("main", 0.0), ("branch", 0.05)):
        path = directory / f"{side}.csv"
        pd.DataFrame(
            {"seed": range(12), "val_acc": np.linspace(0.5, 0.8, 12) + shift, "test_acc": np.linspace(0.4, 0.9, 12)}
        ).to_csv(path, index=False)
        paths.append(path)
    experiment = f"comparisons {uuid.uuid4().hex[:8]}"
    compare_sources(
        paths,
        labels=[f"main {name}".replace("=", " "), f"branch {name}".replace("=", " ")],
        val="val_acc",
        test="test_acc",
        seed_column="seed",
        n=(1, 5),
        n_resamples=99,
        require="better",
        write_to=f"mlflow:{experiment}",
        write_options={"tracking_uri": sqlite_uri},
    )
    client = MlflowClient(sqlite_uri)
    (run,) = client.search_runs([client.get_experiment_by_name(experiment).experiment_id])
    return run.data.tags[NOTE]


def test_a_written_comparisons_description_shows_hostile_labels_as_text(sqlite_uri, tmp_path):
    name = HOSTILE["all"]
    for side in ("plain", "hostile"):
        (tmp_path / side).mkdir()
    plain = _comparison_note(sqlite_uri, "plain", tmp_path / "plain")
    hostile = _comparison_note(sqlite_uri, name, tmp_path / "hostile")
    labels = [shown(f"{side} {name}".replace("=", " ")) for side in ("main", "branch")]
    assert_renders_alike(markdown_page(hostile), markdown_page(plain), labels)
