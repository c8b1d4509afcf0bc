"""A griffe extension for the docs build: the docstrings' reST math (``.. math::`` blocks and ``:math:`` roles)
as the ``$$...$$`` and ``$...$`` that pymdownx.arithmatex passes to MathJax, so the equations render instead of
reaching Markdown as text whose underscores become emphasis."""

from __future__ import annotations

import re
from typing import Any

import griffe

# `.. math:: FIRST LINE` and its more-indented continuation lines, up to a blank line.
MATH_BLOCK = re.compile(r"^(?P<indent>[ \t]*)\.\. math:: ?(?P<body>.*(?:\n(?P=indent)[ \t]+\S.*)*)", re.MULTILINE)
MATH_ROLE = re.compile(r":math:`([^`]+)`")


def _block(match: re.Match[str]) -> str:
    body = " ".join(line.strip() for line in match.group("body").splitlines())
    return f"{match.group('indent')}$$\n{match.group('indent')}{body}\n{match.group('indent')}$$"


def rest_math_to_arithmatex(text: str) -> str:
    return MATH_ROLE.sub(r"$\1$", MATH_BLOCK.sub(_block, text))


class ReSTMath(griffe.Extension):
    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = rest_math_to_arithmatex(obj.docstring.value)
