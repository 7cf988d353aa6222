"""The escaping helper: any text, rendered by Panel's own Markdown / Alert panes, shows as
exactly its characters and never as markup (issue 12's XSS)."""

from __future__ import annotations

import panel as pn
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from ui_text import rendered as _rendered

from dashboard.ui.safe import ELLIPSIS, escape, shorten

PAYLOADS = [
    "<img src=x onerror=alert(document.domain)>",
    "<script>alert(1)</script>",
    '"><svg onload=alert(1)>',
    "[click](javascript:alert(1))",
    "![x](x onerror=alert(1))",
    "<a href='javascript:alert(1)'>x</a>",
    "&lt;script&gt;alert(1)&lt;/script&gt;",
    "1. # *bold* `code` $x$ \\( \\) | a | ~~s~~ <!-- c -->",
    "\x00<b>\x00</b>",
]


def rendered(pane_type, source: str):
    return _rendered(pane_type(source))


@pytest.mark.parametrize("pane_type", [pn.pane.Markdown, pn.pane.Alert])
@pytest.mark.parametrize("payload", PAYLOADS)
def test_payloads_render_as_their_own_text(pane_type, payload):
    parts = rendered(pane_type, escape(payload))
    assert parts.tags == ["p"] and parts.attrs == []
    assert "".join(parts.text).strip() == shorten(payload).replace("\x00", "\ufffd")


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=80))
@example("<img src=x onerror=alert(1)>")
@example("`x` **y** _z_ <http://a.b> www.example.com")
@example("    indented code?")
@example("- list\n+ list\n> quote")
@example("a\\")
def test_any_text_renders_as_exactly_itself(text):
    parts = rendered(pn.pane.Markdown, escape(text))
    assert set(parts.tags) <= {"p"} and parts.attrs == []
    expected = shorten(text).replace("\x00", "\ufffd")
    assert " ".join("".join(parts.text).split()) == " ".join(expected.split())


def test_shorten_limits_long_input_and_collapses_whitespace():
    assert shorten("a \n\t b") == "a b"
    long = "x" * 200_000
    assert shorten(long, 50) == "x" * 49 + ELLIPSIS
    assert len(escape(long, 50)) == 50
    assert shorten(long, None) == long
