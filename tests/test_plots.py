"""Plots: PNGs of sane size from real searches, no pyplot state, the install hint without matplotlib."""

from __future__ import annotations

import io
import sys

import pandas as pd
import pytest

pytest.importorskip("matplotlib")

from matplotlib.image import imread  # noqa: E402

from boontrack.analysis import analyze  # noqa: E402
from boontrack.exceptions import InputError  # noqa: E402
from boontrack.plots import figure_png, plot_curves, plot_distributions  # noqa: E402
from boontrack.runtable import RunTable  # noqa: E402
from boontrack.spec import Spec  # noqa: E402


@pytest.fixture(scope="module")
def summary(shared_data):
    frame = pd.read_csv(shared_data / "show-your-work" / "sst5_classifier_full_search.tsv", sep="\t")
    spec = Spec(
        val="best_validation_accuracy",
        group_by=("model.encoder.architecture.type",),
        duration="training_duration",
        n=(1, 5),
        n_resamples=99,
    )
    return analyze(RunTable.from_frame(frame, spec), spec)


def png_shape(data: bytes) -> tuple[int, ...]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return imread(io.BytesIO(data), format="png").shape


@pytest.mark.parametrize("x", ["n", "time"])
def test_curves_png(summary, x):
    figure = plot_curves(summary, x=x)
    ax = figure.axes[0]
    assert ax.get_xscale() == "log"  # 100 runs per group: log budget axis, as in Dodge et al.
    assert "best_validation_accuracy" in ax.get_ylabel()
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [f"{g.label} ({g.runs} runs)" for g in summary.groups]
    data = figure_png(figure)
    height, width, _ = png_shape(data)
    assert 400 <= height <= 1200 and 600 <= width <= 1600
    assert 20_000 < len(data) < 2_000_000


def test_distributions_png(summary):
    figure = plot_distributions(summary)
    ax = figure.axes[0]
    assert len(ax.get_lines()) >= len(summary.groups)
    assert ax.get_ylim() == (0, 1.02)
    height, width, _ = png_shape(figure_png(figure))
    assert 400 <= height <= 1200 and 600 <= width <= 1600


def test_no_pyplot_figures_are_left_behind(summary):
    import matplotlib.pyplot as plt

    before = plt.get_fignums()
    plot_curves(summary)
    plot_distributions(summary)
    assert plt.get_fignums() == before


def test_time_axis_needs_durations():
    frame = pd.DataFrame({"acc": [0.1, 0.2, 0.3, 0.4, 0.5]})
    spec = Spec(val="acc", n=(1, 2), n_resamples=19)
    summary = analyze(RunTable.from_frame(frame, spec), spec)
    with pytest.raises(InputError, match="no run durations for group"):
        plot_curves(summary, x="time")
    with pytest.raises(ValueError, match='`x` must be "n" or "time"'):
        plot_curves(summary, x="epochs")


def test_missing_matplotlib_gives_the_install_hint(summary, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    with pytest.raises(ImportError, match=r'pip install "boontrack\[plots\]"'):
        plot_curves(summary)
