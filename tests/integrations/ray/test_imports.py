"""Importing ``boontrack.ray`` or ``boontrack_ray`` is cheap (no ray, numpy or pandas); the callback class, a
``tune.Callback``, is made when first asked for."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

HEAVY = ("ray", "numpy", "pandas", "mlflow")


def _loaded_after(code: str) -> dict:
    script = textwrap.dedent(code) + textwrap.dedent(
        f"""
        import json, sys
        print(json.dumps({{"loaded": sorted({{m.partition(".")[0] for m in sys.modules}} & set({HEAVY!r}))}}))
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_importing_the_short_name_and_the_package_loads_nothing_heavy():
    assert (
        _loaded_after("import boontrack.ray, boontrack_ray\nfrom boontrack_ray import RayTuneBackend")["loaded"] == []
    )


def test_the_callback_is_a_tune_callback_made_on_first_use():
    pytest.importorskip("ray")
    loaded = _loaded_after(
        """
        import boontrack.ray
        from ray import tune
        assert issubclass(boontrack.ray.BoonCallback, tune.Callback)
        """
    )
    assert "ray" in loaded["loaded"] and "mlflow" not in loaded["loaded"]


@pytest.mark.parametrize("use", ["boontrack.ray.BoonCallback", "open_source('ray-tune:.')"])
def test_without_ray_the_error_names_the_extra(use):
    code = f"""
        import sys
        sys.modules["ray"] = None  # as if ray were not installed
        import boontrack.ray
        from boontrack.backends import open_source
        from boontrack.exceptions import MissingExtraError
        try:
            {use}
        except MissingExtraError as exc:
            print(exc)
        """
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, check=True)
    assert 'pip install ".[ray]" in a boontrack checkout' in done.stdout
