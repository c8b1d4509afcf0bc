"""Every path in a config file is relative to the file, whatever the working directory: a file source, ``out``, the
path in a SQLite URI (``tracking_uri``, ``optuna:sqlite:///...``, in ``options`` and ``write_options`` too), a
tracker's location that is a local directory or file, and a tracking URI that is a directory. Names and other
URLs stay as written."""

from __future__ import annotations

from pathlib import Path

import pytest

from boontrack.reaggregate import load_config
from boontrack.sources import load_comparison

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _job(directory: Path, lines: str) -> dict:
    """The one job of a config file in ``directory`` with these lines: its source and source options."""
    config = directory / "jobs" / "boontrack.toml"
    (config.parent / "mlruns").mkdir(parents=True, exist_ok=True)  # an MLflow file store, for a directory URI
    config.write_text(f'[[jobs]]\nname = "job"\nval = "val_acc"\nout = "summaries"\n{lines}\n')
    (job,) = load_config(config)
    return {"source": job.source, "out": job.out, **job.source_options}


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        ('source = "runs.csv"', {"source": "{dir}/runs.csv"}),
        ('source = "file:runs.csv"', {"source": "file:{dir}/runs.csv"}),
        (
            'source = "mlflow:exp"\ntracking_uri = "sqlite:///stores/mlflow.db"',
            {"tracking_uri": "sqlite:///{dir}/stores/mlflow.db"},
        ),
        (
            'source = "mlflow:exp"\ntracking_uri = "sqlite:///../mlflow.db"',
            {"tracking_uri": "sqlite:///{dir}/../mlflow.db"},
        ),
        (
            'source = "mlflow:exp"\ntracking_uri = "sqlite:////abs/mlflow.db"',
            {"tracking_uri": "sqlite:////abs/mlflow.db"},
        ),
        ('source = "mlflow:exp"\ntracking_uri = "http://127.0.0.1:5000"', {"tracking_uri": "http://127.0.0.1:5000"}),
        ('source = "mlflow:exp"\ntracking_uri = "mlruns"', {"source": "mlflow:exp", "tracking_uri": "{dir}/mlruns"}),
        (
            'source = "mlflow:exp"\noptions = {tracking_uri = "sqlite:///m.db"}',
            {"tracking_uri": "sqlite:///{dir}/m.db"},
        ),
        ('source = "optuna:sqlite:///optuna.db"', {"source": "optuna:sqlite:///{dir}/optuna.db"}),
        ('source = "optuna:journal.log"', {"source": "optuna:{dir}/journal.log"}),
        ('source = "optuna:postgresql://host/db"', {"source": "optuna:postgresql://host/db"}),
        ('source = "wandb-offline:wandb"', {"source": "wandb-offline:{dir}/wandb"}),
        ('source = "hydra:multirun/2024-01-01"', {"source": "hydra:{dir}/multirun/2024-01-01"}),
        ('source = "wandb:team/project"', {"source": "wandb:team/project"}),
    ],
)
def test_every_relative_path_of_a_job_is_relative_to_the_config_file(tmp_path, monkeypatch, lines, expected):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # the working directory is not the config's
    directory = tmp_path / "jobs"
    job = _job(tmp_path, lines)
    assert job["out"] == directory / "summaries"
    for key, value in expected.items():
        assert job[key] == value.format(dir=directory)


def test_the_example_config_reads_the_demo_store_beside_examples_from_any_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    jobs = {job.name: job for job in load_config(EXAMPLES / "boontrack.toml")}
    assert jobs["digits"].source == str(EXAMPLES / "digits_sweep.csv")
    uri = jobs["demo-sweeps"].source_options["tracking_uri"]
    assert Path(uri.removeprefix("sqlite:///")).resolve() == EXAMPLES.parent / "boontrack-demo" / "mlflow.db"


def test_a_comparisons_paths_are_relative_to_its_config_file(tmp_path, monkeypatch):
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    config = tmp_path / "compare.toml"
    config.write_text(
        'sources = ["main.csv", "mlflow:"]\nval = "val_acc"\n'
        'options = [{}, {parent = "RUN", tracking_uri = "sqlite:///m.db"}]\n'
        'write_to = "mlflow:comparisons"\nwrite_options = {tracking_uri = "sqlite:///out/m.db"}\n'
    )
    keywords = load_comparison(config)
    assert keywords["sources"] == [str(tmp_path / "main.csv"), "mlflow:"]
    assert keywords["options"][1] == {"parent": "RUN", "tracking_uri": f"sqlite:///{tmp_path / 'm.db'}"}
    assert keywords["write_options"] == {"tracking_uri": f"sqlite:///{tmp_path / 'out' / 'm.db'}"}
