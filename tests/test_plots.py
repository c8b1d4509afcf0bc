"""Plots: PNGs of sane size from real searches, no pyplot state, the install hint without matplotlib."""

from __future__ import annotations

import io
import itertools
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("matplotlib")

from matplotlib.image import imread  # noqa: E402

from boontrack.analysis import analyze  # noqa: E402
from boontrack.exceptions import InputError  # noqa: E402
from boontrack.plots import figure_png, plot_curves, plot_distributions, render_pngs, x_scale  # noqa: E402
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
    with pytest.raises(ImportError, match=r'pip install "\.\[plots\]" in a boontrack checkout'):
        plot_curves(summary)


def _analyze(frame: pd.DataFrame, **spec_options) -> object:
    spec = Spec(n=(1, 5), n_resamples=99, **spec_options)
    return analyze(RunTable.from_frame(frame, spec), spec)


@pytest.fixture(scope="module")
def digits():
    """The docs' digits example: 30 runs per model, no durations."""
    frame = pd.read_csv(Path(__file__).parents[1] / "examples" / "digits_sweep.csv")
    return _analyze(frame, val="val_acc", test="test_acc", group_by=("model",))


@pytest.fixture(scope="module")
def sst5_cnn_lr(shared_data):
    """SST-5, CNN vs LR, 50 runs each, with training durations (the docs' time plot)."""
    frame = pd.read_csv(shared_data / "show-your-work" / "sst5_cnn_lr_search.tsv", sep="\t")
    return _analyze(
        frame,
        val="best_validation_accuracy",
        group_by=("model.encoder.architecture.type",),
        duration="training_duration",
    )


@pytest.fixture(scope="module")
def short_runs():
    """8 runs per group lasting 0.3 to 0.4 s: expected times span 0.3 to 3.2 s, the case that once had
    overlapping minor-tick labels (3x10^-1 4x10^-1) on a log axis."""
    rng = np.random.default_rng(5)
    frame = pd.DataFrame(
        {
            "run_id": [f"r{i}" for i in range(16)],
            "model": ["a"] * 8 + ["b"] * 8,
            "acc": rng.uniform(0.8, 0.9, 16),
            "seconds": rng.uniform(0.3, 0.4, 16),
        }
    )
    return _analyze(frame, val="acc", group_by=("model",), duration="seconds")


@pytest.fixture(scope="module")
def log_likelihood():
    """Negative scores (a validation log-likelihood), 12 runs per group."""
    frame = pd.DataFrame(
        {"run_id": [f"r{i}" for i in range(24)], "model": ["a", "b"] * 12, "ll": -np.linspace(3.0, 0.5, 24)}
    )
    return _analyze(frame, val="ll", group_by=("model",))


def test_x_scale_rule():
    assert x_scale(np.arange(1, 31)) == "linear"  # budgets 1..30: a factor of 30
    assert x_scale(np.arange(1, 32)) == "log"
    assert x_scale([0.3, 9.0]) == "linear" and x_scale([0.3, 9.1]) == "log"
    assert x_scale([]) == "linear" and x_scale([0.0, np.nan, 5.0]) == "linear"


def test_each_curve_plot_follows_the_rule(digits, sst5_cnn_lr, short_runs):
    assert plot_curves(digits).axes[0].get_xscale() == "linear"  # n = 1..30
    assert plot_curves(sst5_cnn_lr).axes[0].get_xscale() == "log"  # n = 1..50
    assert plot_curves(sst5_cnn_lr, x="time").axes[0].get_xscale() == "log"  # 1.5 s to 40 min
    assert plot_curves(short_runs, x="time").axes[0].get_xscale() == "linear"  # 0.3 to 3.2 s


def _tick_labels(figure, axis: str) -> list:
    """The visible, non-empty major and minor tick labels of ``axis`` after drawing."""
    figure.canvas.draw()
    ax = figure.axes[0]
    chosen = ax.xaxis if axis == "x" else ax.yaxis
    low, high = sorted(ax.get_xlim() if axis == "x" else ax.get_ylim())
    ticks = chosen.get_major_ticks() + chosen.get_minor_ticks()
    return [t.label1 for t in ticks if t.label1.get_visible() and t.label1.get_text() and low <= t.get_loc() <= high]


@pytest.mark.parametrize(
    "name, x",
    [
        ("digits", "n"),
        ("sst5_cnn_lr", "n"),
        ("sst5_cnn_lr", "time"),
        ("short_runs", "time"),
        ("short_runs", "n"),
        ("sst5_cnn_lr", None),
        ("log_likelihood", None),
        ("log_likelihood", "n"),
    ],
)
def test_tick_labels_are_plain_numbers_that_do_not_overlap(request, name, x):
    """x None: the distributions plot."""
    summary = request.getfixturevalue(name)
    figure = plot_distributions(summary) if x is None else plot_curves(summary, x=x)
    renderer = figure.canvas.get_renderer()
    for axis in ("x", "y"):
        labels = _tick_labels(figure, axis)
        assert len(labels) >= 3, (axis, [t.get_text() for t in labels])
        for label in labels:
            text = label.get_text().replace(",", "").replace("\N{MINUS SIGN}", "-")
            float(text)  # a number: no 10^k or offset notation
            assert "e" not in text.lower(), text  # nor a scientific one
        boxes = [label.get_window_extent(renderer) for label in labels]
        for a, b in itertools.combinations(boxes, 2):
            assert not a.overlaps(b), (axis, [t.get_text() for t in labels])


def test_render_pngs_draws_the_time_curve_only_when_every_group_has_durations(digits, short_runs):
    assert set(render_pngs(digits)) == {"curves.png", "distributions.png"}
    pngs = render_pngs(short_runs)
    assert set(pngs) == {"curves.png", "curves_time.png", "distributions.png"}
    assert all(data[:8] == b"\x89PNG\r\n\x1a\n" for data in pngs.values())


@pytest.fixture
def runs_csv(tmp_path) -> Path:
    path = tmp_path / "runs.csv"
    pd.DataFrame(
        {
            "run_id": [f"r{i}" for i in range(12)],
            "model": ["a", "b"] * 6,
            "acc": np.linspace(0.5, 0.8, 12),
            "seconds": np.linspace(10, 20, 12),
        }
    ).to_csv(path, index=False)
    return path


def _pngs(directory: Path) -> set[str]:
    return {p.name for p in directory.rglob("*.png")}


def test_summarize_writes_plots_unless_told_not_to(runs_csv, tmp_path):
    from click.testing import CliRunner

    from boontrack import cli

    args = [
        "summarize",
        str(runs_csv),
        "--val",
        "acc",
        "--group-by",
        "model",
        "--duration",
        "seconds",
        "--n",
        "1,2",
        "--resamples",
        "99",
    ]
    default = CliRunner().invoke(cli.main, [*args, "--out", str(tmp_path / "default")])
    assert default.exit_code == 0, default.output
    assert _pngs(tmp_path / "default") == {"curves.png", "curves_time.png", "distributions.png"}
    without = CliRunner().invoke(cli.main, [*args, "--no-plots", "--out", str(tmp_path / "without")])
    assert without.exit_code == 0, without.output
    assert (tmp_path / "without" / "summary.json").is_file() and not _pngs(tmp_path / "without")


def test_a_job_with_plots_false_writes_no_png(runs_csv, tmp_path):
    from boontrack.exceptions import InputError
    from boontrack.reaggregate import load_config, run_jobs

    job = 'source = "runs.csv"\nval = "acc"\ngroup_by = ["model"]\nn = [1, 2]\nn_resamples = 99\n'
    config = tmp_path / "boontrack.toml"
    config.write_text(
        f'[[jobs]]\nname = "with"\nout = "with"\n{job}\n'
        f'[[jobs]]\nname = "without"\nout = "without"\nplots = false\n{job}'
    )
    lines: list[str] = []
    assert run_jobs(load_config(config), log=lines.append) == 0, lines
    assert _pngs(tmp_path / "with") == {"curves.png", "distributions.png"}
    assert (tmp_path / "without" / "summary.json").is_file() and not _pngs(tmp_path / "without")
    config.write_text(f'[[jobs]]\nname = "bad"\nout = "bad"\nplots = "no"\n{job}')
    with pytest.raises(InputError, match="'plots' must be true or false"):
        load_config(config)


def _study(budgets: tuple[int, ...]) -> object:
    from boontrack.simulate import CoverageCell, RunsNeeded, Study

    cells = tuple(
        CoverageCell("normal", 10, n, "percentile", "V", 0.95, 0.0, 0.9, 0.02, 0.5, 200, 499) for n in budgets
    )
    width = RunsNeeded("median width", max(budgets), 0.5, (5, 10, 20), (0.9, 0.6, 0.4), 20)
    power = RunsNeeded("power", max(budgets), 0.8, (5, 10, 20), (0.3, 0.6, 0.85), 20)
    return Study("normal", 10, (), cells, width, power)


@pytest.mark.parametrize("budgets", [(1, 2), (1, 3), (1, 5, 10), (2, 3, 4)])
def test_the_study_s_budget_axis_has_whole_numbers_only(budgets):
    from boontrack.plots import plot_study

    figure = plot_study(_study(budgets))
    coverage_axes = figure.axes[0]
    low, high = coverage_axes.get_xlim()
    shown = [x for x in coverage_axes.get_xticks() if low <= x <= high]
    assert len(shown) >= 2
    assert all(float(x).is_integer() for x in shown), shown


def test_the_study_s_panels_have_titles_of_their_own():
    from boontrack.plots import plot_study

    titles = [ax.get_title() for ax in plot_study(_study((1, 5))).axes]
    assert len(titles) == 3 and len(set(titles)) == 3, titles


def test_with_a_task_column_each_task_has_its_panel_and_each_approach_its_color():
    """Five tasks of two approaches: five visible panels titled by task, each holding both approaches' curves, an
    approach drawn in one color on every panel; the summary read back from JSON draws the same panels."""
    import json

    from boontrack.summary import Summary

    frame = pd.read_csv(Path(__file__).resolve().parents[1] / "examples" / "benchmark_runs.csv")
    spec = Spec(
        val="val_acc", test="test_acc", group_by=("method",), seed_column="seed", task_column="task", n=(1, 5),
        n_resamples=99,
    )  # fmt: skip
    summary = analyze(RunTable.from_frame(frame, spec), spec)
    stored = Summary.from_dict(json.loads(json.dumps(summary.to_dict())))
    for each in (summary, stored):
        figure = plot_curves(each)
        panels = [ax for ax in figure.axes if ax.get_visible()]
        assert [ax.get_title(loc="left") for ax in panels] == [f"task = {t}" for t in sorted(set(frame["task"]))]
        colors = {}
        for ax in panels:
            solid = [line for line in ax.get_lines() if line.get_label() and not line.get_label().startswith("_")]
            assert sorted(line.get_label() for line in solid) == ["baseline (10 runs)", "new (10 runs)"]
            for line in solid:
                colors.setdefault(line.get_label(), line.get_color())
                assert line.get_color() == colors[line.get_label()]
        assert colors["baseline (10 runs)"] != colors["new (10 runs)"]
