"""The main page's Sweep and Play tabs in Chromium (``panel serve dashboard``).

* Sweep: open the tab, type a two-point grid, Run sweep, and watch it reach "done" with the
  progress bar full and every grid cell filled (a tiny sweep runs in-process in a background
  thread of the server; ``python -m dashboard serve`` gives it the class's Dask client).
* Play: a link opens the Play tab (``?tab=play``) on the Live settings it names (d = 5, m = 2,
  against AROQ-CMAB); a short game of 3 rounds with one invalid choice (one arm where an m-set
  of 2 is needed) refused with an inline message that shows its text, brackets and all (the
  message is escaped, never markup), then the true means revealed at the end.

One page load per test (each costs seconds on a loaded machine); screenshots go to
``test-artifacts/``.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from test_dashboard import _READY_JS, _poll, _text

pytestmark = pytest.mark.browser

ROUNDS = 5  # the rounds input's smallest value
#: Bound of a page load or a finished sweep (generous: a loaded 2-core machine builds a
#: session in 20-50 s; CI takes 5-15 s).
WAIT_MS = 150_000


def _load(page: Any, url: str, ready: str) -> None:
    page.set_default_timeout(WAIT_MS)
    page.goto(url, timeout=WAIT_MS)
    page.locator(ready).first.wait_for(timeout=WAIT_MS)


def _open_tab(page: Any, label: str, ready: str) -> None:
    page.locator(".bk-tab", has_text=label).first.click()
    page.locator(ready).first.wait_for(timeout=WAIT_MS)


def _fill(locator: Any, value: str) -> None:
    locator.fill(value)
    locator.press("Enter")


def test_sweep_tab_runs_a_tiny_grid_to_completion(page, served_app, artifacts) -> None:
    _load(page, served_app, ".run-button button")
    page.wait_for_function(_READY_JS, timeout=WAIT_MS)
    _open_tab(page, "Sweep", ".sweep-run-button button")
    assert not page.locator(".run-button button").is_visible()  # the sidebar is the sweep's
    _fill(page.locator(".sweep-values input"), "200, 400")
    page.locator(".sweep-run-button button").click()
    try:
        status = _poll(lambda: "done" in (s := _text(page, "sweep-status")) and s, WAIT_MS / 1000)
    except AssertionError:
        page.screenshot(path=str(artifacts / "tab-sweep-failed.png"), full_page=True)
        raise AssertionError(
            f"no 'done' within {WAIT_MS / 1000:.0f} s: status {_text(page, 'sweep-status')!r}, "
            f"notice {_text(page, 'sweep-notice')!r}, values "
            f"{page.locator('.sweep-values input').input_value()!r}, run button enabled "
            f"{page.locator('.sweep-run-button button').is_enabled()}"
        ) from None
    assert "done: 2 points" in status
    grid = _text(page, "sweep-grid")
    assert "200" in grid and "400" in grid and "…" not in grid
    bar = page.evaluate(
        """() => [...Bokeh.documents[0].all_models]
            .filter((m) => String(m.type).endsWith('Progress')).map((m) => m.value)"""
    )
    assert 100 in bar
    assert page.locator(".sweep-run-button button").is_enabled()
    assert page.locator(".sweep-cancel-button button").is_disabled()
    page.screenshot(path=str(artifacts / "tab-sweep.png"), full_page=True)
    assert not page.console_errors


def _click_arms(page: Any, arms: list[int]) -> None:
    buttons = page.locator(".play-arms button")
    for i in range(buttons.count()):
        button = buttons.nth(i)
        active = "active" in (button.get_attribute("class") or "")
        if (int(button.inner_text().split()[-1]) in arms) != active:
            button.click()


def _wait_text(page: Any, css_class: str, needle: str) -> str:
    deadline = time.monotonic() + WAIT_MS / 1000
    while time.monotonic() < deadline:
        text = _text(page, css_class)
        if needle in text:
            return text
        time.sleep(0.2)
    raise AssertionError(f"{needle!r} never appeared in .{css_class}: {_text(page, css_class)!r}")


def test_play_tab_full_short_game_with_an_invalid_choice(page, served_app, artifacts) -> None:
    query = 'tab=play&problem=cmab&d=5&m=2&algorithms=["AROQ-CMAB"]'
    _load(page, f"{served_app}?{query}", ".play-arms button")
    assert page.locator(".play-arms button").count() == 5
    _fill(page.get_by_label("Rounds of the game", exact=True), str(ROUNDS))
    page.locator(".play-new-game button").click()
    _wait_text(page, "play-view", f"Round 1 of {ROUNDS}:")  # the new game is on show
    assert page.locator(".play-arms button").count() == 5  # (and the old one gone)
    submit = page.locator(".play-submit button")

    _click_arms(page, [0])  # one arm: not an m-set of 2
    submit.click()
    notice = _wait_text(page, "play-notice", "not an action")
    assert "arms [0] are not an action" in notice and "\\" not in notice  # text, not markup

    for t in range(1, ROUNDS + 1):
        _click_arms(page, [0, 3])
        submit.click()
        _wait_text(page, "play-outcome", f"Round {t}:")
    assert not page.locator(".play-notice").is_visible()
    reveal = _wait_text(page, "play-reveal", "True means")
    assert "Lowest regret" in reveal and "AROQ-CMAB" in reveal
    assert submit.is_disabled()
    page.screenshot(path=str(artifacts / "tab-play.png"), full_page=True)
    assert not page.console_errors
