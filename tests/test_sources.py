"""Comparing sources (``compare_sources``, ``boontrack compare``) and its gate.

The oracle is the comparison within one source: runs split into two files and compared across them must give
the numbers of the joined runs summarized with the label column as the group. A copy of a sweep shifted by a
known amount must differ from it by exactly that amount.
"""

from __future__ import annotations

import errno
import math
import os
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from boontrack import cli
from boontrack.analysis import analyze
from boontrack.exceptions import BackendError, InputError
from boontrack.runtable import RunTable
from boontrack.sources import SIDE_COLUMN, compare_sources, load_comparison, to_markdown
from boontrack.spec import Spec

DIGITS = Path(__file__).resolve().parents[1] / "examples" / "digits_sweep.csv"
FAST = {"n": (1, 5, 10), "n_resamples": 99}
SHIFT = 0.25


@pytest.fixture(scope="module")
def digits() -> pd.DataFrame:
    return pd.read_csv(DIGITS)


def _by_model(runs: pd.DataFrame, directory: Path) -> tuple[Path, Path]:
    """The demo's two models as two files, named by the model."""
    paths = []
    for model in ("logistic-regression", "mlp"):
        path = directory / f"{model}.csv"
        runs[runs["model"] == model].to_csv(path, index=False)
        paths.append(path)
    return paths[0], paths[1]


@pytest.fixture
def split(digits, tmp_path) -> tuple[Path, Path]:
    return _by_model(digits, tmp_path)


@pytest.fixture
def shifted(digits, tmp_path) -> tuple[Path, Path]:
    """The logistic regression's runs, and a copy with every score SHIFT higher (the same run ids)."""
    runs = digits[digits["model"] == "logistic-regression"]
    base, better = tmp_path / "main.csv", tmp_path / "branch.csv"
    runs.to_csv(base, index=False)
    runs.assign(val_acc=runs["val_acc"] + SHIFT, test_acc=runs["test_acc"] + SHIFT).to_csv(better, index=False)
    return base, better


def _summarized(frame: pd.DataFrame, **options) -> object:
    spec = Spec(val="val_acc", test="test_acc", **FAST, **options)
    return analyze(RunTable.from_frame(frame, spec), spec)


def _numbers(summary) -> dict:
    """Every number of a summary's groups and comparisons (the curves' arrays as lists)."""
    data = summary.to_dict()
    return {"groups": data["groups"], "comparisons": data["comparisons"]}


@pytest.mark.parametrize("seed_column", ["seed", None])
def test_two_files_give_the_numbers_of_the_joined_file_summarized_by_group(digits, split, seed_column):
    result = compare_sources(split, val="val_acc", test="test_acc", seed_column=seed_column, **FAST)
    joined = digits.rename(columns={"model": SIDE_COLUMN})
    oracle = _summarized(joined, group_by=SIDE_COLUMN, seed_column=seed_column, baseline="logistic-regression")
    assert result.labels == ("logistic-regression", "mlp")
    assert _numbers(result.summary) == _numbers(oracle)
    assert result.comparisons[0].paired == (seed_column is not None)
    assert result.gate is None


def test_groups_within_the_sources_are_matched_by_label_and_corrected_together(digits, tmp_path):
    # the first 15 seeds of each model are "main", the others "pr": two groups in each source, unpaired
    side = digits["seed"].map(lambda seed: "main" if seed < 15 else "pr")
    for name in ("main", "pr"):
        digits[side == name].to_csv(tmp_path / f"{name}.csv", index=False)
    sources = [tmp_path / "main.csv", tmp_path / "pr.csv"]
    result = compare_sources(sources, val="val_acc", test="test_acc", group_by="model", **FAST)
    oracle = _summarized(digits.assign(**{SIDE_COLUMN: side}), group_by=("model", SIDE_COLUMN), compare="all-pairs")
    assert _numbers(result.summary)["groups"] == _numbers(oracle)["groups"]
    assert [(c.group, c.baseline) for c in result.comparisons] == [
        ("model=logistic-regression,source=pr", "model=logistic-regression,source=main"),
        ("model=mlp,source=pr", "model=mlp,source=main"),
    ]
    # all pairs of the four groups, sorted by (model, source): each pr group minus its main group among them
    matched = {(c.group, c.baseline): c for c in oracle.comparisons}
    raw = []
    for c in result.comparisons:
        same = matched[c.group, c.baseline]
        assert c.boo_n_difference == same.boo_n_difference and c.mean_difference == same.mean_difference
        assert c.welch.pvalue == same.welch.pvalue
        raw.append(c.welch.pvalue)
    # Holm over these two comparisons alone: the smaller p doubled, the larger kept (each at most 1), monotone
    low, high = sorted(raw)
    expected = {low: min(1.0, 2 * low), high: min(1.0, max(2 * low, high))}
    assert [c.welch.pvalue_adjusted for c in result.comparisons] == pytest.approx([expected[p] for p in raw])


def test_a_shifted_copy_differs_by_the_shift_and_passes_the_gate(shifted):
    result = compare_sources(shifted, val="val_acc", test="test_acc", require="better", **FAST)
    assert result.labels == ("main", "branch")
    comparison = result.comparisons[0]
    assert not comparison.paired  # no seed column: compared as independent samples
    for difference in (*comparison.boo_n_difference.values(), comparison.mean_difference):
        assert difference.estimate == pytest.approx(SHIFT, abs=1e-12)
    gate = result.gate
    assert gate.passed and gate.quantity == "ΔBoo_10" and gate.end == "low" and gate.threshold == 0
    assert gate.metric == "test_acc"
    assert gate.bound == comparison.boo_n_difference[10].ci_low > 0
    assert gate.verdict.startswith("passed: branch better than main in test_acc (higher is better)")


def test_the_gate_follows_the_metrics_direction(shifted):
    # lower is better: the copy shifted up is worse, and the original better than the copy
    options = {"val": "val_acc", "test": "test_acc", "maximize": False, **FAST}
    worse = compare_sources(shifted, require="better", **options).gate
    assert not worse.passed and worse.end == "high" and worse.bound > 0
    assert worse.verdict.startswith("not supported: branch better than main in test_acc (lower is better)")
    better = compare_sources(shifted[::-1], labels=["branch", "main"], require="better", **options).gate
    assert better.passed and better.bound < 0


def test_not_worse_within_a_margin(shifted):
    # main is SHIFT below branch: not worse by more than 2 SHIFT, but worse by more than SHIFT / 2
    reverse = shifted[::-1]
    options = {"val": "val_acc", "test": "test_acc", "require": "not-worse", **FAST}
    assert compare_sources(reverse, margin=2 * SHIFT, **options).gate.passed
    gate = compare_sources(reverse, margin=SHIFT / 2, **options).gate
    assert not gate.passed and gate.threshold == -SHIFT / 2 and gate.bound <= -SHIFT / 2


def invoke(*args: str, **env: str):
    return CliRunner().invoke(cli.main, [str(arg) for arg in args], env=env or None)


def test_the_exit_status_is_the_verdict(shifted):
    base, better = shifted
    common = ("--val", "val_acc", "--test", "test_acc", "--n", "1,5,10", "--resamples", "99", "--require", "better")
    passed = invoke("compare", base, better, *common)
    assert passed.exit_code == 0, passed.output
    assert "passed: branch better than main" in passed.output
    failed = invoke("compare", better, base, *common)
    assert failed.exit_code == 3, failed.output
    assert "not supported: main better than branch" in failed.output


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (("--label", "only-one"), "one label per source (2), got 1"),
        (("--source-option", "3:parent=x"), "there is no source 3 (of 2)"),
        (("--source-option", "parent=x"), "expected N:KEY=VALUE"),
        (("--require", "not-worse"), "--margin must be > 0 with --require not-worse"),
        (("--margin", "0.1"), "--margin is for --require not-worse only"),
        (("--label", "a", "--label", "a"), "--label must be distinct"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(shifted, extra, message):
    result = invoke("compare", *shifted, "--val", "val_acc", *extra)
    assert result.exit_code == 2
    assert message in result.output and result.output.count("\n") == 1


def test_one_source_or_a_loss_without_direction_is_refused(shifted, tmp_path):
    assert invoke("compare", shifted[0], "--val", "val_acc").exit_code == 2
    losses = [tmp_path / "a.csv", tmp_path / "b.csv"]
    for path in losses:
        pd.DataFrame({"val_loss": [0.1, 0.2, 0.3]}).to_csv(path, index=False)
    refused = invoke("compare", *losses, "--val", "val_loss")
    assert refused.exit_code == 2 and "add --minimize" in refused.output


def test_markdown_and_the_github_step_summary(shifted, tmp_path, monkeypatch):
    step_summary = tmp_path / "step_summary.md"
    step_summary.write_text("earlier step\n", encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step_summary))
    common = ("--val", "val_acc", "--test", "test_acc", "--n", "1,5,10", "--resamples", "99", "--require", "better")
    result = invoke("compare", *shifted, *common, "--format", "markdown")
    assert result.exit_code == 0, result.output
    markdown = result.stdout
    assert markdown.startswith("# boontrack compare: test_acc\n")
    assert "✅ passed: branch better than main" in markdown
    assert "| group | runs | Boo_1 | Boo_5 | Boo_10 | mean |" in markdown
    assert "| branch | main | no |" in markdown  # the comparison's row: branch vs main, unpaired
    assert step_summary.read_text(encoding="utf-8") == "earlier step\n" + markdown


def _unwritable_step_summary(case: str, tmp_path: Path, monkeypatch) -> tuple[Path, str]:
    """A GITHUB_STEP_SUMMARY that cannot be written, and the reason the warning must give."""
    if case == "a directory":
        return tmp_path, os.strerror(errno.EISDIR)
    if case == "a missing folder":
        return tmp_path / "missing" / "summary.md", os.strerror(errno.ENOENT)
    if case == "a full disk":
        if not os.path.exists("/dev/full"):
            pytest.skip("no /dev/full on this system to stand for a full disk")
        return Path("/dev/full"), os.strerror(errno.ENOSPC)
    path = tmp_path / "summary.md"
    if case == "a read-only disk":  # root writes to read-only files: the file system's own refusal, simulated
        opened = os.open

        def read_only(file, flags, *args, **kwargs):
            if os.fspath(file) == str(path) and flags & (os.O_WRONLY | os.O_RDWR):
                raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(file))
            return opened(file, flags, *args, **kwargs)

        monkeypatch.setattr(os, "open", read_only)
        return path, os.strerror(errno.EROFS)
    if case == "a dangling symbolic link":
        path.symlink_to(tmp_path / "gone.md")
        return path, "a symbolic link to a file that does not exist"
    assert case == "a symbolic link loop"
    path.symlink_to(tmp_path / "other.md")
    (tmp_path / "other.md").symlink_to(path)
    return path, os.strerror(errno.ELOOP)


@pytest.mark.parametrize(
    "case",
    [
        "a directory",
        "a missing folder",
        "a full disk",
        "a read-only disk",
        "a dangling symbolic link",
        "a symbolic link loop",
    ],
)
def test_an_unwritable_step_summary_is_one_warning_and_the_gate_keeps_its_verdict(shifted, tmp_path, case, monkeypatch):
    base, better = shifted
    job = tmp_path / "job"
    job.mkdir()
    step_summary, reason = _unwritable_step_summary(case, job, monkeypatch)
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step_summary))
    before = sorted(path.name for path in job.iterdir())
    common = ("--val", "val_acc", "--test", "test_acc", "--resamples", "99", "--require", "better")
    for sources, status, verdict in (((base, better), 0, "passed: "), ((better, base), 3, "not supported: ")):
        result = invoke("compare", *sources, *common)
        assert result.exit_code == status, result.output
        assert result.stdout.splitlines()[-1].startswith(verdict)
        warning = f"Warning: GITHUB_STEP_SUMMARY: cannot append the report to {step_summary}: {reason}\n"
        assert result.stderr == warning
    assert sorted(path.name for path in job.iterdir()) == before  # nothing created, not even a link's target


def _text_curves(markdown: str) -> tuple[list[int], dict[str, str]]:
    """The budgets and each group's row of the curves drawn as text in a comparison's Markdown."""
    block = markdown.split("<details>")[1].split("</details>")[0]
    budgets = re.search(r"One character per budget n = ([\d, ]+), on one scale", block).group(1)
    rows = dict(re.findall(r"^\| (\S+) \| `(\S+)` \|$", block, flags=re.MULTILINE))
    return [int(n) for n in budgets.split(", ")], rows


def test_the_markdown_draws_each_sides_curve_as_text_on_one_scale(shifted):
    result = compare_sources(shifted, val="val_acc", test="test_acc", **FAST)
    markdown = to_markdown(result)
    budgets, rows = _text_curves(markdown)
    runs = pd.read_csv(shifted[0])
    assert budgets[0] == 1 and budgets[-1] == len(runs) and budgets == sorted(set(budgets))
    assert set(rows) == {"main", "branch"} and all(len(row) == len(budgets) for row in rows.values())
    # a dot where n is above half a side's runs (doubtful); elsewhere, on one scale from the lowest value (main's
    # mean) to the highest: the copy SHIFT higher is at the top throughout, main at the bottom (its curve spans
    # far less than SHIFT)
    doubtful = [n > len(runs) / 2 for n in budgets]
    assert [c == "·" for c in rows["main"]] == doubtful and [c == "·" for c in rows["branch"]] == doubtful
    assert set(rows["main"]) == {"▁", "·"} and set(rows["branch"]) == {"█", "·"}
    assert f"▁ {runs['test_acc'].mean():.4g} to █ " in markdown
    assert "![" not in markdown  # no image: a comment or a job's summary page would not show it


def test_the_markdown_of_a_written_comparison_links_each_metrics_plot(shifted):
    import xml.etree.ElementTree as ElementTree

    from boontrack.sources import curve_files

    result = compare_sources(shifted, val="val_acc", test=["test_acc", "val_acc"], **FAST)
    markdown = to_markdown(result, svg=True)
    files = curve_files(result)
    assert list(files) == ["curves_test_acc.svg", "curves_val_acc.svg"]
    for name, content in files.items():
        assert f"pointwise bootstrap band]({name})" in markdown
        plot = ElementTree.fromstring(content)  # a well-formed SVG document of its own size and style
        assert plot.tag == "{http://www.w3.org/2000/svg}svg" and plot.get("width") and plot.get("height")
        legend = [text.text for text in plot.iter("{http://www.w3.org/2000/svg}text")]
        assert "main" in legend and "branch" in legend
    assert markdown.count("<details>") == 2  # and each metric's curves as text


def test_markdown_without_a_gate_has_no_verdict(split):
    result = compare_sources(split, val="val_acc", test="test_acc", seed_column="seed", **FAST)
    markdown = to_markdown(result)
    assert "passed" not in markdown and "| mlp | logistic-regression | yes |" in markdown


@pytest.mark.parametrize(
    ("arguments", "name"),
    [
        ({"sources": ["one.csv"]}, "sources"),
        ({"labels": ["a"]}, "labels"),
        ({"labels": ["a,b", "c"]}, "labels"),
        ({"options": [{}]}, "options"),
        ({"require": "best"}, "require"),
        ({"require": "better", "margin": math.nan}, "margin"),
        ({"baseline": "a"}, "baseline"),
        ({"n_resamples": 0}, "n_resamples"),
    ],
)
def test_bad_arguments_raise_before_any_source_is_read(arguments, name):
    # the sources do not exist: a ValueError naming the argument shows nothing was read
    call = {"sources": ["missing-a.csv", "missing-b.csv"], "val": "val_acc", **arguments}
    with pytest.raises(InputError, match=name):
        compare_sources(call.pop("sources"), **call)


def test_groups_missing_from_a_source_are_refused(digits, tmp_path):
    digits.to_csv(tmp_path / "both.csv", index=False)
    digits[digits["model"] == "mlp"].to_csv(tmp_path / "mlp.csv", index=False)
    with pytest.raises(InputError, match="group model=logistic-regression is in both but not in mlp"):
        compare_sources([tmp_path / "both.csv", tmp_path / "mlp.csv"], val="val_acc", group_by="model", **FAST)


def test_compare_takes_the_options_of_summarize_under_the_same_flags():
    shown = invoke("compare", "--help").output
    for flag in ("--val", "--test", "--n", "--group-by", "--seed-column", "--resamples", "--confidence", "--minimize"):
        assert flag in shown
    assert "compared as pairs" in " ".join(shown.split())
    assert "default grouping: all other params" in " ".join(invoke("summarize", "--help").output.split())


class _FailingSource:
    """A source that opens but fails while its runs are read: after the input was accepted."""

    def __init__(self, error: Exception) -> None:
        self.error = error

    def describe(self) -> str:
        return "failing"

    def direction(self, metric: str) -> None:
        return None

    def read(self, request) -> pd.DataFrame:
        raise self.error


@pytest.mark.parametrize(
    ("error", "shown"),
    [
        (BackendError("tracker at https://example.org did not answer within 5 s"), "Error: tracker at https://"),
        (RuntimeError("connection reset mid-read"), "Error: unexpected RuntimeError: connection reset mid-read"),
    ],
)
def test_a_source_failing_while_read_exits_1(shifted, monkeypatch, error, shown):
    from boontrack import backends

    opened = backends.open_source
    monkeypatch.setattr(
        "boontrack.backends.open_source",
        lambda spec, **options: _FailingSource(error) if spec.startswith("tracker:") else opened(spec, **options),
    )
    result = invoke("compare", shifted[0], "tracker:sweep", "--val", "val_acc", "--require", "better")
    assert result.exit_code == 1, result.output
    assert result.stdout == "" and result.stderr.startswith(shown) and result.stderr.count("\n") == 1


@pytest.fixture
def two_metrics(digits, tmp_path) -> tuple[Path, Path]:
    """The demo's two models as two files, with a second test metric: test_acc plus noise of a fixed seed."""
    noise = np.random.default_rng(7).normal(0.0, 0.01, len(digits))
    return _by_model(digits.assign(test_noisy=digits["test_acc"] + noise), tmp_path)


@pytest.mark.parametrize("correction", ["holm", "bh"])
def test_several_metrics_are_each_one_comparison_with_p_values_adjusted_over_all(two_metrics, correction):
    options = {"val": "val_acc", "seed_column": "seed", "correction": correction, **FAST}
    both = compare_sources(two_metrics, test=["test_acc", "test_noisy"], **options)
    alone = [compare_sources(two_metrics, test=test, **options) for test in ("test_acc", "test_noisy")]
    assert both.metrics == ("test_acc", "test_noisy")
    raw = []
    for joint, single in zip(both.summaries, alone):
        # the numbers of each metric compared alone, but for the adjusted p-values
        assert _numbers(joint)["groups"] == _numbers(single.summary)["groups"]
        (c,), (s,) = joint.comparisons, single.summary.comparisons
        assert c.boo_n_difference == s.boo_n_difference and c.mean_difference == s.mean_difference
        assert c.paired and c.paired_t.pvalue == s.paired_t.pvalue and c.wilcoxon.pvalue == s.wilcoxon.pvalue
        assert s.paired_t.pvalue_adjusted == s.paired_t.pvalue  # one comparison alone: nothing to adjust
        raw.append((c.paired_t.pvalue, c.paired_t.pvalue_adjusted))
    # two p-values, low <= high: Holm doubles the low one and keeps the high one above it; BH keeps the high one
    # and takes the low one to at most twice itself
    (low, low_adjusted), (high, high_adjusted) = sorted(raw)
    if correction == "holm":
        expected = (min(1.0, 2 * low), min(1.0, max(2 * low, high)))
    else:
        expected = (min(2 * low, high), high)
    assert (low_adjusted, high_adjusted) == pytest.approx(expected, rel=1e-12)
    with pytest.raises(ValueError, match="2 metrics were compared"):
        _ = both.summary


@pytest.fixture
def shifted_one_metric(shifted) -> tuple[Path, Path]:
    """The shifted files with a second test metric equal on both sides: better in test_acc, not in test_same."""
    for path in shifted:
        runs = pd.read_csv(path)
        runs.assign(test_same=pd.read_csv(shifted[0])["test_acc"]).to_csv(path, index=False)
    return shifted


def test_the_gate_says_which_metric_decided(shifted_one_metric):
    options = {"val": "val_acc", "require": "better", **FAST}
    gate = compare_sources(shifted_one_metric, test=["test_acc", "test_same"], **options).gate
    assert not gate.passed and gate.metric == "test_same" and gate.bound < 0
    assert gate.verdict.startswith("not supported: branch better than main in test_same (higher is better)")
    assert compare_sources(shifted_one_metric, test=["test_acc"], **options).gate.passed


def test_several_metrics_on_the_command_line(shifted_one_metric):
    common = ("--val", "val_acc", "--n", "1,5,10", "--resamples", "99", "--require", "better")
    result = invoke("compare", *shifted_one_metric, *common, "--test", "test_acc", "--test", "test_same")
    assert result.exit_code == 3, result.output
    assert result.stdout.startswith("test_acc: ") and "\n\ntest_same: " in result.stdout
    assert "p adj. (holm): over the 2 comparisons of the 2 metrics together" in result.stdout
    assert result.stdout.endswith("\n") and "\nnot supported: branch better than main in test_same" in result.stdout
    markdown = invoke(
        "compare", *shifted_one_metric, *common, "--test", "test_acc", "--test", "test_same", "--format", "markdown"
    )
    assert markdown.stdout.startswith("# boontrack compare: test_acc, test_same\n")
    assert markdown.stdout.count("## Metric: ") == 2
    assert markdown.stdout.count("adjusted by Holm over the 2 comparisons of the 2 metrics") == 2


@pytest.mark.parametrize(
    ("metrics", "message"),
    [
        ({"val": ["a", "b"], "test": "x"}, "several `val` need one `test` each"),
        ({"val": ["a", "b"], "test": ["x", "y", "z"]}, "give one `test` per `val` (2)"),
        ({"val": "a", "test": []}, "`test` must name one or more metrics"),
        ({"val": "a", "test": ["x", "x"]}, "the metrics compared must be distinct"),
    ],
)
def test_bad_metrics_are_refused_before_any_source_is_read(metrics, message):
    with pytest.raises(InputError, match=re.escape(message)):
        compare_sources(["missing-a.csv", "missing-b.csv"], **metrics)


def test_several_val_without_test_on_the_command_line_are_each_a_metric(shifted):
    result = invoke("compare", *shifted, "--val", "val_acc", "--val", "test_acc", "--n", "1,5", "--resamples", "99")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("val_acc: ") and "\n\ntest_acc: " in result.stdout
    refused = invoke("compare", *shifted, "--val", "val_acc", "--val", "test_acc", "--test", "test_acc")
    assert refused.exit_code == 2 and "several --val need one --test each" in refused.stderr


def _config(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


COMMAND_LINE = (
    *("--label", "before", "--label", "after", "--val", "val_acc", "--test", "test_acc", "--test", "test_same"),
    *("--n", "1,5,10", "--resamples", "99", "--require", "not-worse", "--margin", "0.01"),
)
CONFIG = """\
sources = ["main.csv", "branch.csv"]   # relative to this file
labels = ["before", "after"]
val = "val_acc"
test = ["test_acc", "test_same"]
n = [1, 5, 10]
n_resamples = 99
require = "not-worse"
margin = 0.01
"""


def test_a_config_file_gives_what_the_command_line_gives(shifted_one_metric, tmp_path, monkeypatch):
    config = _config(tmp_path / "compare.toml", CONFIG)
    monkeypatch.chdir(tmp_path.parent)  # the sources are found beside the file, not in the working directory
    from_file = invoke("compare", "--config", config)
    typed = invoke("compare", *shifted_one_metric, *COMMAND_LINE)
    assert from_file.exit_code == typed.exit_code == 0, from_file.output
    assert from_file.stdout == typed.stdout and "passed: after not worse by more than 0.01 than before" in typed.stdout
    markdown = invoke("compare", "--config", config, "--format", "markdown", "--threads", "1")
    assert markdown.stdout == invoke("compare", *shifted_one_metric, *COMMAND_LINE, "--format", "markdown").stdout
    # in Python: the file's keywords
    result = compare_sources(**load_comparison(config))
    assert result.labels == ("before", "after") and result.gate.passed and result.metrics == ("test_acc", "test_same")


def test_per_source_options_in_a_config_file_reach_each_backend(shifted, tmp_path, monkeypatch):
    from boontrack import backends

    seen = []
    opened = backends.open_source

    def record(spec, **options):
        seen.append(options)
        return opened(spec)

    monkeypatch.setattr("boontrack.backends.open_source", record)
    options = 'options = [{parent = "abc", tracking_uri = "sqlite:///m.db"}, {project-key = "x"}]\n'
    config = _config(tmp_path / "compare.toml", CONFIG.replace(', "test_same"', "") + options)
    assert invoke("compare", "--config", config).exit_code == 0
    # the SQLite path relative to the config file, as every path in it (compare.toml's directory: tmp_path)
    assert seen == [{"parent": "abc", "tracking_uri": f"sqlite:///{tmp_path / 'm.db'}"}, {"project_key": "x"}]


@pytest.mark.parametrize(
    ("change", "extra", "message"),
    [
        (("", ""), ("main.csv",), "give the comparison with --config or on the command line, not both: SOURCE"),
        (("", ""), ("--val", "x"), "not both: --val"),
        (("margin = 0.01", "margin = -1"), (), "`margin` must be a finite number >= 0, got -1"),
        (("n_resamples = 99", "n_resamples = 0"), (), "`n_resamples` must be"),
        (("n_resamples", "bootstrap_resamples"), (), "unknown key 'bootstrap_resamples'"),
        (('sources = ["main.csv", "branch.csv"]', 'sources = "main.csv"'), (), "'sources' must be a list"),
        (("labels", "options"), (), "'options' must be a list of tables"),
    ],
)
def test_a_bad_config_or_a_clash_is_one_line_and_exit_2(shifted, tmp_path, change, extra, message):
    config = _config(tmp_path / "compare.toml", CONFIG.replace(', "test_same"', "").replace(*change))
    result = invoke("compare", "--config", config, *extra)
    assert result.exit_code == 2, result.output
    assert result.stdout == "" and message in result.stderr and result.stderr.count("\n") == 1


@pytest.mark.parametrize("destination", ["comparisons", "results.csv", "nowhere:comparisons", "optuna:sqlite:///s.db"])
def test_a_destination_that_is_no_tracker_is_refused_before_any_run_is_read(shifted, destination):
    result = invoke("compare", *shifted, "--val", "val_acc", "--write-to", destination)
    assert result.exit_code == 2 and result.stdout == ""
    assert "--write-to" in result.stderr and "expected SCHEME:LOCATION of a tracker that holds" in result.stderr


@pytest.mark.parametrize(
    ("lines", "extra", "message"),
    [
        ('write_to = "results.csv"', (), "`write_to`: expected SCHEME:LOCATION of a tracker that holds summaries"),
        ('write_to = "optuna:sqlite:///s.db"', (), "`write_to`: expected SCHEME:LOCATION of a tracker"),
        ("write_to = 3", (), "`write_to`: expected SCHEME:LOCATION of a tracker"),
        ('write_options = {tracking_uri = "sqlite:///m.db"}', (), "`write_options` need `write_to`: where to write"),
        ('write_to = "mlflow:x"\nwrite_options = "sqlite:///m.db"', (), "`write_options` must map option names"),
        ('write_to = "mlflow:x"', ("--write-to", "mlflow:y"), "give `write_to` in the config file or --write-to on"),
        ('write_options = {a = "b"}', ("--write-option", "a=b"), "give `write_options` in the config file or"),
    ],
)
def test_a_bad_destination_in_a_config_file_is_one_line_and_exit_2_before_any_run_is_read(
    tmp_path, lines, extra, message
):
    # the sources do not exist: any read would fail with another message
    config = _config(tmp_path / "compare.toml", CONFIG.replace(', "test_same"', "") + lines + "\n")
    result = invoke("compare", "--config", config, *extra)
    assert result.exit_code == 2, result.output
    assert result.stdout == "" and message in result.stderr and result.stderr.count("\n") == 1


def test_a_bad_destination_in_python_is_refused_before_any_source_is_read():
    with pytest.raises(InputError, match="^`write_to`: expected SCHEME:LOCATION of a tracker"):
        compare_sources(["missing-a.csv", "missing-b.csv"], val="val_acc", write_to="comparisons")
    with pytest.raises(InputError, match="^`write_options` must map option names to values, got 'x'$"):
        compare_sources(["missing-a.csv", "missing-b.csv"], val="val_acc", write_to="comparisons", write_options="x")


def test_a_normalize_with_file_in_a_comparison_config_is_relative_to_it(tmp_path, monkeypatch):
    from boontrack.sources import load_comparison

    (tmp_path / "refs.csv").write_text("task,low,high\ncola,0,1\n")
    config = tmp_path / "compare.toml"
    config.write_text('sources = ["a.csv", "b.csv"]\nval = "v"\ntask_column = "task"\nnormalize_with = "refs.csv"\n')
    monkeypatch.chdir("/")
    assert load_comparison(config)["normalize_with"] == str(tmp_path / "refs.csv")
