"""RunTable: column resolution, validation, dropped runs with reasons, grouping; on real result tables."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from boontrack.exceptions import InputError
from boontrack.runtable import DroppedRun, RunTable
from boontrack.spec import Spec

ARCH = "model.encoder.architecture.type"


@pytest.fixture(scope="module")
def sst5(shared_data) -> pd.DataFrame:
    return pd.read_csv(shared_data / "show-your-work" / "sst5_cnn_lr_search.tsv", sep="\t")


def run_frame(**columns) -> pd.DataFrame:
    """A small run frame in the backends' layout; ``run_id`` r0, r1, ... unless given."""
    frame = pd.DataFrame(columns)
    if "run_id" not in frame:
        frame.insert(0, "run_id", [f"r{i}" for i in range(len(frame))])
    return frame


# --- real data -------------------------------------------------------------------------------------------------


def test_show_your_work_groups_by_architecture_with_durations(sst5):
    spec = Spec(val="best_validation_accuracy", group_by=(ARCH,), duration="training_duration")
    table = RunTable.from_frame(sst5, spec)

    assert table.groups == ("CNN", "LR")
    assert table.group_by == (ARCH,)
    assert table.dropped == ()
    assert len(table.runs) == len(sst5) == 100
    for arch in ("CNN", "LR"):
        rows = sst5[sst5[ARCH] == arch]
        val, test = table.arrays(arch)
        np.testing.assert_array_equal(val, rows["best_validation_accuracy"].to_numpy())
        np.testing.assert_array_equal(test, val)  # no test metric: test is val
        np.testing.assert_array_equal(
            table.group_runs(arch)["duration_s"].to_numpy(), rows["training_duration"].to_numpy()
        )
    # No run_id column: ids are the row positions.
    assert table.runs["run_id"].iloc[0] == "row 0"
    assert table.runs["run_id"].iloc[99] == "row 99"
    # Original columns are kept beside the canonical ones.
    assert ARCH in table.runs.columns and "model.dropout" in table.runs.columns


def test_show_your_work_test_metric_only_for_lr(sst5):
    spec = Spec(val="best_validation_accuracy", test="accuracy", group_by=(ARCH,))
    table = RunTable.from_frame(sst5, spec)

    missing = sst5["accuracy"].isna()
    assert len(table.runs) == int((~missing).sum())
    assert len(table.dropped) == int(missing.sum())
    assert {d.reason for d in table.dropped} == {"missing metric 'accuracy'"}
    assert {d.group for d in table.dropped} == set(sst5.loc[missing, ARCH])
    assert [d.run_id for d in table.dropped] == [f"row {i}" for i in np.flatnonzero(missing)]
    assert table.groups == tuple(sorted(set(sst5.loc[~missing, ARCH])))
    val, test = table.arrays("LR")
    lr = sst5[(sst5[ARCH] == "LR") & ~missing]
    np.testing.assert_array_equal(test, lr["accuracy"].to_numpy())
    np.testing.assert_array_equal(val, lr["best_validation_accuracy"].to_numpy())


def test_boon_paper_cbt_failed_epoch_zero_runs_are_dropped_with_reason(shared_data):
    raw = pd.read_csv(shared_data / "boon-paper" / "cbt_fixed_hyppar.csv")
    runs = raw[raw["log_path"].str.contains("/cbt-dist/", regex=False)]
    frame = pd.DataFrame(
        {
            "run_id": runs["log_path"],
            "status": np.where(runs["epoch"] > 0, "finished", "failed"),
            "metrics.valid.accuracy": runs["valid.accuracy"],
            "metrics.accuracy": runs["accuracy"],
        }
    )
    table = RunTable.from_frame(frame, Spec(val="valid.accuracy", test="accuracy"))

    kept = runs["epoch"] > 0
    assert len(table.runs) == int(kept.sum()) == 370  # the README's selection
    assert table.dropped == tuple(
        DroppedRun(run_id, "status 'failed'", "all") for run_id in runs.loc[~kept, "log_path"]
    )
    assert table.groups == ("all",)
    assert table.val_column == "metrics.valid.accuracy" and table.test_column == "metrics.accuracy"
    val, test = table.arrays("all")
    assert test.mean() == pytest.approx(runs.loc[kept, "accuracy"].mean())
    # Many ties in validation: the table keeps them all (316 repeated values among 370, README).
    assert val.size - np.unique(val).size == 316


def cbt_random_search_runs(shared_data) -> pd.DataFrame:
    """The random-search AS Reader runs: per log, the evaluation with the best validation accuracy."""
    raw = pd.read_csv(shared_data / "boon-paper" / "cbtrs_results.csv")
    return raw.loc[raw.groupby("log")["best_valid_accuracy"].idxmax()]


def test_boon_paper_random_search_runs_that_never_trained_are_dropped(shared_data):
    best = cbt_random_search_runs(shared_data)
    frame = pd.DataFrame(
        {
            "run_id": best["log"],
            "status": np.where(best["iterations_done"] > 0, "finished", "killed"),
            "best_valid_accuracy": best["best_valid_accuracy"],
            "test_accuracy": best["cbtest_CN_test_2500ex.txt_accuracy"],
        }
    )
    table = RunTable.from_frame(frame, Spec(val="best_valid_accuracy", test="test_accuracy"))
    trained = best["iterations_done"] > 0
    assert len(table.runs) == int(trained.sum()) == 197  # the README's selection
    assert [d.run_id for d in table.dropped] == list(best.loc[~trained, "log"])
    assert {d.reason for d in table.dropped} == {"status 'killed'"}


def test_boon_paper_cifar_selection(shared_data):
    raw = pd.read_csv(shared_data / "boon-paper" / "cifar100-resnet-oct17.csv", index_col=0)
    runs = raw[raw.index >= 35000]
    spec = Spec(val="Best Precision_valid", test="Best Precision_test")
    table = RunTable.from_frame(runs.reset_index(drop=True), spec)
    assert len(table.runs) == len(runs) == 74 and table.dropped == ()
    assert table.runs["test"].mean() == pytest.approx(runs["Best Precision_test"].mean())

    # The file's index is not a run id: one value repeats, and that run is reported, not silently merged.
    with_ids = runs.copy().rename_axis("run_id").reset_index()
    repeated = with_ids["run_id"].duplicated()
    table = RunTable.from_frame(with_ids, spec)
    assert [(d.run_id, d.reason) for d in table.dropped] == [
        (str(i), "duplicate run_id") for i in with_ids.loc[repeated, "run_id"]
    ]
    assert len(table.runs) == int((~repeated).sum())


# --- grouping --------------------------------------------------------------------------------------------------


def test_default_grouping_is_every_varying_param_except_the_seed():
    frame = run_frame(
        **{
            "params.lr": ["0.1", "0.1", "0.01", "0.01"],
            "params.dropout": [0.5, 0.2, 0.5, 0.2],
            "params.seed": ["1", "2", "1", "2"],
            "params.dataset": ["x"] * 4,  # constant: does not split, not in the labels
            "tags.seed": ["a", "b", "c", "d"],
            "metrics.acc": [0.1, 0.2, 0.3, 0.4],
        }
    )
    table = RunTable.from_frame(frame, Spec(val="acc", seed_column="seed"))
    assert table.seed_column == "params.seed"  # params before tags
    assert table.group_by == ("params.lr", "params.dropout")
    # Sorted numerically by key values: lr 0.01 before 0.1, dropout 0.2 before 0.5.
    assert table.groups == ("lr=0.01,dropout=0.2", "lr=0.01,dropout=0.5", "lr=0.1,dropout=0.2", "lr=0.1,dropout=0.5")
    assert list(table.runs["group"]) == [
        "lr=0.1,dropout=0.5",
        "lr=0.1,dropout=0.2",
        "lr=0.01,dropout=0.5",
        "lr=0.01,dropout=0.2",
    ]
    assert list(table.runs["seed"]) == ["1", "2", "1", "2"]


def test_without_seed_everything_is_one_group():
    frame = run_frame(**{"params.lr": [1, 2, 3], "metrics.acc": [0.1, 0.2, 0.3]})
    table = RunTable.from_frame(frame, Spec(val="acc"))
    assert table.groups == ("all",) and table.group_by == ()


def test_explicit_grouping_resolves_tags_and_labels_missing_and_numeric_values():
    frame = run_frame(**{"tags.model": ["b", None, "a", "b", "10", "9"], "metrics.acc": [1.0, 2, 3, 4, 5, 6]})
    table = RunTable.from_frame(frame, Spec(val="acc", group_by=("model",)))
    assert table.group_by == ("tags.model",)
    # Numbers first in numeric order (9 before 10), then text, then missing.
    assert table.groups == ("9", "10", "a", "b", "(missing)")
    assert list(table.arrays("b")[0]) == [1.0, 4.0]


def test_integral_float_keys_are_labelled_without_decimals():
    frame = run_frame(**{"params.layers": [2.0, 2.0, 3.0], "metrics.acc": [0.1, 0.2, 0.3]})
    table = RunTable.from_frame(frame, Spec(val="acc", group_by=("layers",)))
    assert table.groups == ("2", "3")


def test_a_key_column_mixing_booleans_and_numbers_labels_each_value_as_written():
    """False and 0 are one key to a hash table but two labels (0.2.0 raised a KeyError building the groups' order)."""
    frame = run_frame(**{"params.flag": [0, 1, False, "x", False, 1.0], "metrics.acc": [1.0, 2, 3, 4, 5, 6]})
    table = RunTable.from_frame(frame, Spec(val="acc", group_by=("flag",)))
    assert sorted(table.groups) == ["0", "1", "False", "x"]
    assert list(table.arrays("False")[0]) == [3.0, 5.0] and list(table.arrays("1")[0]) == [2.0, 6.0]


# --- dropped runs ----------------------------------------------------------------------------------------------


def test_each_kind_of_bad_run_is_dropped_with_its_reason():
    frame = run_frame(
        run_id=["a", "b", "c", "d", "e", "a", "f", "g"],
        status=["FINISHED", "failed", "running", "finished", "finished", "finished", None, "finished"],
        **{
            "metrics.acc": [0.5, 0.6, 0.7, np.nan, np.inf, 0.8, 0.9, 0.4],
            "metrics.test_acc": [0.5, 0.6, 0.7, 0.1, 0.2, 0.8, 0.9, -np.inf],
        },
    )
    table = RunTable.from_frame(frame, Spec(val="acc", test="test_acc"))
    assert list(table.runs["run_id"]) == ["a"]
    assert [(d.run_id, d.reason) for d in table.dropped] == [
        ("b", "status 'failed'"),
        ("c", "status 'running'"),
        ("d", "missing metric 'acc'"),
        ("e", "non-finite val (inf)"),
        ("a", "duplicate run_id"),
        ("f", "status missing"),
        ("g", "non-finite test (-inf)"),
    ]
    every = table.all_runs()
    assert len(every) == len(frame)
    assert list(every["dropped_reason"])[:2] == ["", "status 'failed'"]


def test_text_cells_meaning_missing_are_missing_not_errors():
    frame = run_frame(**{"metrics.acc": ["0.5", "", "nan", None, "0.7"]})
    table = RunTable.from_frame(frame, Spec(val="acc"))
    np.testing.assert_array_equal(table.runs["val"], [0.5, 0.7])
    assert [d.reason for d in table.dropped] == ["missing metric 'acc'"] * 3


def test_missing_run_id_cells_get_the_row_position():
    frame = pd.DataFrame({"run_id": ["x", None, "z"], "acc": [0.1, 0.2, 0.3]})
    assert list(RunTable.from_frame(frame, Spec(val="acc")).runs["run_id"]) == [
        "row 1",
        "x",
        "z",
    ]  # ids by position first


# --- errors ----------------------------------------------------------------------------------------------------


def test_unknown_column_lists_available_columns_trimmed(sst5):
    expected = r"no column 'acc' \(tried 'acc', 'metrics.acc', 'tags.acc'\); available columns: C, "
    with pytest.raises(InputError, match=expected) as info:
        RunTable.from_frame(sst5, Spec(val="acc"))
    message = str(info.value)
    assert "more)" in message and "\n" not in message
    assert len(message) < 400


def test_unknown_group_column_tries_params_and_tags():
    frame = run_frame(**{"metrics.acc": [0.1, 0.2]})
    with pytest.raises(InputError, match=r"'lr', 'params.lr', 'tags.lr'.*run_id, metrics.acc"):
        RunTable.from_frame(frame, Spec(val="acc", group_by=("lr",)))


def test_text_in_a_metric_column_names_the_run_and_value():
    frame = run_frame(**{"metrics.acc": ["0.5", "0.6", "oops", "bad"]})
    with pytest.raises(InputError, match=r"'metrics.acc' must hold numbers; run 'r2' has 'oops' \(2 such cells\)"):
        RunTable.from_frame(frame, Spec(val="acc"))


def test_boolean_metric_column_is_refused():
    with pytest.raises(InputError, match="true/false"):
        RunTable.from_frame(run_frame(acc=[True, False]), Spec(val="acc"))


def test_a_run_that_ended_before_it_started_has_an_unknown_duration_unless_durations_are_used():
    """Clock skew on one host: the run still counts, its duration is unknown; only an analysis by time (the
    duration named in the spec) drops it, saying why."""
    frame = run_frame(acc=[0.1, 0.2, 0.3], duration_s=[3.0, -1.0, 5.0])
    table = RunTable.from_frame(frame, Spec(val="acc"))
    assert table.runs["run_id"].tolist() == ["r0", "r1", "r2"] and not table.dropped
    np.testing.assert_array_equal(table.runs["duration_s"].to_numpy(), [3.0, np.nan, 5.0])

    by_time = RunTable.from_frame(frame, Spec(val="acc", duration="duration_s"))
    assert by_time.runs["run_id"].tolist() == ["r0", "r2"]
    assert [(d.run_id, d.reason) for d in by_time.dropped] == [
        ("r1", "negative duration (-1.0 s: it ended before it started)")
    ]


def test_all_runs_dropped_counts_reasons():
    frame = run_frame(status=["failed", "failed", "finished"], acc=[0.1, 0.2, np.nan])
    with pytest.raises(InputError, match=r"all 3 runs were dropped: 2 status 'failed', 1 missing metric 'acc'"):
        RunTable.from_frame(frame, Spec(val="acc"))


def test_empty_table_and_non_frame_are_refused():
    with pytest.raises(InputError, match="no runs"):
        RunTable.from_frame(pd.DataFrame({"acc": []}), Spec(val="acc"))
    with pytest.raises(InputError, match="DataFrame"):
        RunTable.from_frame({"acc": [1.0]}, Spec(val="acc"))


def test_repeated_column_names_are_refused_naming_the_column():
    frame = pd.DataFrame([[0.5, 0.1, "x"], [0.6, 0.2, "y"]], columns=["acc", "acc", "model"])
    with pytest.raises(InputError, match="^column 'acc' appears 2 times; columns must have distinct names$"):
        RunTable.from_frame(frame, Spec(val="model"))


def test_unknown_group_in_arrays():
    table = RunTable.from_frame(run_frame(acc=[0.1]), Spec(val="acc"))
    with pytest.raises(InputError, match="no group 'x'; groups are: all"):
        table.arrays("x")


def test_runs_are_in_run_id_order_and_rows_without_ids_in_row_order():
    frame = pd.DataFrame({"run_id": ["b", None, "a10", "a9", None], "acc": [0.1, 0.2, 0.3, 0.4, 0.5]})
    table = RunTable.from_frame(frame, Spec(val="acc"))
    assert list(table.runs["run_id"]) == ["row 1", "row 4", "a10", "a9", "b"]
    np.testing.assert_array_equal(table.arrays("all")[0], [0.2, 0.5, 0.3, 0.4, 0.1])
    no_ids = RunTable.from_frame(pd.DataFrame({"acc": np.arange(12.0)}), Spec(val="acc"))
    np.testing.assert_array_equal(no_ids.arrays("all")[0], np.arange(12.0))  # "row 10" after "row 9"


def test_a_metric_stored_as_a_tag_is_found_and_parsed():
    """Optuna's MLflowCallback stores user attributes as string tags: ``--test test_acc`` finds ``tags.test_acc``."""
    frame = pd.DataFrame(
        {
            "run_id": ["a", "b", "c", "d"],
            "metrics.val_acc": [0.7, 0.8, 0.9, 0.6],
            "tags.test_acc": pd.Series(["0.71", "0.81", "n/a", "pending"], dtype="str"),
        }
    )
    table = RunTable.from_frame(frame, Spec(val="val_acc", test="test_acc"))
    assert table.test_column == "tags.test_acc"
    assert table.runs["test"].tolist() == [0.71, 0.81]
    assert [(d.run_id, d.reason) for d in table.dropped] == [
        ("c", "missing metric 'test_acc'"),
        ("d", "metric 'test_acc' is not a number ('pending')"),
    ]


def test_a_metric_column_wins_over_a_tag_of_the_same_name():
    frame = pd.DataFrame({"metrics.acc": [0.5, 0.6], "tags.acc": ["x", "y"]})
    assert RunTable.from_frame(frame, Spec(val="acc")).val_column == "metrics.acc"


def test_text_in_a_file_metric_column_is_still_an_error():
    with pytest.raises(InputError, match="column 'acc' must hold numbers; run 'row 1' has 'high'"):
        RunTable.from_frame(pd.DataFrame({"acc": ["0.5", "high"]}), Spec(val="acc"))


def _benchmark() -> pd.DataFrame:
    """2 methods x 3 tasks x 2 seeds, the task a param and the method a tag, as a tracker's run frame has them."""
    tasks, methods, seeds = np.meshgrid([3, 1, "2x"], ["b", "a"], [0, 1], indexing="ij")
    return pd.DataFrame(
        {
            "params.task": tasks.ravel().astype(str),
            "tags.method": methods.ravel(),
            "params.seed": seeds.ravel(),
            "metrics.acc": np.linspace(0.1, 0.9, tasks.size),
        }
    )


def test_a_task_column_splits_each_group_by_task_and_resolves_like_a_param():
    spec = Spec(val="acc", group_by=("method",), seed_column="seed", task_column="task")
    table = RunTable.from_frame(_benchmark(), spec)
    cells = table.task_cells
    assert (cells.column, cells.tasks, cells.approaches) == ("params.task", ("1", "3", "2x"), ("a", "b"))
    assert table.group_by == ("params.task", "tags.method")
    assert table.groups[:2] == ("task=1,method=a", "task=1,method=b")
    assert cells.cells["task=2x,method=b"] == ("2x", "b")
    assert set(cells.cells) == set(table.groups)


def test_the_default_grouping_leaves_out_the_task_as_it_does_the_seed():
    frame = _benchmark().rename(columns={"tags.method": "params.method"})
    table = RunTable.from_frame(frame, Spec(val="acc", seed_column="seed", task_column="task"))
    assert table.group_by == ("params.task", "params.method")
    assert table.task_cells.approaches == ("a", "b")


@pytest.mark.parametrize(
    ("frame", "options", "message"),
    [
        (lambda f: f[f["params.task"] == "3"], {}, "the task column 'params.task' holds one task ('3')"),
        (
            lambda f: f[(f["params.task"] != "1") | (f["tags.method"] != "a")],
            {},
            "group 'a' has no runs on task '1' (1 such pairs in all)",
        ),
        (lambda f: f, {"normalize": {"1": (0, 1), "3": (0, 1)}}, "give none for task '2x' (1 task(s) in all"),
        (lambda f: f, {"group_by": ("method", "task")}, "'params.task' is the task column"),
        (lambda f: f, {"task_column": "dataset"}, "no column 'dataset' (tried 'dataset', 'params.dataset'"),
    ],
)
def test_tasks_that_cannot_be_compared_across_are_refused_before_any_work(frame, options, message):
    spec = Spec(val="acc", **{"group_by": ("method",), "seed_column": "seed", "task_column": "task", **options})
    with pytest.raises(InputError) as refused:
        RunTable.from_frame(frame(_benchmark()), spec)
    assert message in str(refused.value)
