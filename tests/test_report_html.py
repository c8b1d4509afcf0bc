"""``report.html``: well-formed, loads nothing from the network, and every number on it is one of
``summary.json`` (the training curves' of ``training_curves.csv``) at the precision the page shows.

The numbers are read back from the page by this file's own parsing and compared with the JSON values, never
through the renderer's formatting helpers.
"""

from __future__ import annotations

import dataclasses
import io
import json
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from collections import Counter
from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest

from boontrack.analysis import analyze
from boontrack.exceptions import FewRunsWarning
from boontrack.reports import render_outputs
from boontrack.runtable import RunTable
from boontrack.spec import Spec
from boontrack.training import training_curves

#: One label with markup in it: the page must show it as text.
MODELS = {"cnn": 0.80, "mlp": 0.76, 'rnn <u>"&</u>': 0.78}
SEEDS = 8
EPOCHS = 6
#: A number as the page writes it: optional minus, digits, optional fraction and exponent.
NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?:e[+-]?\d+)?")


def _sweep() -> tuple[pd.DataFrame, pd.DataFrame]:
    """3 models x 8 seeds (one run failed), and their validation accuracy per epoch (4 runs stop early)."""
    gen = np.random.default_rng(3)
    rows, history = [], []
    for model, level in MODELS.items():
        for seed in range(SEEDS):
            run_id = f"{model}-{seed}"
            val = level + 0.02 * gen.standard_normal()
            rows.append(
                {
                    "run_id": run_id,
                    "params.model": model,
                    "params.seed": str(seed),
                    "metrics.val_acc": val,
                    "metrics.test_acc": val + 0.01 * gen.standard_normal(),
                    "status": "finished",
                }
            )
            epochs = EPOCHS - 3 if model.startswith("rnn") and seed >= 4 else EPOCHS  # 4 runs at the last steps
            history += [
                {"run_id": run_id, "model": model, "step": step, "value": val * (1 - 0.5 / (step + 1))}
                for step in range(epochs)
            ]
    rows.append({**rows[0], "run_id": "cnn-crashed", "params.seed": "99", "status": "failed"})
    return pd.DataFrame(rows), pd.DataFrame(history)


@pytest.fixture(scope="module")
def report():
    """The summary's outputs: (page, summary.json data, training_curves.csv)."""
    frame, history = _sweep()
    spec = Spec(val="val_acc", test="test_acc", group_by=("model",), seed_column="seed", n_resamples=99)
    summary = analyze(RunTable.from_frame(frame, spec), spec, source="a test sweep")
    with pytest.warns(FewRunsWarning, match="'rnn <u>\"&</u>': 3 of 6 steps"):  # drawn dashed, marked on hover
        curves = training_curves(history, group_by="model", n_resamples=99, rng=1)
    outputs = render_outputs(dataclasses.replace(summary, training=(curves,)), plots=False)
    page = outputs.artifacts["report.html"].decode()
    training = pd.read_csv(io.BytesIO(outputs.artifacts["training_curves.csv"]))
    return page, json.loads(outputs.artifacts["summary.json"]), training


class _Page(HTMLParser):
    """The page's visible text (style sheets and axis tick labels apart), its tables, its SVG hover titles and
    every address it refers to."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.text: list[str] = []
        self.ticks: list[str] = []
        self.hovers: list[str] = []
        self.addresses: list[str] = []
        self.tables: list[list[list[str]]] = []
        self._stack: list[tuple[str, dict]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.addresses += [value or "" for name, value in attrs.items() if name in {"src", "href", "xlink:href"}]
        if tag not in {"br", "meta"}:  # the void elements the page uses; SVG's close themselves
            self._stack.append((tag, attrs))
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in {"td", "th"}:
            self._cell = []

    def handle_endtag(self, tag):
        while self._stack and self._stack[-1][0] != tag:
            self._stack.pop()
        if self._stack:
            self._stack.pop()
        if tag in {"td", "th"} and self._cell is not None:
            self.tables[-1][-1].append(" ".join(self._cell).strip())
            self._cell = None

    def handle_data(self, data):
        tags = [tag for tag, _ in self._stack]
        if "style" in tags:
            return
        if tags and tags[-1] == "text" and self._stack[-1][1].get("class") == "tick":
            self.ticks.append(data)
            return
        if tags[-2:] == ["circle", "title"]:
            self.hovers.append(data)
        if self._cell is not None:
            self._cell.append(data)
        self.text.append(data)


def _parsed(page: str) -> _Page:
    parser = _Page()
    parser.feed(page)
    parser.close()
    return parser


def _leaves(data, strings: list[str], numbers: list[float]) -> None:
    """Every string and number of the JSON data, lists' lengths counted as numbers."""
    if isinstance(data, dict):
        for value in data.values():
            _leaves(value, strings, numbers)
    elif isinstance(data, list):
        numbers.append(len(data))
        for value in data:
            _leaves(value, strings, numbers)
    elif isinstance(data, str):
        strings.append(data)
    elif isinstance(data, (int, float)) and not isinstance(data, bool):
        numbers.append(float(data))


def _tolerance(token: str) -> float:
    """Half a unit of the token's last digit: how far the value it shows may be."""
    mantissa, _, exponent = token.lower().partition("e")
    places = len(mantissa.partition(".")[2])
    return 0.5 * 10.0 ** (int(exponent or 0) - places) * (1 + 1e-9)


def _shows(token: str, value: float) -> bool:
    return abs(float(token) - value) <= _tolerance(token)


def test_the_page_and_its_svgs_are_well_formed(report):
    page, data, _ = report
    parsed = _parsed(page)
    assert page.startswith("<!DOCTYPE html>")
    assert "<u>" not in page and "rnn &lt;u&gt;&quot;&amp;&lt;/u&gt;" in page  # the label as text, nowhere as markup
    svgs = re.findall(r"<svg\b.*?</svg>", page, flags=re.S)
    assert len(svgs) == 2  # the expected-best curve and one training metric
    for svg in svgs:
        root = ET.fromstring(svg)
        assert root.tag == "{http://www.w3.org/2000/svg}svg"
        assert root.find("{http://www.w3.org/2000/svg}polygon") is not None  # the bands, shaded
    points = sum(len(g["curve"]["n"]) for g in data["groups"].values())
    assert len(parsed.hovers) == points + len(report[2])  # every plotted point has its values on hover


def test_the_page_loads_nothing(report):
    page, _, _ = report
    parsed = _parsed(page)
    assert parsed.addresses == []  # no src or href at all: nothing to fetch, remote or local
    lowered = page.lower()
    assert "@import" not in lowered and "url(" not in lowered and "<script" not in lowered
    assert "http://" not in lowered.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert "https://" not in lowered and "//" not in lowered.replace('"http://www.w3.org/2000/svg"', "")


def test_every_number_on_the_page_is_one_of_summary_json(report):
    page, data, training = report
    parsed = _parsed(page)
    strings, numbers = [], []
    _leaves(data, strings, numbers)
    numbers += training.select_dtypes("number").to_numpy().ravel().tolist()
    numbers += Counter(d["reason"] for d in data["dropped"]).values()
    known = [*numbers, *(100 * v for v in numbers), *(1 / v for v in numbers if v > 0)]
    text = " ".join(parsed.text)
    for string in sorted((s for s in strings if re.search(r"\d", s)), key=len, reverse=True):
        text = text.replace(string, " ")  # run ids, reasons, warnings, versions: checked as text, not numbers
    budgets = {int(n) for g in data["groups"].values() for n in g["boo_n"]}
    assert {int(n) for n in re.findall(r"Boo_(\d+)", text)} <= budgets
    text = re.sub(r"Boo_\d+", " ", text).replace("n > m/2", " ").replace("1 in ", " ")
    tokens = NUMBER.findall(text)
    assert len(tokens) > 300
    unknown = [t for t in tokens if not any(_shows(t, v) for v in known)]
    assert unknown == []


def test_the_tables_show_each_group_s_boo_n_and_each_comparison_at_its_place(report):
    page, data, _ = report
    boo_table, *rest = _parsed(page).tables
    header, *rows = boo_table
    assert [row[0] for row in rows] == list(data["groups"])
    for row in rows:
        group = data["groups"][row[0]]
        assert int(row[1]) == group["runs"] and int(row[2]) == len(group["dropped"])
        for name, cell in zip(header, row):
            if not name.startswith("Boo_"):
                continue
            interval = group["boo_n"][name[4:]]
            shown = NUMBER.findall(cell)
            assert len(shown) == 3
            assert all(_shows(t, interval[k]) for t, k in zip(shown, ("estimate", "ci_low", "ci_high")))
            assert ("⚠" in cell) == bool(group["doubts"][name[4:]])
    comparisons = next(table for table in rest if table[0][:2] == ["group", "vs"])
    for row, stored in zip(comparisons[1:], data["comparisons"]):
        assert row[:2] == [stored["group"], stored["baseline"]]
        shown = NUMBER.findall(row[comparisons[0].index("Δmean")])
        difference = stored["mean_difference"]
        assert all(_shows(t, difference[k]) for t, k in zip(shown, ("estimate", "ci_low", "ci_high")))
        assert _shows(row[-1], stored["prob_superiority"])


def test_each_hover_gives_its_point_s_values(report):
    page, data, training = report
    parsed = _parsed(page)
    curve_hovers = [h for h in parsed.hovers if ", expected best " in h]
    expected = [
        (label, n, est, low, high)
        for label, g in data["groups"].items()
        for n, est, low, high in zip(*(g["curve"][k] for k in ("n", "estimate", "ci_low", "ci_high")))
    ]
    assert len(curve_hovers) == len(expected)
    for hover, (label, n, *values) in zip(curve_hovers, expected):
        assert hover.startswith(f"{label}: n = {n},")
        shown = NUMBER.findall(hover.split("expected best")[1])
        assert all(_shows(t, v) for t, v in zip(shown, values)) and len(shown) >= 3
    step_hovers = [h for h in parsed.hovers if ": step " in h]
    assert len(step_hovers) == len(training)
    for hover, row in zip(step_hovers, training.itertuples()):
        assert hover.startswith(f"{row.group}: step {row.step},")
        shown = NUMBER.findall(hover.split(", mean ")[1])
        assert all(_shows(t, v) for t, v in zip(shown, (row.mean, row.ci_low, row.ci_high, row.runs)))
        assert ("few runs" in hover) == (not row.enough_runs)


def test_axis_ticks_lie_within_the_plotted_values(report):
    page, data, training = report
    ticks = [float(t) for t in _parsed(page).ticks]
    values = [v for g in data["groups"].values() for k in ("estimate", "ci_low", "ci_high", "n") for v in g["curve"][k]]
    values += training[["step", "ci_low", "ci_high"]].to_numpy().ravel().tolist()
    low, high = np.nanmin(values), np.nanmax(values)
    spread = high - low
    assert all(low - 0.1 * spread <= t <= high + 0.1 * spread for t in ticks)


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("chromium") is None, reason="chromium is not installed")
def test_chromium_renders_the_page_without_a_network(report, tmp_path):
    page, _, _ = report
    path = tmp_path / "report.html"
    path.write_text(page, encoding="utf-8")
    shot = tmp_path / "report.png"
    command = ["chromium", "--headless", "--disable-gpu", "--no-sandbox", f"--screenshot={shot}"]
    command += ["--window-size=1100,1400", "--proxy-server=127.0.0.1:9", f"file://{path}"]
    subprocess.run(command, check=True, capture_output=True, timeout=120)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_diagnostics_gaussian_cells_and_the_method_are_those_of_summary_json(report):
    page, data, _ = report
    parsed = _parsed(page)
    boo_table, *rest = parsed.tables
    for row in boo_table[1:]:
        gaussian = data["groups"][row[0]]["gaussian"]
        for name, cell in zip(boo_table[0], row):
            if name.startswith("Gaussian Boo_"):
                budget = name.removeprefix("Gaussian Boo_")
                assert (
                    cell == "unreliable"
                    if budget in gaussian["unreliable"]
                    else _shows(cell, gaussian["boo_n"][budget])
                )
    header, *rows = next(table for table in rest if "Anderson-Darling" in table[0])
    keys = ["mean", "sd", "median", "iqr", "min", "max", "spearman_val_test", "normality_statistic"]
    keys += ["normality_critical_5pct", "ties"]
    assert len(header) == 1 + len(keys)
    for row in rows:
        diagnostics = data["groups"][row[0]]["diagnostics"]
        assert all(_shows(cell, diagnostics[key]) for cell, key in zip(row[1:], keys))
    spec = data["spec"]
    method = " ".join(parsed.text).split("How the numbers were computed")[1]
    expected = [f"resamples {spec['n_resamples']}", f"seed {spec['seed']}", f"estimator {spec['estimator']}"]
    expected.append(f"confidence level {100 * spec['confidence_level']:g} %")
    expected.append(spec["ci_method"])
    squeezed = " ".join(method.split())
    assert all(item in squeezed for item in expected)
