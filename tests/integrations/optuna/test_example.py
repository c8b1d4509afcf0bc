"""examples/optuna_sweep.py runs as documented (the smoke test of tests/test_examples.py)."""

from __future__ import annotations

import pytest
from test_examples import run_example

pytestmark = [pytest.mark.optuna, pytest.mark.slow]


def test_optuna_sweep(tmp_path):
    pytest.importorskip("sklearn")
    out = run_example("optuna_sweep.py", "10", cwd=tmp_path)
    assert out.startswith("10 trials: ") and "Boo_1 = " in out
    completed = int(out.split(": ")[1].split()[0])
    for line in out.splitlines():
        if line.startswith("Boo_"):  # a budget above half the completed trials is marked, and said why
            n = int(line.split()[0].removeprefix("Boo_"))
            assert line.endswith(" *") == (n > completed / 2 or completed < 8), line
    assert ("* doubtful: " in out) == (" *\n" in out)
    assert "sampler TPESampler: not i.i.d. random search" in out
    assert out.rstrip().endswith(f"{tmp_path / 'optuna-example' / 'boon'}")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["optuna-example"]
    assert (tmp_path / "optuna-example" / "boon" / "summary.json").is_file()
