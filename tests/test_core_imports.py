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


#: Modules a summary of a small file in one group has no result for: each costs the command up to a second.
DEFERRED = ("scipy", "matplotlib", "mlflow", "wandb", "sqlalchemy", "numba")


def _modules_after_cli(args: list[str]) -> set[str]:
    code = textwrap.dedent(
        f"""
        import json, sys
        import boontrack.cli
        try:
            boontrack.cli.main({args!r})
        except SystemExit:
            pass
        print(json.dumps(sorted(sys.modules)))
        """
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(json.loads(result.stdout.splitlines()[-1]))


def test_importing_boontrack_and_summarize_help_load_no_numerical_library():
    loaded = _modules_after_cli(["summarize", "--help"])
    assert {"boontrack.cli", "click"} <= loaded
    assert not {m for m in loaded if m.partition(".")[0] in ("numpy", "pandas", *DEFERRED)}


def test_a_summary_of_one_group_loads_no_scipy_plotting_or_tracker(tmp_path):
    path = tmp_path / "runs.csv"
    path.write_text("val,test\n" + "".join(f"{0.5 + i / 100},{0.4 + (i * 7 % 12) / 100}\n" for i in range(12)))
    loaded = _modules_after_cli(["summarize", str(path), "--val", "val", "--test", "test", "--resamples", "200"])
    assert {"boontrack.analysis", "boontrack.diagnostics", "boontrack._special", "numpy"} <= loaded  # it summarized
    assert not {m for m in loaded for d in DEFERRED if m == d or m.startswith(d + ".")}
