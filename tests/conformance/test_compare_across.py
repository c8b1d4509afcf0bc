"""A W&B offline sweep compared with an MLflow one (``compare_sources``), against ``summarize`` on the runs of
both exported into one file.

The two trackers hold the conformance sweep (:data:`boontrack.testing.SWEEP`), each logged for real by its session
fixture; the export is written from the values kept by hand (:data:`boontrack.testing.EXPECTED`), not read back
by the code under test. The integrations never import each other: the two sources meet here only.
"""

from __future__ import annotations

import json

import pandas as pd
from click.testing import CliRunner

from boontrack import cli
from boontrack.sources import compare_sources
from boontrack.testing import EXPECTED, TEST, VAL

PICK = "last"
BUDGETS = (1, 2)  # the smaller model kept 2 runs
RESAMPLES = 99
#: What a group's summary holds from a tracker but not from the exported file.
_TRACKERS_ONLY = ("dropped", "mean_duration_s", "curve")


def _exported(path, labels) -> None:
    """The kept runs of every source in one file, a ``source`` column holding each source's label."""
    kept, _ = EXPECTED[PICK]
    rows = [
        {"source": label, "model": model, "seed": int(seed), VAL: val, TEST: test}
        for label in labels
        for (model, seed), (val, test) in kept.items()
    ]
    pd.DataFrame(rows).to_csv(path, index=False)


def _summarized(path) -> dict:
    common = ["--val", VAL, "--test", TEST, "--seed-column", "seed", "--n", ",".join(map(str, BUDGETS))]
    arguments = ["summarize", str(path), *common, "--group-by", "model", "--group-by", "source"]
    arguments += ["--resamples", str(RESAMPLES), "--compare", "all-pairs", "--maximize", "--format", "json"]
    result = CliRunner().invoke(cli.main, arguments)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_a_wandb_offline_sweep_against_an_mlflow_one(source_wandb_offline, source_mlflow_sqlite, tmp_path):
    labels = ("mlflow", "wandb")
    result = compare_sources(
        [source_mlflow_sqlite.open(), source_wandb_offline.open()],
        labels=labels,
        val=VAL,
        test=TEST,
        group_by="model",
        seed_column="seed",
        n=BUDGETS,
        n_resamples=RESAMPLES,
        pick=PICK,
        maximize=True,
        require="not-worse",
        margin=0.01,
    )
    _exported(tmp_path / "both.csv", labels)
    oracle = _summarized(tmp_path / "both.csv")
    compared = json.loads(json.dumps(result.summary.to_dict()))  # as summarize prints it
    assert list(compared["groups"]) == list(oracle["groups"])
    _, dropped = EXPECTED[PICK]
    for label, expected in oracle["groups"].items():
        group = compared["groups"][label]
        # every number of summarize, but what the file cannot hold: the runs the trackers dropped and how long
        # each run took (a curve over compute time)
        assert {k: v for k, v in group.items() if k not in _TRACKERS_ONLY} == {
            k: v for k, v in expected.items() if k not in _TRACKERS_ONLY
        }
        assert {k: group["curve"][k] for k in expected["curve"]} == expected["curve"]
        model = label.split(",")[0].removeprefix("model=")
        reasons = sorted(reason for (of, _), reason in dropped.items() if of == model)
        assert sorted(run["reason"] for run in group["dropped"]) == reasons
    # each source's group against the first's: the numbers of the same pair among all pairs of the file
    pairs = {(c["group"], c["baseline"]): c for c in oracle["comparisons"]}
    assert [(c["group"], c["baseline"]) for c in compared["comparisons"]] == [
        ("model=cnn,source=wandb", "model=cnn,source=mlflow"),
        ("model=mlp,source=wandb", "model=mlp,source=mlflow"),
    ]
    for comparison in compared["comparisons"]:
        same = pairs[comparison["group"], comparison["baseline"]]
        assert comparison["paired"] and same["paired"]  # a W&B seed 1 (a number) pairs with MLflow's "1" (text)
        for key in ("boo_n_difference", "mean_difference", "prob_superiority"):
            assert comparison[key] == same[key]
        assert comparison["paired_t"]["pvalue"] == same["paired_t"]["pvalue"]
        # the same sweep on both sides: no difference at all
        assert {d["estimate"] for d in comparison["boo_n_difference"].values()} == {0.0}
    assert result.gate.passed and result.gate.bound == 0.0 and result.gate.threshold == -0.01
