"""Entry points registered for one test, as an installed distribution registers them.

:func:`installed` writes a distribution's metadata (``<name>.dist-info`` with ``METADATA`` and
``entry_points.txt``) into a temporary directory put first on ``sys.path``: ``importlib.metadata`` then finds its
entry points exactly as it finds those of a distribution installed with pip, so the code under test goes through
its real discovery. Nothing is installed into the environment, and everything is undone on exit (the README's
test command stays ``pip install -e ".[all,test]" && python -m pytest``, with no second package to install).
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

from boontrack import backends, cli


def _forget_lookups() -> None:
    """boontrack looks entry points up once per process: forget them, before and after."""
    backends._registered.cache_clear()
    cli.lazy_commands.cache_clear()


@contextlib.contextmanager
def installed(
    directory: Path, entry_points: Mapping[str, Mapping[str, str]], *, name: str = "plugin"
) -> Iterator[Path]:
    """A distribution named ``name`` with ``entry_points`` (group -> entry name -> ``"module:attribute"``),
    findable while the block runs; modules in ``directory`` are importable too."""
    info = directory / f"boontrack_test_{name}-0.0.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: boontrack-test-{name}\nVersion: 0.0.0\n")
    lines = []
    for group, entries in entry_points.items():
        lines.append(f"[{group}]")
        lines += [f"{entry} = {target}" for entry, target in entries.items()]
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n")
    sys.path.insert(0, str(directory))
    _forget_lookups()
    try:
        yield info
    finally:
        sys.path.remove(str(directory))
        _forget_lookups()
