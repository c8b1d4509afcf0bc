"""Every user string (metric names, group labels, parameters, source and run names) reaches the Markdown and HTML
outputs escaped: ``report.md``, ``report.html``, the description a tracker shows, the comparison's Markdown and
the job summary page of ``boontrack compare``. The same hostile names go to every output, and each output must
render as it does with plain names, showing the names as text (:mod:`rendered`)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from boontrack import cli
from boontrack.analysis import analyze
from boontrack.reports import render_outputs
from boontrack.runtable import RunTable
from boontrack.spec import Spec
from boontrack.summary import Summary

from rendered import HOSTILE, assert_renders_alike, markdown_page, parsed

PLAIN = "plain"


def shown(name: str) -> str:
    """A name as the Markdown outputs show it: on one line, a newline written ``\\n``."""
    return name.replace("\n", "\\n")


def names(name: str) -> dict[str, str]:
    """Every user string of a sweep, each holding ``name``: metrics (their direction read from them, their bounds
    said with them), a parameter and its values (the group labels), the source, a run."""
    return {
        "val": f"val_acc {name}",
        "test": f"test_acc {name}",
        "param": f"model {name}",
        "group": f"a {name}",
        "source": f"runs of {name}",
        "run": f"run {name}",
    }


def summary_of(name: str) -> Summary:
    """Two groups of 10 runs (the test scores in percent) and a dropped run, every user string holding ``name``."""
    said = names(name)
    frame = pd.DataFrame(
        {
            "run_id": [f"{said['run']} {i}" for i in range(21)],
            said["param"]: [said["group"]] * 10 + ["z"] * 11,
            "seed": [*range(10), *range(10), 10],
            said["val"]: [*np.linspace(0.5, 0.9, 10), *np.linspace(0.55, 0.95, 10), np.nan],
            said["test"]: [*np.linspace(40, 90, 10), *np.linspace(45, 95, 10), 50],
        }
    )
    spec = Spec(val=said["val"], test=said["test"], group_by=(said["param"],), seed_column="seed", n_resamples=99)
    return analyze(RunTable.from_frame(frame, spec), spec, source=said["source"])


@pytest.fixture(scope="module")
def plain_outputs():
    return render_outputs(summary_of(PLAIN), plots=False)


@pytest.mark.parametrize("kind", HOSTILE)
def test_a_summarys_markdown_and_html_show_hostile_names_as_text(kind, plain_outputs):
    name = HOSTILE[kind]
    outputs = render_outputs(summary_of(name), plots=False)
    said = [shown(text) for text in names(name).values()]
    for artifact in ("report.md", "description"):
        hostile, plain = (
            outputs.description if artifact == "description" else outputs.artifacts[artifact].decode(),
            plain_outputs.description if artifact == "description" else plain_outputs.artifacts[artifact].decode(),
        )
        # the description (a tracker's run description) names the metric, the groups and the source
        expected = said if artifact == "report.md" else [shown(names(name)[key]) for key in ("test", "source")]
        assert_renders_alike(markdown_page(hostile), markdown_page(plain), expected)
    page, plain_page = (o.artifacts["report.html"].decode() for o in (outputs, plain_outputs))
    on_the_page = [text for key, text in names(name).items() if key != "param"]  # the page names no grouping key
    assert_renders_alike(parsed(page), parsed(plain_page), on_the_page, allowed=frozenset({"style"}))


def _sides(name: str, directory) -> list[str]:
    """Two files of 12 runs sharing their seeds, the second better by 0.05, their metrics named with ``name``."""
    said = names(name)
    paths = []
    for side, shift in (("main", 0.0), ("branch", 0.05)):
        frame = pd.DataFrame(
            {
                "seed": range(12),
                said["val"]: np.linspace(0.5, 0.8, 12) + shift,
                said["test"]: np.linspace(0.4, 0.9, 12) + shift,
            }
        )
        path = directory / f"{side}.csv"
        frame.to_csv(path, index=False)
        paths.append(str(path))
    return paths


def _compared_markdown(name: str, directory, monkeypatch) -> tuple[str, str]:
    """``boontrack compare --format markdown`` of two sides labelled with ``name``: stdout, and what it appended
    to the job's summary page."""
    said = names(name)
    step_summary = directory / "step-summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step_summary))
    labels = [f"{side} {name}".replace("=", " ") for side in ("main", "branch")]  # a label holds no '='
    options = ["--val", said["val"], "--test", said["test"], "--seed-column", "seed", "--n", "1,5", "--resamples", "99"]
    result = CliRunner().invoke(
        cli.main,
        ["compare", *_sides(name, directory), "--label", labels[0], "--label", labels[1], *options]
        + ["--require", "better", "--format", "markdown"],
    )
    assert result.exit_code == 0, result.output
    return result.stdout, step_summary.read_text(encoding="utf-8")


@pytest.mark.parametrize("kind", HOSTILE)
def test_the_comparisons_markdown_and_the_step_summary_show_hostile_names_as_text(kind, tmp_path, monkeypatch):
    name = HOSTILE[kind]
    (tmp_path / "plain").mkdir()
    (tmp_path / "hostile").mkdir()
    plain, _ = _compared_markdown(PLAIN, tmp_path / "plain", monkeypatch)
    markdown, step_summary = _compared_markdown(name, tmp_path / "hostile", monkeypatch)
    assert step_summary == markdown
    labels = [shown(f"{side} {name}".replace("=", " ")) for side in ("main", "branch")]
    assert_renders_alike(markdown_page(markdown), markdown_page(plain), [shown(names(name)["test"]), *labels])
