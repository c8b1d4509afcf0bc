"""The Markdown tables of the README and the docs that tests hold the code to: found by the comment above each,
in whichever page holds it."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGES = (ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")))


def tables_after(marker: str) -> list[list[list[str]]]:
    """The tables that follow the line holding ``marker`` (up to the next heading or marker comment): rows of
    cells, header and separator left out."""
    texts = (page.read_text(encoding="utf-8").splitlines() for page in PAGES)
    (lines,) = [text for text in texts if any(marker in line for line in text)]  # exactly one page holds it
    start = next(i for i, line in enumerate(lines) if marker in line)
    tables: list[list[list[str]]] = []
    current: list[list[str]] | None = None
    for line in lines[start + 1 :]:
        if line.startswith(("#", "<!--")):
            break
        if line.startswith("|"):
            cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
            if current is None:
                current = []
                tables.append(current)
                continue  # the header
            if not set("".join(cells)) <= set("-: "):
                current.append(cells)
        else:
            current = None
    return tables


def quoted(cell: str) -> list[str]:
    """The `code` spans of a cell, in order."""
    return cell.split("`")[1::2]
