"""No arrow up or across: the imports of every module of the core and the integrations, read from their source.

Every ``import`` statement counts, at module level, inside functions and under ``TYPE_CHECKING`` alike: each is an
arrow from one module to another. The rules:

- a file under ``integrations/`` imports from the core only its public layer, ``boontrack.integration``, and
  ``boontrack.exceptions``, and no other integration;
- ``boontrack.cli`` imports no integration (it finds ``demo`` and the Ray engine through entry points);
- the estimator core (``estimators``, ``resampling``, ``compare``) takes nothing from the layers above it;
- no module imports, directly or through others, a module that imports it (no cycle);
- no module imports an underscore name (``_helper``) from another module: what modules share is named as shared.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[1]
INTEGRATIONS = ("boontrack_mlflow", "boontrack_wandb", "boontrack_optuna", "boontrack_hydra", "boontrack_ray")
#: The estimator core, and what it may take from besides itself (the standard library, numpy and scipy aside).
CORE = ("boontrack.estimators", "boontrack.resampling", "boontrack.compare", "boontrack.across")
BELOW_THE_CORE = {
    "boontrack",
    "boontrack.choices",
    "boontrack.exceptions",
    "boontrack._validation",
    "boontrack._bootstrap",
    # how a message names a parameter (```n_resamples``` in Python): the standard library only, and what
    # _validation's messages already go through
    "boontrack.vocabulary",
}


def _modules() -> dict[str, Path]:
    """Every module of the core and the integrations: dotted name -> file."""
    roots = [REPOSITORY / "src", *sorted((REPOSITORY / "integrations").glob("*"))]
    found = {}
    for root in roots:
        for path in sorted(root.rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            if parts and parts[0] in ("boontrack", *INTEGRATIONS):
                name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
                found[name] = path
    return found


MODULES = _modules()


def _imports(name: str, path: Path) -> set[str]:
    """The modules of ours that ``name`` imports (``from a import b`` imports ``a.b`` when that is a module)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    imported = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            imported.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{anchor}.{base}".rstrip(".")
            imported.add(base)
            imported.update(f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in MODULES)
    return {module for module in imported if module.partition(".")[0] in ("boontrack", *INTEGRATIONS)}


GRAPH = {name: _imports(name, path) - {name} for name, path in MODULES.items()}


def test_the_walk_sees_every_module_and_its_imports():
    assert len(MODULES) > 50 and "boontrack.integration" in MODULES and "boontrack_wandb._online" in MODULES
    assert "boontrack_wandb._discover" in GRAPH["boontrack_wandb._online"]  # a function-level import counts
    assert "boontrack.integration" in GRAPH["boontrack_ray._callback"]


#: What an integration may import from the core: the public integration layer, and the exceptions.
PUBLIC_LAYER = ("boontrack.integration", "boontrack.exceptions")


@pytest.mark.parametrize("name", sorted(name for name in MODULES if name.startswith(INTEGRATIONS)))
def test_an_integration_imports_only_the_public_layer_and_itself(name):
    own = name.partition(".")[0]
    core = sorted(m for m in GRAPH[name] if m.partition(".")[0] == "boontrack" and m not in PUBLIC_LAYER)
    across = sorted(m for m in GRAPH[name] if m.partition(".")[0] in INTEGRATIONS and m.partition(".")[0] != own)
    assert (core, across) == ([], [])


def _underscore_imports(name: str, path: Path) -> list[str]:
    """``module.name`` for each underscore name that ``name`` imports from another module of ours (dunders such as
    ``__version__`` aside; a private module itself, ``from boontrack import _bootstrap``, is a module, not a name)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.ImportFrom):
            continue
        base = node.module or ""
        if node.level:
            anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
            base = f"{anchor}.{base}".rstrip(".")
        if base == name or base.partition(".")[0] not in ("boontrack", *INTEGRATIONS):
            continue
        for alias in node.names:
            dunder = alias.name.startswith("__") and alias.name.endswith("__")
            if alias.name.startswith("_") and not dunder and f"{base}.{alias.name}" not in MODULES:
                found.append(f"{base}.{alias.name}")
    return found


def test_the_scan_finds_an_underscore_name_imported_from_another_module(tmp_path):
    path = tmp_path / "probe.py"
    path.write_text(
        "from boontrack.reports import _borrowed, safe_name\n"
        "from boontrack import __version__, _bootstrap\n"
        "def f():\n    from .analysis import _inside\n",
        encoding="utf-8",
    )
    assert _underscore_imports("boontrack.probe", path) == ["boontrack.reports._borrowed", "boontrack.analysis._inside"]


@pytest.mark.parametrize("name", sorted(MODULES))
def test_no_module_imports_an_underscore_name_from_another(name):
    assert _underscore_imports(name, MODULES[name]) == []


def test_the_command_line_imports_no_integration():
    assert sorted(m for m in GRAPH["boontrack.cli"] if m.partition(".")[0] in INTEGRATIONS) == []


@pytest.mark.parametrize("name", CORE)
def test_the_estimator_core_takes_nothing_from_the_layers_above(name):
    # a private module, or a module of a private package (boontrack._bootstrap.kernels), is the core's machinery
    above = {m for m in GRAPH[name] - BELOW_THE_CORE - set(CORE) if not any(p.startswith("_") for p in m.split("."))}
    assert sorted(above) == []


def test_there_is_no_import_cycle():
    cycles = []
    state: dict[str, str] = {}

    def visit(module: str, path: list[str]) -> None:
        state[module] = "open"
        for other in sorted(GRAPH.get(module, ())):
            if state.get(other) == "open":
                cycles.append(path[path.index(other) :] + [other])
            elif other not in state:
                visit(other, [*path, other])
        state[module] = "done"

    for module in sorted(GRAPH):
        if module not in state:
            visit(module, [module])
    assert cycles == []
