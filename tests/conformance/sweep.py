"""The one sweep every source must read the same way, and what boontrack must make of it, written by hand.

Each run is a list of log rows; row i is logged at step i (MLflow ``step=i``, one ``wandb.log`` call per row,
so W&B's ``_step`` is i too; Tune's iteration i + 1). The expected values below are read off these rows by hand,
following the rule of :func:`boontrack.runframe.pick_best_val_step`; they are not computed by the code under test.

Not every source can hold every part of the sweep. What one cannot hold is said in its :class:`Profile`, with
the values it must then give, also written by hand: the standard is the same, what it applies to differs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

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


Expectation = tuple[dict[tuple[str, str], tuple[float, float]], dict[tuple[str, str], str]]


@dataclass(frozen=True)
class Profile:
    """What one source holds of :data:`SWEEP`, and so what it must give for each pick.

    ``expected``: pick -> (kept runs, dropped runs), or None where the source holds one value per run and
    metric and must refuse the pick (``best_val_step`` without per-step values). ``maximize``: the direction
    of ``val_acc`` the source knows (its ``direction``), None where it records none.
    """

    expected: dict[str, Expectation | None]
    maximize: bool | None = None
    #: What differs from a tracker that holds every part of the sweep, and why (for the reader of a failure).
    differences: tuple[str, ...] = field(default=())


#: A tracker that holds every part of the sweep: per-step histories of both metrics, a NaN logged, a run still
#: running.
FULL = Profile(EXPECTED)


def _ended(pick: str) -> Expectation:
    """A source whose runs are recorded when they end (a Tune experiment, a Hydra multirun): the running run
    is there as the run it became, finished, with values (0.97, 0.97) for either pick."""
    kept, dropped = EXPECTED[pick]
    return {**kept, ("mlp", "3"): (0.97, 0.97)}, {key: why for key, why in dropped.items() if key != ("mlp", "3")}


ENDED = Profile(
    {"last": _ended("last"), "best_val_step": _ended("best_val_step")},
    differences=("runs are recorded when they end: mlp-3 is finished",),
)
#: A Hydra multirun: runs recorded when they end, each job returning its last values, no per-step history.
HYDRA = Profile(
    {"last": _ended("last"), "best_val_step": None},
    differences=("runs are recorded when they end", "a job returns one value per metric"),
)
#: An Optuna study: the objective (val_acc, maximized) has a per-step history (``trial.report``), the test score
#: is a user attribute set once (the last test score the run logged), and Optuna fails a trial whose objective
#: is NaN.
OPTUNA = Profile(
    {
        "last": (EXPECTED["last"][0], {**EXPECTED["last"][1], ("mlp", "1"): "status 'failed'"}),
        "best_val_step": (
            {
                ("cnn", "0"): (0.74, 0.73),
                ("cnn", "1"): (0.80, 0.73),
                ("cnn", "2"): (0.74, 0.731),
                ("mlp", "0"): (0.66, 0.62),
                ("mlp", "2"): (0.67, 0.60),
            },
            {("mlp", "1"): "status 'failed'", ("cnn", "3"): "status 'failed'", ("mlp", "3"): "status 'running'"},
        ),
    },
    maximize=True,
    differences=("test is a user attribute set once", "a NaN objective fails the trial"),
)
#: A file of one row per run and step: an empty cell is a value not logged at that step, so the NaN logged by
#: mlp-1 at its last step reads as no value there, and its last values are those of step 1.
STEP_FILE = Profile(
    {
        "last": (
            {**EXPECTED["last"][0], ("mlp", "1"): (0.65, 0.64)},
            {key: why for key, why in EXPECTED["last"][1].items() if key != ("mlp", "1")},
        ),
        "best_val_step": EXPECTED["best_val_step"],
    },
    differences=("a NaN logged is an empty cell",),
)
