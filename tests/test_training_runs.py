"""Training curves of a summary (``curves``): the option in every vocabulary, the histories of a file of one row per
run and step, and ``boontrack summarize --curves`` end to end, checked against means computed here from the file;
best-so-far curves (``best-so-far:METRIC``) from the command line and the config file, checked against a running
best computed here step by step."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from boontrack import cli, vocabulary
from boontrack.exceptions import BoontrackWarning, FewRunsWarning, InputError
from boontrack.files import FileSource
from boontrack.pipeline import fingerprint, summary_key
from boontrack.reaggregate import load_config
from boontrack.runtable import RunTable
from boontrack.spec import Spec
from boontrack.training_runs import summary_histories

#: Runs per group; "b1" and "b2" stop after step 3, so steps 4-5 of group b have 3 runs (fewer than 5).
STEPS = 5


def _history_rows() -> list[dict]:
    rows = []
    for group, offset in (("a", 0.0), ("b", 0.2)):
        for seed in range(5):
            last = 3 if group == "b" and seed in (1, 2) else STEPS
            for step in range(1, last + 1):
                loss = offset + 1.0 / step + 0.01 * seed * step
                rows.append(
                    {"run_id": f"{group}{seed}", "model": group, "seed": seed, "step": step, "val_loss": loss,
                     "val_acc": 1 - loss / 4}
                )  # fmt: skip
    return rows


@pytest.fixture(scope="module")
def history_file(tmp_path_factory) -> tuple:
    """A file of 10 runs x up to 5 steps; run a0 logs step 2 twice (the second value counts) and a1 an infinite
    loss at step 4 (left out)."""
    rows = _history_rows()
    rows.insert(1, {**rows[1], "val_loss": 9.0, "val_acc": 0.0})  # a0, step 2: logged first, then replaced
    infinite = next(i for i, row in enumerate(rows) if row["run_id"] == "a1" and row["step"] == 4)
    rows[infinite] = {**rows[infinite], "val_loss": np.inf}
    path = tmp_path_factory.mktemp("training") / "history.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    expected = pd.DataFrame(_history_rows())
    expected = expected.loc[~((expected["run_id"] == "a1") & (expected["step"] == 4))]
    return path, expected


def test_curves_is_one_option_in_every_vocabulary():
    assert Spec(val="acc", curves="val_loss").curves == ("val_loss",)
    assert Spec(val="acc", curves=None).curves == Spec(val="acc").curves == ()
    assert Spec.from_keywords({"val": "acc", "curves": ["val_loss", "val_acc"]}).curves == ("val_loss", "val_acc")
    assert vocabulary.FLAGS["curves"] == "--curves"
    with vocabulary.speaking(vocabulary.CONFIG), pytest.raises(InputError, match="^`curves` repeats a metric"):
        Spec(val="acc", curves=["loss", "loss"])
    with vocabulary.speaking(vocabulary.CLI), pytest.raises(InputError, match="^--curves must be a list of metric"):
        Spec(val="acc", curves=[""])


def test_a_spec_without_curves_keeps_its_key_and_one_with_them_stores_them():
    plain, curved = Spec(val="acc"), Spec(val="acc", curves=("val_loss",))
    assert "curves" not in plain.to_dict()  # the summary key of a spec of before the option is unchanged
    assert summary_key("s", plain) != summary_key("s", curved)
    assert Spec.from_dict(curved.to_dict()) == curved


def test_a_file_gives_each_runs_history_the_last_value_at_a_step_counting(history_file):
    path, expected = history_file
    spec = Spec(val="val_acc", group_by=("model",), curves=("val_loss",))
    source = FileSource(path)
    table = RunTable.from_frame(source.read(spec_request(spec)), spec)
    with pytest.warns(BoontrackWarning, match="'val_loss': 1 logged points of 1 runs are not finite"):
        histories = summary_histories(source, spec, table)
    got = histories.astype({"run_id": str}).set_index(["run_id", "step"])["value"].sort_index()  # run_id: categorical
    want = expected.set_index(["run_id", "step"])["val_loss"].sort_index()
    pd.testing.assert_series_equal(got, want, check_names=False)
    assert dict(zip(histories["run_id"], histories["group"])) == {f"{g}{s}": g for g in "ab" for s in range(5)}


def test_the_fingerprint_follows_the_histories_only_when_curves_are_asked(history_file, tmp_path):
    path, _ = history_file
    changed = pd.read_csv(path)
    changed.loc[(changed["run_id"] == "a3") & (changed["step"] == 2), "val_loss"] += 0.5  # not a last value
    other = tmp_path / "history.csv"
    changed.to_csv(other, index=False)
    prints = {}
    for spec in (Spec(val="val_acc", group_by=("model",)), Spec(val="val_acc", group_by=("model",), curves="val_loss")):
        for file in (path, other):
            source = FileSource(file)
            table = RunTable.from_frame(source.read(spec_request(spec)), spec)
            with pytest.warns(BoontrackWarning) if spec.curves else _no_warning():
                histories = summary_histories(source, spec, table)
            prints[spec.curves, file] = fingerprint(table, spec, source_identity="same", histories=histories)
    assert prints[(), path] == prints[(), other]
    assert prints[("val_loss",), path] != prints[("val_loss",), other]


def test_summarize_curves_writes_the_means_of_the_runs_at_each_step(history_file, tmp_path):
    path, expected = history_file
    out = tmp_path / "out"
    with warnings.catch_warnings():  # shown by the command as a line on stderr
        warnings.simplefilter("always", BoontrackWarning)
        result = CliRunner().invoke(
            cli.main,
            [
                "summarize", str(path), "--val", "val_acc", "--group-by", "model", "--seed-column", "seed",
                "--curves", "val_loss", "--resamples", "99", "--no-plots", "--out", str(out),
            ],
        )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "Warning: 'val_loss': 1 logged points of 1 runs are not finite numbers" in result.output
    written = pd.read_csv(out / "training_curves.csv")
    means = expected.groupby(["model", "step"])["val_loss"].agg(["mean", "size"])
    assert written["metric"].eq("val_loss").all()
    np.testing.assert_allclose(written["mean"], means["mean"].to_numpy(), rtol=1e-12)
    assert written["runs"].tolist() == means["size"].tolist()
    assert written["enough_runs"].tolist() == (means["size"] >= 5).tolist()
    assert (written["ci_low"] <= written["mean"]).all() and (written["mean"] <= written["ci_high"]).all()
    assert "Training curve of 'val_loss', group a: 5 steps (1-5), 4-5 runs; 1 steps with fewer than 5" in result.output
    assert "group b: 5 steps (1-5), 3-5 runs; 2 steps with fewer than 5 runs (4-5)" in result.output


def test_curves_of_a_file_without_steps_is_refused_in_one_line(tmp_path):
    path = tmp_path / "runs.csv"
    pd.DataFrame({"run_id": ["r1", "r2"], "acc": [0.5, 0.6]}).to_csv(path, index=False)
    result = CliRunner().invoke(cli.main, ["summarize", str(path), "--val", "acc", "--curves", "loss"])
    assert result.exit_code == 2
    assert "holds one row per run and no histories: training curves need one row per run and step" in result.output


def test_a_best_so_far_curve_follows_the_summarys_validation_metric_in_every_vocabulary():
    spec = Spec(val="val_loss", test="test_acc", curves=["best-so-far:val_loss", "best-so-far:metrics.test_acc"])
    assert spec.curves == ("best-so-far:val_loss", "best-so-far:metrics.test_acc")
    with vocabulary.speaking(vocabulary.CLI), pytest.raises(InputError) as refused:
        Spec(val="val_acc", test="test_acc", curves=["best-so-far:val_loss"])
    assert str(refused.value) == (
        "--curves 'best-so-far:val_loss': a best-so-far curve follows the validation metric, in the summary's "
        "direction: name --val ('val_acc') or --test ('test_acc') after 'best-so-far:', or make 'val_loss' the "
        "validation metric (--val)"
    )
    with vocabulary.speaking(vocabulary.CONFIG), pytest.raises(InputError, match="^`curves` 'best-so-far:test_acc'.*"):
        Spec(val="val_acc", curves=["best-so-far:test_acc"])  # no test metric to follow
    for bare in ("best-so-far", "best-so-far:"):
        with pytest.raises(InputError, match=r"^`curves` must name the metric of a best-so-far curve \(best-so-far:M"):
            Spec(val="val_acc", curves=[bare])


#: Steps of every run of :func:`sweep_of_steps`.
BEST_STEPS = 8


@pytest.fixture(scope="module")
def sweep_of_steps(tmp_path_factory) -> pd.DataFrame:
    """2 groups x 5 runs x 8 steps of a noisy loss and test accuracy (their best is seldom the last step); run b4
    did not log its test accuracy at step 3 (an empty cell)."""
    rng = np.random.default_rng(7)
    rows = [
        {"run_id": f"{group}{seed}", "model": group, "seed": seed, "step": step,
         "val_loss": float(rng.uniform(0.2, 1.0)), "test_acc": float(rng.uniform(0.5, 0.9))}
        for group in "ab" for seed in range(5) for step in range(1, BEST_STEPS + 1)
    ]  # fmt: skip
    frame = pd.DataFrame(rows)
    frame.loc[(frame["run_id"] == "b4") & (frame["step"] == 3), "test_acc"] = np.nan
    return frame


def _running_best(frame: pd.DataFrame, *, tested: bool) -> pd.DataFrame:
    """Per run and step, the lowest val_loss so far (the first of equal ones) or test_acc at its step, walked step
    by step; with ``tested``, over the steps that logged a test accuracy only."""
    rows = []
    for _, run in frame.sort_values("step").groupby("run_id"):
        best = None
        for row in run.itertuples():
            if tested and np.isnan(row.test_acc):
                continue
            if best is None or row.val_loss < best[0]:
                best = (row.val_loss, row.test_acc)
            rows.append({"model": row.model, "step": row.step, "value": best[1] if tested else best[0]})
    return pd.DataFrame(rows).groupby(["model", "step"])["value"].agg(["mean", "size"])


def test_summarize_best_so_far_averages_each_runs_running_best_and_its_test_at_that_step(sweep_of_steps, tmp_path):
    path, out = tmp_path / "steps.csv", tmp_path / "out"
    sweep_of_steps.to_csv(path, index=False)
    with warnings.catch_warnings():  # shown by the command as a line on stderr
        warnings.simplefilter("always", BoontrackWarning)
        result = CliRunner().invoke(
            cli.main,
            [
                "summarize", str(path), "--val", "val_loss", "--test", "test_acc", "--minimize", "--group-by",
                "model", "--curves", "best-so-far:val_loss", "--curves", "best-so-far:test_acc", "--resamples",
                "99", "--no-plots", "--out", str(out),
            ],
        )  # fmt: skip
    assert result.exit_code == 0, result.output
    written = pd.read_csv(out / "training_curves.csv")
    for entry, tested in (("best-so-far:val_loss", False), ("best-so-far:test_acc", True)):
        curve, expected = written.loc[written["metric"] == entry], _running_best(sweep_of_steps, tested=tested)
        np.testing.assert_allclose(curve["mean"], expected["mean"].to_numpy(), rtol=1e-12)
        assert curve["runs"].tolist() == expected["size"].tolist()
        assert (curve["ci_low"] <= curve["mean"]).all() and (curve["mean"] <= curve["ci_high"]).all()
        banded = curve.loc[curve["enough_runs"]]  # b4 without a test at step 3: 4 runs there, no simultaneous band
        assert (banded["simultaneous_low"] <= banded["ci_low"]).all()
        assert (banded["ci_high"] <= banded["simultaneous_high"]).all()
        assert curve["simultaneous_low"].isna().sum() == (~curve["enough_runs"]).sum() == int(tested)
    assert (
        "Warning: training curves of 'best-so-far:test_acc': 1 points of 'val_loss' of 1 runs have no 'test_acc' at "
        "their step and are left out" in result.output
    )
    assert "Training curve of 'best-so-far:val_loss': each run's best 'val_loss' so far; lower is better, as asked" in (
        result.output
    )
    assert "each run's 'test_acc' at its best 'val_loss' so far; lower is better, as asked" in result.output


def test_a_best_so_far_curve_of_a_loss_without_a_direction_is_refused(sweep_of_steps, tmp_path):
    path = tmp_path / "steps.csv"
    sweep_of_steps.to_csv(path, index=False)
    arguments = ["summarize", str(path), "--val", "val_loss", "--curves", "best-so-far:val_loss"]
    result = CliRunner().invoke(cli.main, arguments)
    assert result.exit_code == 2
    assert "'val_loss' looks like a loss or an error ('loss' in its name) and nothing says which way" in result.output


def test_a_best_so_far_test_curve_of_a_test_logged_apart_from_validation_is_refused(tmp_path):
    path = tmp_path / "steps.csv"
    rows = [
        {"run_id": f"r{seed}", "step": step, "val_loss": 1 / step, "test_acc": None}
        for seed in range(5)
        for step in (1, 2)
    ]
    rows += [
        {"run_id": f"r{seed}", "step": 3, "val_loss": None, "test_acc": 0.8} for seed in range(5)
    ]  # after training
    pd.DataFrame(rows).to_csv(path, index=False)
    arguments = ["summarize", str(path), "--val", "val_loss", "--test", "test_acc", "--minimize"]
    result = CliRunner().invoke(cli.main, [*arguments, "--curves", "best-so-far:test_acc"])
    assert result.exit_code == 2
    assert (
        "--curves 'best-so-far:test_acc': no run logged 'test_acc' at a step where it logged 'val_loss'"
        in result.output
    )


def test_a_config_job_asks_for_best_so_far_curves_in_its_own_words(sweep_of_steps, tmp_path):
    sweep_of_steps.to_csv(tmp_path / "steps.csv", index=False)
    config = tmp_path / "boontrack.toml"
    job = (
        '[[jobs]]\nname = "steps"\nsource = "steps.csv"\nval = "val_loss"\nmaximize = false\ngroup_by = ["model"]\n'
        'n_resamples = 99\nplots = false\nout = "summary"\ncurves = ["best-so-far:val_loss"]\n'
    )
    config.write_text(job)
    result = CliRunner().invoke(cli.main, ["reaggregate", "--config", str(config)])
    assert result.exit_code == 0, result.output
    written = pd.read_csv(tmp_path / "summary" / "training_curves.csv")
    np.testing.assert_allclose(written["mean"], _running_best(sweep_of_steps, tested=False)["mean"], rtol=1e-12)
    config.write_text(job.replace("best-so-far:val_loss", "best-so-far:val_acc"))
    with pytest.raises(
        InputError, match="^job 'steps': `curves` 'best-so-far:val_acc': .* name `val` \\('val_loss'\\)"
    ):
        load_config(config)


def spec_request(spec: Spec):
    from boontrack.backends import MetricRequest

    return MetricRequest(val=spec.val, test=spec.test, maximize=True, pick=spec.pick)


def _no_warning():
    import contextlib

    return contextlib.nullcontext()


@pytest.fixture(autouse=True)
def _few_runs_expected():
    """Group b has 3 runs at its last steps: each summary warns it, which these tests do not check."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FewRunsWarning)
        yield
