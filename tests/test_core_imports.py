"""The core imports no tracker or framework: every module of ``src/boontrack`` loads without an SDK and without
the integrations (``boontrack_<name>``), which only the short public names ``boontrack.<name>`` load, on use."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

SDKS = ("mlflow", "wandb", "optuna", "hydra", "omegaconf", "ray")
#: The integrations' short public names: modules of the core that hand over to an integration on first use.
PUBLIC_NAMES = ("boontrack.mlflow", "boontrack.wandb", "boontrack.optuna", "boontrack.hydra", "boontrack.ray")


def _import_in_fresh_interpreter(body: str) -> dict:
    code = textwrap.dedent(
        """
        import importlib, json, pkgutil, sys
        import boontrack
        core = [m.name for m in pkgutil.walk_packages(boontrack.__path__, "boontrack.")]
        """
    ) + textwrap.dedent(body)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(result.stdout)


def test_no_core_module_imports_an_sdk_or_an_integration():
    result = _import_in_fresh_interpreter(
        f"""
        for name in core:
            if name not in {PUBLIC_NAMES!r}:
                importlib.import_module(name)
        loaded = [m for m in sys.modules if m.partition(".")[0] in {SDKS!r} or m.startswith("boontrack_")]
        print(json.dumps({{"core": core, "loaded": loaded}}))
        """
    )
    assert "boontrack.runframe" in result["core"] and "boontrack.pipeline" in result["core"]
    assert not any(name.startswith("boontrack.integrations") for name in result["core"])
    assert result["loaded"] == []


def test_public_names_load_their_integration_but_not_its_sdk():
    result = _import_in_fresh_interpreter(
        f"""
        for name in {PUBLIC_NAMES!r}:
            importlib.import_module(name)
        print(json.dumps({{"loaded": [m for m in sys.modules if m.partition(".")[0] in {SDKS!r}]}}))
        """
    )
    assert result["loaded"] == []
