"""Run controls and messages: Run / Pause / Step / Reset, the progress text and bar (shown
in the toolbar at the top of the main area: :mod:`dashboard.ui.toolbar`), the
alert (configuration problems as a warning, a failed run as a danger alert), the address
notice (what the link asked for and did not get), the run notice and the CSV download.

Every message is plain text escaped here (:mod:`dashboard.ui.safe`): they quote algorithm
names, constants and URL values, i.e. user input.  Hooks for browser tests: ``run-button``,
``pause-button``, ``step-button``, ``reset-button``, ``progress-text``, ``error-alert``,
``url-notice``, ``notice-alert``, ``download-csv``.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

import panel as pn

from .document import on_click
from .progress import ProgressLine
from .safe import escape

__all__ = ["RunControls", "escape_all"]

_STATUS = {"idle": "ready", "running": "running", "paused": "paused", "done": "done"}


def escape_all(sentences: list[str]) -> str:
    """Plain sentences as one escaped Markdown paragraph (each cut to 400 characters)."""
    return " ".join(escape(s, 400) for s in sentences)


class RunControls(pn.viewable.Viewer):
    """The buttons and messages under the settings.

    Parameters
    ----------
    on_run, on_pause, on_step, on_reset : callable
        What the buttons do (the app's actions).
    csv : callable
        ``csv() -> str``: the results as CSV (the download).
    """

    def __init__(
        self,
        on_run: Callable[[], Any],
        on_pause: Callable[[], Any],
        on_step: Callable[[], Any],
        on_reset: Callable[[], Any],
        csv: Callable[[], str],
        **params: Any,
    ) -> None:
        super().__init__(**params)
        self._shown: tuple[Any, ...] | None = None  # what show_state last set, besides t
        self.run_button = pn.widgets.Button(
            label="Run", color="primary", css_classes=["run-button"]
        )
        self.pause_button = pn.widgets.Button(
            label="Pause", color="default", css_classes=["pause-button"]
        )
        self.step_button = pn.widgets.Button(
            label="Step", color="default", css_classes=["step-button"]
        )
        self.reset_button = pn.widgets.Button(
            label="Reset", color="default", css_classes=["reset-button"]
        )
        on_click(self.run_button, on_run)
        on_click(self.pause_button, on_pause)
        on_click(self.step_button, on_step)
        on_click(self.reset_button, on_reset)
        #: ``t = ... / T (status)`` over its bar: one Bokeh Div, changed on every frame
        #: (progress.py says why it is not a Panel widget)
        self.progress_text = ProgressLine()
        self.alert = pn.pane.Alert(
            "", alert_type="warning", css_classes=["error-alert"], visible=False
        )
        #: what the page address asked for and did not get (one escaped line per key)
        self.url_notice = pn.pane.Alert(
            "", alert_type="warning", css_classes=["url-notice"], visible=False
        )
        self.notice = pn.pane.Alert(
            "", alert_type="info", css_classes=["notice-alert"], visible=False
        )
        self.download = pn.widgets.FileDownload(
            callback=lambda: io.StringIO(csv()),
            filename="results.csv",
            label="Download results (CSV)",
            color="success",
            css_classes=["download-csv"],
            disabled=True,
            sizing_mode="stretch_width",
        )

    def show_progress(self, t: int, horizon: int, status: str) -> None:
        """``t = ... / T (status)`` and the bar; Pause becomes Resume when paused."""
        self.progress_text.show(
            f"<b>t = {t:,} / {horizon:,}</b> &nbsp; ({_STATUS.get(status, 'stopped')})",
            int(100 * t / horizon) if horizon else 0,
        )
        label = "Resume" if status == "paused" else "Pause"
        if self.pause_button.label != label:  # set only on a change: a frame's t changes
            self.pause_button.label = label

    def show_state(self, run: Any, config: Any, stale: bool = False) -> None:
        """Buttons, progress, notices and the alert for a :class:`~dashboard.ui.model.RunModel`
        and its :class:`~dashboard.ui.model.Config`; ``stale``: the plots show a run of
        other settings (the problem or algorithms changed after it)."""
        status = run.status
        notices = run.notices()
        horizon = run.horizon or config.horizon
        # A frame changes only t (and the bar) most of the time: the buttons, notices and
        # alert are set again only when something they show changed (1.3 ms of widget
        # bookkeeping per frame and page on a served class otherwise)
        shown = (
            status,
            horizon,
            config.valid,
            run.sim is None,
            run.result is None,
            tuple(notices),
            stale,
            run.error,
            repr(config.errors),
        )
        if shown == self._shown:
            self.show_progress(run.t, horizon, status)
            return
        self.run_button.disabled = not config.valid
        self.pause_button.disabled = status not in ("running", "paused")
        self.step_button.disabled = not config.valid and run.sim is None
        self.show_progress(run.t, horizon, status)
        self.download.disabled = run.result is None
        if stale:
            verb = "is still running" if status == "running" else "ran"
            notices.append(
                f"The plots show the run that {verb} with the previous problem or algorithms: "
                "press Run for the new settings (Reset clears the plots)."
            )
        self.show_notices(notices)
        if status == "error" and run.error:
            self.show_alert(run.error, "danger")
        elif config.errors:
            self.show_alert(config.errors, "warning", suffix=" Fix this to enable Run.")
        else:
            self.hide_alert()
        self._shown = shown

    def show_notices(self, notices: list[str]) -> None:
        """The run's notices (escaped; none: hidden).  Unchanged notices are not sent again:
        re-rendering the Markdown pane cost ~10 ms of the server's loop, and a class's
        frames re-showed the same notices whenever the status changed (profiled at 30
        students: 13% of the loop)."""
        self._shown = None
        text, visible = escape_all(notices), bool(notices)
        if (text, visible) != (self.notice.object, self.notice.visible):
            self.notice.param.update(object=text, visible=visible)

    def show_alert(self, text: str | list[str], kind: str, suffix: str = "") -> None:
        """Plain sentences in the alert, escaped (they quote user input)."""
        self._shown = None  # the next show_state redraws everything
        sentences = [text] if isinstance(text, str) else list(text)
        self.alert.param.update(
            object=escape_all(sentences) + suffix, alert_type=kind, visible=True
        )

    def hide_alert(self) -> None:
        """No problem to report."""
        self._shown = None
        self.alert.visible = False

    def show_url_notices(self, notices: list[str]) -> None:
        """What the page address asked for and did not get (one escaped line per refused
        key); an empty list hides the notice."""
        text = "\n".join(f"- {escape(n, 400)}" for n in notices)
        self.url_notice.param.update(object=text, visible=bool(notices))

    def messages(self) -> pn.Column:
        """The alert and the notices (under the toolbar, where the reason Run is off shows)."""
        return pn.Column(
            self.alert, self.url_notice, self.notice, sizing_mode="stretch_width", margin=0
        )

    def __panel__(self) -> pn.viewable.Viewable:
        """The sidebar part: the CSV download (the buttons and progress are the toolbar's)."""
        return pn.Column(self.download, sizing_mode="stretch_width", margin=0)
