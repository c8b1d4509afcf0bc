"""A backend written outside boontrack passes the conformance suite boontrack ships (:mod:`boontrack.testing`).

The example third party's package (``examples/third_party_backend``: a backend for Ledger, an invented tracker)
is installed as its users install it, by pip from its own ``pyproject.toml``, which declares its entry point:
into a directory of its own (nothing is added to the environment running the tests), with no index and without
its dependencies (boontrack is the one under test; hatchling, the example's build backend, is in the ``test``
extra). Its own tests then run in a fresh interpreter, from a copy of the example outside the checkout, that
sees the package only there.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import boontrack

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "third_party_backend"
BOUND_S = 300  # a hang guard on a loaded machine, not a timing


def _environment(site: Path) -> dict[str, str]:
    """This environment, with the installed example first on the path (then the boontrack under test, wherever
    this process found it). The parent's pytest settings are left out, and so are the environment's other pytest
    plugins: they cost seconds at start and are not the example's."""
    env = {name: value for name, value in os.environ.items() if not name.startswith("PYTEST_")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))
    env.update(PYTHONDONTWRITEBYTECODE="1", PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    return env


def _run(command: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=BOUND_S)


@pytest.mark.slow
def test_the_example_backend_installed_on_its_own_passes_the_shipped_conformance_suite(tmp_path):
    if importlib.util.find_spec("hatchling") is None:
        pytest.fail("hatchling builds the example backend without the network: pip install -e '.[test]'")
    project = tmp_path / "third_party_backend"
    shutil.copytree(EXAMPLE, project, ignore=shutil.ignore_patterns("__pycache__"))  # builds leave the checkout be
    site = tmp_path / "site"
    env = _environment(site)
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation", "--no-index"]
    done = _run([*pip, "--no-compile", "--target", str(site), str(project)], tmp_path, env)
    assert done.returncode == 0, done.stderr
    (dist_info,) = site.glob("boontrack_ledger-*.dist-info")
    assert "ledger = boontrack_ledger:LedgerBackend" in (dist_info / "entry_points.txt").read_text()

    # the package comes from where pip put it, boontrack from where this process imports it
    where = "import boontrack, boontrack_ledger; print(boontrack_ledger.__file__); print(boontrack.__file__)"
    done = _run([sys.executable, "-c", where], tmp_path, env)
    assert done.stdout.splitlines() == [str(site / "boontrack_ledger" / "__init__.py"), boontrack.__file__]

    done = _run([sys.executable, "-m", "pytest"], project, env)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "4 passed" in done.stdout
