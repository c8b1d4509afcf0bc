"""The one sweep every source must read the same way, and what boontrack must make of it, written by hand.

Each run is a list of log rows; row i is logged at step i (MLflow ``step=i``, one ``wandb.log`` call per row,
so W&B's ``_step`` is i too). The expected values below are read off these rows by hand, following the rule of
:func:`boontrack.runframe.pick_best_val_step`; they are not computed by the code under test.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

NAN = math.nan
VAL, TEST = "val_acc", "test_acc"


@dataclass(frozen=True)
class SweepRun:
    model: str
    seed: int
    rows: tuple[dict[str, float], ...]
    status: str = "finished"  #: "finished", "failed" or "running"

    @property
    def key(self) -> tuple[str, str]:
        return self.model, str(self.seed)


SWEEP = (
    # per-step histories of both metrics; the best epoch is not the last
    SweepRun("cnn", 0, ({VAL: 0.70, TEST: 0.68}, {VAL: 0.74, TEST: 0.71}, {VAL: 0.72, TEST: 0.73})),
    # the best validation value reached twice: the earliest epoch counts
    SweepRun("cnn", 1, ({VAL: 0.80, TEST: 0.71}, {VAL: 0.70, TEST: 0.72}, {VAL: 0.80, TEST: 0.73})),
    # the test score logged once after training (trainer.test(ckpt_path="best")), in a row of its own
    SweepRun("cnn", 2, ({VAL: 0.70}, {VAL: 0.74}, {VAL: 0.72}, {TEST: 0.731})),
    SweepRun("mlp", 0, ({VAL: 0.60, TEST: 0.58}, {VAL: 0.66, TEST: 0.61}, {VAL: 0.64, TEST: 0.62})),
    # a NaN validation score at the last epoch
    SweepRun("mlp", 1, ({VAL: 0.62, TEST: 0.60}, {VAL: 0.65, TEST: 0.63}, {VAL: NAN, TEST: 0.64})),
    # validation and test logged at different steps: no test score of the best-validation model
    SweepRun("mlp", 2, ({VAL: 0.61}, {TEST: 0.59}, {VAL: 0.67}, {TEST: 0.60}, {VAL: 0.63})),
    SweepRun("cnn", 3, ({VAL: 0.95, TEST: 0.95},), status="failed"),
    SweepRun("mlp", 3, ({VAL: 0.96, TEST: 0.96}, {VAL: 0.97, TEST: 0.97}), status="running"),
)

#: pick -> (kept runs: (model, seed) -> (val, test), dropped runs: (model, seed) -> reason)
EXPECTED = {
    "last": (
        {
            ("cnn", "0"): (0.72, 0.73),
            ("cnn", "1"): (0.80, 0.73),
            ("cnn", "2"): (0.72, 0.731),
            ("mlp", "0"): (0.64, 0.62),
            ("mlp", "2"): (0.63, 0.60),
        },
        {
            ("mlp", "1"): "missing metric 'val_acc'",
            ("cnn", "3"): "status 'failed'",
            ("mlp", "3"): "status 'running'",
        },
    ),
    "best_val_step": (
        {
            ("cnn", "0"): (0.74, 0.71),
            ("cnn", "1"): (0.80, 0.71),
            ("cnn", "2"): (0.74, 0.731),
            ("mlp", "0"): (0.66, 0.61),
            ("mlp", "1"): (0.65, 0.63),
        },
        {
            ("mlp", "2"): "missing metric 'test_acc'",
            ("cnn", "3"): "status 'failed'",
            ("mlp", "3"): "status 'running'",
        },
    ),
}
