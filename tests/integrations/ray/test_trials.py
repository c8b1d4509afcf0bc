"""The one translation of Tune trials (``boontrack_ray._trials``), on trial objects with the attributes Tune hands
to a callback. The conformance suite (``tests/conformance``) holds the ``ray-tune:`` source to the shared sweep; the
real Tune runs of the callback are in ``test_tune.py``."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import pytest

from boontrack.backends import MetricRequest

VAL, TEST = "val_acc", "test_acc"

pytest.importorskip("ray")
pytestmark = pytest.mark.ray


@dataclass
class Trial:
    """The attributes of ``ray.tune.experiment.Trial`` that boontrack reads."""

    trial_id: str
    status: str
    config: dict
    last_result: dict

    def get_error(self) -> str | None:
        return "Traceback (most recent call last):\n  ...\nRuntimeError: diverged\n" if self.status == "ERROR" else None

    def __str__(self) -> str:
        return f"train_{self.trial_id}"


def test_translation_of_one_trial():
    from boontrack_ray._trials import build_frame

    trial = Trial(
        "t1",
        "ERROR",
        {"model": "cnn", "optim": {"lr": 0.1, "betas": [0.9, 0.99]}},
        {
            VAL: 0.5,
            "nested": {"loss": 1.5},
            "done": True,
            "time_total_s": 12.0,
            "timestamp": 1_700_000_012,
            "training_iteration": 3,
            "config": {"model": "cnn"},
        },
    )
    frame = build_frame([trial], MetricRequest(val=VAL), lambda: pytest.fail("no history needed"))
    row = frame.iloc[0]
    assert (row["run_id"], row["status"], row["tags.error"], row["tags.trial_name"]) == (
        "t1",
        "failed",
        "RuntimeError: diverged",
        "train_t1",
    )
    assert (row["params.model"], row["params.optim/lr"], row["params.optim/betas"]) == ("cnn", 0.1, "[0.9, 0.99]")
    assert (row[f"metrics.{VAL}"], row["metrics.nested/loss"], row["metrics.training_iteration"]) == (0.5, 1.5, 3.0)
    assert "metrics.done" not in frame and row["duration_s"] == 12.0
    assert row["created_at"] == pd.Timestamp(1_700_000_000, unit="s", tz="UTC")


def test_a_history_row_holds_the_iteration_and_the_metrics_asked_for():
    from boontrack_ray._trials import history_row

    result = {"training_iteration": 2, "val": {"acc": 0.5}, "test/acc": 0.4, "loss": 1.0, "config": {"lr": 0.1}}
    assert history_row(result, ["val/acc", "test/acc", "missing", "loss/x"]) == {
        "training_iteration": 2,
        "val/acc": 0.5,
        "test/acc": 0.4,
    }


@pytest.mark.parametrize(
    "name, config, found",
    [
        ("seed", {"model": "a", "seed": 0}, True),
        ("params.seed", {"seed": 0}, True),
        ("train/seed", {"train": {"seed": 0}}, True),
        ("seed", {"model": "a", "lr": 0.1}, False),
    ],
)
def test_the_seed_column_is_used_only_when_a_config_has_it(name, config, found):
    from boontrack_ray._callback import _in_some_config

    assert _in_some_config(name, [Trial("t", "TERMINATED", config, {})]) is found
