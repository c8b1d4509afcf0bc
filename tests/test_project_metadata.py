"""The metadata a package index shows: where the docs, the source and the changelog are, and the Python versions
the classifiers claim, which requires-python must allow."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from packaging.specifiers import SpecifierSet

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def test_the_project_names_its_documentation_source_and_changelog():
    urls = PROJECT["urls"]
    assert set(urls) >= {"Documentation", "Source", "Changelog"}
    assert all(url.startswith("https://") for url in urls.values())
    assert urls["Changelog"].startswith(urls["Source"]) and (ROOT / urls["Changelog"].rsplit("/", 1)[-1]).is_file()


def test_every_python_version_classified_is_one_requires_python_allows():
    versions = [
        m.group(1)
        for c in PROJECT["classifiers"]
        if (m := re.fullmatch(r"Programming Language :: Python :: (3\.\d+)", c))
    ]
    assert versions, "no Python version among the classifiers"
    allowed = SpecifierSet(PROJECT["requires-python"])
    assert [v for v in versions if f"{v}.0" not in allowed] == []


def test_the_version_is_one_and_the_changelog_has_its_section():
    import boontrack

    assert boontrack.__version__ == PROJECT["version"]
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert re.search(rf"^## \[{re.escape(PROJECT['version'])}\]", changelog, flags=re.M), "no section for the version"
