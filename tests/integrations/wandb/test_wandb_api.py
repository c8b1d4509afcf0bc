"""wandb:ENTITY/PROJECT through the real ``wandb.Api`` and ``wandb.init``, against the wire-protocol double."""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
import threading
import warnings
from pathlib import Path

import numpy as np
import pytest

from boontrack.backends import MetricRequest, open_source
from boontrack.exceptions import BackendError, InputError, WriteBackWarning
from boontrack.spec import Spec

from wandb_double import API_KEY, FakeRun
from wandb_sweep import ENTITY, PROJECT, SWEEP

pytestmark = pytest.mark.wandb

REQUEST = MetricRequest(val="val_acc", test="test_acc")


def _source(**options):
    return open_source(f"wandb:{ENTITY}/{PROJECT}", **options)


def _input_runs(logged):
    return {rid: run for rid, run in logged.items() if run.job_type != "boontrack"}


def test_a_sweep_is_listed_in_one_request_with_config_and_summary(fresh_log, offline_runs):
    frame = _source(sweep=SWEEP).read(REQUEST).set_index("run_id")
    inputs = _input_runs(offline_runs[1])
    assert set(frame.index) == set(inputs)
    for rid, run in inputs.items():
        assert frame.loc[rid, "metrics.val_acc"] == run.last["val_acc"]
        assert frame.loc[rid, "metrics.test_acc"] == run.last["test_acc"]
        assert frame.loc[rid, "params.model"] == run.config["model"]
        assert frame.loc[rid, "status"] == ("finished" if run.exit_code == 0 else "failed")
        assert frame.loc[rid, "tags.group"] == run.group and frame.loc[rid, "tags.sweep"] == SWEEP
    assert (frame["params.optim.lr"].dropna() == 0.001).all()
    seeded = {run.name: run.created_at for run in fresh_log.runs.values()}  # naive ISO text, UTC on W&B
    assert all(frame.loc[rid, "created_at"].isoformat() == seeded[rid] + "+00:00" for rid in frame.index)
    # Viewer (credentials), GetSweep (does the sweep exist), then one Runs page: never one Run per run.
    assert fresh_log.operations() == ["Viewer", "GetSweep", "Runs"]
    assert json.loads(fresh_log.log[-1][1]["filters"]) == {"sweep": SWEEP}
    assert fresh_log.log[-1][1]["perPage"] == 500


def test_group_and_filters_reach_the_server(fresh_log, offline_runs):
    frame = _source(group="cnn-sweep", filters='{"state": "finished"}').read(REQUEST)
    expected = {rid for rid, r in offline_runs[1].items() if r.group == "cnn-sweep" and r.exit_code == 0}
    assert set(frame["run_id"]) == expected
    assert json.loads(fresh_log.log[-1][1]["filters"]) == {"$and": [{"group": "cnn-sweep"}, {"state": "finished"}]}


def test_best_val_step_reads_each_history_in_one_request(fresh_log, offline_runs):
    request = MetricRequest(val="val_acc", test="test_acc", pick="best_val_step")
    frame = _source(sweep=SWEEP).read(request).set_index("run_id")
    for rid, run in _input_runs(offline_runs[1]).items():
        best = int(np.argmax([r["val_acc"] for r in run.history]))
        assert frame.loc[rid, "metrics.test_acc"] == run.history[best]["test_acc"]
    assert fresh_log.operations().count("RunSampledHistory") == len(frame)


def test_pages_of_500(fresh_log):
    for i in range(1100):
        fresh_log.add_run(FakeRun(name=f"p{i:07d}", entity=ENTITY, project="paged", summary={"val_acc": i / 1100}))
    frame = open_source(f"wandb:{ENTITY}/paged").read(REQUEST)
    assert len(frame) == 1100 and frame["run_id"].is_unique
    assert fresh_log.operations().count("Runs") == math.ceil(1100 / 500)
    assert "Run" not in fresh_log.operations()


def test_unknown_project_and_sweep_are_input_errors(fresh_log):
    with pytest.raises(InputError, match="not found"):
        open_source(f"wandb:{ENTITY}/no-such-project").read(REQUEST)
    with pytest.raises(InputError, match="not found"):
        _source(sweep="nosuchsweep").read(REQUEST)


def test_loading_the_backends_does_not_import_wandb():
    code = (
        "import sys; from boontrack.backends import load_backend; load_backend('wandb'); "
        "load_backend('wandb-offline'); import boontrack.wandb; print('wandb' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "False", done.stderr


def test_bad_locations_and_options():
    for location in ("wandb:just-entity", "wandb:a/b/c", "wandb:/p"):
        with pytest.raises(InputError, match="ENTITY/PROJECT"):
            open_source(location)
    with pytest.raises(InputError, match="unknown option"):
        _source(colour="red")
    with pytest.raises(InputError, match="^wandb: `filters` must be a JSON object"):  # the option's name, no flag
        _source(filters="{state")
    with pytest.raises(InputError, match=r"^wandb: `filters` must be a JSON object, got '\[1\]'$"):
        _source(filters="[1]")
    with pytest.raises(InputError, match="timeout"):
        _source(timeout="-1")


@pytest.mark.slow  # ~10 s, mostly rendering the plots
def test_summarize_writes_one_aggregate_run_and_a_second_call_writes_nothing(fresh_log):
    from boontrack.pipeline import run_job, summary_key
    from boontrack.reports import render_outputs

    users_runs = {k: (dict(r.config), dict(r.summary), list(r.history)) for k, r in fresh_log.runs.items()}
    source = _source(sweep=SWEEP)
    spec = Spec(val="val_acc", test="test_acc", n=(1, 3), group_by=("model",), n_resamples=199)
    sink = source.sink(summary_key(source.identity(), spec))
    result = run_job(source, spec, sink=sink, raise_on_write_error=True)
    assert result.status == "updated"
    assert result.location.endswith(f"/{ENTITY}/{PROJECT}/runs/{sink.run_id}") and API_KEY not in result.location

    expected = render_outputs(result.summary)
    run = fresh_log.runs[(ENTITY, PROJECT, sink.run_id)]
    assert run.job_type == "boontrack" and run.state == "finished"
    assert run.config["boontrack.role"] == "summary"
    assert run.summary["boontrack/fingerprint"] == result.fingerprint
    for key, value in expected.metrics.items():
        assert run.summary[key] == pytest.approx(value, nan_ok=True), key
    # The curves: one history row per n, the step metric boon/n, every curve's values at its steps.
    steps = [row for row in run.history if "boon/n" in row]
    for curve in expected.curves:
        logged = {row["boon/n"]: row[curve.key] for row in steps if curve.key in row}
        assert list(logged) == curve.n.tolist()
        np.testing.assert_allclose(list(logged.values()), curve.values)
    defined = run.config["_wandb"]["m"]  # define_metric records; "5" is the step metric's 1-based position
    position = {m.get("1"): i + 1 for i, m in enumerate(defined)}
    steps_of = {m.get("1"): m.get("5") for m in defined}
    assert {steps_of[c.key] for c in expected.curves} == {position["boon/n"]}, defined
    # The table with every curve row, the line-series chart, and the summary artifact with its files.
    assert run.summary["boontrack/curves_table"]["nrows"] == len(expected.tables["curves"][1])
    chart = run.config["_wandb"]["visualize"]["boontrack/curves_chart"]
    assert chart["panel_config"]["panelDefId"] in fresh_log.charts  # the curve preset, with its band
    artifact = next(
        a for a in fresh_log.artifacts.values() if a["type"] == "boontrack-summary" and a["run"] == sink.run_id
    )
    assert artifact["state"] == "COMMITTED"
    assert fresh_log.artifact_files(artifact["id"]) == dict(expected.artifacts)
    # The user's runs are untouched.
    for key, before in users_runs.items():
        after = fresh_log.runs[key]
        assert (after.config, after.summary, after.history) == before

    fresh_log.reset_log()
    again = run_job(source, spec, sink=sink, raise_on_write_error=True)
    assert again.status == "unchanged" and again.fingerprint == result.fingerprint
    written = {"UpsertBucket", "RunResumeStatus", "CreateArtifact", "file_stream", "CreateRunFiles"}
    assert not written & set(fresh_log.operations())


@pytest.mark.slow  # two full summaries with plots
def test_changed_runs_rewrite_the_aggregate_run_without_stale_points(fresh_log):
    from boontrack.pipeline import run_job, summary_key
    from boontrack.reports import render_outputs

    for i, model in enumerate(["a", "a", "a", "b", "b", "b", "c", "c", "c"]):
        fresh_log.add_run(
            FakeRun(
                name=f"w{i:07d}",
                entity=ENTITY,
                project="rewrite",
                config={"model": model},
                summary={"val_acc": 0.5 + i / 100},
            )
        )
    source = open_source(f"wandb:{ENTITY}/rewrite")
    spec = Spec(val="val_acc", n=(1, 2), group_by=("model",), n_resamples=99)
    sink = source.sink(summary_key(source.identity(), spec))
    first = run_job(source, spec, sink=sink, raise_on_write_error=True)
    fresh_log.runs[(ENTITY, "rewrite", "w0000005")].summary["val_acc"] = 0.9  # a run changed
    for i in (6, 7, 8):  # and group c is gone
        del fresh_log.runs[(ENTITY, "rewrite", f"w{i:07d}")]
    fresh_log.reset_log()
    second = run_job(source, spec, sink=sink, raise_on_write_error=True)
    assert (first.status, second.status) == ("updated", "updated") and first.fingerprint != second.fingerprint
    assert "RewindRun" in fresh_log.operations()
    run = fresh_log.runs[(ENTITY, "rewrite", sink.run_id)]
    steps = [row["boon/n"] for row in run.history if "boon/n" in row]
    assert steps == sorted(set(steps))  # one row per n: the first write's points are gone
    assert run.summary["boontrack/fingerprint"] == second.fingerprint
    gone = render_outputs(first.summary).metrics.keys() - render_outputs(second.summary).metrics.keys()
    assert gone and not gone & run.summary.keys()  # group c's metrics were removed from the summary

    # A server without run rewind: the write still succeeds, and the warning says what stays behind.
    fresh_log.refused.add("RewindRun")
    resumed = fresh_log.runs[(ENTITY, "rewrite", "w0000004")]
    resumed.summary["val_acc"] = 0.95
    resumed.heartbeat_at = "2026-03-01T00:00:00"  # it logged again (a resumed run): its change token moves
    with pytest.warns(WriteBackWarning, match="could not rewind"):
        third = run_job(source, spec, sink=sink, raise_on_write_error=True)
    assert third.status == "updated" and run.summary["boontrack/fingerprint"] == third.fingerprint


def test_post_sweep_callback(fresh_log):
    from boontrack.wandb import summarize_sweep

    result = summarize_sweep(f"{ENTITY}/{PROJECT}/{SWEEP}", val="val_acc", test="test_acc", n=(1, 2), n_resamples=99)
    assert result.status == "updated" and result.error is None
    run_id = result.location.rsplit("/", 1)[-1]
    aggregate = fresh_log.runs[(ENTITY, PROJECT, run_id)]
    assert aggregate.job_type == "boontrack" and aggregate.summary["boontrack/fingerprint"] == result.fingerprint
    with pytest.raises(InputError, match="entity/project/sweep_id"):
        summarize_sweep("only/two", val="val_acc")


def test_post_sweep_callback_warns_instead_of_raising(fresh_log):
    from boontrack.wandb import summarize_sweep

    fresh_log.inject(500, times=100)
    with pytest.warns(WriteBackWarning, match="W&B"):
        result = summarize_sweep(f"{ENTITY}/{PROJECT}/{SWEEP}", val="val_acc", timeout=20)
    assert result.status == "failed" and result.summary is None and API_KEY not in result.error
    with pytest.raises(BackendError):
        summarize_sweep(f"{ENTITY}/{PROJECT}/{SWEEP}", val="val_acc", timeout=20, raise_on_error=True)
    _assert_gave_up_after_a_few_attempts(fresh_log, requests=4)  # per call: the source's Viewer, the sink's


def test_post_sweep_callback_adapts_the_default_budgets_to_small_groups(fresh_log):
    from boontrack.wandb import summarize_sweep

    # 5 cnn and 6 mlp runs (one failed run dropped): Boo_1 and Boo_5 each, Boo_10 left out
    result = summarize_sweep(
        f"{ENTITY}/{PROJECT}/{SWEEP}", val="val_acc", test="test_acc", group_by=("model",), n_resamples=99
    )
    assert result.status == "updated", result.error
    for group in result.summary.groups:
        assert sorted(group.boo_n) == [1, 5] and group.left_out_budgets == (10,)
    assert sorted(result.summary.comparisons[0].boo_n_difference) == [1, 5]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            {"n": (1, 10), "group_by": ("model",)},
            r"too few runs for n = 10: group 'cnn' has 5, 'mlp' has 6 runs.*smaller `n`",
        ),
        # a metric no run logged: the same error as from every source, naming the columns there are
        ({"test": "test_f1"}, r"no column 'test_f1' \(tried 'test_f1', 'metrics.test_f1'.*metrics.val_acc"),
    ],
)
def test_post_sweep_callback_warns_about_the_data_instead_of_raising(fresh_log, options, message):
    from boontrack.wandb import summarize_sweep

    with pytest.warns(WriteBackWarning, match=message):
        result = summarize_sweep(f"{ENTITY}/{PROJECT}/{SWEEP}", val="val_acc", n_resamples=99, **options)
    assert (result.status, result.summary) == ("failed", None) and "--" not in result.error
    with pytest.raises(InputError, match=message):
        summarize_sweep(f"{ENTITY}/{PROJECT}/{SWEEP}", val="val_acc", n_resamples=99, raise_on_error=True, **options)


def test_429_with_retry_after_is_retried_no_sooner_than_asked(fresh_log):
    fresh_log.inject(429, times=1, headers={"Retry-After": "1"})
    frame = _source(sweep=SWEEP).read(REQUEST)
    assert len(frame) > 0
    assert fresh_log.operations()[:2] == ["Viewer", "Viewer"]  # the refused request, then its retry
    assert fresh_log.arrivals[1] - fresh_log.arrivals[0] >= 1.0  # as the server asked (load only adds to it)


def _assert_gave_up_after_a_few_attempts(double, *, requests: int) -> None:
    """The calls gave up while the server was still failing, each of their ``requests`` tried at most twice
    (WANDB_X_GRAPHQL_RETRY_MAX is 1 in the ``wandb_env`` fixture)."""
    assert double.faults and double.faults[0].remaining > 0, "the calls outlasted every injected failure"
    assert requests <= len(double.operations()) <= 2 * requests


def test_persistent_server_errors_fail_after_a_bounded_number_of_attempts(fresh_log):
    fresh_log.inject(500, times=100)
    with pytest.raises(BackendError) as excinfo:
        _source(sweep=SWEEP, timeout=20).read(REQUEST)
    assert API_KEY not in str(excinfo.value)
    _assert_gave_up_after_a_few_attempts(fresh_log, requests=1)


def test_a_slow_server_fails_after_the_timeout_without_waiting_for_the_answer(fresh_log):
    fresh_log.hold = threading.Event()
    with pytest.raises(BackendError, match="did not answer within 1 s"):
        _source(sweep=SWEEP, timeout=1).read(REQUEST)
    assert fresh_log.held >= 1  # the server still holds its answer: the client stopped waiting for it


def test_a_rejected_key_is_a_backend_error_that_does_not_show_the_key(fresh_log, capsys):
    fresh_log.inject(401, times=1)
    with pytest.raises(BackendError, match="rejected the API key") as excinfo:
        _source(sweep=SWEEP).read(REQUEST)
    captured = capsys.readouterr()
    assert API_KEY not in str(excinfo.value) + captured.out + captured.err


def _cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    command = Path(sys.executable).with_name("boontrack")  # the console script installed with the package
    return subprocess.run([str(command), *args], env=env, capture_output=True, text=True, timeout=120)


def test_cli_without_an_api_key_exits_1_with_a_clear_message(fresh_log):
    # A fresh process: this one's wandb has already loaded the session's key into its settings.
    env = {k: v for k, v in os.environ.items() if k != "WANDB_API_KEY"}
    done = _cli("summarize", f"wandb:{ENTITY}/{PROJECT}", "--sweep", SWEEP, "--val", "val_acc", env=env)
    assert done.returncode == 1, done.stderr
    assert "no W&B API key" in done.stderr and "Traceback" not in done.stderr


def test_cli_summarizes_an_offline_directory(offline_runs):
    done = _cli(
        "summarize",
        f"wandb-offline:{offline_runs[0]}",
        "--val",
        "val_acc",
        "--test",
        "test_acc",
        "--group-by",
        "model",
        "--n",
        "1,3",
        "--resamples",
        "99",
        "--format",
        "json",
        env=dict(os.environ),
    )
    assert done.returncode == 0, done.stderr
    assert API_KEY not in done.stdout + done.stderr
    summary = json.loads(done.stdout)
    assert "cnn" in json.dumps(summary) and "mlp" in json.dumps(summary)


def test_write_failures_warn_and_leave_no_fingerprint(fresh_log):
    from boontrack.pipeline import run_job, summary_key

    source = _source(sweep=SWEEP)
    spec = Spec(val="val_acc", n=(1, 2), n_resamples=99, seed=7)
    sink = source.sink(summary_key(source.identity(), spec))
    fresh_log.delay_s = 0.0
    original = type(sink).write

    def failing_write(self, outputs):
        fresh_log.inject(500, times=1000)
        try:
            original(self, outputs)
        finally:
            fresh_log.faults.clear()

    type(sink).write = failing_write
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = run_job(source, spec, sink=sink)
    finally:
        type(sink).write = original
    assert result.status == "write-failed"
    assert any(issubclass(w.category, WriteBackWarning) for w in caught)
    assert sink.read_fingerprint() is None


@pytest.mark.slow  # a subprocess that writes an aggregate run, then runs again and writes nothing
def test_reaggregate_runs_wandb_jobs(fresh_log, offline_runs, tmp_path):
    config = tmp_path / "boontrack.toml"
    config.write_text(f"""
[[jobs]]
name = "sweep"
source = "wandb:{ENTITY}/{PROJECT}"
sweep = "{SWEEP}"
val = "val_acc"
test = "test_acc"
n = [1, 2]
group_by = ["model"]
n_resamples = 99
seed = 11
write_back = true

[[jobs]]
name = "offline"
source = "wandb-offline:{offline_runs[0]}"
val = "val_acc"
n = [1, 2]
n_resamples = 99
out = "{tmp_path / "offline-summary"}"
""")
    first = _cli("reaggregate", "--config", str(config), env=dict(os.environ))
    assert first.returncode == 0, first.stderr
    assert "sweep: updated" in first.stdout + first.stderr and "offline: updated" in first.stdout + first.stderr
    assert (tmp_path / "offline-summary" / "summary.json").exists()
    fresh_log.reset_log()
    second = _cli("reaggregate", "--config", str(config), env=dict(os.environ))
    assert second.returncode == 0, second.stderr
    assert "sweep: unchanged" in second.stdout + second.stderr
    assert not {"UpsertBucket", "RunResumeStatus", "file_stream"} & set(fresh_log.operations())
    assert API_KEY not in first.stdout + first.stderr + second.stdout + second.stderr


def _preset_job(double, project: str):
    """Three groups of runs in their own project, and a job writing their summary without plots."""
    from boontrack.pipeline import run_job, summary_key

    for i in range(9):
        double.add_run(
            FakeRun(
                name=f"c{i:07d}",
                entity=ENTITY,
                project=project,
                config={"model": "abc"[i // 3]},
                summary={"val_acc": 0.5 + ((7 * i) % 9) / 100},
            )
        )
    source = open_source(f"wandb:{ENTITY}/{project}")
    spec = Spec(val="val_acc", n=(1, 2), group_by=("model",), n_resamples=99)
    sink = source.sink(summary_key(source.identity(), spec))

    def job():
        return run_job(source, spec, sink=sink, raise_on_write_error=True, plots=False)

    return job, double.runs, (ENTITY, project, sink.run_id)


def test_the_curve_chart_preset_is_registered_once_and_draws_the_band(fresh_log):
    from boontrack_wandb._sink import CHART_SPEC_FILE

    job, runs, key = _preset_job(fresh_log, "preset")
    shipped = Path(__import__("boontrack_wandb").__file__).parent / "assets" / CHART_SPEC_FILE
    spec_text = shipped.read_text(encoding="utf-8")
    fresh_log.charts.clear()
    first = job()
    assert first.status == "updated"
    assert fresh_log.operations().count("CreateCustomChart") == 1
    ((preset_id, preset),) = fresh_log.charts.items()
    assert preset_id.startswith(f"{ENTITY}/boontrack-curve-") and preset["type"] == "vega2"
    assert json.loads(preset["spec"]) == json.loads(spec_text)  # the asset in the package, as a user imports it
    panel = runs[key].config["_wandb"]["visualize"]["boontrack/curves_chart"]["panel_config"]
    assert panel["panelDefId"] == preset_id
    # Every field of the spec is filled by a column of the curve table; the x scale follows the plots' rule.
    fields = set(re.findall(r"\$\{field:(\w+)\}", spec_text))
    assert set(panel["fieldSettings"]) == fields
    assert set(panel["fieldSettings"].values()) <= {"group", "n", "estimate", "ci_low", "ci_high"}
    assert panel["fieldSettings"]["low"] == "ci_low" and panel["fieldSettings"]["high"] == "ci_high"
    assert set(panel["stringSettings"]) == set(re.findall(r"\$\{string:(\w+)\}", spec_text))
    assert panel["stringSettings"]["xscale"] == "linear"  # budgets 1..2
    table_key = "boontrack/curves_chart_table"
    logged = runs[key].summary[table_key]
    assert logged["nrows"] == sum(g.curve.n.size for g in first.summary.groups)  # every point of every curve
    # group, n, estimate, ci_low, ci_high, time, simultaneous_low, simultaneous_high, trustworthy
    assert logged["ncols"] == 9

    runs[(ENTITY, "preset", "c0000004")].summary["val_acc"] = 0.99  # a rerun on changed runs
    fresh_log.reset_log()
    second = job()
    assert second.status == "updated" and second.fingerprint != first.fingerprint
    assert "CustomChart" in fresh_log.operations() and "CreateCustomChart" not in fresh_log.operations()
    assert list(fresh_log.charts) == [preset_id]


def test_a_server_refusing_chart_presets_gets_the_line_chart_and_a_warning(fresh_log):
    job, runs, key = _preset_job(fresh_log, "nopreset")
    fresh_log.charts.clear()
    fresh_log.refused.add("CreateCustomChart")
    with pytest.warns(WriteBackWarning, match="chart preset"):
        result = job()
    assert result.status == "updated" and result.error is None
    assert runs[key].summary["boontrack/fingerprint"] == result.fingerprint
    panel = runs[key].config["_wandb"]["visualize"]["boontrack/curves_chart"]["panel_config"]
    assert panel["panelDefId"] == "wandb/lineseries/v0"
    assert not fresh_log.charts


def test_the_sweeps_metric_goal_is_the_direction_and_mlflow_a_second_destination(fresh_log, tmp_path, monkeypatch):
    mlflow = pytest.importorskip("mlflow")
    from boontrack.wandb import summarize_sweep

    monkeypatch.chdir(tmp_path)  # the MLflow experiment created keeps its artifacts in ./mlruns
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    mlflow.MlflowClient(uri).search_experiments()  # creates the store
    fresh_log.add_sweep(ENTITY, PROJECT, SWEEP, config="method: random\nmetric:\n  name: val_acc\n  goal: minimize\n")
    with pytest.warns(WriteBackWarning, match="W&B sweep sweep01 minimizes 'val_acc', but `maximize=True` says"):
        assert summarize_sweep(f"{ENTITY}/{PROJECT}/{SWEEP}", val="val_acc", maximize=True).status == "failed"
    result = summarize_sweep(
        f"{ENTITY}/{PROJECT}/{SWEEP}", val="val_acc", n=(1, 2), n_resamples=99, tracking_uri=uri, plots=False
    )
    assert result.status == "updated", result.error
    assert (result.summary.spec.maximize, result.summary.spec.direction_from) == (
        False,
        "the metric.goal of W&B sweep sweep01",
    )
    assert [d.status for d in result.destinations] == ["updated", "updated"]
    client = mlflow.MlflowClient(uri)
    experiment = client.get_experiment_by_name(PROJECT).experiment_id
    (run,) = client.search_runs([experiment], filter_string="tags.`boontrack.role` = 'summary'")
    assert run.data.tags["boontrack.fingerprint"] == result.fingerprint
