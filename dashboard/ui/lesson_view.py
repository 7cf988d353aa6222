"""The lessons in the page: the lesson chooser and its text (with MathJax), the preset button,
and the welcome card shown while nothing has run (one click starts a lesson).

:class:`LessonPane` knows the lessons and renders them; what a lesson *does* (apply its
preset, start the run) is the app's, reached through the ``on_start`` / ``on_preset``
callbacks; a lesson's named presets (``preset NAME`` blocks) get one more button each below
the main one.  Hooks for browser tests: ``lesson-select``, ``load-preset-button``,
``named-preset-button`` / ``preset-<NAME>``,
``lesson-text``, ``lesson-column``, ``lesson-close-button``, ``welcome-card``,
``start-lesson-button``, ``lesson-start-button`` and
``lesson-start-<N>``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import panel as pn
import param

from .document import on_click
from .safe import escape

__all__ = ["LessonPane"]

#: Lesson text headings sized for a 430 px column (the browser default h1 is 2em of 15px).
_LESSON_CSS = """
h1 { font-size: 25px; line-height: 1.2; margin-top: 4px; }
h2 { font-size: 20px; margin-top: 18px; }
h3 { font-size: 17px; }
"""


def _math_renderer(content: str, options: dict[str, Any]) -> str:
    """Render ``$...$`` / ``$$...$$`` as MathJax delimiters (typeset by Bokeh's MathJax).

    The TeX is not HTML-escaped: the Markdown model replaces every math span by MathJax's SVG
    before the text reaches the DOM, and escaping would show ``&amp;`` in aligned equations.
    Lesson files are part of the code base, not user input.
    """
    if options.get("display_mode"):
        return f'<div class="math">$${content}$$</div>'
    return f'<span class="math">\\({content}\\)</span>'


def _dollarmath(md: Any) -> None:
    """markdown-it plugin: dollar math (``$x$`` inline, ``$$`` blocks) for lesson text."""
    from mdit_py_plugins.dollarmath import dollarmath_plugin

    dollarmath_plugin(md, double_inline=True, renderer=_math_renderer)


def load_lessons() -> list[Any]:
    """The lessons (empty if the lesson module or files are unavailable)."""
    try:
        from .lessons import load_lessons as _load
    except ImportError:
        return []
    try:
        return list(_load())
    except (OSError, ValueError):
        return []


def _preset_label(name: str) -> str:
    from .lessons import preset_label

    return preset_label(name)


def _lesson_text(lesson: Any) -> str:
    try:
        from .lessons import lesson_markdown_without_preset

        return lesson_markdown_without_preset(lesson)
    except ImportError:
        return str(lesson.markdown)


class LessonPane(pn.viewable.Viewer):
    """Lesson chooser, lesson text column and welcome card.

    Parameters
    ----------
    on_start : callable
        ``on_start(number)``: a lesson button was clicked (open, apply preset, run).
    on_preset : callable
        ``on_preset(name="")``: a preset button was clicked (``name``: which named preset;
        ``""`` the main one).
    """

    slug = param.String(default="", doc="The open lesson's slug ('': none); follows the chooser.")

    def __init__(
        self,
        on_start: Callable[[int], Any],
        on_preset: Callable[..., Any],
        lessons: list[Any] | None = None,
        **params: Any,
    ) -> None:
        super().__init__(**params)
        self.lessons = load_lessons() if lessons is None else list(lessons)
        titles = {"(no lesson)": ""}
        titles.update({f"{le.number}. {le.title}": le.slug for le in self.lessons})
        self.select = pn.widgets.Select(
            label="Lesson", options=titles, value="", css_classes=["lesson-select"]
        )
        self.preset_button = pn.widgets.Button(
            label="Load this lesson's preset",
            color="primary",
            css_classes=["load-preset-button"],
            disabled=True,
        )
        self.text = pn.pane.Markdown(
            "",
            plugins=[_dollarmath],
            sizing_mode="stretch_width",
            styles={"font-size": "15px"},
            stylesheets=[_LESSON_CSS],
            css_classes=["lesson-text"],
        )
        self.on_preset = on_preset
        self.named_buttons = pn.Column(sizing_mode="stretch_width", margin=0)
        #: closes the lesson (the plots take the whole width; the chooser reopens it)
        self.hide_button = pn.widgets.Button(
            label="Close lesson ✕",
            css_classes=["lesson-close-button"],
            align="end",
            stylesheets=[":host .bk-btn { font-size: 15px; }"],
        )
        on_click(self.hide_button, lambda: setattr(self.select, "value", ""))
        # beside the plots, 380 px wide (it may shrink to 300); below them when the window
        # is too narrow for both (the main area is a wrapping row: tabs.live_parts)
        self.column = pn.Column(
            self.hide_button,
            self.text,
            visible=False,
            scroll=True,
            max_height=1400,
            sizing_mode="stretch_width",
            styles={"flex": "0 1 380px", "min-width": "300px"},
            css_classes=["lesson-column"],
        )
        self.select.param.watch(lambda e: setattr(self, "slug", e.new), "value")
        on_click(self.preset_button, on_preset)
        self.welcome = self._welcome_card(on_start)
        self.param.watch(self._on_slug, "slug")

    @property
    def lesson(self) -> Any:
        """The open lesson (``None``: none)."""
        return next((le for le in self.lessons if le.slug == self.slug), None)

    def find(self, key: int | str) -> Any:
        """The lesson with this number (``3``, ``"3"``, ``"03"``) or slug, else ``None``."""
        text = str(key).strip().lower()
        for le in self.lessons:
            if text == le.slug or (text.isdigit() and int(text) == le.number):
                return le
        return None

    def _on_slug(self, *_: Any) -> None:
        lesson = self.lesson
        self.preset_button.disabled = lesson is None
        self.column.visible = lesson is not None
        self.text.object = "" if lesson is None else _lesson_text(lesson)
        buttons = []
        for name in getattr(lesson, "named_presets", None) or {}:
            button = pn.widgets.Button(
                label=_preset_label(name),
                color="primary",
                css_classes=["named-preset-button", f"preset-{name}"],
                sizing_mode="stretch_width",
            )
            on_click(button, lambda n=name: self.on_preset(n))
            buttons.append(button)
        self.named_buttons.objects = buttons

    def _welcome_card(self, on_start: Callable[[int], Any]) -> pn.Column:
        """Shown in the main area while nothing has run: one click starts a lesson (its text
        opens beside the plots, its preset is applied and the run starts)."""
        first = self.lessons[0] if self.lessons else None
        self.start_button = pn.widgets.Button(
            label=f"Start lesson {first.number} ▶" if first else "No lessons found",
            color="primary",
            css_classes=["start-lesson-button"],
            disabled=first is None,
            height=54,
            width=260,
            stylesheets=[":host .bk-btn { font-size: 20px; font-weight: 600; }"],
        )
        if first is not None:
            on_click(self.start_button, lambda n=first.number: on_start(n))
        rows = []
        self.buttons: dict[int, pn.widgets.Button] = {}
        for le in self.lessons:
            button = pn.widgets.Button(
                label=f"Lesson {le.number} ▶",
                color="light",
                css_classes=["lesson-start-button", f"lesson-start-{le.number}"],
                width=120,
                stylesheets=[":host .bk-btn { font-size: 15px; }"],
            )
            on_click(button, lambda n=le.number: on_start(n))
            self.buttons[le.number] = button
            # the title under its button: a long title wraps in a narrow notebook cell or
            # page instead of running past the card's edge (beside the button it did not)
            rows.append(
                pn.Column(
                    button,
                    pn.pane.Markdown(
                        escape(le.title),
                        styles={"font-size": "16px"},
                        margin=(0, 10, 4, 10),
                        sizing_mode="stretch_width",
                    ),
                    sizing_mode="stretch_width",
                    margin=0,
                )
            )
        intro = (
            "## Welcome to the bandit teaching dashboard\n"
            "One click opens a lesson beside the plots, sets up its experiment and runs it. "
            "Or choose a problem and algorithms in the sidebar and press **▶ Run**."
        )
        return pn.Column(
            pn.pane.Markdown(intro, styles={"font-size": "17px"}, sizing_mode="stretch_width"),
            self.start_button,
            *rows,
            css_classes=["welcome-card"],
            sizing_mode="stretch_width",
            styles={
                "background": "#f2f7fb",
                "border": "1px solid #b9d3e8",
                "border-radius": "8px",
                "padding": "6px 12px 12px 12px",
            },
            margin=(5, 10, 15, 10),
        )

    def __panel__(self) -> pn.viewable.Viewable:
        """The sidebar part (chooser + preset button); ``column`` and ``welcome`` go in the
        main area."""
        return pn.Column(
            pn.pane.Markdown("### Lessons", margin=(0, 10)),
            self.select,
            self.preset_button,
            self.named_buttons,
            sizing_mode="stretch_width",
            margin=0,
        )
