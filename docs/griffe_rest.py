"""A griffe extension for the docs build: the docstrings' reST markup as Markdown. Math (``.. math::`` blocks and
``:math:`` roles) becomes the ``$$...$$`` and ``$...$`` that pymdownx.arithmatex passes to MathJax, so the
equations render instead of reaching Markdown as text whose underscores become emphasis; Sphinx's cross-reference
roles (``:func:`~boontrack.compare.adjust_pvalues```) become code spans (``adjust_pvalues``)."""

from __future__ import annotations

import re
from typing import Any

import griffe

# `.. math:: FIRST LINE` and its more-indented continuation lines, up to a blank line.
MATH_BLOCK = re.compile(r"^(?P<indent>[ \t]*)\.\. math:: ?(?P<body>.*(?:\n(?P=indent)[ \t]+\S.*)*)", re.MULTILINE)
MATH_ROLE = re.compile(r":math:`([^`]+)`")
REFERENCE_ROLE = re.compile(r":(?:func|class|attr|meth|mod|data|exc|obj):`(~?)([^`]+)`")


def _block(match: re.Match[str]) -> str:
    body = " ".join(line.strip() for line in match.group("body").splitlines())
    return f"{match.group('indent')}$$\n{match.group('indent')}{body}\n{match.group('indent')}$$"


def _reference(match: re.Match[str]) -> str:
    target = match.group(2)
    return f"`{target.rsplit('.', 1)[-1] if match.group(1) else target}`"  # `~a.b.c` shows `c`, as in Sphinx


def rest_to_markdown(text: str) -> str:
    return REFERENCE_ROLE.sub(_reference, MATH_ROLE.sub(r"$\1$", MATH_BLOCK.sub(_block, text)))


class ReSTToMarkdown(griffe.Extension):
    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = rest_to_markdown(obj.docstring.value)
