"""Math in lesson Markdown: find every ``$...$`` / ``$$`` span outside code (:func:`math_spans`,
the tests check balance with it) and escape the spans (:func:`protect_math`) so that a plain
CommonMark renderer (``pn.pane.Markdown`` uses markdown-it) passes the TeX through unchanged.

Pure Python (stdlib only); :mod:`dashboard.ui.lessons` parses the lessons with it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["FENCE_RE", "MathSpan", "iter_lines", "math_spans", "protect_math"]

#: A fenced code block's opening or closing line (indent, fence, info word, rest of the info).
FENCE_RE = re.compile(r"^(\s{0,3})(`{3,}|~{3,})\s*([^`\s]*)(?:[ \t]+([^`]*?))?\s*$")


@dataclass(frozen=True)
class MathSpan:
    """A math span found by :func:`math_spans`.

    ``display`` is True for ``$$`` blocks; ``tex`` is the TeX between the delimiters; ``line``
    is the 1-based line of the opening delimiter; ``start`` / ``end`` are character offsets of
    the whole span (delimiters included) in the text.
    """

    tex: str
    display: bool
    line: int
    start: int
    end: int


def iter_lines(text: str):
    """Yield ``(index, line, in_code)`` where ``in_code`` marks lines inside fenced code
    (fence lines included)."""
    fence: str | None = None
    for i, line in enumerate(text.splitlines()):
        m = FENCE_RE.match(line)
        if fence is None and m:
            fence = m.group(2)
            yield i, line, True
        elif fence is not None:
            if m and m.group(2)[0] == fence[0] and len(m.group(2)) >= len(fence) and not m.group(3):
                fence = None
            yield i, line, True
        else:
            yield i, line, False


def _unescaped_dollars(line: str) -> list[int]:
    out = []
    for i, ch in enumerate(line):
        if ch == "$":
            backslashes = len(line[:i]) - len(line[:i].rstrip("\\"))
            if backslashes % 2 == 0:
                out.append(i)
    return out


def _strip_code_spans(line: str) -> str:
    """Blank out inline code spans (same length) so ``$`` inside them is not math."""
    return re.sub(r"(`+)(.+?)\1", lambda m: " " * len(m.group(0)), line)


def math_spans(text: str) -> list[MathSpan]:
    """Find every math span of a lesson, outside fenced code and inline code.

    Display math is a block opened and closed by a line that is exactly ``$$`` (or a single
    line ``$$ ... $$``); inline math is ``$...$`` within one line.

    Raises
    ------
    ValueError
        If a ``$$`` block is left open, a block contains a blank line, or a line (outside
        display blocks) has an odd number of unescaped ``$`` (an unclosed inline span).
    """
    spans: list[MathSpan] = []
    offsets = []
    pos = 0
    raw_lines = text.splitlines(keepends=True)
    for raw in raw_lines:
        offsets.append(pos)
        pos += len(raw)
    block_start: int | None = None
    block_lines: list[str] = []
    for i, line, in_code in iter_lines(text):
        if in_code:
            if block_start is not None:
                raise ValueError(f"line {block_start + 1}: '$$' block runs into a code block")
            continue
        stripped = line.strip()
        if block_start is not None:
            if stripped == "$$":
                end = offsets[i] + len(raw_lines[i].rstrip("\n"))
                spans.append(
                    MathSpan(
                        "\n".join(block_lines), True, block_start + 1, offsets[block_start], end
                    )
                )
                block_start, block_lines = None, []
            elif not stripped:
                raise ValueError(
                    f"line {block_start + 1}: '$$' block contains a blank line (Markdown would "
                    "split it); remove the blank line"
                )
            elif "$" in stripped:
                raise ValueError(f"line {i + 1}: '$' inside a '$$' block")
            else:
                block_lines.append(line)
            continue
        if stripped == "$$":
            block_start, block_lines = i, []
            continue
        if stripped.startswith("$$") and stripped.endswith("$$") and len(stripped) > 4:
            inner = stripped[2:-2]
            if "$" in inner:
                raise ValueError(f"line {i + 1}: '$' inside a one-line '$$' block")
            start = offsets[i] + line.index("$$")
            spans.append(MathSpan(inner, True, i + 1, start, start + len(stripped)))
            continue
        visible = _strip_code_spans(line)
        dollars = _unescaped_dollars(visible)
        if len(dollars) % 2:
            raise ValueError(
                f"line {i + 1}: odd number of '$' (an inline math span is not closed; inline "
                "math must open and close on the same line)"
            )
        for a, b in zip(dollars[::2], dollars[1::2]):
            if b == a + 1:
                raise ValueError(
                    f"line {i + 1}: '$$' inside a line; display math goes on its own lines"
                )
            spans.append(
                MathSpan(line[a + 1 : b], False, i + 1, offsets[i] + a, offsets[i] + b + 1)
            )
    if block_start is not None:
        raise ValueError(f"line {block_start + 1}: '$$' block is never closed")
    return spans


_MD_PUNCT = set("\\`*_{}[]()<>#+-.!|~&^=:;,'\"/?@%")


def protect_math(text: str) -> str:
    """Backslash-escape Markdown punctuation inside math spans.

    CommonMark turns ``\\{`` into ``{``, ``\\\\`` into ``\\``, ``\\|`` into ``|`` and may read
    ``_`` or ``*`` as emphasis, which breaks TeX.  Escaping every ASCII punctuation character
    of each math span makes a CommonMark renderer output exactly the original TeX, which KaTeX
    (or MathJax) then typesets in the browser.  Delimiters are kept.
    """
    spans = math_spans(text)
    if not spans:
        return text
    out: list[str] = []
    pos = 0
    for span in spans:
        out.append(text[pos : span.start])
        chunk = text[span.start : span.end]
        if span.display:
            # keep the "$$" delimiter lines, escape the TeX between them
            head, _, rest = chunk.partition("$$")
            body, _, tail = rest.rpartition("$$")
            body = "".join("\\" + c if c in _MD_PUNCT else c for c in body)
            out.append(f"{head}$${body}$${tail}")
        else:
            body = "".join("\\" + c if c in _MD_PUNCT else c for c in chunk[1:-1])
            out.append(f"${body}$")
        pos = span.end
    out.append(text[pos:])
    return "".join(out)
