"""MkDocs hooks for the site (mkdocs.yml ``hooks:``), so that it is read offline and shares its text with the
repository's own files.

- **Math at build time.** pymdownx.arithmatex (generic mode) marks the formulas, ``\\(...\\)`` and ``\\[...\\]``;
  here each becomes MathML (latex2mathml), which browsers render themselves: no script, font or stylesheet is
  loaded for it, from the network or from the site. A formula latex2mathml cannot read fails the build.
- **Links written for the repository root.** Files at the root (README.md, CHANGELOG.md) are pages of the site
  too, included by pymdownx.snippets into ``docs/index.md`` and ``docs/changelog.md``. Their links are written
  to work on the repository (``docs/install.md``, ``CHANGELOG.md``); after the snippets are included, each link
  into ``docs/`` is made relative to the page that includes it, and a link to a root file names the page that
  includes that file, so one text serves both and ``mkdocs build --strict`` still checks every link.
"""

from __future__ import annotations

import html
import posixpath
import re
from typing import Any

from latex2mathml.converter import convert
from markdown import Markdown
from markdown.extensions import Extension
from markdown.preprocessors import Preprocessor

# What arithmatex's generic mode writes: the TeX, HTML-escaped, with its delimiters, in a span (inline) or a div.
ARITHMATEX = re.compile(
    r'<(?P<tag>span|div) class="arithmatex">\s*(?:\\\((?P<inline>.*?)\\\)|\\\[(?P<block>.*?)\\\])\s*</(?P=tag)>',
    re.DOTALL,
)
# A Markdown link or image target that starts in the repository's docs/ folder, or names a root file.
ROOT_LINK = re.compile(r"(?P<open>\]\()(?:docs/(?P<doc>[^)\s]*)|(?P<root>README\.md|CHANGELOG\.md)(?P<rest>[#)]))")
#: The site page that includes each root file (docs/index.md and docs/changelog.md are its snippets).
ROOT_PAGES = {"README.md": "index.md", "CHANGELOG.md": "changelog.md"}


def tex_to_mathml(tex: str, *, display: bool) -> str:
    """One formula as a ``<math>`` element; its TeX kept as ``alttext`` for screen readers and copying."""
    mathml = convert(tex.strip(), display="block" if display else "inline")
    return mathml.replace("<math ", f'<math alttext="{html.escape(tex.strip(), quote=True)}" ', 1)


def render_math(content: str) -> str:
    def one(match: re.Match[str]) -> str:
        block = match.group("block") is not None
        tex = html.unescape(match.group("block") if block else match.group("inline"))
        return tex_to_mathml(tex, display=block)

    return ARITHMATEX.sub(one, content)


def root_links(text: str, page_path: str) -> str:
    """The links of text written for the repository root, as the page at ``page_path`` (under docs/) needs them."""
    here = posixpath.dirname(page_path) or "."

    def one(match: re.Match[str]) -> str:
        if match.group("doc") is not None:
            return match.group("open") + posixpath.relpath(match.group("doc") or ".", here)
        target = posixpath.relpath(ROOT_PAGES[match.group("root")], here)
        return match.group("open") + target + match.group("rest")

    return ROOT_LINK.sub(one, text)


class _RootLinks(Preprocessor):
    def __init__(self, md: Markdown, page_path: list[str]) -> None:
        super().__init__(md)
        self.page_path = page_path

    def run(self, lines: list[str]) -> list[str]:
        return root_links("\n".join(lines), self.page_path[0]).split("\n")


class RootLinksExtension(Extension):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.page_path = ["index.md"]  # set by on_page_markdown before each page is converted

    def extendMarkdown(self, md: Markdown) -> None:  # noqa: N802 (Python-Markdown's name)
        # Priority 31: right after pymdownx.snippets (32), which includes the root files' text.
        md.preprocessors.register(_RootLinks(md, self.page_path), "boontrack_root_links", 31)


_ROOT_LINKS = RootLinksExtension()


def on_config(config: Any) -> Any:
    config.markdown_extensions.append(_ROOT_LINKS)
    return config


def on_page_markdown(markdown: str, page: Any, **kwargs: Any) -> str:
    # MkDocs converts one page at a time, so the preprocessor learns which page it is converting from here.
    _ROOT_LINKS.page_path[0] = page.file.src_uri
    return markdown


def on_page_content(content: str, page: Any, **kwargs: Any) -> str:
    return render_math(content)
