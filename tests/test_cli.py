"""The boontrack command end to end, on the papers' real run tables and on every kind of bad input."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from boontrack import __version__, cli

from oracles import exact_boo_n
from plugins import installed

HEAVY_MODULES = ("numpy", "pandas", "scipy", "mlflow", "wandb", "matplotlib", "sklearn")
RESAMPLES = "200"


def invoke(*args: str):
    return CliRunner().invoke(cli.main, list(args))


def run_boontrack(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """The installed command in a fresh interpreter, as a shell would run it."""
    command = [sys.executable, "-c", "from boontrack.cli import main; main()", *args]
    return subprocess.run(command, capture_output=True, text=True, cwd=cwd, timeout=120)


def boo_n_eq7(val: np.ndarray, test: np.ndarray, n: int) -> float:
    """Boo_n by the paper's eq. 7, written out: rank by val, weight (j/m)^n - ((j-1)/m)^n, tie blocks share."""
    order = np.argsort(val, kind="stable")
    val, test = val[order], test[order]
    m = len(val)
    weights = [Fraction(j, m) ** n - Fraction(j - 1, m) ** n for j in range(1, m + 1)]
    total, start = 0.0, 0
    while start < m:
        end = start
        while end + 1 < m and val[end + 1] == val[start]:
            end += 1
        block = slice(start, end + 1)
        total += float(sum(weights[block])) * float(np.mean(test[block]))
        start = end + 1
    return total


@pytest.fixture(scope="module")
def cifar(shared_data, tmp_path_factory) -> Path:
    """The paper's 74 ResNet runs: rows whose first column (the step) is >= 35000."""
    table = pd.read_csv(shared_data / "boon-paper" / "cifar100-resnet-oct17.csv")
    table = table.loc[table.iloc[:, 0] >= 35000]
    path = tmp_path_factory.mktemp("cifar") / "cifar100-resnet.csv"
    table.to_csv(path, index=False)
    return path


@pytest.fixture
def small_csv(tmp_path) -> Path:
    frame = pd.DataFrame(
        {
            "run_id": [f"r{i}" for i in range(12)],
            "model": ["a", "b"] * 6,
            "acc": np.linspace(0.5, 0.8, 12),
            "test_acc": np.linspace(0.45, 0.75, 12)[::-1],
        }
    )
    path = tmp_path / "runs.csv"
    frame.to_csv(path, index=False)
    return path


# --- start-up ------------------------------------------------------------------------------------------------


def test_importing_the_cli_and_showing_help_load_nothing_heavy():
    code = textwrap.dedent(
        f"""
        import json, sys
        import boontrack.cli
        try:
            boontrack.cli.main(["--help"])  # lists every command, lazy ones included
        except SystemExit:
            pass
        print(json.dumps([m for m in {HEAVY_MODULES!r} if m in sys.modules]))
        """
    )
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "demo" in loaded
    assert json.loads(loaded.splitlines()[-1]) == []


def test_help_and_version():
    result = run_boontrack("--help")
    assert result.returncode == 0
    assert "summarize" in result.stdout and "reaggregate" in result.stdout
    assert "--tracking-uri" in invoke("summarize", "--help").output


@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_the_version_flags_print_the_installed_version(flag):
    result = run_boontrack(flag)
    assert (result.returncode, result.stdout, result.stderr) == (0, f"boontrack, version {__version__}\n", "")


def test_registered_commands_are_imported_on_use(tmp_path):
    (tmp_path / "boontrack_extra_command.py").write_text(
        textwrap.dedent(
            """
            import click

            @click.command()
            def hello():
                "Say hello."
                click.echo("hello from a plugin")
            """
        )
    )
    with installed(tmp_path, {"boontrack.commands": {"hello": "boontrack_extra_command:hello"}}):
        assert "Say hello." in invoke("--help").output
        assert invoke("hello").output == "hello from a plugin\n"
    assert "hello" not in invoke("--help").output


# --- real tables ---------------------------------------------------------------------------------------------


def test_cifar_boo_5_matches_equation_7(cifar):
    result = invoke(
        "summarize",
        str(cifar),
        "--val",
        "Best Precision_valid",
        "--test",
        "Best Precision_test",
        "--n",
        "1,5",
        "--resamples",
        RESAMPLES,
        "--format",
        "json",
    )
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    table = pd.read_csv(cifar)
    val, test = table["Best Precision_valid"].to_numpy(), table["Best Precision_test"].to_numpy()
    (group,) = summary["groups"].values()
    assert group["runs"] == 74 and group["dropped"] == []
    boo_5 = group["boo_n"]["5"]
    assert boo_5["estimate"] == pytest.approx(boo_n_eq7(val, test, 5), abs=1e-12)
    assert boo_5["ci_low"] <= boo_5["estimate"] <= boo_5["ci_high"]
    assert group["boo_n"]["1"]["estimate"] == pytest.approx(test.mean(), abs=1e-12)


def test_sst5_two_groups(shared_data):
    path = shared_data / "show-your-work" / "sst5_cnn_lr_search.tsv"
    key = "model.encoder.architecture.type"
    result = invoke(
        "summarize",
        str(path),
        "--val",
        "best_validation_accuracy",
        "--group-by",
        key,
        "--n",
        "1,5,10",
        "--resamples",
        RESAMPLES,
        "--format",
        "json",
    )
    assert result.exit_code == 0, result.output
    groups = json.loads(result.stdout)["groups"]
    table = pd.read_csv(path, sep="\t")
    assert set(groups) == {"LR", "CNN"}
    for label, runs in table.groupby(key):
        scores = runs["best_validation_accuracy"].dropna()
        assert groups[label]["runs"] == len(scores)
        curve = groups[label]["curve"]
        assert curve["n"][0] == 1
        assert curve["estimate"][0] == pytest.approx(scores.mean(), abs=1e-12)
        assert len(curve["n"]) == len(curve["estimate"]) == len(curve["ci_low"]) == len(curve["ci_high"])


def test_table_output_and_out_directory_rerun_writes_nothing(small_csv, tmp_path):
    out = tmp_path / "out"
    args = (
        "summarize",
        str(small_csv),
        "--val",
        "acc",
        "--test",
        "test_acc",
        "--group-by",
        "model",
        "--n",
        "1,3",
        "--resamples",
        RESAMPLES,
        "--out",
        str(out),
    )
    first = invoke(*args)
    assert first.exit_code == 0, first.output
    assert "Boo_3" in first.stdout and "written" in first.stderr
    listing = {p.name: p.stat().st_mtime_ns for p in out.iterdir()}
    assert {"summary.json", "metrics.json", "curves.json", ".boontrack-fingerprint"} <= set(listing)
    second = invoke(*args)
    assert second.exit_code == 0 and "up to date, nothing written" in second.stderr
    assert second.stdout == first.stdout  # the table is still shown
    assert {p.name: p.stat().st_mtime_ns for p in out.iterdir()} == listing


@pytest.mark.parametrize("output_format", ["table", "json"])
def test_an_unchanged_rerun_prints_the_stored_summary_byte_for_byte_without_analyzing(
    small_csv, tmp_path, monkeypatch, output_format
):
    # Default budgets with 6 runs a group: the table also lists a comparison and the budgets left out.
    args = (
        "summarize",
        str(small_csv),
        "--val",
        "acc",
        "--test",
        "test_acc",
        "--group-by",
        "model",
        "--resamples",
        RESAMPLES,
        "--out",
        str(tmp_path / "out"),
        "--format",
        output_format,
    )
    first = invoke(*args)
    assert first.exit_code == 0 and "written" in first.stderr
    assert "Left out" in first.stdout or output_format == "json"

    def analyze(*args, **kwargs):
        raise AssertionError("analyze was called")

    monkeypatch.setattr("boontrack.analysis.analyze", analyze)
    again = invoke(*args)
    assert again.exit_code == 0, again.output
    assert again.stdout_bytes == first.stdout_bytes
    assert again.stderr == f"Summary up to date, nothing written: {tmp_path / 'out'}\n"


def test_an_unchanged_rerun_with_a_damaged_summary_json_computes_and_repairs_it(small_csv, tmp_path):
    out = tmp_path / "out"
    args = ("summarize", str(small_csv), "--val", "acc", "--n", "1,3", "--resamples", RESAMPLES, "--out", str(out))
    first = invoke(*args)
    written = (out / "summary.json").read_bytes()
    (out / "summary.json").write_text("{")
    repaired = invoke(*args)
    assert repaired.exit_code == 0 and repaired.stdout == first.stdout
    assert repaired.stderr == f"Summary written: {out}\n"
    assert (out / "summary.json").read_bytes() == written


def test_small_sweeps_report_the_default_budgets_each_group_has_runs_for(tmp_path):
    """8 runs of 'a', 4 of 'b', no --n: Boo_1 and Boo_5 for a, Boo_1 for b, and every output says what is left out."""
    acc = [0.50, 0.62, 0.55, 0.71, 0.58, 0.66, 0.60, 0.69, 0.52, 0.57, 0.61, 0.54]
    path = tmp_path / "runs.csv"
    pd.DataFrame({"run_id": [f"r{i:02d}" for i in range(12)], "model": ["a"] * 8 + ["b"] * 4, "acc": acc}).to_csv(
        path, index=False
    )
    out = tmp_path / "out"
    result = invoke(
        "summarize", str(path), "--val", "acc", "--group-by", "model", "--resamples", RESAMPLES, "--out", str(out)
    )
    assert result.exit_code == 0, result.output
    header, row_a, row_b = result.stdout.splitlines()[1:4]
    assert "Boo_1" in header and "Boo_5" in header and "Boo_10" not in header
    assert "too few runs" in row_b and "too few runs" not in row_a
    assert "Left out, too few runs (Boo_n needs at least n runs): a: Boo_10 (8 runs); b: Boo_5, Boo_10 (4 runs)." in (
        result.stdout
    )
    assert result.stderr.startswith("Summary written: ")

    summary = json.loads((out / "summary.json").read_text())
    assert summary["spec"]["n"] is None
    a, b = summary["groups"]["a"], summary["groups"]["b"]
    assert (sorted(a["boo_n"]), a["left_out_budgets"]) == (["1", "5"], [10])
    assert (sorted(b["boo_n"]), b["left_out_budgets"]) == (["1"], [5, 10])
    assert any("Boo_10 left out: 8 runs are too few" in w for w in a["warnings"])
    assert any("Boo_5, Boo_10 left out: 4 runs are too few" in w for w in b["warnings"])
    (comparison,) = summary["comparisons"]
    assert sorted(comparison["boo_n_difference"]) == ["1"]
    assert any("ΔBoo_5 left out: group 'b' has 4 runs" in w for w in comparison["warnings"])
    # Boo_5 of 'a' by eq. 7 on its 8 runs (no ties)
    assert a["boo_n"]["5"]["estimate"] == pytest.approx(boo_n_eq7(np.array(acc[:8]), np.array(acc[:8]), 5))

    metrics = json.loads((out / "metrics.json").read_text())
    assert "boon/acc/a/boo_5" in metrics and "boon/acc/b/boo_5" not in metrics
    assert not any(name.endswith("boo_10") for name in metrics)
    assert "boon/acc/b/vs_a/boo_1" in metrics and "boon/acc/b/vs_a/boo_5" not in metrics
    report = (out / "report.md").read_text()
    assert "Default budgets n = 1, 5, 10, each where a group has at least n runs." in report
    assert "— (too few runs)" in report and "Boo_5, Boo_10 left out" in report


def test_explicit_budgets_are_not_adapted(small_csv):
    result = invoke(
        "summarize", str(small_csv), "--val", "acc", "--group-by", "model", "--n", "1,7", "--resamples", RESAMPLES
    )
    assert result.exit_code == 2
    assert "too few runs for n = 7: group 'a' has 6" in result.stderr and "--n" in result.stderr


@pytest.fixture
def steps_csv(tmp_path) -> Path:
    """Two runs of three epochs each, one row per run and epoch: the best validation epoch is not the last."""
    path = tmp_path / "steps.csv"
    path.write_text(
        "run_id,step,acc,test_acc\n"
        "r1,0,0.5,0.4\nr1,1,0.7,0.6\nr1,2,0.6,0.65\n"
        "r2,0,0.55,0.5\nr2,2,0.5,0.45\nr2,1,0.6,0.52\n"  # rows in any order: the step orders them
    )
    return path


@pytest.mark.parametrize("spelling", ["best-val-step", "best_val_step"])
def test_pick_takes_both_spellings_and_a_file_of_steps_applies_it(steps_csv, spelling):
    args = ("summarize", str(steps_csv), "--val", "acc", "--test", "test_acc", "--n", "1", "--resamples", RESAMPLES)
    picked = json.loads(invoke(*args, "--pick", spelling, "--format", "json").stdout)
    assert picked["spec"]["pick"] == "best_val_step"
    assert picked["groups"]["all"]["mean"]["estimate"] == pytest.approx((0.6 + 0.52) / 2, abs=1e-12)
    last = json.loads(invoke(*args, "--format", "json").stdout)  # each metric's value at the last step
    assert last["groups"]["all"]["mean"]["estimate"] == pytest.approx((0.65 + 0.45) / 2, abs=1e-12)


def test_a_file_of_one_row_per_run_refuses_the_best_validation_step(small_csv):
    result = invoke("summarize", str(small_csv), "--val", "acc", "--pick", "best-val-step", "--resamples", RESAMPLES)
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr == (
        f"Error: --pick best_val_step takes each run's values at its best validation step, and {small_csv}, a file "
        "of one row per run, holds one value per run and metric (one row per run and step, with a 'step' column, "
        "holds them): summarize with --pick last\n"
    )


@pytest.mark.parametrize(
    ("metric", "word"), [("val_loss", "loss"), ("eval/perplexity", "perplexity"), ("test_error_rate", "error")]
)
def test_a_loss_without_a_direction_exits_2_naming_the_flag(tmp_path, metric, word):
    demo = Path(__file__).resolve().parents[1] / "examples" / "digits_sweep.csv"
    result = invoke("summarize", str(demo), "--val", metric, "--out", str(tmp_path / "out"))
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr == (
        f"Error: {metric!r} looks like a loss or an error ({word!r} in its name) and nothing says which way is "
        "better: add --minimize (or --maximize if higher is better)\n"
    )
    assert not (tmp_path / "out").exists()  # refused before any work


@pytest.mark.parametrize(
    ("val", "test", "disagreement"),
    [
        ("val_score", "test_loss", "('score' says higher, 'loss' lower)"),
        ("val_acc", "test_err", "('acc' says higher, 'err' lower)"),
    ],
)
def test_names_that_disagree_on_the_direction_exit_2_with_one_line_before_any_work(tmp_path, val, test, disagreement):
    path = _table_with(tmp_path, **{val: [0.5, 0.6, 0.7, 0.8], test: [0.4, 0.3, 0.2, 0.1]})
    result = run_boontrack("summarize", str(path), "--val", val, "--test", test, "--out", str(tmp_path / "out"))
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr == (
        f"Error: {val!r} and {test!r} disagree on which way is better {disagreement}, and one direction serves both: "
        "name metrics that agree, or say which way with --maximize or --minimize\n"
    )
    assert not (tmp_path / "out").exists()  # refused before any work
    said = invoke("summarize", str(path), "--val", val, "--test", test, "--minimize", "--resamples", RESAMPLES)
    assert said.exit_code == 0, said.output
    assert said.stdout.splitlines()[0].endswith("0 dropped; lower is better, as asked")


def test_a_loss_with_its_direction_is_summarized_lower_is_better(tmp_path):
    loss, test = [0.9, 0.4, 0.7, 0.2], [0.85, 0.45, 0.6, 0.3]
    path = _table_with(tmp_path, val_loss=loss, test_loss=test)
    result = invoke(
        "summarize", str(path), "--val", "val_loss", "--test", "test_loss", "--minimize", "--n", "1,2",
        "--resamples", RESAMPLES, "--format", "json",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    boo_2 = json.loads(result.stdout)["groups"]["all"]["boo_n"]["2"]["estimate"]
    assert boo_2 == pytest.approx(float(exact_boo_n(loss, test, 2, "V", maximize=False)), abs=1e-12)


def test_the_summary_says_which_direction_it_used_and_why(small_csv, tmp_path):
    base = ("summarize", str(small_csv), "--val", "acc", "--resamples", RESAMPLES)
    shown = json.loads(invoke(*base, "--format", "json").stdout)
    assert (shown["spec"]["maximize"], shown["spec"]["direction_from"]) == (True, "default")
    asked = invoke(*base, "--minimize", "--out", str(tmp_path / "out"))
    assert asked.stdout.splitlines()[0].endswith("12 runs, 0 dropped; lower is better, as asked")
    assert "Validation metric acc (lower is better, as asked)" in (tmp_path / "out" / "report.md").read_text()
    stored = json.loads((tmp_path / "out" / "summary.json").read_text())["spec"]
    assert (stored["maximize"], stored["direction_from"]) == (False, "caller")


# --- bad input -----------------------------------------------------------------------------------------------


def _table_with(tmp_path: Path, **columns) -> Path:
    path = tmp_path / "runs.csv"
    pd.DataFrame({"run_id": [f"r{i}" for i in range(4)], **columns}).to_csv(path, index=False)
    return path


@pytest.mark.parametrize(
    ("case", "message"),
    [
        ("missing file", "cannot read .*missing.csv: no such file"),
        ("unknown column", "no column 'nope'.*available columns: run_id, acc"),
        ("text in metric", "column 'acc' must hold numbers; run 'r2' has 'oops'"),
        ("all dropped", "all 4 runs were dropped: 4 missing metric 'acc'"),
        ("too few runs", "too few runs for n = 10: group 'all' has 4 runs.*Give a smaller --n "),
        ("write back to a file", "cannot be written back to; write the summary to a directory with --out$"),
        ("tracker option on a file", r"unknown option\(s\) for file sources: --parent \(known: none\)"),
        ("foreign files in out", "holds files boontrack did not write"),
        ("not a uri", "--tracking-uri 'not a uri' is neither a URI nor an existing directory"),
        ("repeated column", "column 'acc' appears 2 times"),
    ],
)
def test_bad_input_is_one_line_exit_2_and_nothing_written(tmp_path, case, message):
    numbers = [0.1, 0.2, 0.3, 0.4]
    path = _table_with(tmp_path, acc=numbers)
    out = tmp_path / "out"
    extra: list[str] = []
    if case == "missing file":
        path = tmp_path / "missing.csv"
    elif case == "unknown column":
        extra = ["--val", "nope"]
    elif case == "text in metric":
        path = _table_with(tmp_path, acc=["0.1", "0.2", "oops", "0.4"])
    elif case == "all dropped":
        path = _table_with(tmp_path, acc=[None] * 4)
    elif case == "too few runs":
        extra = ["--n", "1,10"]
    elif case == "write back to a file":
        extra = ["--write-back"]
    elif case == "tracker option on a file":
        extra = ["--parent", "abc"]
    elif case == "not a uri":
        extra = ["--tracking-uri", "not a uri"]
    elif case == "repeated column":
        path.write_text("run_id,acc,acc\nr1,0.1,0.2\n")
    elif case == "foreign files in out":
        out.mkdir()
        (out / "notes.txt").write_text("mine")
    result = invoke("summarize", str(path), "--val", "acc", *extra, "--resamples", RESAMPLES, "--out", str(out))
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("Error: ")
    assert re.search(message, result.stderr), result.stderr
    if case == "foreign files in out":
        assert [p.name for p in out.iterdir()] == ["notes.txt"]
    else:
        assert not out.exists()
    assert {p.name for p in tmp_path.iterdir()} <= {"runs.csv", "out"}  # no staging or lock files either


def test_exit_codes_and_tracebacks_in_a_real_process(tmp_path):
    path = _table_with(tmp_path, acc=[0.1, 0.2, 0.3, 0.4])
    quiet = run_boontrack("summarize", str(path), "--val", "nope")
    assert quiet.returncode == 2
    assert quiet.stderr.startswith("Error: no column 'nope'") and "Traceback" not in quiet.stderr
    assert quiet.stdout == ""
    verbose = run_boontrack("--verbose", "summarize", str(path), "--val", "nope")
    assert verbose.returncode == 2  # bad input is exit 2 with or without --verbose, which adds the traceback
    assert verbose.stderr.startswith("Traceback") and "InputError" in verbose.stderr
    assert verbose.stderr.splitlines()[-1] == quiet.stderr.strip()
    usage = run_boontrack("summarize", str(path), "--val", "acc", "--n", "1,x")
    assert usage.returncode == 2 and usage.stderr.count("\n") == 1
    assert usage.stderr.startswith("Error: Invalid value for '--n': expected comma-separated integers")
    assert usage.stderr.rstrip().endswith("summarize --help')")


@pytest.mark.parametrize(
    "args",
    [["summarize"], ["summarize", "x.csv", "--nope"], ["nope"], ["summarize", "x.csv", "--val", "a", "--n", "0"]],
)
def test_usage_errors_are_one_line_exit_2(args):
    result = invoke(*args)
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("Error: "), result.stderr


def test_help_is_unchanged():
    result = invoke("summarize", "--help")
    assert result.exit_code == 0 and result.stdout.startswith("Usage: ") and "--tracking-uri" in result.stdout


def test_a_secret_a_backend_leaves_in_its_error_is_not_printed(monkeypatch):
    from boontrack.exceptions import BackendError

    def careless(spec, **options):
        raise BackendError(f"cannot reach {options['tracking_uri']}; sent Authorization: Basic YWxpY2U6cHdAeA==")

    monkeypatch.setattr("boontrack.backends.open_source", careless)
    result = invoke("summarize", "mlflow:sweep", "--val", "acc", "--tracking-uri", "http://alice:pw@x@127.0.0.1:5000")
    assert result.exit_code == 1
    assert result.stderr == "Error: cannot reach http://***@127.0.0.1:5000; sent Authorization: Basic ***\n"


def test_a_failed_write_still_prints_the_summary_and_exits_1(small_csv, tmp_path, monkeypatch):
    from boontrack.directory import DirectorySink

    def no_space(self, outputs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(DirectorySink, "write", no_space)
    out = tmp_path / "out"
    result = invoke(
        "summarize",
        str(small_csv),
        "--val",
        "acc",
        "--n",
        "1,3",
        "--resamples",
        RESAMPLES,
        "--out",
        str(out),
        "--format",
        "json",
    )
    assert result.exit_code == 1
    assert json.loads(result.stdout)["runs"] == 12
    assert result.stderr == f"Error: writing the summary to {out} failed: OSError: [Errno 28] No space left on device\n"
    assert DirectorySink(out).read_fingerprint() is None


def test_backend_errors_exit_1(tmp_path, monkeypatch):
    from boontrack.exceptions import BackendError

    def unreachable(spec, **options):
        raise BackendError("tracker at https://***@example.org did not answer within 5 s")

    monkeypatch.setattr("boontrack.backends.open_source", unreachable)
    result = invoke("summarize", "mlflow:sweep", "--val", "acc")
    assert result.exit_code == 1
    assert result.stderr == "Error: tracker at https://***@example.org did not answer within 5 s\n"


def test_source_options_reach_the_backend(monkeypatch):
    seen = {}

    def record(spec, **options):
        seen.update(options, source=spec)
        raise SystemExit(0)

    monkeypatch.setattr("boontrack.backends.open_source", record)
    invoke("summarize", "wandb:team/project", "--val", "acc", "--sweep", "s1", "--option", "api-timeout=5")
    assert seen == {"source": "wandb:team/project", "sweep": "s1", "api_timeout": "5"}


@pytest.mark.parametrize("command", ["summarize", "simulate"])
def test_summarize_and_simulate_read_a_source_with_the_same_options(monkeypatch, command):
    seen = {}

    def record(spec, **options):
        seen.update(options, source=spec)
        raise SystemExit(0)

    monkeypatch.setattr("boontrack.backends.open_source", record)
    options = ["--parent", "RUN", "--tracking-uri", "sqlite:///m.db", "--option", "api-timeout=5"]
    invoke(command, "mlflow:sweep", "--val", "acc", *options)
    assert seen == {"source": "mlflow:sweep", "parent": "RUN", "tracking_uri": "sqlite:///m.db", "api_timeout": "5"}


def test_simulate_refuses_a_source_option_without_a_source():
    result = invoke("simulate", "--population", "normal", "--sweep", "s1")
    assert result.exit_code == 2
    assert "--sweep is an option of SOURCE's backend; no SOURCE was given" in result.stderr


def test_every_flag_of_simulate_is_in_the_one_table():
    from boontrack.vocabulary import FLAGS, SIMULATE_FLAGS

    flags = {param.name: "/".join(param.opts + param.secondary_opts) for param in cli.simulate.params if param.opts}
    flags = {name: flag for name, flag in flags.items() if flag.startswith("--")}
    assert flags == {name: ({**FLAGS, **SIMULATE_FLAGS})[name] for name in flags}


def test_the_shipped_example_table_summarizes():
    """examples/digits_sweep.csv: the runs of a real `boontrack demo` sweep, 30 per approach."""
    example = Path(__file__).resolve().parents[1] / "examples" / "digits_sweep.csv"
    result = invoke(
        "summarize",
        str(example),
        "--val",
        "val_acc",
        "--test",
        "test_acc",
        "--group-by",
        "model",
        "--resamples",
        "200",
        "--format",
        "json",
    )
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    runs = pd.read_csv(example)
    for model, group in summary["groups"].items():
        tests = runs.loc[runs["model"] == model, "test_acc"]
        assert group["runs"] == len(tests) == 30
        assert group["boo_n"]["1"]["estimate"] == pytest.approx(tests.mean(), rel=1e-12)


def test_summarize_threads_change_no_number_and_zero_is_a_usage_error(cifar):
    args = [
        "summarize",
        str(cifar),
        "--val",
        "Best Precision_valid",
        "--test",
        "Best Precision_test",
        "--n",
        "1,5",
        "--resamples",
        RESAMPLES,
        "--format",
        "json",
    ]
    one, two = invoke(*args, "--threads", "1"), invoke(*args, "--threads", "2")
    assert one.exit_code == 0 and two.exit_code == 0, one.output + two.output
    assert json.loads(one.output)["groups"] == json.loads(two.output)["groups"]
    refused = invoke(*args, "--threads", "0")
    assert refused.exit_code == 2 and "--threads" in refused.output


def test_python_dash_m_runs_the_same_command_line(tmp_path):
    """``python -m boontrack`` is the ``boontrack`` command: its name in the usage line, its exit statuses."""
    shown = subprocess.run([sys.executable, "-m", "boontrack", "--help"], capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0 and shown.stdout.startswith("Usage: boontrack ")
    missing = tmp_path / "missing.csv"
    refused = subprocess.run(
        [sys.executable, "-m", "boontrack", "summarize", str(missing), "--val", "v"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert refused.returncode == 2 and "missing.csv" in refused.stderr
