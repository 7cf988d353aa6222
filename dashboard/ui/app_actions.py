"""What the dashboard's buttons and links do beyond a run: lessons, present mode, the report.

:class:`AppActions` is a mixin of :class:`~dashboard.ui.app.DashboardApp` (it reads the app's
``config``, ``run_model``, ``lessons_view``, ``controls``, ``board`` and ``toolbar``): a lesson's
preset and one-click start, the page address's ``?lesson=N&autorun=1``, present mode (the
board's projector fonts and the page's hidden sidebar, :mod:`dashboard.ui.keys`) and the
run's report (:mod:`dashboard.ui.report`).  Apart from the app so that the app module stays
the composition and the stream.
"""

from __future__ import annotations

from typing import Any

import panel as pn

__all__ = ["AppActions"]


class AppActions:
    """Lesson, present-mode and report actions of the dashboard (a mixin)."""

    config: Any
    run_model: Any
    lessons_view: Any
    controls: Any
    board: Any
    toolbar: Any
    present: bool
    run: Any  # the app's Run
    _in_document: Any  # the app's "change the document on its thread"

    def load_lesson_preset(self, name: str = "") -> bool:
        """Apply the selected lesson's preset (``name``: one of its named presets) to the
        configuration; return whether it applied."""
        lesson = self.lessons_view.lesson
        if lesson is None or name not in lesson.presets:
            return False
        try:
            # a lesson starts from the papers' constants unless its preset sets some
            self.config.apply_preset({"constants": None, **dict(lesson.presets[name])})
        except ValueError as exc:
            self.controls.show_alert(str(exc), "danger")
            return False
        return True

    def start_lesson(self, number: int | str) -> bool:
        """One click to a running lesson: open lesson ``number`` (its number or slug) beside the
        plots, apply its preset and start the run.  Returns whether the run started."""
        lesson = self.lessons_view.find(number)
        if lesson is None:
            return False
        self.lessons_view.select.value = lesson.slug
        if not self.load_lesson_preset():
            return False
        self.run()
        return self.run_model.status == "running"

    def apply_query(self, query: dict[str, str]) -> None:
        """Handle the page URL's ``?lesson=N`` (open lesson N and apply its preset) and
        ``&autorun=1`` (also start the run).  Other keys are the configuration's URL sync.

        A lesson that does not exist is explained in the alert; nothing else changes then.
        """
        number = str(query.get("lesson", "")).strip()
        if not number:
            return
        lesson = self.lessons_view.find(number)
        if lesson is None:
            numbers = (
                ", ".join(str(le.number) for le in self.lessons_view.lessons) or "none available"
            )
            self.controls.show_alert(
                f"There is no lesson {number!r} (lesson=N in the address); lessons: {numbers}.",
                "warning",
            )
            return
        self.lessons_view.select.value = lesson.slug
        applied = self.load_lesson_preset()
        autorun = str(query.get("autorun", "")).strip().lower() in ("1", "true", "yes", "on")
        if applied and autorun:
            self.run()

    def toggle_present(self) -> None:
        """Present mode on / off (the Present button, key P)."""
        self.present = not self.present

    def _on_present(self, *_: Any) -> None:
        def show() -> None:
            self.board.present = self.present
            self.toolbar.keys.present = self.present
            self.toolbar.present_button.param.update(
                label="Exit present" if self.present else "Present",
                button_type="warning" if self.present else "default",
            )

        self._in_document(show)

    def report(self) -> tuple[str, str]:
        """``(html, filename)``: the report of the run shown (:mod:`dashboard.ui.report`),
        with the link that reproduces it (this page's address and its settings)."""
        from .report import DEFAULT_BASE_URL, report_html
        from .urlstate import serialize

        result = self.run_model.result
        if result is None:
            return "", "bandit-report.html"
        loc = pn.state.location
        base = DEFAULT_BASE_URL
        if loc is not None and loc.hostname:
            port = f":{loc.port}" if loc.port else ""
            base = f"{loc.protocol or 'http:'}//{loc.hostname}{port}{loc.pathname}"
        query = {k: v for k, v in serialize(self.config).items() if k != "speed"}
        html = report_html(result, query, base_url=base, band=self.config.band)
        return html, f"bandit-report-{self.config.problem}-seed{self.config.seed}.html"
