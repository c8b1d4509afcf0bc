"""Trials logged by Ray's own ``WandbLoggerCallback`` in W&B's offline mode are one W&B run each: boontrack's
``wandb-offline:`` source reads them as they are and finds the numbers of the ``ray-tune:`` source.

Ray starts one logging actor (and wandb service) per trial, seconds each: a Tune run of its own, with fewer
seeds, marked slow.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from boontrack.backends import MetricRequest, open_source
from boontrack.pipeline import run_job
from boontrack.spec import Spec

from tune_sweep import BEST, ERRORED, LAST, REPORTS, RESAMPLES, TEST, VAL, make_trainable

pytest.importorskip("wandb")
pytestmark = [pytest.mark.ray, pytest.mark.wandb, pytest.mark.slow]

SEEDS = (0, 3, 4)  #: model b with seed 4 errors


@pytest.fixture(scope="module")
def wandb_tune_sweep(ray_local, wandb_env, tmp_path_factory) -> tuple[Path, Path]:
    """(W&B directory, Tune experiment directory) of one Tune run logged by ``WandbLoggerCallback`` offline."""
    from ray import tune
    from ray.air.integrations.wandb import WandbLoggerCallback

    root = tmp_path_factory.mktemp("tune-wandb")
    # The logging actors see only the arguments (and W&B's API key), not this process's WANDB_* settings.
    logger = WandbLoggerCallback(
        project="tune", mode="offline", dir=str(root), settings={"console": "off", "x_disable_stats": True}
    )
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("WANDB_MODE", "offline")
        tune.Tuner(
            make_trainable(REPORTS),
            param_space={"model": tune.grid_search(["a", "b"]), "seed": tune.grid_search(list(SEEDS))},
            tune_config=tune.TuneConfig(reuse_actors=True),
            run_config=tune.RunConfig(
                name="sweep", storage_path=str(root / "ray_results"), callbacks=[logger], verbose=0
            ),
        ).fit()
    return root, root / "ray_results" / "sweep"


@pytest.mark.parametrize("pick, expected", [("last", LAST), ("best_val_step", BEST)])
def test_wandb_offline_source_gives_the_numbers_of_the_tune_source(wandb_tune_sweep, pick, expected):
    wandb_dir, experiment = wandb_tune_sweep
    # WandbLoggerCallback puts the trial's own fields (date, pid, trial_id, ...) into the W&B config too, so
    # the default grouping (every varying param) would split every run: group by the searched key.
    spec = Spec(val=VAL, test=TEST, n=(1, 2), group_by=("model",), n_resamples=RESAMPLES, pick=pick)
    from_wandb = run_job(open_source(f"wandb-offline:{wandb_dir}"), spec).summary
    from_tune = run_job(open_source(f"ray-tune:{experiment}"), spec).summary
    (wandb_a,), (tune_a,) = ([g for g in s.groups if g.label == "a"] for s in (from_wandb, from_tune))
    assert wandb_a.runs == tune_a.runs == len(SEEDS)
    assert wandb_a.boo_n[2].estimate == tune_a.boo_n[2].estimate
    values = [expected[("a", seed)] for seed in SEEDS]
    assert wandb_a.mean.estimate == pytest.approx(sum(test for _, test in values) / len(values))


def test_each_trial_is_one_run_and_an_errored_trial_looks_finished(wandb_tune_sweep):
    """Ray's logging actor finishes the W&B run of an errored trial normally: only ``ray-tune:`` sees the error."""
    wandb_dir, experiment = wandb_tune_sweep
    request = MetricRequest(val=VAL, test=TEST)
    frame = open_source(f"wandb-offline:{wandb_dir}").read(request).set_index("run_id")
    tune_frame = open_source(f"ray-tune:{experiment}").read(request).set_index("run_id")
    assert sorted(frame.index) == sorted(tune_frame.index)  # W&B's run id is the trial id
    errored = tune_frame.index[(tune_frame["params.model"] == ERRORED[0]) & (tune_frame["params.seed"] == ERRORED[1])]
    assert tune_frame.loc[errored[0], "status"] == "failed" and frame.loc[errored[0], "status"] == "finished"
