"""Progress bars for long work (the analysis of many groups, simulations), on terminals only."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator, Sequence
from typing import Any


@contextlib.contextmanager
def progress_bar(items: Sequence[Any], *, enabled: bool, label: str) -> Iterator[Any]:
    """A click progress bar over ``items`` on an interactive stderr; the plain items otherwise."""
    if not (enabled and sys.stderr.isatty()):
        yield items
        return
    import click

    with click.progressbar(items, label=label, file=sys.stderr) as bar:
        yield bar
