"""The one escaping helper of the dashboard: user-supplied text shown in a page stays text.

Panel's Markdown and Alert panes render Markdown *with raw HTML enabled*, and Panel's HTML
model runs the ``<script>`` tags it receives, so a URL value shown as-is in an alert
(``?algorithms=["<img src=x onerror=alert(1)>"]``) runs JavaScript in a student's page
(issue 12).  Every piece of text that did not come from this code base (URL values, algorithm
and constant names, constant values, lesson numbers, error messages that quote them) goes
through :func:`escape` before it reaches a pane; whole messages are escaped, not only the
quoted part, so a message built elsewhere can never carry markup either.

:func:`escape` makes a string render as exactly its own characters in Markdown (one
paragraph, whitespace collapsed): ``& < > " '`` become numeric character references (which
Markdown decodes back to text and re-escapes as HTML entities) and every other ASCII
punctuation character gets a backslash (CommonMark lets any ASCII punctuation be escaped), so
``*``, ``_``, ``[``, `````, ``#``, ``1.`` and ``$`` format nothing.  ``limit`` shortens very long
input (a 200 kB URL value) to a readable excerpt.
"""

from __future__ import annotations

import string

__all__ = ["ELLIPSIS", "escape", "shorten"]

ELLIPSIS = "…"

#: Characters that become numeric references (HTML-significant, so never backslashed).
_ENTITIES = {c: f"&#{ord(c)};" for c in "&<>\"'"}
#: Every other ASCII punctuation character is backslash-escaped for Markdown.
_TABLE = str.maketrans(
    {
        **{c: "\\" + c for c in string.punctuation if c not in _ENTITIES},
        **_ENTITIES,
        "\x00": "\ufffd",  # Markdown replaces NUL by U+FFFD anyway: say so explicitly
    }
)


def shorten(text: object, limit: int | None = 200) -> str:
    """``str(text)`` with whitespace collapsed to single spaces, cut to ``limit`` characters
    (an ellipsis marks the cut; ``None``: no limit)."""
    s = " ".join(str(text).split())
    if limit is not None and len(s) > limit:
        s = s[: max(limit - 1, 0)] + ELLIPSIS
    return s


def escape(text: object, limit: int | None = 200) -> str:
    """Markdown source that renders as exactly the characters of ``text`` (never markup).

    Parameters
    ----------
    text : object
        Anything (``str()`` is taken): a URL value, a name, a whole message quoting them.
    limit : int or None
        Longest text shown (see :func:`shorten`); ``None`` shows everything.

    Examples
    --------
    >>> escape("<img src=x onerror=alert(1)>")
    '&#60;img src\\\\=x onerror\\\\=alert\\\\(1\\\\)&#62;'
    """
    return shorten(text, limit).translate(_TABLE)
