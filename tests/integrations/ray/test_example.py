"""``examples/ray_tune_sweep.py`` runs as documented, in this session's Ray (not a second one), in a temporary
working directory."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"

pytestmark = [pytest.mark.ray, pytest.mark.slow]


def test_ray_tune_sweep(ray_local, tmp_path, monkeypatch, capsys):
    pytest.importorskip("sklearn")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(EXAMPLES))  # its `digits` helper, as when run from the examples folder
    example = runpy.run_path(str(EXAMPLES / "ray_tune_sweep.py"), run_name="ray_tune_sweep")
    assert example["main"](5) == 0
    out = capsys.readouterr().out
    assert f"summary: updated, {tmp_path / 'ray-example' / 'digits' / 'boontrack'}" in out
    assert "linear  5" in out and "mlp     5" in out and "same Boo_4: True" in out
    assert "]*" in out and "* doubtful: " in out  # 5 seeds: Boo_4 above half the runs, marked and said why
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ray-example"]
