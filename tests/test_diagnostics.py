"""Diagnostics (boontrack.diagnostics) on the Boo_n paper's CBT runs and on small constructed cases."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from boontrack.diagnostics import diagnose


@pytest.fixture(scope="module")
def cbt(shared_data):
    frame = pd.read_csv(shared_data / "boon-paper" / "cbt_fixed_hyppar.csv")
    frame = frame[frame["log_path"].str.contains("/cbt-dist/", regex=False) & (frame["epoch"] > 0)]
    return frame["valid.accuracy"].to_numpy(float), frame["accuracy"].to_numpy(float)


def legacy_anderson(scores):
    """scipy's statistic and its tabulated 5% critical value (the pre-1.17 interface, rounded to 3 places)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        res = stats.anderson(scores, dist="norm")
    return res.statistic, res.critical_values[list(res.significance_level).index(5.0)]


def test_paper_runs(cbt):
    val, test = cbt
    d = diagnose(val, test, n=5)
    assert d.runs == 370
    assert d.ties == 370 - len(set(val.tolist()))
    assert d.ties == 316  # the data README: 316 repeated validation values
    assert d.mean == pytest.approx(np.mean(test), abs=1e-15)
    assert d.mean == pytest.approx(0.6316, abs=5e-5)  # paper, Appendix C.4: 63.16 %
    assert d.sd == pytest.approx(np.std(test, ddof=1), abs=1e-15)
    assert d.sd == pytest.approx(0.0094, abs=5e-5)  # 0.94 %
    assert d.median == np.median(test)
    assert d.iqr == pytest.approx(np.subtract(*np.percentile(test, [75, 25])), abs=1e-15)
    assert (d.min, d.max) == (test.min(), test.max())
    assert d.spearman_val_test == pytest.approx(stats.spearmanr(val, test).statistic, abs=1e-15)
    assert d.spearman_val_test == pytest.approx(0.18, abs=0.005)  # paper §5: 0.10 (ResNet) and 0.18 (AS Reader)
    statistic, critical = legacy_anderson(test)
    assert d.normality_statistic == pytest.approx(statistic, abs=1e-12)
    assert d.normality_critical_5pct == pytest.approx(critical, abs=5e-4)
    assert d.normal == (statistic < critical)
    assert d.warnings == () and d.n == 5


def test_normality_flags_skewed_scores():
    rng = np.random.default_rng(3)
    normal = diagnose(rng.normal(0.8, 0.01, 200))
    skewed = diagnose(rng.exponential(0.01, 200))
    assert normal.normal and not skewed.normal
    assert skewed.normality_statistic > skewed.normality_critical_5pct
    assert normal.spearman_val_test is None  # no test scores


def test_warnings_few_runs_constant_and_budget():
    d = diagnose([0.5, 0.6, 0.7], n=5)
    assert d.warnings == (
        "only 3 runs: 95 % intervals covered 92-98 % at 4-8 runs (default method; percentile 75-88 %)",
        "n = 5 exceeds the number of runs m = 3: the U estimator is undefined, V and W extrapolate",
    )
    const = diagnose(np.full(12, 0.7), np.linspace(0.6, 0.7, 12))
    assert const.warnings == ("all validation scores are equal: the best-validation run is a random one",)
    assert const.spearman_val_test is None and const.ties == 11
    flat = diagnose(np.linspace(0.6, 0.7, 12), np.full(12, 0.7))
    point = "every interval is a point, which cannot show how far other runs may score from it"
    assert flat.warnings == (f"all test scores are equal: {point}, and rank statistics are undefined",)
    assert flat.spearman_val_test is None
    assert math.isnan(flat.normality_statistic) and not flat.normal and flat.sd == 0 and flat.iqr == 0
    alone = diagnose(np.full(12, 0.7))  # the validation scores are the reported ones: their intervals are points
    assert alone.warnings == (
        "all validation scores are equal: the best-validation run is a random one",
        f"all validation scores are equal: {point}, and rank statistics are undefined",
    )


def test_single_run():
    d = diagnose([0.5])
    assert d.runs == 1 and d.ties == 0 and math.isnan(d.sd) and math.isnan(d.normality_statistic)
    assert d.warnings == (
        "only 1 run: 95 % intervals covered 92-98 % at 4-8 runs (default method; percentile 75-88 %)",
    )


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        (([0.1, np.nan],), {}, "`val` must be finite; position 1"),
        (([0.1, 0.2], [0.3]), {}, "`val` and `test` must have the same length, got 2 and 1"),
        (([],), {}, "`val` is empty"),
        (([0.1, 0.2],), {"n": 0}, "`n` must be an integer >= 1, got 0"),
        (([0.1, 0.2],), {"n": 2.5}, "`n` must be an integer >= 1, got 2.5"),
    ],
)
def test_bad_input(args, kwargs, message):
    with pytest.raises(ValueError, match=message):
        diagnose(*args, **kwargs)


@pytest.mark.parametrize("seed", range(5))
def test_spearman_and_anderson_darling_are_scipys_with_ties(seed):
    rng = np.random.default_rng(seed)
    val = np.round(rng.normal(0.8, 0.02, 25), 2)  # rounded: validation and test ties
    test = np.round(val + rng.normal(0, 0.02, 25), 2)
    d = diagnose(val, test)
    assert d.spearman_val_test == pytest.approx(stats.spearmanr(val, test).statistic, rel=1e-12)
    assert d.normality_statistic == pytest.approx(legacy_anderson(test)[0], rel=1e-12)
