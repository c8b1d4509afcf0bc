"""The sweep the Ray Tune tests run: hand-written reports and what boontrack must make of them.

The trials report :data:`REPORTS`; the expected values (:data:`LAST`, :data:`BEST`) are read off these rows by
hand, following the rule of :func:`boontrack.runframe.pick_best_val_step`; they are not computed by the code under
test.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

VAL, TEST = "val_acc", "test_acc"
N = (1, 3)
#: Few resamples: these tests check point estimates and what is written, not the intervals.
RESAMPLES = 199
ERROR = "RuntimeError: diverged at iteration 3"

#: (model, seed) -> the results the trial reports, one dict per iteration, in order; "raise" ends the trial
#: with :data:`ERROR`.
REPORTS: dict[tuple[str, int], list[Any]] = {
    # the best iteration is not the last one
    ("a", 0): [{VAL: 0.70, TEST: 0.68}, {VAL: 0.76, TEST: 0.73}, {VAL: 0.74, TEST: 0.75}, {VAL: 0.75, TEST: 0.74}],
    # the best validation value reached twice: the earliest iteration counts
    ("a", 1): [{VAL: 0.72, TEST: 0.70}, {VAL: 0.78, TEST: 0.77}, {VAL: 0.78, TEST: 0.79}, {VAL: 0.77, TEST: 0.76}],
    # the test score reported once, on its own, after the last epoch: the last result has no val_acc
    ("a", 2): [{VAL: 0.69}, {VAL: 0.73}, {VAL: 0.71}, {VAL: 0.72}, {TEST: 0.715}],
    ("a", 3): [{VAL: 0.71, TEST: 0.69}, {VAL: 0.74, TEST: 0.72}, {VAL: 0.77, TEST: 0.75}, {VAL: 0.79, TEST: 0.78}],
    ("a", 4): [{VAL: 0.75, TEST: 0.74}, {VAL: 0.73, TEST: 0.71}, {VAL: 0.72, TEST: 0.73}, {VAL: 0.70, TEST: 0.71}],
    ("b", 0): [{VAL: 0.60, TEST: 0.58}, {VAL: 0.66, TEST: 0.64}, {VAL: 0.68, TEST: 0.65}, {VAL: 0.67, TEST: 0.66}],
    ("b", 1): [{VAL: 0.62, TEST: 0.61}, {VAL: 0.64, TEST: 0.62}, {VAL: 0.63, TEST: 0.64}, {VAL: 0.65, TEST: 0.63}],
    ("b", 2): [{VAL: 0.64, TEST: 0.60}, {VAL: 0.69, TEST: 0.67}, {VAL: 0.66, TEST: 0.66}, {VAL: 0.68, TEST: 0.69}],
    ("b", 3): [{VAL: 0.58, TEST: 0.57}, {VAL: 0.61, TEST: 0.60}, {VAL: 0.66, TEST: 0.62}, {VAL: 0.64, TEST: 0.65}],
    # errors after two iterations: dropped although it reported metrics
    ("b", 4): [{VAL: 0.63, TEST: 0.62}, {VAL: 0.70, TEST: 0.69}, "raise"],
}
#: (val, test) of each kept trial with pick="last": each metric's last reported value.
LAST = {
    ("a", 0): (0.75, 0.74),
    ("a", 1): (0.77, 0.76),
    ("a", 2): (0.72, 0.715),
    ("a", 3): (0.79, 0.78),
    ("a", 4): (0.70, 0.71),
    ("b", 0): (0.67, 0.66),
    ("b", 1): (0.65, 0.63),
    ("b", 2): (0.68, 0.69),
    ("b", 3): (0.64, 0.65),
}
#: (val, test) with pick="best_val_step": the best validation iteration (the earliest of ties) and the test
#: score there (a-2: its single test score).
BEST = {
    ("a", 0): (0.76, 0.73),
    ("a", 1): (0.78, 0.77),
    ("a", 2): (0.73, 0.715),
    ("a", 3): (0.79, 0.78),
    ("a", 4): (0.75, 0.74),
    ("b", 0): (0.68, 0.65),
    ("b", 1): (0.65, 0.63),
    ("b", 2): (0.69, 0.67),
    ("b", 3): (0.66, 0.62),
}
ERRORED = ("b", 4)


@dataclass
class TuneSweep:
    """The finished experiment, and the callbacks that summarized it."""

    path: Path  #: the experiment directory (storage_path/name)
    callbacks: dict[str, Any]  #: name -> BoonCallback
    warnings: list[warnings.WarningMessage]  #: warned during ``Tuner.fit``
    trial_ids: dict[tuple[str, int], str]  #: (model, seed) -> trial id
    mlflow: dict[str, str] = field(default_factory=dict)  #: "uri", "experiment" (when mlflow is installed)


def make_trainable(reports: dict[tuple[str, int], list[Any]]):
    """A function trainable reporting ``reports`` (a closure: Ray ships it to the workers by value)."""

    def trainable(config: dict) -> None:
        from ray import tune

        for row in reports[(config["model"], config["seed"])]:
            if row == "raise":
                raise RuntimeError(ERROR.partition(": ")[2])
            tune.report(dict(row))

    return trainable
