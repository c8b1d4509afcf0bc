"""Every source gives the same RunTable and the same summary numbers for the same sweep.

The sweep (:mod:`conformance.sweep`) has per-step histories, a test score logged once after training, a
failed and a running run, a tie in a run's best validation value, a NaN, and validation and test logged at
different steps. It is logged for real to each source of :data:`conformance.conftest.SOURCES`; each must keep
the same runs with the same values and drop the same runs for the same reasons, for both picks, as written
down by hand in :data:`conformance.sweep.EXPECTED`.
"""

from __future__ import annotations

import math

import pytest

from boontrack.analysis import analyze
from boontrack.backends import MetricRequest
from boontrack.runtable import RunTable
from boontrack.spec import Spec

from conformance.sweep import EXPECTED, TEST, VAL

PICKS = ("last", "best_val_step")


def spec_for(pick: str) -> Spec:
    return Spec(val=VAL, test=TEST, group_by=("model",), seed_column="seed", n=(1, 2), n_resamples=99, pick=pick)


def read_table(open_sweep, pick: str) -> RunTable:
    spec = spec_for(pick)
    request = MetricRequest(val=spec.val, test=spec.test, maximize=spec.maximize, pick=spec.pick)
    return RunTable.from_frame(open_sweep(pick).read(request), spec)


def run_keys(table: RunTable) -> dict[str, tuple[str, str]]:
    """run id -> (model, seed): the ids differ between trackers, the runs' params do not."""
    runs = table.all_runs()
    seeds = [str(int(float(seed))) for seed in runs["params.seed"]]
    return dict(zip(runs["run_id"], zip(runs["params.model"].astype(str), seeds)))


@pytest.mark.slow
@pytest.mark.parametrize("pick", PICKS)
def test_every_source_gives_the_same_run_table(open_sweep, pick):
    table = read_table(open_sweep, pick)
    keys = run_keys(table)
    kept = {keys[r.run_id]: (r.val, r.test) for r in table.runs.itertuples()}
    dropped = {keys[d.run_id]: d.reason for d in table.dropped}
    want_kept, want_dropped = EXPECTED[pick]
    assert dropped == want_dropped
    assert kept == want_kept  # the logged values, exactly
    assert table.groups == ("cnn", "mlp")
    assert {keys[r.run_id]: r.group for r in table.runs.itertuples()} == {key: key[0] for key in want_kept}


@pytest.mark.slow
@pytest.mark.parametrize("pick", PICKS)
def test_every_source_gives_the_same_summary_numbers(open_sweep, source_csv, pick):
    numbers = summary_numbers(read_table(open_sweep, pick), pick)
    assert numbers == pytest.approx(summary_numbers(read_table(source_csv, pick), pick), abs=1e-12)
    # Boo_1 is the mean test score of the group (a closed form, independent of the estimator's code)
    kept, _ = EXPECTED[pick]
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
