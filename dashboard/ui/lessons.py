"""Load the Markdown lessons in ``lessons/`` and their one-click presets.

A lesson is a Markdown file named ``NN-slug.md`` (``NN`` its number) with, in this order, a
single H1 title and the sections

``## Learning goals``, ``## Intuition``, ``## Key equations``, ``## Try it``,
``## Predict before you run`` and ``## Answers``.

``## Try it`` holds exactly one fenced code block whose info string is ``preset``; it contains a
flat JSON object of dashboard parameters (``"problem"`` and ``"algorithms"`` are required, see
:func:`validate_preset_basic` for the other keys).  The dashboard shows
:func:`lesson_markdown_without_preset` beside the plots and loads :attr:`Lesson.preset` when the
student clicks *Load this lesson's preset*.

A lesson may offer up to :data:`MAX_NAMED_PRESETS` more experiments as *named* presets: fenced
blocks whose info string is ``preset NAME`` (``NAME`` lower-case words joined by dashes, unique
in the lesson), anywhere in ``## Try it`` after the main block, with the same JSON object and
the same checks.  They are :attr:`Lesson.named_presets` (name -> preset, in file order); the
lesson pane shows one button per name (:func:`preset_label`) and the displayed text replaces
each block by a sentence naming its button.

Math is written for KaTeX: inline ``$...$`` inside one line and display blocks opened and
closed by a line that is exactly ``$$``.  :func:`math_spans` finds every math span (the tests
use it to check balance), and :func:`protect_math` escapes the spans so that a plain CommonMark
renderer (``pn.pane.Markdown`` uses markdown-it) passes the TeX through unchanged.

This module parses; the math helpers live in :mod:`dashboard.ui.lesson_math` and the preset
checks in :mod:`dashboard.ui.lesson_presets` (both re-exported here).  All three are pure Python
over the UI-free simulation layer: they never import panel, holoviews or bokeh.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from dashboard.ui.lesson_math import FENCE_RE as _FENCE_RE
from dashboard.ui.lesson_math import MathSpan, math_spans, protect_math
from dashboard.ui.lesson_math import iter_lines as _iter_lines
from dashboard.ui.lesson_presets import LESSON_MAX_WORK, validate_preset_basic

__all__ = [
    "ENV_VAR",
    "LESSON_MAX_WORK",
    "MAX_NAMED_PRESETS",
    "PRESET_SENTENCE",
    "SECTIONS",
    "Lesson",
    "MathSpan",
    "lesson_markdown_without_preset",
    "lessons_dir",
    "load_lesson",
    "load_lessons",
    "math_spans",
    "parse_lesson",
    "preset_label",
    "protect_math",
    "validate_preset_basic",
]

#: Environment variable that overrides the lessons folder.
ENV_VAR = "DASHBOARD_LESSONS_DIR"

#: The required ``##`` sections, in the order they must appear.
SECTIONS: tuple[str, ...] = (
    "Learning goals",
    "Intuition",
    "Key equations",
    "Try it",
    "Predict before you run",
    "Answers",
)

#: What replaces the preset block in the displayed lesson.
PRESET_SENTENCE = "Click *Load this lesson's preset* to set up this experiment in the dashboard."

_FILE_RE = re.compile(r"^(\d+)-([a-z0-9]+(?:-[a-z0-9]+)*)\.md$")
_NAME_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
#: Most named presets a lesson may offer besides its main one.
MAX_NAMED_PRESETS = 3
_H1_RE = re.compile(r"^#\s+(.+?)\s*#*\s*$")
_H2_RE = re.compile(r"^##\s+(.+?)\s*#*\s*$")


@dataclass
class Lesson:
    """One lesson file.

    Attributes
    ----------
    number : int
        The lesson number (the ``NN`` of ``NN-slug.md``).
    slug : str
        The file name without number and extension (``"oracle-calls"``).
    title : str
        The text of the single H1 heading.
    path : Path
        Where the lesson was read from.
    markdown : str
        The full Markdown source.
    preset : dict
        The JSON object of the ``preset`` block (dashboard parameters).
    sections : dict[str, str]
        Body of every ``##`` section (heading line excluded), keyed by heading text, in order.
    named_presets : dict[str, dict]
        The lesson's other experiments (``preset NAME`` blocks): name -> preset, in file order.
    """

    number: int
    slug: str
    title: str
    path: Path
    markdown: str
    preset: dict = field(repr=False)
    sections: dict[str, str] = field(repr=False)
    named_presets: dict[str, dict] = field(default_factory=dict, repr=False)

    @property
    def presets(self) -> dict[str, dict]:
        """Every preset of the lesson: ``""`` (the main one) first, then the named ones."""
        return {"": self.preset, **self.named_presets}


def preset_label(name: str) -> str:
    """The button label of a preset: ``"Load this lesson's preset"`` for the main one,
    ``"Load preset: inexact alpha"`` for ``preset inexact-alpha``."""
    return "Load this lesson's preset" if not name else f"Load preset: {name.replace('-', ' ')}"


# --- locating files -----------------------------------------------------------------------------
def lessons_dir() -> Path:
    """Return the lessons folder.

    ``$DASHBOARD_LESSONS_DIR`` if set and non-empty; else the copy an installed wheel carries
    (``dashboard/lessons/``, put there by the build, see ``setup.py``); else the repository's
    top-level ``lessons/`` folder (a checkout or an editable install).
    """
    env = os.environ.get(ENV_VAR, "").strip()
    if env:
        return Path(env).expanduser()
    packaged = Path(__file__).resolve().parent.parent / "lessons"
    if packaged.is_dir() and any(packaged.glob("*.md")):
        return packaged
    return Path(__file__).resolve().parent.parent.parent / "lessons"


def _lesson_files(directory: Path) -> list[Path]:
    return sorted(p for p in directory.iterdir() if p.is_file() and _FILE_RE.match(p.name))


def load_lessons(directory: str | Path | None = None) -> list[Lesson]:
    """Parse every ``NN-slug.md`` file of ``directory`` (default :func:`lessons_dir`).

    Returns the lessons sorted by number.  Other files (e.g. a ``README.md``) are ignored.

    Raises
    ------
    ValueError
        If the folder does not exist, a lesson does not parse, or two lessons share a number.
    """
    folder = Path(directory) if directory is not None else lessons_dir()
    if not folder.is_dir():
        raise ValueError(
            f"lessons folder {str(folder)!r} does not exist; pass an existing directory or set "
            f"{ENV_VAR}"
        )
    lessons = [parse_lesson(p.read_text(encoding="utf-8"), p) for p in _lesson_files(folder)]
    lessons.sort(key=lambda lesson: lesson.number)
    seen: dict[int, Path] = {}
    for lesson in lessons:
        if lesson.number in seen:
            raise ValueError(
                f"lessons {seen[lesson.number].name!r} and {lesson.path.name!r} both have number "
                f"{lesson.number}; every lesson needs its own number"
            )
        seen[lesson.number] = lesson.path
    return lessons


def load_lesson(slug_or_number: int | str, directory: str | Path | None = None) -> Lesson:
    """Return one lesson by number (``3``, ``"3"``, ``"03"``), slug or file stem.

    Raises
    ------
    ValueError
        If no lesson matches; the message lists the available lessons.
    """
    lessons = load_lessons(directory)
    key = str(slug_or_number).strip().lower()
    if key.endswith(".md"):
        key = key[:-3]
    for lesson in lessons:
        if (key.isdigit() and int(key) == lesson.number) or key in (
            lesson.slug,
            lesson.path.stem.lower(),
        ):
            return lesson
    available = ", ".join(f"{lesson.number} ({lesson.slug})" for lesson in lessons) or "none"
    raise ValueError(f"no lesson {slug_or_number!r}; available lessons: {available}")


# --- parsing ------------------------------------------------------------------------------------
def _preset_blocks(text: str) -> list[tuple[int, int, str, str]]:
    """Fenced blocks with info string ``preset`` or ``preset NAME``: ``(first line, last line,
    body, name)``, 0-based line indices of the fences (``name`` is ``""`` for the main block);
    an unclosed block ends at the last line with ``last = -1``."""
    lines = text.splitlines()
    blocks: list[tuple[int, int, str, str]] = []
    i = 0
    while i < len(lines):
        m = _FENCE_RE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, info, rest = m.group(2), m.group(3), (m.group(4) or "").strip()
        j = i + 1
        while j < len(lines):
            mj = _FENCE_RE.match(lines[j])
            if mj and mj.group(2)[0] == fence[0] and len(mj.group(2)) >= len(fence):
                if not mj.group(3):
                    break
            j += 1
        if info.lower() == "preset":
            end = j if j < len(lines) else -1
            blocks.append((i, end, "\n".join(lines[i + 1 : j]), rest))
        i = j + 1
    return blocks


def parse_lesson(text: str, path: str | Path) -> Lesson:
    """Parse one lesson's Markdown.

    ``path`` names the file (``NN-slug.md``); number and slug come from it.

    Raises
    ------
    ValueError
        Naming the file, if the file name is not ``NN-slug.md``, there is not exactly one H1,
        a required section is missing or out of order, or the ``## Try it`` section does not
        hold exactly one ``preset`` block with a JSON object having ``"problem"`` and
        ``"algorithms"``, or a named ``preset NAME`` block is malformed, misplaced, repeated or
        one too many.
    """
    path = Path(path)
    name = path.name
    m = _FILE_RE.match(name)
    if not m:
        raise ValueError(
            f"{name}: lesson file names must look like 'NN-some-slug.md' (number, dash, "
            "lower-case words joined by dashes)"
        )
    number, slug = int(m.group(1)), m.group(2)
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"{name}: the lesson is empty")

    blocks = _preset_blocks(text)
    for first, last, _, _ in blocks:
        if last == -1:
            raise ValueError(
                f"{name}: the preset block opened on line {first + 1} is never closed (add a "
                "closing ``` line)"
            )

    titles: list[str] = []
    headings: list[tuple[str, int]] = []  # (section name, line index)
    for i, line, in_code in _iter_lines(text):
        if in_code:
            continue
        if h1 := _H1_RE.match(line):
            titles.append(h1.group(1).strip())
        elif h2 := _H2_RE.match(line):
            headings.append((h2.group(1).strip(), i))
    if len(titles) != 1:
        raise ValueError(
            f"{name}: a lesson needs exactly one H1 title ('# Title'), found {len(titles)}"
        )

    names = [h for h, _ in headings]
    for section in SECTIONS:
        if section not in names:
            raise ValueError(
                f"{name}: missing section '## {section}'; every lesson needs, in this order: "
                + ", ".join(f"'## {s}'" for s in SECTIONS)
            )
        if names.count(section) > 1:
            raise ValueError(f"{name}: section '## {section}' appears more than once")
    positions = [names.index(s) for s in SECTIONS]
    if positions != sorted(positions):
        raise ValueError(
            f"{name}: sections are out of order; required order: "
            + ", ".join(f"'## {s}'" for s in SECTIONS)
        )

    lines = text.splitlines()
    sections: dict[str, str] = {}
    for k, (heading, start) in enumerate(headings):
        stop = headings[k + 1][1] if k + 1 < len(headings) else len(lines)
        sections[heading] = "\n".join(lines[start + 1 : stop]).strip("\n")

    main = [b for b in blocks if not b[3]]
    if not main:
        raise ValueError(
            f"{name}: missing preset block; '## Try it' needs one fenced code block with info "
            "string 'preset' holding a JSON object"
        )
    if len(main) > 1:
        raise ValueError(f"{name}: found {len(main)} preset blocks, exactly one is allowed")
    try_start = headings[names.index("Try it")][1]
    after = [ln for _, ln in headings if ln > try_start]
    try_stop = after[0] if after else len(lines)
    presets: dict[str, dict] = {}
    for first, _, body, label in blocks:
        what = "the preset block" if not label else f"the preset block {label!r}"
        if label and not _NAME_RE.match(label):
            raise ValueError(
                f"{name}: preset names are lower-case words joined by dashes (e.g. "
                f"'preset inexact-alpha'), got {label!r} on line {first + 1}"
            )
        if label in presets:
            raise ValueError(f"{name}: two preset blocks are named {label!r}")
        if not try_start < first < try_stop:
            raise ValueError(f"{name}: {what} must be inside the '## Try it' section")
        if label and first < main[0][0]:
            raise ValueError(f"{name}: {what} must come after the main preset block")
        presets[label] = _parse_preset(name, what, first, body)
    if len(presets) - 1 > MAX_NAMED_PRESETS:
        raise ValueError(
            f"{name}: {len(presets) - 1} named presets; a lesson offers at most "
            f"{MAX_NAMED_PRESETS} besides its main one"
        )
    preset = presets.pop("")

    return Lesson(
        number=number,
        slug=slug,
        title=titles[0],
        path=path,
        markdown=text,
        preset=preset,
        sections=sections,
        named_presets=presets,
    )


def _parse_preset(name: str, what: str, first: int, body: str) -> dict:
    """The JSON object of one preset block (ValueError naming the file and the block)."""
    try:
        preset = json.loads(body)
    except json.JSONDecodeError as exc:
        raise ValueError(
            f"{name}: {what} (line {first + 1}) is not valid JSON: {exc.msg} at line "
            f"{exc.lineno} column {exc.colno} of the block"
        ) from exc
    if not isinstance(preset, dict):
        raise ValueError(
            f"{name}: the preset must be a JSON object {{...}}, got {type(preset).__name__}"
        )
    for key in ("problem", "algorithms"):
        if key not in preset:
            raise ValueError(
                f"{name}: the preset has no {key!r} key; 'problem' and 'algorithms' are required"
            )
    return preset


def lesson_markdown_without_preset(lesson: Lesson, protect: bool = False) -> str:
    """The lesson text to display: the preset block is replaced by :data:`PRESET_SENTENCE`
    (a named one by the sentence naming its button).

    Parameters
    ----------
    lesson : Lesson
        A parsed lesson.
    protect : bool
        If True, also apply :func:`protect_math`, for renderers that do not know about ``$``
        math (plain CommonMark / markdown-it such as ``pn.pane.Markdown``).  Leave False for
        renderers with a dollar-math plugin.
    """
    lines = lesson.markdown.splitlines()
    for first, last, _, label in reversed(_preset_blocks(lesson.markdown)):
        last = len(lines) - 1 if last == -1 else last
        sentence = (
            PRESET_SENTENCE
            if not label
            else f"Click *{preset_label(label)}* to set up this experiment in the dashboard."
        )
        lines = [*lines[:first], sentence, *lines[last + 1 :]]
    text = "\n".join(lines) + "\n"
    return protect_math(text) if protect else text
