"""The conformance sweep (:mod:`conformance.sweep`) as an Optuna study holds it.

Optuna cannot hold that sweep as the trackers do, in two ways, so the Optuna source is checked here against the
shared expectation with these differences written down, instead of joining the shared suite:

- a trial's only per-step history is its intermediate values, the objective's; the test score is a user
  attribute set once (here: the last test score the run logged), so "test at the best-validation step" is
  always that single value (the rule for a test score logged once);
- a trial whose objective is NaN is failed by Optuna itself, so the run with a NaN last validation score is
  dropped as failed, not as missing its metric.
"""

from __future__ import annotations

import warnings

import optuna
import pytest

from boontrack.backends import MetricRequest, open_source
from boontrack.runtable import RunTable
from boontrack.spec import Spec

from conformance.sweep import EXPECTED, SWEEP, TEST, VAL

pytestmark = pytest.mark.optuna

#: pick -> (kept runs, dropped runs), written by hand from the rows of SWEEP as Optuna holds them.
OPTUNA_EXPECTED = {
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
}


@pytest.fixture(scope="module")
def sweep_storage(tmp_path_factory) -> str:
    """SWEEP logged through Optuna's ask-and-tell interface: the validation score as the objective (metric name
    ``val_acc``) reported at every step, the last test score as a user attribute."""
    storage = f"sqlite:///{tmp_path_factory.mktemp('conformance') / 'optuna.db'}"
    study = optuna.create_study(study_name="conformance", storage=storage, direction="maximize")
    with pytest.warns(optuna.exceptions.ExperimentalWarning):
        study.set_metric_names([VAL])
    space = {
        "model": optuna.distributions.CategoricalDistribution(["cnn", "mlp"]),
        "seed": optuna.distributions.IntDistribution(0, 3),
    }
    for run in SWEEP:
        study.enqueue_trial({"model": run.model, "seed": run.seed})
        trial = study.ask(space)
        vals = [(step, row[VAL]) for step, row in enumerate(run.rows) if VAL in row]
        for step, value in vals:
            trial.report(value, step)
        tests = [row[TEST] for row in run.rows if TEST in row]
        if tests:
            trial.set_user_attr(TEST, tests[-1])
        if run.status == "failed":
            study.tell(trial, state=optuna.trial.TrialState.FAIL)
        elif run.status == "finished":
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)  # "The value nan is not acceptable": Optuna fails it
                study.tell(trial, vals[-1][1])
    return storage


@pytest.mark.parametrize("pick", ["last", "best_val_step"])
def test_the_optuna_source_reads_the_conformance_sweep(sweep_storage, pick):
    spec = Spec(val=VAL, test=TEST, group_by=("model",), seed_column="seed", pick=pick)
    frame = open_source(f"optuna:{sweep_storage}").read(MetricRequest(VAL, TEST, pick=pick))
    table = RunTable.from_frame(frame, spec)
    runs = table.all_runs()
    keys = dict(zip(runs["run_id"], zip(runs["params.model"], runs["params.seed"].astype(int).astype(str))))
    kept, dropped = OPTUNA_EXPECTED[pick]
    assert {keys[d.run_id]: d.reason for d in table.dropped} == dropped
    assert {keys[r.run_id]: (r.val, r.test) for r in table.runs.itertuples()} == kept
    assert table.groups == ("cnn", "mlp")
