"""The built documentation site: it loads nothing from another host (an offline reader sees every page whole, the
formulas too), its formulas are MathML made at build time, and its landing page is the README.

The site is built once (``mkdocs build --strict``, about 15 s) into a temporary folder, or read from
``BOONTRACK_BUILT_SITE`` where CI has just built it (.ci/run). These tests skip without the ``docs`` extra.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
INCLUDE = re.compile(r'^--8<-- "([^"]+)"\s*$')  # pymdownx.snippets: a whole file
BUILD_TIMEOUT = 600  # seconds: 15 s alone on 2 cores, a few times that beside the rest of the suite

# The attributes through which a page makes the browser fetch something (a plain <a href> is only followed).
LOADED = {
    "script": ("src",),
    "link": ("href",),
    "img": ("src", "srcset"),
    "source": ("src", "srcset"),
    "iframe": ("src",),
    "frame": ("src",),
    "embed": ("src",),
    "object": ("data",),
    "video": ("src", "poster"),
    "audio": ("src",),
    "track": ("src",),
    "input": ("src",),
    "image": ("href", "xlink:href"),
    "use": ("href", "xlink:href"),
}
#: <link> relations that name a page without loading it.
NOT_LOADED_RELATIONS = {"canonical", "alternate", "next", "prev", "author", "license", "help"}
CSS_URL = re.compile(r"""url\(\s*['"]?([^'")\s]+)|@import\s+['"]([^'"]+)""")


def _from_another_host(url: str) -> bool:
    """Whether loading ``url`` reaches beyond the site: an absolute or protocol-relative URL (``data:`` is inline)."""
    parts = urlsplit(url.strip())
    return parts.scheme not in ("", "data") or bool(parts.netloc)


class _Loads(HTMLParser):
    """Every URL a page loads: from the elements' loading attributes, ``style`` attributes and ``<style>``."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []
        self._in_style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name: value or "" for name, value in attrs}
        relations = set(values.get("rel", "").lower().split())
        if not (tag == "link" and relations and relations <= NOT_LOADED_RELATIONS):
            for name in LOADED.get(tag, ()):
                if name == "srcset":  # "small.png 1x, big.png 2x": each candidate's URL
                    self.urls += [
                        candidate.split()[0] for candidate in values.get(name, "").split(",") if candidate.strip()
                    ]
                elif name in values:
                    self.urls.append(values[name])
        self.urls += _css_urls(values.get("style", ""))
        self._in_style = tag == "style"

    def handle_endtag(self, tag: str) -> None:
        self._in_style = False

    def handle_data(self, data: str) -> None:
        if self._in_style:
            self.urls += _css_urls(data)


def _css_urls(css: str) -> list[str]:
    return [first or second for first, second in CSS_URL.findall(css)]


def _loads(html: str) -> list[str]:
    parser = _Loads()
    parser.feed(html)
    parser.close()
    return parser.urls


@pytest.fixture(scope="session")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The built site: CI's fresh build when it names one, else a build of this checkout into a temporary folder."""
    if built := os.environ.get("BOONTRACK_BUILT_SITE"):
        path = Path(built)
        assert (path / "index.html").is_file(), f"BOONTRACK_BUILT_SITE={built} holds no built site"
        return path
    for module in ("mkdocs", "material", "mkdocstrings", "latex2mathml"):
        pytest.importorskip(module, reason="the docs extra is not installed (pip install -e '.[docs]')")
    path = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    command = [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "--site-dir", str(path)]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=BUILD_TIMEOUT)
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{done.stdout}\n{done.stderr}"
    return path


def test_the_check_sees_what_a_page_loads():
    """The parser behind the next test finds each kind of load, and passes links that are only followed."""
    page = """<html><head>
        <link rel="stylesheet" href="https://fonts.example.org/css"><link rel="preconnect" href="//fonts.example.org">
        <link rel="canonical" href="https://example.org/page/"><style>@import "https://x.example.org/a.css";</style>
        <script src="https://cdn.example.org/mathjax.js"></script><script src="assets/bundle.js"></script>
        </head><body><a href="https://example.org/">followed, not loaded</a>
        <img src="local.png" srcset="small.png 1x, https://img.example.org/big.png 2x">
        <div style="background: url('https://bg.example.org/x.png')"></div><img src="data:image/png;base64,AAAA">
        <iframe src="https://frame.example.org/"></iframe></body></html>"""
    loads = _loads(page)
    external = [url for url in loads if _from_another_host(url)]
    assert external == [
        "https://fonts.example.org/css",
        "//fonts.example.org",
        "https://x.example.org/a.css",
        "https://cdn.example.org/mathjax.js",
        "https://img.example.org/big.png",
        "https://bg.example.org/x.png",
        "https://frame.example.org/",
    ]
    assert {"assets/bundle.js", "local.png", "small.png"} <= set(loads)


def test_no_page_loads_anything_from_another_host(site: Path):
    pages = sorted(site.rglob("*.html"))
    assert len(pages) > 30  # every page of the nav was built
    found: dict[str, list[str]] = {}
    loaded = 0
    for page in pages:
        urls = _loads(page.read_text(encoding="utf-8"))
        loaded += len(urls)
        if external := [url for url in urls if _from_another_host(url)]:
            found[str(page.relative_to(site))] = external
    for sheet in sorted(site.rglob("*.css")):
        if external := [url for url in _css_urls(sheet.read_text(encoding="utf-8")) if _from_another_host(url)]:
            found[str(sheet.relative_to(site))] = external
    assert loaded > 3 * len(pages)  # each page loads its stylesheets and scripts: the parser saw them
    assert not found, f"loaded from another host: {found}"


def test_the_formulas_are_mathml_made_at_build_time(site: Path):
    """No TeX is left for a script to typeset: every formula arithmatex marked is a <math> element."""
    leftover = [str(p.relative_to(site)) for p in site.rglob("*.html") if 'class="arithmatex"' in p.read_text("utf-8")]
    assert not leftover, f"formulas left as TeX: {leftover}"
    estimators = (site / "api" / "estimators" / "index.html").read_text(encoding="utf-8")
    # The docstring of boo_n_nonparametric's eq. 7, a display formula with its TeX kept for screen readers.
    formula = re.search(
        r'<math alttext="\\widehat\{\\mathrm\{Boo\}\}_n = \\sum_\{j=1\}\^m[^"]*"[^>]*>(.*?)</math>', estimators
    )
    assert formula, "the non-parametric Boo_n formula is not MathML on api/estimators"
    assert 'display="block"' in formula.group(0) and "<munderover>" in formula.group(1)  # the sum's limits
    assert estimators.count("<math ") >= 6


def _expanded(page: Path) -> str:
    """A docs page as pymdownx.snippets includes it: each ``--8<-- "FILE"`` line replaced by the file (from the
    checkout's root, mkdocs.yml's ``base_path``)."""
    lines = []
    for line in page.read_text(encoding="utf-8").splitlines(keepends=True):
        include = INCLUDE.match(line)
        lines.append((ROOT / include.group(1)).read_text(encoding="utf-8") if include else line)
    return "".join(lines)


def test_the_site_s_landing_page_is_the_readme():
    """One text: docs/index.md is the README, included whole (its links are fitted to the site by
    docs/site_hooks.py); a sentence of its own would be a second copy to keep in step."""
    assert _expanded(DOCS / "index.md") == (ROOT / "README.md").read_text(encoding="utf-8")


def _text(html: str) -> str:
    """The words of an HTML fragment, whitespace collapsed, headings' permalink marks (¶) left out."""
    html = re.sub(r'<a class="headerlink"[^>]*>.*?</a>', "", html, flags=re.DOTALL)
    html = re.sub(r"<!--.*?-->", "", html, flags=re.DOTALL)
    parser = _Words()
    parser.feed(html)
    parser.close()
    return " ".join(" ".join(parser.words).split())


class _Words(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.words: list[str] = []

    def handle_data(self, data: str) -> None:
        self.words.append(data)


def test_the_built_landing_page_says_what_the_readme_says(site: Path):
    """The site's index shows the README's text word for word, its links to the docs pointing into the site."""
    markdown = pytest.importorskip("markdown")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    index = (site / "index.html").read_text(encoding="utf-8")
    article = re.search(r'<article class="md-content__inner md-typeset">(.*?)</article>', index, re.DOTALL)
    assert article
    rendered = markdown.markdown(readme, extensions=["tables", "toc", "pymdownx.superfences"])
    assert _text(article.group(1)) == _text(rendered)
    links = re.findall(r'<a href="([^"]+)"', article.group(1))
    assert len(links) > 20
    wrong = [link for link in links if link.startswith("docs/") or link.endswith(".md")]
    assert not wrong, f"links left as the repository's: {wrong}"
    local = [link.split("#")[0] for link in links if not _from_another_host(link) and not link.startswith("#")]
    missing = [link for link in local if not (site / link).exists()]
    assert not missing, f"links to no page of the site: {missing}"


def test_root_links_are_fitted_to_the_including_page():
    """README's and CHANGELOG's links, written from the repository root, as a page in a docs subfolder needs them;
    code and links elsewhere left alone."""
    pytest.importorskip("latex2mathml", reason="the docs extra is not installed (pip install -e '.[docs]')")
    spec = importlib.util.spec_from_file_location("site_hooks", DOCS / "site_hooks.py")
    assert spec and spec.loader
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    text = "[a](docs/guide/x.md#h) ![p](docs/p.png) [c](CHANGELOG.md) [r](README.md#two) [w](https://x.org/docs/y)"
    assert hooks.root_links(text, "integrations/mlflow.md") == (
        "[a](../guide/x.md#h) ![p](../p.png) [c](../changelog.md) [r](../index.md#two) [w](https://x.org/docs/y)"
    )
    assert hooks.root_links(text, "index.md").startswith("[a](guide/x.md#h) ![p](p.png) [c](changelog.md)")
