"""Progress bars for long work (the analysis of many groups, simulations), on terminals only."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator, Sequence
from typing import Any


@contextlib.contextmanager
def progress_bar(
    items: Sequence[Any], *, enabled: bool, label: str, weights: Sequence[float] | None = None
) -> Iterator[Any]:
    """A click progress bar over ``items`` on an interactive stderr; the plain items otherwise.

    ``weights`` are the items' expected costs, when they differ: the bar then advances by each item's weight, so
    that its estimate of the time left holds when cheap steps come before dear ones.
    """
    if not (enabled and sys.stderr.isatty()):
        yield items
        return
    import click

    if weights is None:
        with click.progressbar(items, label=label, file=sys.stderr) as bar:
            yield bar
        return
    with click.progressbar(length=int(sum(weights)), label=label, file=sys.stderr) as bar:
        yield _advancing(bar, items, weights)


def _advancing(bar: Any, items: Sequence[Any], weights: Sequence[float]) -> Iterator[Any]:
    for item, weight in zip(items, weights):
        yield item
        bar.update(int(weight))
