"""The core imports no tracker SDK: every module outside the integrations loads without mlflow or wandb."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

SDKS = ("mlflow", "wandb")


def test_no_core_module_imports_a_tracker_sdk():
    code = textwrap.dedent(
        f"""
        import importlib, json, pkgutil, sys
        import boontrack
        # boontrack.mlflow and boontrack.wandb are the integrations' public names, not core modules
        skipped = ("boontrack.integrations", "boontrack.mlflow", "boontrack.wandb")
        core = [m.name for m in pkgutil.walk_packages(boontrack.__path__, "boontrack.")
                if not m.name.startswith(skipped)]
        for name in core:
            importlib.import_module(name)
        print(json.dumps({{"core": core, "loaded": [s for s in {SDKS!r} if s in sys.modules]}}))
        """
    )
    result = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
    assert "boontrack.runframe" in result["core"] and "boontrack.pipeline" in result["core"]
    assert result["loaded"] == []
