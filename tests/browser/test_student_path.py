"""The path a new student takes from the README: `make serve` opens the dashboard, and ONE
click on "Start lesson 1" shows lesson 1 beside the plots and runs its preset."""

from __future__ import annotations

import re
import time

import pytest

from dashboard.ui.lessons import load_lesson

pytestmark = pytest.mark.browser

WAIT_MS = 45_000
_PROGRESS = re.compile(r"t = ([\d,]+) / ([\d,]+)\s*\((\w+)\)")
_DEEP_TEXT_JS = """(root) => {
  const out = [];
  const walk = (node) => {
    if (node.nodeType === Node.TEXT_NODE) out.push(node.textContent);
    if (node.shadowRoot) walk(node.shadowRoot);
    for (const child of node.childNodes) walk(child);
  };
  walk(root);
  return out.join(' ');
}"""


def _text(page, css_class: str) -> str:
    raw = page.locator(f".{css_class}").first.evaluate(_DEEP_TEXT_JS)
    return " ".join(raw.replace("\xa0", " ").split())


def _progress(page) -> tuple[int, int, str]:
    match = _PROGRESS.search(_text(page, "progress-text"))
    assert match, _text(page, "progress-text")
    return int(match[1].replace(",", "")), int(match[2].replace(",", "")), match[3]


def test_one_click_from_the_welcome_card_runs_lesson_1(page, served_app):
    lesson = load_lesson(1)
    page.goto(served_app, timeout=WAIT_MS)
    button = page.locator(".start-lesson-button button")
    button.wait_for(timeout=WAIT_MS)
    assert "lesson 1" in button.inner_text().lower()
    button.click()  # the one click
    # the lesson's text is shown beside the plots ...
    title = lesson.title.split(":")[0]
    deadline = time.time() + WAIT_MS / 1000
    while title not in _text(page, "lesson-text") and time.time() < deadline:
        time.sleep(0.2)
    assert title in _text(page, "lesson-text")
    # ... and its preset runs: the horizon is the lesson's and t grows
    deadline = time.time() + WAIT_MS / 1000
    while time.time() < deadline:
        t, horizon, status = _progress(page)
        if t > 0:
            break
        time.sleep(0.2)
    assert horizon == lesson.preset["horizon"]
    assert status in ("running", "done") and t > 0
    if status == "running":
        time.sleep(0.5)
        assert _progress(page)[0] >= t
    assert not page.locator(".welcome-card").first.is_visible()
    assert page.console_errors == []
