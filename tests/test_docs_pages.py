"""The pages hold together: the API reference (docs/api/*.md) names every public name (``boontrack.__all__``, the
backend contract ``boontrack.integration.__all__`` and its conformance suite ``boontrack.testing.__all__``,
``boontrack.simulate`` and each integration package's ``__all__``), and the README's links reach their pages and
headings (``mkdocs build --strict`` checks the docs' own links in CI)."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
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
        ("boontrack_mlflow", ()),
        ("boontrack_wandb", ()),
        ("boontrack_optuna", ()),
        ("boontrack_ray", ()),
        ("boontrack_hydra", ()),
    ],
)
def test_the_api_reference_names_every_public_name(package, modules):
    public = set(importlib.import_module(package).__all__) - {"__version__"}
    documented = _documented()
    missing = sorted(name for name in public if not _shown(name, documented, modules))
    assert not missing, f"{package}: not in docs/api/*.md: {missing}"


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
