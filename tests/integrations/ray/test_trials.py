"""The one translation of Tune trials (``boontrack_ray._trials``) on the conformance sweep, handed over as Tune hands
trials to a callback: the same kept values and dropped reasons as every other source, for both picks.

A finished Tune experiment cannot hold a running trial (Tune marks trials cut short ``TERMINATED``), so the
conformance sweep is given here as trial objects with Tune's attributes; the real Tune runs are in
``test_tune.py``.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import pytest

from boontrack.backends import MetricRequest
from boontrack.runtable import RunTable
from boontrack.spec import Spec

from conformance.sweep import EXPECTED, SWEEP, TEST, VAL

pytest.importorskip("ray")
pytestmark = pytest.mark.ray

TUNE_STATUS = {"finished": "TERMINATED", "failed": "ERROR", "running": "RUNNING"}


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


def tune_results(rows) -> list[dict]:
    """Each logged row as a Tune result: its iteration (from 1) and the row's metrics."""
    return [{**row, "training_iteration": i + 1, "done": False, "config": {}} for i, row in enumerate(rows)]


def conformance_trials() -> tuple[list[Trial], dict[str, pd.DataFrame]]:
    trials, histories = [], {}
    for run in SWEEP:
        trial_id = f"{run.model}_{run.seed}"
        results = tune_results(run.rows)
        config = {"model": run.model, "seed": run.seed}
        trials.append(Trial(trial_id, TUNE_STATUS[run.status], config, results[-1]))
        histories[trial_id] = pd.DataFrame([{k: v for k, v in r.items() if k != "config"} for r in results])
    return trials, histories


@pytest.mark.parametrize("pick", ["last", "best_val_step"])
def test_the_conformance_sweep_gives_the_expected_table(pick):
    from boontrack_ray._trials import build_frame

    trials, histories = conformance_trials()
    spec = Spec(val=VAL, test=TEST, group_by=("model",), seed_column="seed", pick=pick)
    frame = build_frame(trials, MetricRequest(val=VAL, test=TEST, pick=pick), lambda: histories)
    table = RunTable.from_frame(frame, spec)
    key = {f"{run.model}_{run.seed}": run.key for run in SWEEP}
    kept, dropped = EXPECTED[pick]
    assert {key[r.run_id]: (r.val, r.test) for r in table.runs.itertuples()} == kept
    assert {key[d.run_id]: d.reason for d in table.dropped} == dropped


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
