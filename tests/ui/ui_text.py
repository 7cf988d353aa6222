"""What a Markdown / Alert pane really shows: its source rendered by Panel's own Markdown
renderer, tags dropped, entities decoded, whitespace collapsed (tests read the page's text,
not the escaped Markdown source)."""

from __future__ import annotations

import html
from html.parser import HTMLParser
from typing import Any


class Parts(HTMLParser):
    """Tags, attributes and text of an HTML fragment."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.attrs: list[tuple[str, str | None]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs += attrs

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)

    def handle_data(self, data):
        self.text.append(data)

    def handle_comment(self, data):
        self.tags.append("!--")


def rendered(pane: Any) -> Parts:
    """The HTML ``pane`` sends to the browser (Panel escapes it once for transport), parsed."""
    out = pane._transform_object(pane.object)["object"]
    parts = Parts()
    parts.feed(html.unescape(out))
    parts.close()
    return parts


def shown(pane: Any) -> str:
    """The text a reader sees in ``pane``."""
    return " ".join("".join(rendered(pane).text).split())
