"""MkDocs hooks for the site (mkdocs.yml ``hooks:``), so that it is read offline.

- **Math at build time.** pymdownx.arithmatex (generic mode) marks the formulas, ``\\(...\\)`` and ``\\[...\\]``;
  here each becomes MathML (latex2mathml), which browsers render themselves: no script, font or stylesheet is
  loaded for it, from the network or from the site. A formula latex2mathml cannot read fails the build.
"""

from __future__ import annotations

import html
import re
from typing import Any

from latex2mathml.converter import convert

# What arithmatex's generic mode writes: the TeX, HTML-escaped, with its delimiters, in a span (inline) or a div.
ARITHMATEX = re.compile(
    r'<(?P<tag>span|div) class="arithmatex">\s*(?:\\\((?P<inline>.*?)\\\)|\\\[(?P<block>.*?)\\\])\s*</(?P=tag)>',
    re.DOTALL,
)


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


def on_page_content(content: str, page: Any, **kwargs: Any) -> str:
    return render_math(content)
