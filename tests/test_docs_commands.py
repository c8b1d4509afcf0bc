"""Every shell and Python block of the README, the docs and the integrations' READMEs runs as written.

Each ```bash and ```python block is run in a temporary copy of the checkout's ``examples/`` and nothing else, as
in a user's clone (no ``../shared`` beside it: the data a block reads is in ``examples/``), unless the line above
it says why not: ``<!-- not run: REASON -->`` (an install, a server or an account it needs, or minutes of work).
Other fences (toml, yaml, text) are not run.
A block followed by ``<!-- output -->`` and a ```text block must print exactly that text on stdout.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# The integrations' READMEs are docs pages too (docs/integrations/ includes them).
PAGES = (ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")), *sorted(ROOT.glob("integrations/*/README.md")))
NOT_RUN = re.compile(r"<!-- not run: (.+?) -->")
OUTPUT = "<!-- output -->"
FENCE = re.compile(r"^```(\w*)\s*$")
RUNNABLE = ("bash", "python")
TIMEOUT = 120  # seconds per block: the slowest one run here takes a few seconds


@dataclass(frozen=True)
class Block:
    page: str
    line: int  # of the opening fence, 1-based
    language: str
    code: str
    not_run: str | None  # the reason given on the line above, if any
    output: str | None  # what it prints, where the page shows it

    @property
    def name(self) -> str:
        return f"{self.page}:{self.line}"


def _blocks(page: Path) -> list[Block]:
    lines = page.read_text(encoding="utf-8").splitlines()
    blocks, start = [], None
    for number, line in enumerate(lines):
        fence = FENCE.match(line)
        if not fence:
            continue
        if start is None:
            start, language = number, fence.group(1)
            continue
        if language in RUNNABLE:
            above = NOT_RUN.search(lines[start - 1]) if start else None
            code = "\n".join(lines[start + 1 : number]) + "\n"
            name = str(page.relative_to(ROOT))
            output = _shown_output(lines, number + 1)
            blocks.append(Block(name, start + 1, language, code, above.group(1) if above else None, output))
        start = None
    return blocks


def _shown_output(lines: list[str], after: int) -> str | None:
    """The text block under ``<!-- output -->`` right after line ``after`` (blank lines between), if any."""
    rest = [line for line in lines[after : after + 4] if line.strip()]
    if len(rest) < 2 or rest[0] != OUTPUT or rest[1] != "```text":
        return None
    start = lines.index("```text", after) + 1
    end = lines.index("```", start)
    return "\n".join(lines[start:end]) + "\n"


BLOCKS = [block for page in PAGES for block in _blocks(page)]


def test_the_pages_have_blocks_to_run():
    """The collection itself works: the README's and the guides' blocks are found. (docs/index.md has none of its
    own: it includes the README, tests/test_docs_site.py.)"""
    pages = {block.page for block in BLOCKS}
    assert {"README.md", "docs/guide/arrays.md", "docs/guide/files.md"} <= pages
    assert sum(block.not_run is None for block in BLOCKS) >= 5
    assert sum(block.output is not None for block in BLOCKS) >= 2


def test_no_block_reads_what_a_clone_lacks():
    """The published run tables beside this checkout (``../shared``) are not in a user's clone: a block that read
    them would pass here only where they happen to be, so none may name them, run or not."""
    reading = [block.name for block in BLOCKS if "../shared" in block.code]
    assert not reading, f"blocks that read ../shared, which a clone lacks: {reading}"


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A working directory laid out as a clone: ``examples/`` copied, nothing beside it."""
    workdir = tmp_path / "checkout"
    shutil.copytree(ROOT / "examples", workdir / "examples", ignore=shutil.ignore_patterns("__pycache__"))
    return workdir


@pytest.mark.parametrize("block", BLOCKS, ids=lambda block: block.name)
def test_the_block_runs_as_written(block: Block, checkout: Path):
    if block.not_run:
        pytest.skip(f"not run: {block.not_run}")
    scripts = Path(sys.executable).parent  # `boontrack` and `python` of the environment running the tests
    env = {**os.environ, "PATH": f"{scripts}{os.pathsep}{os.environ.get('PATH', '')}", "MPLBACKEND": "Agg"}
    command = ["bash", "-euo", "pipefail", "-c", block.code] if block.language == "bash" else [sys.executable, "-"]
    stdin = block.code if block.language == "python" else None
    done = subprocess.run(
        command, cwd=checkout, env=env, input=stdin, capture_output=True, text=True, timeout=TIMEOUT, check=False
    )
    assert done.returncode == 0, f"{block.name} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
    if block.output is not None:
        assert done.stdout == block.output, f"{block.name} printed other than the page shows:\n{done.stdout}"
