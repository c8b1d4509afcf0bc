"""The profiles of the built-in sources that cannot hold every part of the conformance sweep
(:data:`boontrack.testing.SWEEP`), with the values each must then give, written by hand.

The sweep, the values a tracker that holds all of it must give (:data:`boontrack.testing.EXPECTED`), the
profiles any tracker may have (:data:`boontrack.testing.FULL`, :data:`boontrack.testing.ENDED`) and the checks
are in :mod:`boontrack.testing`, shipped for third-party backends' own tests.
"""

from __future__ import annotations

from boontrack.testing import ENDED, EXPECTED, Profile

#: A Hydra multirun: runs recorded when they end, each job returning its last values, no per-step history.
HYDRA = Profile(
    {"last": ENDED.expected["last"], "best_val_step": None},
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
