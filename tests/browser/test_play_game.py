"""A full short game of "Can you beat AROQ?" in Chromium: the play Viewer served on its own
with ``pn.serve`` (no dashboard), arms clicked, rounds submitted, an invalid choice refused
with an inline notice, and the true means revealed at the end."""

from __future__ import annotations

import socket
import subprocess
import sys
import textwrap
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


WAIT_MS = 45_000
HORIZON = 3
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

_SERVE = """
import panel as pn
from dashboard.simulation.specs import make_spec
from dashboard.ui.play import PlayView

def game():
    return PlayView.new(make_spec("cmab", d=5, m=2), ["AROQ-CMAB"], horizon={horizon}, seed=1)

pn.serve({{"play": game}}, port={port}, address="127.0.0.1", show=False,
         websocket_origin=["127.0.0.1:{port}"], threaded=False)
"""


@pytest.fixture(scope="module")
def play_url() -> Iterator[str]:
    port = _free_port()
    ARTIFACTS.mkdir(exist_ok=True)
    log = ARTIFACTS / "panel-serve-play.log"
    script = textwrap.dedent(_SERVE.format(port=port, horizon=HORIZON))
    with log.open("w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-c", script], cwd=ROOT, stdout=out, stderr=subprocess.STDOUT
        )
        probe = f"http://127.0.0.1:{port}/static/js/bokeh.min.js"
        deadline = time.time() + 90
        while True:
            try:
                with urllib.request.urlopen(probe, timeout=5) as resp:
                    if resp.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.time() > deadline:
                proc.kill()
                pytest.fail(f"pn.serve did not start:\n{log.read_text()[-2000:]}")
            time.sleep(0.3)
        try:
            yield f"http://127.0.0.1:{port}/play"
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()


def _text(page, css_class: str) -> str:
    raw = page.locator(f".{css_class}").first.evaluate(_DEEP_TEXT_JS)
    return " ".join(raw.replace("\xa0", " ").split())


def _wait_text(page, css_class: str, needle: str) -> str:
    deadline = time.time() + WAIT_MS / 1000
    while time.time() < deadline:
        text = _text(page, css_class)
        if needle in text:
            return text
        time.sleep(0.2)
    raise AssertionError(f"{needle!r} never appeared in .{css_class}: {_text(page, css_class)!r}")


def _click_arms(page, arms: list[int]) -> None:
    buttons = page.locator(".play-arms button")
    for i in range(buttons.count()):
        button = buttons.nth(i)
        label = button.inner_text().strip()
        active = "active" in (button.get_attribute("class") or "")
        if (int(label.split()[-1]) in arms) != active:
            button.click()


def test_full_short_game_with_an_invalid_choice(chromium, play_url) -> None:
    context = chromium.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        page.goto(play_url, timeout=WAIT_MS)
        page.locator(".play-arms button").first.wait_for(timeout=WAIT_MS)
        assert page.locator(".play-arms button").count() == 5
        submit = page.locator(".play-submit button")

        _click_arms(page, [0])  # one arm: not an m-set
        submit.click()
        assert "not an action" in _wait_text(page, "play-notice", "not an action")

        for t in range(1, HORIZON + 1):
            _click_arms(page, [0, 3])
            submit.click()
            _wait_text(page, "play-outcome", f"Round {t}")
        assert "arm 3" in _text(page, "play-outcome")
        reveal = _wait_text(page, "play-reveal", "True means")
        assert "Lowest regret" in reveal and "AROQ" in reveal
        assert submit.is_disabled()
        page.screenshot(path=str(ARTIFACTS / "play-game.png"), full_page=True)
        assert not errors
    finally:
        context.close()
