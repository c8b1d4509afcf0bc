"""The Ray Tune callback and the ``ray-tune:`` source on one real Tune experiment (the session fixture
``tune_sweep``): the same trials, the same numbers, checked against the exact oracle on the reported values."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from click.testing import CliRunner

from boontrack.backends import Direction, MetricRequest, available_backends, open_source
from boontrack.cli import main
from boontrack.directory import DirectorySink
from boontrack.exceptions import InputError, WriteBackWarning
from boontrack.pipeline import run_job
from boontrack.runtable import RunTable
from boontrack.spec import Spec

from oracles import exact_boo_n
from tune_sweep import BEST, ERROR, ERRORED, LAST, RESAMPLES, TEST, VAL, N

pytestmark = pytest.mark.ray

PICKS = {"last": LAST, "best_val_step": BEST}


def spec(pick: str = "last") -> Spec:
    """The spec the callbacks of the fixture use (their seed column defaults to ``seed``)."""
    return Spec(val=VAL, test=TEST, n=N, n_resamples=RESAMPLES, seed_column="seed", pick=pick)


def assert_oracle_numbers(summary, expected: dict[tuple[str, int], tuple[float, float]]) -> None:
    """Each group's Boo_n equals the exact oracle on the expected (val, test) of its kept trials."""
    assert [g.label for g in summary.groups] == ["a", "b"]
    for group in summary.groups:
        pairs = [pair for (model, _), pair in sorted(expected.items()) if model == group.label]
        assert group.runs == len(pairs)
        val, test = [p[0] for p in pairs], [p[1] for p in pairs]
        for n in N:
            assert group.boo_n[n].estimate == pytest.approx(float(exact_boo_n(val, test, n, "V")), abs=1e-12)


def kept_values(table: RunTable, trial_ids) -> dict[tuple[str, int], tuple[float, float]]:
    by_id = {trial_id: key for key, trial_id in trial_ids.items()}
    return {by_id[r.run_id]: (r.val, r.test) for r in table.runs.itertuples()}


# -- the callback --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name, pick", [("last", "last"), ("best", "best_val_step")])
def test_callback_summary_matches_the_oracle(tune_sweep, name, pick):
    result = tune_sweep.callbacks[name].result
    assert result.status == "updated", result.error
    assert_oracle_numbers(result.summary, PICKS[pick])


def test_callback_writes_into_the_experiment_directory_by_default(tune_sweep):
    result = tune_sweep.callbacks["last"].result
    assert result.location == str((tune_sweep.path / "boontrack").resolve())
    stored = json.loads((tune_sweep.path / "boontrack" / "summary.json").read_text())
    assert (
        list(stored["groups"]) == ["a", "b"] and stored["source"] == f"Ray Tune experiment {tune_sweep.path.resolve()}"
    )


def test_errored_trial_is_dropped_with_its_error(tune_sweep):
    summary = tune_sweep.callbacks["last"].result.summary
    (dropped,) = summary.dropped
    assert dropped.run_id == tune_sweep.trial_ids[ERRORED] and dropped.reason == "status 'failed'"
    runs = pd.read_csv(tune_sweep.path / "boontrack" / "runs.csv")
    errored = runs.loc[runs["run_id"] == tune_sweep.trial_ids[ERRORED]].iloc[0]
    assert errored["tags.error"] == ERROR and errored["dropped_reason"] == "status 'failed'"


def test_a_failing_summary_warns_and_never_raises_into_tune(tune_sweep):
    result = tune_sweep.callbacks["broken"].result
    assert result.status == "failed" and "no_such_metric" in result.error
    warned = [w for w in tune_sweep.warnings if issubclass(w.category, WriteBackWarning)]
    assert [str(w.message) for w in warned] == [result.error, tune_sweep.callbacks["contradicts"].result.error]
    # the other callbacks after it still ran: Tune went on
    assert tune_sweep.callbacks["best"].result.status == "updated"


def test_an_unexpected_failure_is_warned_too(tune_sweep):
    from boontrack.ray import BoonCallback

    callback = BoonCallback(val=VAL, out=tune_sweep.path.parent / "never")
    with pytest.warns(WriteBackWarning, match="summarizing the Tune experiment failed: AttributeError"):
        callback.on_experiment_end(trials=[object()])
    assert callback.result.status == "failed"
    with pytest.raises(AttributeError):
        BoonCallback(val=VAL, raise_on_error=True).on_experiment_end(trials=[object()])


def test_invalid_spec_options_raise_when_the_callback_is_made():
    from boontrack.ray import BoonCallback

    with pytest.raises(InputError, match="^`pick` must be one of"):
        BoonCallback(val=VAL, pick="best")
    with pytest.raises(InputError, match="^`plots` must be true or false"):
        BoonCallback(val=VAL, plots="no")
    with pytest.raises(InputError, match="`tracking_uri` says where `mlflow_experiment` is: give both"):
        BoonCallback(val=VAL, tracking_uri="sqlite:///x.db")
    with pytest.warns(DeprecationWarning, match="`mlflow_tracking_uri` is now `tracking_uri`"):
        renamed = BoonCallback(val=VAL, mlflow_tracking_uri="sqlite:///x.db", mlflow_experiment="e")
    assert renamed.options.tracking_uri == "sqlite:///x.db"


def test_the_experiment_mode_is_the_direction_of_its_metric(tune_sweep):
    source = open_source(f"ray-tune:{tune_sweep.path}")
    assert source.direction(VAL) == Direction(maximize=True, said_by="the mode of the Tune experiment 'sweep'")
    assert source.direction(TEST) is None  # TuneConfig names one metric
    assert tune_sweep.callbacks["last"].result.summary.spec.direction_from == "the mode of the Tune experiment 'sweep'"
    contradicted = tune_sweep.callbacks["contradicts"].result
    assert contradicted.status == "failed"
    assert "the mode of the Tune experiment 'sweep' maximizes 'val_acc', but `maximize=False`" in contradicted.error


# -- the source ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("pick", ["last", "best_val_step"])
def test_source_reads_the_reported_values(tune_sweep, pick):
    source = open_source(f"ray-tune:{tune_sweep.path}")
    table = RunTable.from_frame(_read(source, pick), spec(pick))
    assert kept_values(table, tune_sweep.trial_ids) == PICKS[pick]  # exactly: JSON keeps the reported floats
    (dropped,) = table.dropped
    assert (dropped.run_id, dropped.reason) == (tune_sweep.trial_ids[ERRORED], "status 'failed'")


def _read(source, pick: str) -> pd.DataFrame:
    return source.read(MetricRequest(val=VAL, test=TEST, pick=pick))


@pytest.mark.parametrize("name, pick", [("last", "last"), ("best", "best_val_step")])
def test_source_and_callback_agree_to_the_fingerprint(tune_sweep, name, pick):
    """Same frame, same identity: the summary the callback wrote is up to date for the source."""
    result = tune_sweep.callbacks[name].result
    sink = DirectorySink(result.location)
    again = run_job(open_source(f"ray-tune:{tune_sweep.path}"), spec(pick), sink=sink)
    assert again.status == "unchanged" and again.fingerprint == result.fingerprint


def test_frame_columns(tune_sweep):
    frame = _read(open_source(f"ray-tune:{tune_sweep.path}"), "last")
    row = frame.set_index("run_id").loc[tune_sweep.trial_ids[("a", 0)]]
    assert row["status"] == "finished" and row["params.model"] == "a" and row["params.seed"] == 0
    assert row["metrics.training_iteration"] == 4 and row["duration_s"] >= 0
    assert row["tags.trial_name"].endswith(tune_sweep.trial_ids[("a", 0)])


def test_cli_summarizes_the_experiment_directory(tune_sweep, tmp_path):
    out = tmp_path / "summary"
    result = CliRunner().invoke(
        main,
        [
            "summarize",
            f"ray-tune:{tune_sweep.path}",
            "--val",
            VAL,
            "--test",
            TEST,
            "--seed-column",
            "seed",
            "--pick",
            "best-val-step",
            "--resamples",
            str(RESAMPLES),
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    stored = json.loads((out / "summary.json").read_text())
    assert list(stored["groups"]) == ["a", "b"]


@pytest.mark.parametrize(
    "location, message",
    [
        ("missing-dir", "is not a directory"),
        ("", "give the experiment directory"),
        (".", "is not a Tune experiment directory (No experiment snapshot file"),
    ],
)
def test_a_bad_path_is_one_line_exit_2(tmp_path, monkeypatch, location, message):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["summarize", f"ray-tune:{location}", "--val", VAL])
    assert result.exit_code == 2, result.output
    assert message in result.output and len(result.output.strip().splitlines()) == 1
    assert list(tmp_path.iterdir()) == []


def test_the_backend_is_registered_and_takes_no_options(tune_sweep):
    assert "ray-tune" in available_backends()
    with pytest.raises(InputError, match="unknown option"):
        open_source(f"ray-tune:{tune_sweep.path}", parent="x")
