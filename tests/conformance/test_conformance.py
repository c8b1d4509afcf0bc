"""Every source gives the same RunTable and the same summary numbers for the same sweep, knows the direction its
tracker records, and refuses what it cannot hold.

The sweep (:mod:`conformance.sweep`) has per-step histories, a test score logged once after training, a failed
and a running run, a tie in a run's best validation value, a NaN, and validation and test logged at different
steps. It is logged for real to each source of :data:`conformance.conftest.SOURCES` (every built-in backend and a
third party's, written against ``boontrack.integration`` alone); each must keep the runs its profile says with
the values logged and drop the others for the reasons written down by hand, for both picks.
"""

from __future__ import annotations

import math

import pandas as pd
import pytest

from boontrack.analysis import analyze
from boontrack.backends import MetricRequest
from boontrack.exceptions import InputError
from boontrack.runtable import RunTable
from boontrack.spec import Spec

from conformance.sweep import TEST, VAL

pytestmark = pytest.mark.slow

PICKS = ("last", "best_val_step")


def spec_for(pick: str) -> Spec:
    return Spec(
        val=VAL, test=TEST, group_by=("model",), seed_column="seed", n=(1, 2), n_resamples=99, pick=pick, maximize=True
    )


def read_table(logged, pick: str) -> RunTable:
    spec = spec_for(pick)
    request = MetricRequest(val=spec.val, test=spec.test, maximize=True, pick=spec.pick)
    return RunTable.from_frame(logged.open(pick).read(request), spec)


def run_keys(table: RunTable) -> dict[str, tuple[str, str]]:
    """run id -> (model, seed): the ids differ between trackers, the runs' params do not."""
    runs = table.all_runs()
    seeds = [str(int(float(seed))) for seed in runs["params.seed"]]
    return dict(zip(runs["run_id"], zip(runs["params.model"].astype(str), seeds)))


@pytest.mark.parametrize("pick", PICKS)
def test_every_source_gives_the_same_run_table_or_refuses_the_pick(logged, pick):
    expected = logged.profile.expected[pick]
    if expected is None:  # a source of one value per run and metric: no per-step values to pick from
        with pytest.raises(InputError, match="at its best validation step, and .* holds one value per run"):
            read_table(logged, pick)
        return
    table = read_table(logged, pick)
    keys = run_keys(table)
    kept = {keys[r.run_id]: (r.val, r.test) for r in table.runs.itertuples()}
    dropped = {keys[d.run_id]: d.reason for d in table.dropped}
    want_kept, want_dropped = expected
    assert dropped == want_dropped
    assert kept == want_kept  # the logged values, exactly
    assert table.groups == ("cnn", "mlp")
    assert {keys[r.run_id]: r.group for r in table.runs.itertuples()} == {key: key[0] for key in want_kept}


@pytest.mark.parametrize("pick", PICKS)
def test_every_source_gives_the_summary_numbers_of_its_runs(logged, pick):
    expected = logged.profile.expected[pick]
    if expected is None:
        pytest.skip("this source refuses the pick (the run-table test checks it)")
    kept, _ = expected
    numbers = summary_numbers(read_table(logged, pick), pick)
    reference = pd.DataFrame(
        [
            {"run_id": f"{model}-{seed}", "params.model": model, "params.seed": seed, VAL: val, TEST: test}
            for (model, seed), (val, test) in sorted(kept.items())
        ]
    )
    assert numbers == pytest.approx(summary_numbers(RunTable.from_frame(reference, spec_for(pick)), pick), abs=1e-12)
    # Boo_1 is the mean test score of the group (a closed form, independent of the estimator's code)
    for model in ("cnn", "mlp"):
        tests = [test for (m, _), (_, test) in kept.items() if m == model]
        assert math.isclose(numbers[(model, "boo_1")], sum(tests) / len(tests), abs_tol=1e-12)


def summary_numbers(table: RunTable, pick: str) -> dict[tuple[str, str], float]:
    """The point estimates a summary reports (intervals depend on the run order, which follows the ids)."""
    summary = analyze(table, spec_for(pick))
    numbers = {}
    for group in summary.groups:
        numbers[(group.label, "runs")] = float(group.runs)
        numbers[(group.label, "mean")] = group.mean.estimate
        numbers.update({(group.label, f"boo_{n}"): est.estimate for n, est in group.boo_n.items()})
        numbers.update({(group.label, f"curve_{n}"): v for n, v in zip(group.curve.n, group.curve.estimate)})
    return numbers


def test_every_source_knows_the_direction_its_tracker_records(logged):
    direction = logged.open("last").direction(VAL)
    assert (None if direction is None else direction.maximize) == logged.profile.maximize
    assert logged.open("last").direction("not_a_metric_of_the_sweep") is None
    if direction is not None:  # it says who says so, for the summary
        assert direction.said_by and Spec(val=VAL).resolve_direction(direction).direction_from == direction.said_by
