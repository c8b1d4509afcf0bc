"""Spec: checked once when it is built, named as the caller typed it, and the metric's direction decided before
any work."""

from __future__ import annotations

import dataclasses
import warnings

import pytest

from boontrack.exceptions import InputError
from boontrack.spec import PERCENT_BOUNDS, Direction, Spec, direction_in_name, loss_word
from boontrack.vocabulary import CLI, CONFIG, HYDRA, speaking


def test_spellings_become_the_field_types():
    spec = Spec(val="v", n=5, group_by="model", pick="best-val-step")
    assert (spec.n, spec.group_by, spec.pick) == ((5,), ("model",), "best_val_step")
    assert Spec(val="v", n=[1, 5], group_by=["a", "b"]).n == (1, 5)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"val": 3}, "`val` must be a non-empty name, got 3"),
        ({"seed_column": 7}, "`seed_column` must be a non-empty name, got 7"),
        ({"n": [0, 5]}, "`n` must be a list of integers >= 1, got [0, 5]"),
        ({"n": "5"}, "`n` must be a list of integers >= 1, got '5'"),
        ({"n": [5, 5]}, "`n` repeats a budget, got [5, 5]"),
        ({"estimator": "X"}, "`estimator` must be one of V, U, W, got 'X'"),
        ({"maximize": "yes"}, "`maximize` must be true or false, got 'yes'"),
        ({"group_by": [""]}, "`group_by` must be a list of column names, got ['']"),
        ({"confidence_level": 95}, "`confidence_level` must be a number between 0 and 1, got 95"),
        ({"n_resamples": 0}, "`n_resamples` must be an integer >= 1 or 'auto', got 0"),
        ({"seed": -1}, "`seed` must be an integer >= 0, got -1"),
        ({"pick": "best"}, "`pick` must be one of last, best_val_step, got 'best'"),
    ],
)
def test_a_bad_field_is_refused_when_the_spec_is_built(options, message):
    with pytest.raises(InputError) as info:
        Spec(**{"val": "v", **options})
    assert str(info.value) == message


def test_messages_name_the_option_as_the_caller_typed_it():
    with speaking(CLI), pytest.raises(InputError, match=r"^--resamples must be an integer >= 1 or 'auto', got 0$"):
        Spec(val="v", n_resamples=0)
    with speaking(CLI), pytest.raises(InputError, match=r"^--confidence must be a number between 0 and 1"):
        Spec(val="v", confidence_level=2)
    with pytest.warns(DeprecationWarning, match="`resamples` is now `n_resamples`"):
        with pytest.raises(InputError, match=r"^`resamples` must be an integer >= 1 or 'auto', got 0$"):
            Spec.from_keywords({"val": "v", "resamples": 0}, spoken=CONFIG)
    with pytest.warns(DeprecationWarning), pytest.raises(InputError, match=r"^`minimize` must be true or false"):
        Spec.from_keywords({"val": "v", "minimize": "yes"}, spoken=HYDRA)


def test_spellings_of_0_2_0_are_accepted_for_one_release_with_a_warning():
    with pytest.warns(DeprecationWarning) as record:
        spec = Spec.from_keywords({"val": "v", "minimize": True, "resamples": 10, "confidence": 0.9})
    assert (spec.maximize, spec.n_resamples, spec.confidence_level) == (False, 10, 0.9)
    assert len(record) == 3 and all("accepted until boontrack 0.4.0" in str(w.message) for w in record)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert Spec.from_keywords({"val": "v", "maximize": False, "n_resamples": 10}).maximize is False


def test_an_option_under_both_names_or_an_unknown_one_is_refused():
    with pytest.raises(InputError, match="give `n_resamples` or its former name `resamples`, not both"):
        Spec.from_keywords({"val": "v", "resamples": 10, "n_resamples": 20})
    with pytest.raises(InputError, match=r"^unknown option `resamplez` \(known: `val`, `test`, `n`"):
        Spec.from_keywords({"val": "v", "resamplez": 10})


@pytest.mark.parametrize(
    ("name", "word"),
    [
        ("val_loss", "loss"),
        ("eval/perplexity", "perplexity"),
        ("test_error_rate", "error"),
        ("valLoss", "loss"),
        ("MSELoss", "mse"),
        ("top1_err", "err"),
        ("metrics.val_wer", "wer"),
        ("dev-ppl", "ppl"),
        ("terrain_acc", None),
        ("val_acc", None),
        ("errand_f1", None),
        ("lossless_bleu", None),
        ("test_brier", "brier"),
        ("brier_score", "brier"),
        ("val/kl", "kl"),
        ("hinge_loss", "hinge"),
        ("route_cost", "cost"),
        ("edit_distance", "distance"),
        ("test_nll", "nll"),
        ("valRMSE", "rmse"),
        ("val_mae", "mae"),
        ("eval_mse", "mse"),
        ("test_cer", "cer"),
        ("cumulative_regret", "regret"),
        ("p95_latency", "latency"),
        ("val_loss2", "loss"),
        ("val_accuracy", None),
        ("maestro_f1", None),
        ("costume_acc", None),
        ("klein_score", None),
        ("mean_distancing", None),
    ],
)
def test_loss_words_are_whole_word_parts_of_real_names(name, word):
    assert loss_word(name) == word


@pytest.mark.parametrize(
    ("name", "said"),
    [
        ("val_loss", (False, "loss")),
        ("brier_score", (False, "brier")),  # a score of a loss is a loss
        ("accuracy_loss", (False, "loss")),
        ("val_acc", (True, "acc")),
        ("val_accuracy", (True, "accuracy")),
        ("maestro_f1", (True, "f1")),
        ("test_F1", (True, "f1")),
        ("macroF1", (True, "f1")),
        ("eval/rouge1", (True, "rouge")),
        ("val_score", (True, "score")),
        ("terrain_acc", (True, "acc")),
        ("value", None),
        ("objective", None),
        ("val_metric", None),
        ("step", None),
    ],
)
def test_a_name_says_lower_higher_or_nothing(name, said):
    assert direction_in_name(name) == said


ONE_DIRECTION = "and one direction serves both: name metrics that agree, or say which way with --maximize or --minimize"


@pytest.mark.parametrize(
    ("val", "test", "refusal"),
    [
        ("val_score", "test_loss", f"'val_score' and 'test_loss' disagree on which way is better ('score' says "
         f"higher, 'loss' lower), {ONE_DIRECTION}"),
        ("val_acc", "test_err", f"'val_acc' and 'test_err' disagree on which way is better ('acc' says higher, "
         f"'err' lower), {ONE_DIRECTION}"),
        ("val_loss", "test_acc", f"'val_loss' and 'test_acc' disagree on which way is better ('loss' says lower, "
         f"'acc' higher), {ONE_DIRECTION}"),
        ("value", "test_loss", "'test_loss' looks like a loss or an error ('loss' in its name) and nothing says "
         "which way is better: add --minimize (or --maximize if higher is better)"),
        ("val_loss", "test_mse", "'val_loss' looks like a loss or an error ('loss' in its name) and nothing says "
         "which way is better: add --minimize (or --maximize if higher is better)"),
        ("val_acc", "test_acc", None),
        ("val_score", "test_maestro_f1", None),
        ("value", "test_acc", None),
        ("val_acc", None, None),
        ("value", "other", None),
    ],
)  # fmt: skip
def test_names_that_disagree_or_name_a_loss_are_refused_unless_the_caller_says_which_way(val, test, refusal):
    with speaking(CLI):
        if refusal is None:
            assert Spec(val=val, test=test).resolve_direction().maximize is True
        else:
            with pytest.raises(InputError) as refused:
                Spec(val=val, test=test).resolve_direction()
            assert str(refused.value) == refusal
        for maximize in (True, False):  # said: accepted either way, and said to be the caller's
            resolved = Spec(val=val, test=test, maximize=maximize).resolve_direction()
            assert (resolved.maximize, resolved.direction_from) == (maximize, "caller")


def test_a_refusal_names_the_setting_as_each_caller_writes_it():
    with pytest.raises(ValueError, match=r"say which way with `maximize=True` or `maximize=False`$"):
        Spec(val="val_acc", test="test_err").resolve_direction()
    with speaking(CONFIG), pytest.raises(InputError, match=r"with `maximize = true` or `maximize = false`$"):
        Spec(val="val_acc", test="test_err").resolve_direction()
    with speaking(HYDRA), pytest.raises(InputError, match=r"with `maximize: true` or `maximize: false`$"):
        Spec(val="val_acc", test="test_err").resolve_direction()


@pytest.mark.parametrize(
    ("goal", "val", "test", "refusal"),
    [
        (True, "value", "test_loss", "the Optuna study 'cnn' maximizes 'value', but 'test_loss' says lower is better "
         "('loss' in its name), and one direction serves both: name metrics that agree, or say which way with "
         "--maximize"),
        (False, "value", "test_acc", "the Optuna study 'cnn' minimizes 'value', but 'test_acc' says higher is better "
         "('acc' in its name), and one direction serves both: name metrics that agree, or say which way with "
         "--minimize"),
        (False, "value", "test_loss", None),
        (True, "value", "test_acc", None),
        (False, "val_loss", None, None),
        (True, "value", "other", None),
    ],
)  # fmt: skip
def test_a_test_name_that_contradicts_the_sources_direction_is_refused_unless_the_caller_says_it(
    goal, val, test, refusal
):
    study = Direction(maximize=goal, said_by="the Optuna study 'cnn'")
    with speaking(CLI):
        if refusal is None:
            assert Spec(val=val, test=test).resolve_direction(study).maximize is goal
        else:
            with pytest.raises(InputError) as refused:
                Spec(val=val, test=test).resolve_direction(study)
            assert str(refused.value) == refusal
        confirmed = Spec(val=val, test=test, maximize=goal).resolve_direction(study)
        assert confirmed.maximize is goal


def test_the_default_direction_names_every_name_it_read():
    assert Spec(val="val_acc", test="test_acc").resolve_direction().direction == (
        "higher is better by default: nothing said which way, and neither 'val_acc' nor 'test_acc' names a loss or "
        "an error"
    )
    assert Spec(val="acc").resolve_direction().direction == (
        "higher is better by default: nothing said which way, and 'acc' does not name a loss or an error"
    )


@pytest.mark.parametrize(
    ("metric", "lowest", "highest", "bounds"),
    [
        ("test_acc", 12.5, 99.0, PERCENT_BOUNDS),  # percentages
        ("test_acc", 0.0, 100.0, PERCENT_BOUNDS),
        ("test_acc", 0.4, 97.0, PERCENT_BOUNDS),  # a diverged run below 1 %
        ("eval/macroF1", 40.0, 60.0, PERCENT_BOUNDS),
        ("gpu_pct", 5.0, 50.0, PERCENT_BOUNDS),
        ("test_acc", 0.1, 0.9, None),  # fractions: [0, 1] for each group whose scores lie in it
        ("test_acc", 0.0, 1.0, None),
        ("test_acc", 50.0, 100.5, None),  # not a percentage
        ("test_acc", -1.0, 50.0, None),
        ("test_score", 50.0, 90.0, None),  # a score, but not a share of a whole
        ("accuracy_loss", 5.0, 50.0, None),
        ("test_err", 5.0, 50.0, None),  # an error rate in percent, or an unbounded error: not said by the name
    ],
)
def test_a_share_in_percent_is_bounded_by_100_and_says_so(metric, lowest, highest, bounds):
    resolved = Spec(val="val", test=metric).resolve_bounds(lowest, highest)
    assert resolved.bounds == bounds
    if bounds is None:
        assert resolved.stated_bounds == "" and resolved == Spec(val="val", test=metric)
    else:
        assert resolved.stated_bounds.startswith(f"bounds [0, 100]: {metric!r} names a share (")
        assert resolved.stated_bounds.endswith("and its scores lie in [0, 100], above 1: percentages")
        assert resolved.resolve_bounds(lowest, highest) is resolved  # resolved once


def test_bounds_the_caller_gives_are_kept_and_not_restated():
    given = Spec(val="val", test="test_acc", bounds=(0, 1000))
    assert given.resolve_bounds(5.0, 90.0) is given and given.stated_bounds == ""
    with pytest.raises(InputError, match="bounds_from is set by resolve_bounds, with bounds"):
        Spec(val="v", bounds_from="guessed")
    with pytest.raises(InputError, match="unknown option `bounds_from`"):
        Spec.from_keywords({"val": "v", "bounds": (0, 100), "bounds_from": "guessed"})
    inferred = Spec(val="val", test="test_acc").resolve_bounds(5.0, 90.0)
    assert Spec.from_dict(inferred.to_dict()) == inferred  # a stored summary keeps why
    assert "bounds_from" not in Spec(val="v").to_dict()  # a spec without it keeps its fingerprint


def test_a_loss_without_a_direction_is_refused_naming_the_setting_to_add():
    with pytest.raises(InputError, match=r"'val_loss' looks like a loss .* add `maximize=False` \(or `maximize=True`"):
        Spec(val="val_loss").resolve_direction()
    with speaking(CLI), pytest.raises(InputError, match=r"add --minimize \(or --maximize if higher is better\)$"):
        Spec(val="val_loss").resolve_direction()
    with speaking(CONFIG), pytest.raises(InputError, match=r"add `maximize = false` \(or `maximize = true`"):
        Spec(val="eval/perplexity").resolve_direction()
    with speaking(HYDRA), pytest.raises(InputError, match=r"add `maximize: false`"):
        Spec(val="test_error_rate").resolve_direction()


def test_the_direction_comes_from_the_source_else_the_caller_else_the_default():
    study = Direction(maximize=False, said_by="the Optuna study 'cnn'")
    from_source = Spec(val="val_loss").resolve_direction(study)
    assert (from_source.maximize, from_source.direction_from) == (False, "the Optuna study 'cnn'")
    assert from_source.direction == "lower is better, said by the Optuna study 'cnn'"
    agreed = Spec(val="value", maximize=False).resolve_direction(study)
    assert agreed.direction_from == "the Optuna study 'cnn'"  # the source's word, whoever else said it
    asked = Spec(val="val_loss", maximize=False).resolve_direction()
    assert (asked.maximize, asked.direction) == (False, "lower is better, as asked")
    default = Spec(val="terrain_acc").resolve_direction()
    assert (default.maximize, default.direction_from) == (True, "default")
    assert default.direction.startswith("higher is better by default: nothing said which way")
    assert default.resolve_direction(study) is default  # resolved once, before any work


def test_a_direction_that_contradicts_the_source_is_refused():
    study = Direction(maximize=False, said_by="the Optuna study 'cnn'")
    with pytest.raises(InputError, match=r"^the Optuna study 'cnn' minimizes 'value', but `maximize=True` says"):
        Spec(val="value", maximize=True).resolve_direction(study)
    with speaking(CLI), pytest.raises(InputError, match="but --maximize says the opposite"):
        Spec(val="value", maximize=True).resolve_direction(study)


def test_who_said_the_direction_is_set_with_the_direction_only():
    with pytest.raises(InputError, match="direction_from is set by resolve_direction"):
        Spec(val="v", direction_from="caller")
    with pytest.raises(InputError, match="unknown option `direction_from`"):
        Spec.from_keywords({"val": "v", "maximize": True, "direction_from": "caller"})
    resolved = Spec(val="v", maximize=False).resolve_direction()
    assert dataclasses.replace(resolved, n_resamples=10).direction_from == "caller"  # kept by a copy


def test_reference_scores_are_read_from_a_file_into_normalize(tmp_path):
    path = tmp_path / "refs.csv"
    path.write_text("task,low,high,source\ncola,0,1,paper\n3,-1.5,2.5,random\n")
    spec = Spec(val="v", task_column="task", normalize_with=str(path))
    assert (spec.normalize, spec.normalize_with) == ((("cola", 0.0, 1.0), ("3", -1.5, 2.5)), None)
    assert spec.to_dict()["normalize"] == [["cola", 0.0, 1.0], ["3", -1.5, 2.5]]
    assert Spec.from_dict(spec.to_dict()) == spec
    assert dataclasses.replace(spec, seed=1).normalize == spec.normalize  # read once: a replace reads nothing


def test_a_mapping_of_reference_scores_is_rows_with_the_task_as_label_text():
    spec = Spec(val="v", task_column="task", normalize={"cola": (0, 1), 3.0: (0.0, 100.0)})
    assert spec.normalize == (("cola", 0, 1), ("3", 0.0, 100.0))


def test_without_a_task_column_the_spec_keeps_its_summary_key():
    data = Spec(val="v").to_dict()
    assert not {"task_column", "normalize", "normalize_with"} & set(data)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"normalize": "z-score", "task_column": "t"}, "`normalize` must be one of none, min-max, or reference"),
        ({"normalize": {"a": (1, 1)}, "task_column": "t"}, "`normalize` must have low < high for task 'a'"),
        ({"normalize": {"a": (0, float("inf"))}, "task_column": "t"}, "two finite numbers (low, high) for task 'a'"),
        ({"normalize": "min-max"}, "`normalize` puts the scores of several tasks on one scale: give `task_column`"),
        ({"task_column": ""}, "`task_column` must be a non-empty name"),
    ],
)
def test_bad_normalizations_are_refused_naming_the_option(options, message):
    with pytest.raises(InputError) as refused:
        Spec(val="v", **options)
    assert message in str(refused.value)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("task,low\ncola,0\n", "needs a header with columns task, low, high and a row per task (no column 'high')"),
        ("task,low,high\n", "(no rows)"),
        ("task,low,high\ncola,0,x\n", "line 2: low and high must be numbers, got '0' and 'x'"),
        ("task,low,high\ncola,1,0\n", "line 2: task 'cola' must have finite low < high, got low 1, high 0"),
        ("task,low,high\ncola,0,1\ncola,0,2\n", "line 3: task 'cola' is given twice (line 2)"),
        ("task,low,high\n,0,1\n", "line 2: the task is empty"),
    ],
)
def test_a_bad_reference_file_is_one_line_naming_the_file_and_the_line(tmp_path, text, message):
    path = tmp_path / "refs.csv"
    path.write_text(text)
    with speaking(CLI), pytest.raises(InputError) as refused:
        Spec(val="v", task_column="task", normalize_with=str(path))
    assert str(refused.value).startswith(f"--normalize-with {path}")
    assert message in str(refused.value) and "\n" not in str(refused.value)
