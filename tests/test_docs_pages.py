"""The pages hold together: the API reference (docs/api/*.md) names every public name (``boontrack.__all__``, the
backend contract ``boontrack.integration.__all__`` and its conformance suite ``boontrack.testing.__all__``,
``boontrack.simulate`` and each integration package's ``__all__``) and nothing else, so that what the pages show
is what docs/api/index.md calls stable (or experimental); and the README's links reach their pages and headings
(``mkdocs build --strict`` checks the docs' own links in CI)."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: The integration packages, whose ``__all__`` are the integrations' stable names (docs/api/index.md, "Stability").
INTEGRATIONS = ("boontrack_mlflow", "boontrack_wandb", "boontrack_optuna", "boontrack_ray", "boontrack_hydra")
#: Documented whole, and free to change in a minor release.
EXPERIMENTAL = ("boontrack.simulate", "boontrack.testing", "boontrack.across")
API = ROOT / "docs" / "api"
LINK = re.compile(r"\]\(([^)#\s]*)(?:#([^)\s]+))?\)")  # target (empty: this page), anchor
DIRECTIVE = re.compile(r"^::: ([\w.]+)\s*$")
MEMBER = re.compile(r"^ {8}- (\w+)\s*$")  # an entry of a directive's `members:` list


def _documented() -> dict[str, set[str]]:
    """Each module or object a ``:::`` directive names, with the members it lists (empty: all of them)."""
    documented: dict[str, set[str]] = {}
    current = None
    for page in sorted(API.glob("*.md")):
        for line in page.read_text(encoding="utf-8").splitlines():
            if directive := DIRECTIVE.match(line):
                current = directive.group(1)
                documented.setdefault(current, set())
            elif (member := MEMBER.match(line)) and current:
                documented[current].add(member.group(1))
    return documented


def _shown(name: str, documented: dict[str, set[str]], modules: tuple[str, ...]) -> bool:
    """Whether ``name`` is on a page: as its own directive, as a listed member, or as a member of a whole module."""
    for target, members in documented.items():
        if target.rsplit(".", 1)[-1] == name or name in members:
            return True
        if target in modules and not members:
            return True
    return False


@pytest.mark.parametrize(
    ("package", "modules"),
    [
        ("boontrack", ()),
        ("boontrack.integration", ()),
        ("boontrack.testing", ()),
        ("boontrack.simulate", ("boontrack.simulate",)),
        *((package, ()) for package in INTEGRATIONS),
        # the short aliases serve the callbacks of the packages above, and those are documented there
        *((f"boontrack.{alias}", ()) for alias in ("mlflow", "wandb", "optuna", "ray", "hydra")),
    ],
)
def test_the_api_reference_names_every_public_name(package, modules):
    public = set(importlib.import_module(package).__all__) - {"__version__"}
    documented = _documented()
    missing = sorted(name for name in public if not _shown(name, documented, modules))
    assert not missing, f"{package}: not in docs/api/*.md: {missing}"


def _is_module(target: str) -> bool:
    try:
        importlib.import_module(target)
    except ImportError:  # `package.module.name`: an object, not a module
        return False
    return True


def test_the_api_reference_names_nothing_but_the_stable_and_the_experimental_names():
    """The other direction: a page that shows a name promises it. A name shown must be the very object that a
    stable ``__all__`` serves (``boontrack``'s or ``boontrack.integration``'s for the core, the package's own for
    an integration, whatever module defines it), or live in an experimental module; a core module shown whole,
    without a ``members:`` list, would show its internal names too."""
    import boontrack
    import boontrack.integration

    core = {name: getattr(boontrack, name) for name in boontrack.__all__ if name != "__version__"}
    core.update({name: getattr(boontrack.integration, name) for name in boontrack.integration.__all__})
    unstable = []
    for target, members in _documented().items():
        if any(target == module or target.startswith(f"{module}.") for module in EXPERIMENTAL):
            continue
        package = target.split(".", 1)[0]
        if package in INTEGRATIONS:
            # by name: the defining modules import the trackers' SDKs, which these tests need not have
            names = members or {target.rsplit(".", 1)[-1]}
            unstable += [f"{target}: {name}" for name in sorted(names - set(importlib.import_module(package).__all__))]
            continue
        if _is_module(target):
            assert members, f"{target} is shown whole: list its stable names under `members:`"
            module, names = importlib.import_module(target), members
        else:
            parent, name = target.rsplit(".", 1)
            module, names = importlib.import_module(parent), {name}
        unstable += [
            f"{target}: {name}"
            for name in sorted(names)
            if name not in core or core[name] is not getattr(module, name, None)
        ]
    assert not unstable, f"docs/api/*.md shows names that are neither stable nor experimental: {unstable}"


def _anchors(page: Path) -> set[str]:
    """The ids MkDocs (and GitHub) give a page's headings: lower case, punctuation dropped, spaces as dashes."""
    headings = re.findall(r"^#+ (.+)$", page.read_text(encoding="utf-8"), flags=re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", heading.lower()).strip().replace(" ", "-") for heading in headings}


def test_the_readme_links_reach_their_pages():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    links = [(target, anchor) for target, anchor in LINK.findall(readme) if "://" not in target]
    assert len(links) > 20
    for target, anchor in links:
        page = ROOT / (target or "README.md")
        assert page.exists(), target
        assert not anchor or anchor in _anchors(page), f"{target}#{anchor}"


def test_the_performance_figures_were_measured_with_the_code_s_defaults():
    """docs/performance.md's generated figures state the configuration they were measured with; a change of the
    default interval method, resamples or budgets must measure them again (tests/benchmarks/performance_page.py)."""
    import sys

    sys.path.insert(0, str(ROOT / "tests" / "benchmarks"))
    from performance_page import BEGIN, END, configuration

    page = (ROOT / "docs" / "performance.md").read_text(encoding="utf-8")
    generated = page[page.index(BEGIN) : page.index(END)]
    stated = [line for line in generated.splitlines() if line.startswith("configuration: ")]
    assert stated == [configuration()], "docs/performance.md was measured with other defaults: regenerate it"


SECTION = re.compile(r"^(\s*)(Parameters|Returns|Raises|Warns|Examples)\n\1-{3,}$", flags=re.MULTILINE)


@pytest.mark.parametrize("package", ["boontrack", "boontrack.integration"])
def test_the_stable_names_docstrings_have_sections_the_api_pages_can_read(package):
    """A numpydoc section the API pages render as a table must start a line of the cleaned docstring: a line at
    column 0 inside a docstring (a backslash-continued line, say) leaves every other line indented, and the whole
    docstring then renders as raw text (boo_n_ci's did)."""
    import inspect

    griffe = pytest.importorskip("griffe", reason="needs the [docs] extra")
    module = importlib.import_module(package)
    unread = []
    for name in module.__all__:
        doc = inspect.getdoc(getattr(module, name))
        headings = [match.group(2) for match in SECTION.finditer(doc or "")]
        if not headings:
            continue
        parsed = griffe.Docstring(doc, parser="numpy").parse()
        if any(match.group(1) for match in SECTION.finditer(doc)) or len(parsed) < 2:
            unread.append(name)
    assert unread == []
