"""A griffe extension for the docs build: the docstrings' reST markup as Markdown. Math (``.. math::`` blocks and
``:math:`` roles) becomes the ``$$...$$`` and ``$...$`` that pymdownx.arithmatex marks as math (rendered as MathML
at build time: docs/site_hooks.py), so the equations render instead of reaching Markdown as text whose underscores become emphasis; Sphinx's cross-reference
roles (``:func:`~boontrack.compare.adjust_pvalues```) become code spans (``adjust_pvalues``); a simple table
(``====`` borders) is shown as it is written, in a text block."""

from __future__ import annotations

import re
from typing import Any

import griffe

# `.. math:: FIRST LINE` and its more-indented continuation lines, up to a blank line.
MATH_BLOCK = re.compile(r"^(?P<indent>[ \t]*)\.\. math:: ?(?P<body>.*(?:\n(?P=indent)[ \t]+\S.*)*)", re.MULTILINE)
MATH_ROLE = re.compile(r":math:`([^`]+)`")
TABLE_BORDER = re.compile(r"^(?P<indent>[ \t]*)=+(?: +=+)+\s*$")
REFERENCE_ROLE = re.compile(r":(?:func|class|attr|meth|mod|data|exc|obj):`(~?)([^`]+)`")


def _block(match: re.Match[str]) -> str:
    body = " ".join(line.strip() for line in match.group("body").splitlines())
    return f"{match.group('indent')}$$\n{match.group('indent')}{body}\n{match.group('indent')}$$"


def _reference(match: re.Match[str]) -> str:
    target = match.group(2)
    return f"`{target.rsplit('.', 1)[-1] if match.group(1) else target}`"  # `~a.b.c` shows `c`, as in Sphinx


def _fence_tables(text: str) -> str:
    """A simple table's lines (three borders: above the header, below it, at the end) inside a text fence."""
    out: list[str] = []
    borders = 0
    for line in text.splitlines():
        border = TABLE_BORDER.match(line)
        if border and borders == 0:
            out.append(f"{border.group('indent')}```text")
        out.append(line)
        if border:
            borders += 1
            if borders == 3:
                out.append(f"{border.group('indent')}```")
                borders = 0
    return "\n".join(out)


def rest_to_markdown(text: str) -> str:
    text = _fence_tables(MATH_BLOCK.sub(_block, text))
    return REFERENCE_ROLE.sub(_reference, MATH_ROLE.sub(r"$\1$", text))


class ReSTToMarkdown(griffe.Extension):
    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = rest_to_markdown(obj.docstring.value)
