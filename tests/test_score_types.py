"""Scores are real numbers: a column or an array of dates, time spans, complex numbers, bytes or other objects is
refused in one line naming it (numpy and pandas would turn most of them into numbers without a word: dates into
nanoseconds since 1970, bytes and text parsed, complex numbers cut to their real part), in Python and on the
command line, before any work."""

from __future__ import annotations

import datetime
import decimal
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import boontrack as bt
from boontrack.exceptions import InputError
from boontrack.runtable import RunTable
from boontrack.spec import Spec

RUNS = 12
SCORES = np.linspace(0.5, 0.9, RUNS)
SPEC = Spec(val="val", n_resamples=99, maximize=True)

#: Columns that are not scores, and the words of the line that refuses each.
NOT_SCORES = {
    "dates": (pd.Series(pd.date_range("2024-01-01", periods=RUNS)), "column 'val' holds dates and times"),
    "dates with a time zone": (
        pd.Series(pd.date_range("2024-01-01", periods=RUNS, tz="UTC")),
        "column 'val' holds dates and times",
    ),
    "time spans": (pd.Series(pd.to_timedelta(np.arange(RUNS), unit="s")), "column 'val' holds time spans"),
    "complex numbers": (pd.Series(SCORES + 0.5j), "column 'val' holds complex numbers"),
    "complex objects": (pd.Series(list(SCORES + 0.5j), dtype=object), "column 'val' must hold numbers"),
    "bytes": (pd.Series([str(s).encode() for s in SCORES]), "column 'val' must hold numbers; run 'row 0' has b'0.5'"),
    "date objects": (
        pd.Series([datetime.date(2024, 1, 1 + i) for i in range(RUNS)]),
        "column 'val' must hold numbers; run 'row 0' has datetime.date(2024, 1, 1)",
    ),
    "lists": (pd.Series([[s] for s in SCORES]), "column 'val' must hold numbers"),
}


@pytest.mark.parametrize("kind", NOT_SCORES)
def test_a_column_of_other_things_than_numbers_is_refused_naming_it(kind):
    column, said = NOT_SCORES[kind]
    with pytest.raises(InputError, match="^" + said.replace("(", r"\(").replace(")", r"\)")) as refused:
        RunTable.from_frame(pd.DataFrame({"val": column}), SPEC)
    assert "\n" not in str(refused.value)


@pytest.mark.parametrize("kind", NOT_SCORES)
def test_an_array_of_other_things_than_numbers_is_refused_naming_the_parameter(kind):
    column, _ = NOT_SCORES[kind]
    for values in (column, column.to_numpy(), list(column)):
        with pytest.raises(ValueError, match=r"^`val` must (be a 1-D sequence of numbers|hold real numbers|be 1-D)"):
            bt.boo_n(values, n=5)


@pytest.mark.parametrize(
    "scores",
    [
        pd.Series([decimal.Decimal(str(s)) for s in SCORES]),  # a database's NUMERIC column
        pd.Series([str(s) for s in SCORES]),  # a tracker's tags, a text column of numbers
        pd.Series(SCORES.astype(np.float32)),
        pd.Series(np.arange(RUNS), dtype="Int64"),
        pd.Series(pd.Categorical(SCORES)),
    ],
)
def test_numbers_of_every_kind_are_scores(scores):
    table = RunTable.from_frame(pd.DataFrame({"val": scores}), SPEC)
    np.testing.assert_allclose(np.sort(table.arrays(table.groups[0])[0]), np.sort(scores.astype(float)))


def test_the_array_api_takes_decimals_but_not_text():
    assert bt.boo_n([decimal.Decimal(str(s)) for s in SCORES], n=5) == pytest.approx(bt.boo_n(SCORES, n=5))
    with pytest.raises(ValueError, match=r"^`val` must be a 1-D sequence of numbers, got text \(<U"):
        bt.boo_n([str(s) for s in SCORES], n=5)


@pytest.mark.parametrize(
    ("column", "said"),
    [
        (
            pd.date_range("2024-01-01", periods=RUNS),
            "Error: column 'val' holds dates and times; a metric must be a number",
        ),
        (pd.to_timedelta(np.arange(RUNS), unit="s"), "Error: column 'val' holds time spans; a metric must be a number"),
        (
            [str(s).encode() for s in SCORES],
            "Error: column 'val' must hold numbers; run 'r0' has b'0.5' (12 such cells)",
        ),
    ],
    ids=["dates", "time spans", "bytes"],
)
def test_the_command_line_refuses_them_in_one_line_before_any_work(column, said, tmp_path):
    pytest.importorskip("pyarrow")
    runs = tmp_path / "runs.parquet"
    pd.DataFrame({"run_id": [f"r{i}" for i in range(RUNS)], "val": column, "test": SCORES}).to_parquet(runs)
    out = tmp_path / "out"
    command = [sys.executable, "-c", "from boontrack.cli import main; main()", "summarize", str(runs), "--val", "val"]
    done = subprocess.run(
        [*command, "--maximize", "--out", str(out)], capture_output=True, text=True, timeout=120, check=False
    )
    assert (done.returncode, done.stdout, done.stderr) == (2, "", said + "\n")
    assert not out.exists()
