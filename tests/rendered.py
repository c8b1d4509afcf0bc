"""What a reader sees of boontrack's Markdown and HTML outputs: their rendered structure and text.

Markdown is rendered by markdown-it-py as CommonMark with GitHub's tables (the rules of GitHub's pull requests,
job summaries and MLflow's descriptions for everything a hostile name could use: raw HTML, links, images, code,
emphasis, headings, table cells); HTML is parsed by the standard library. A user's name that is escaped leaves
the structure as a plain name leaves it and shows as its own text.
"""

from __future__ import annotations

from html.parser import HTMLParser

from markdown_it import MarkdownIt

#: Names as hostile as a run's parameters or a metric's name may be: raw HTML, a script, Markdown links and
#: images, code, emphasis, a table cell's border, a heading after blank lines.
HOSTILE = {
    "html": "<b>bold</b><i>it</i>",
    "script": "<script>alert(1)</script>",
    "link": "[a link](https://example.com)",
    "image": "![an image](https://example.com/i.png)<img src=https://example.com/j.png>",
    "code": "`code` ``more``",
    "pipe": "a|b | c",
    "newline": "one\n\n# heading\n\n- item\ntwo",
    "emphasis": "*em* _under_ **strong** ~~gone~~",
}
#: Every kind at once.
HOSTILE["all"] = " ".join(HOSTILE.values())

_MARKDOWN = MarkdownIt("commonmark").enable(["table", "strikethrough"])
#: Elements that load something or run something.
_ACTIVE = {"script", "img", "iframe", "object", "embed", "link", "a", "image", "use", "foreignobject", "style"}


class _Page(HTMLParser):
    """The start tags (with their attributes' names) and the text of an HTML document."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, tuple[str, ...]]] = []
        self.attributes: list[tuple[str, str, str | None]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, tuple(sorted(name for name, _ in attrs))))
        self.attributes += [(tag, name, value) for name, value in attrs]

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def parsed(html: str) -> _Page:
    page = _Page()
    page.feed(html)
    page.close()
    return page


def markdown_page(markdown: str) -> _Page:
    """``markdown`` as a reader's renderer shows it."""
    return parsed(_MARKDOWN.render(markdown))


def assert_renders_alike(hostile: _Page, plain: _Page, names: list[str], *, allowed: frozenset[str] = frozenset()):
    """The document made with hostile ``names`` has the structure of the one made with plain names (no element
    came out of a name), holds no active element beyond ``allowed`` (an output's own, e.g. the plot an ``<img>``
    of a written comparison shows), and shows every name as its text."""
    assert hostile.tags == plain.tags
    assert not {tag for tag, _ in hostile.tags} & (_ACTIVE - allowed)
    text = "".join(hostile.text)
    for name in names:
        assert name in text, name
