"""Real-browser tests of the served dashboard (``panel serve dashboard`` + headless Chromium).

Every test drives the page the way a student does (clicks, selects, URL queries) and checks
what the browser really shows: widget values, the alert, the progress text and the live Bokeh
data sources (renderers named ``regret-<algorithm>`` in the newest regret figure).  Waits are
bounded polls (``page.wait_for_function`` / :func:`_poll`), never long fixed sleeps; the only
fixed waits are the ~1 s "nothing changes while paused" windows, which is the property tested.

Runs that must last while a test looks at them use ``speed=slow`` (1/600 of T per frame, so a
run takes about a minute whatever the machine); runs that must finish use tiny horizons.
"""

from __future__ import annotations

import itertools
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

pytestmark = pytest.mark.browser

#: Query of a run that streams for about a minute (so pausing / reading it is never racy).
SLOW = "speed=slow&horizon=100000&runs=2"
#: Generous bound of any single wait (page load, first frame) on a loaded 2-core machine.
WAIT_MS = 45_000

# (not ``get_model_by_name``: it throws while BokehJS still holds a replaced figure too)
_READY_JS = """() => window.Bokeh !== undefined && Bokeh.documents.length > 0
    && [...Bokeh.documents[0].all_models].some((m) => m.name === 'regret-plot')"""

# The regret figure on show.  After a re-render (new problem or algorithms) BokehJS may still
# hold the previous figure and its ``regret-<algorithm>`` renderers, so ``get_model_by_name``
# can return a stale one: take the most recently created figure (largest ``p<n>`` id).
_FIGURE_JS = """const figure = (() => {
    let best = null, key = -1;
    for (const m of Bokeh.documents[0].all_models) {
        if (m.type !== 'Figure' || m.name !== 'regret-plot') continue;
        const n = Number(String(m.id).replace(/\\D/g, ''));
        if (n > key) { best = m; key = n; }
    }
    return best;
})();"""

_REGRET_JS = (
    """(name) => { """
    + _FIGURE_JS
    + """
    const r = figure.renderers.find((x) => x.name === 'regret-' + name);
    if (r === undefined) return null;
    const t = r.data_source.data.t;
    return [r.data_source.get_length(), t.length ? Number(t[t.length - 1]) : 0];
}"""
)

_RENDERERS_JS = (
    """() => { """
    + _FIGURE_JS
    + """
    return figure.renderers.filter((r) => r.name && r.name.startsWith('regret-'))
        .map((r) => r.name.slice('regret-'.length)).sort();
}"""
)

# Text of an element including every nested shadow root (Panel/Bokeh widgets live in shadow
# DOM, which ``inner_text`` does not enter); style, script and link nodes are skipped.
_DEEP_TEXT_JS = """(root) => {
    const parts = [];
    const walk = (n) => {
        if (n.nodeType === 3) { parts.push(n.textContent); return; }
        if (n.nodeType !== 1 && n.nodeType !== 11) return;
        if (n.nodeType === 1 && ['STYLE', 'SCRIPT', 'LINK'].includes(n.tagName)) return;
        if (n.shadowRoot) walk(n.shadowRoot);
        for (const c of n.childNodes) walk(c);
    };
    walk(root || document.body);
    return parts.join(' ');
}"""

# Number of elements matching a selector inside an element, through shadow roots.
_COUNT_DEEP_JS = """(root, selector) => {
    let count = 0;
    const walk = (n) => {
        for (const el of n.querySelectorAll('*')) {
            if (el.matches(selector)) count += 1;
            if (el.shadowRoot) walk(el.shadowRoot);
        }
    };
    if (root.shadowRoot) walk(root.shadowRoot);
    walk(root);
    return count;
}"""

_PROGRESS = re.compile(r"t = ([\d,]+) / ([\d,]+)\s*\((\w+)\)")


# ---------- helpers
def _open(page: Any, base: str, query: str = "") -> Any:
    """Load the dashboard (optionally with a URL query) and wait until the plots exist."""
    page.goto(base + (f"?{query}" if query else ""), timeout=WAIT_MS)
    page.wait_for_selector(".run-button button", timeout=WAIT_MS)
    page.wait_for_function(_READY_JS, timeout=WAIT_MS)
    return page


def _text(page: Any, css_class: str) -> str:
    """Visible text of the element with this CSS class (through shadow DOM), squashed."""
    raw = page.locator(f".{css_class}").first.evaluate(_DEEP_TEXT_JS)
    return " ".join(raw.replace("\xa0", " ").split())


_BAR_JS = """(host) => {
    const track = (host.shadowRoot || host).querySelector('.progress-track');
    if (!track) return null;
    const fill = track.querySelector('.progress-fill');
    const t = track.getBoundingClientRect(), f = fill.getBoundingClientRect();
    return [t.width, t.height, f.width, Number(track.getAttribute('aria-valuenow'))];
}"""


def _bar(page: Any) -> tuple[float, float, float, int]:
    """``(track width, track height, fill width, percent)`` of the progress bar as drawn."""
    out = page.locator(".progress-text").first.evaluate(_BAR_JS)
    assert out is not None, "no progress bar on the page"
    return tuple(out)


def _progress(page: Any) -> tuple[int, int, str]:
    """``(t, T, status)`` shown by the progress text."""
    text = _text(page, "progress-text")
    match = _PROGRESS.search(text)
    assert match, f"progress text not understood: {text!r}"
    return int(match[1].replace(",", "")), int(match[2].replace(",", "")), match[3]


def _regret(page: Any, algorithm: str) -> tuple[int, int] | None:
    """``(number of points, last t)`` of the regret curve of ``algorithm`` (None: absent)."""
    out = page.evaluate(_REGRET_JS, algorithm)
    return None if out is None else (int(out[0]), int(out[1]))


def _poll(fn: Callable[[], Any], timeout: float = WAIT_MS / 1000, every: float = 0.1) -> Any:
    """Call ``fn`` until it returns something truthy (returned) or fail after ``timeout``."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        last = fn()
        if last:
            return last
        time.sleep(every)
    raise AssertionError(f"condition not met within {timeout:.0f} s (last value {last!r})")


def _click(page: Any, css_class: str) -> None:
    page.locator(f".{css_class} button").click()


def _run_disabled(page: Any) -> bool:
    return page.locator(".run-button button").is_disabled()


def _alert_visible(page: Any) -> bool:
    return page.locator(".error-alert").is_visible()


def _input(page: Any, label: str) -> Any:
    """The text input of the numeric widget with this label."""
    return page.get_by_label(label, exact=True)


def _set_number(page: Any, label: str, value: int) -> None:
    box = _input(page, label)
    box.fill(str(value))
    box.press("Enter")


def _url(page: Any) -> str:
    """The address bar (``page.url`` only learns of ``history.pushState`` while playwright
    processes events, so ask the page itself)."""
    return page.evaluate("() => window.location.href")


def _query(page: Any) -> dict[str, str]:
    return {k: v[-1] for k, v in parse_qs(urlsplit(_url(page)).query).items()}


def _algorithm_widget(page: Any) -> tuple[list[str], list[str]]:
    """``(options, value)`` of the algorithm MultiChoice, as the browser holds them."""
    return page.evaluate(
        """() => { for (const m of Bokeh.documents[0].all_models)
            if (m.type === 'MultiChoice') return [m.options, m.value]; return null; }"""
    )


def _running(page: Any, algorithm: str) -> tuple[int, int]:
    """Wait until ``algorithm``'s regret curve has data and the run is marked running."""
    return _poll(lambda: (_regret(page, algorithm) or (0, 0))[0] > 0 and _regret(page, algorithm))


def _assert_grows(page: Any, read: Callable[[], Any], label: str, times: int = 2) -> list[Any]:
    """Read ``read()`` repeatedly a few hundred ms apart and see it strictly increase
    ``times`` times (each increase within a bounded wait)."""
    values = [read()]
    for _ in range(times):
        time.sleep(0.3)
        values.append(_poll(lambda prev=values[-1]: (v := read()) > prev and v, timeout=20))
    assert all(a < b for a, b in itertools.pairwise(values)), f"{label} did not grow: {values}"
    return values


# ---------- 1. load
def test_page_loads_with_widgets_plots_and_no_console_errors(page, served_app):
    _open(page, served_app)
    assert "Bandit teaching dashboard" in page.title()
    for hook in (
        "problem-select",
        "algorithm-select",
        "run-button",
        "pause-button",
        "step-button",
        "reset-button",
        "progress-text",
        "download-csv",
        "lesson-select",
        "load-preset-button",
    ):
        assert page.locator(f".{hook}").count() == 1, hook
        assert page.locator(f".{hook}").is_visible(), hook
    for plot in ("regret-plot", "timeline-plot", "complexity-plot", "surviving-plot", "wall-plot"):
        assert page.locator(f".{plot}").is_visible(), plot
        # Bokeh draws into canvases inside the figure's shadow root
        assert page.locator(f".{plot}").evaluate(_COUNT_DEEP_JS, "canvas") > 0, plot
    assert _regret(page, "CUCB") == (0, 0)  # the default comparison, empty before Run
    assert _progress(page) == (0, 10_000, "ready")
    assert not _run_disabled(page)
    assert not _alert_visible(page)
    page.wait_for_function("() => Bokeh.documents[0].is_idle", timeout=WAIT_MS)
    # Nothing is filtered: no favicon 404 occurs (Panel serves its own favicon).
    assert page.console_errors == []
    # A classroom may be offline: everything the page loads comes from the served app.
    assert page.external_requests == []


def test_page_recreated_from_the_websocket_is_still_offline_and_works(page, served_app):
    """The page's session expires before its websocket connects (a loaded machine: the
    fixture lets unused sessions live 0.5 s), so Bokeh builds a new session from the socket.
    Panel rewrites its stylesheets to the server's own files only when it renders the HTML,
    so without the app's fix this page loaded all its CSS from cdn.holoviz.org (seen on CI)."""

    def late_script(route) -> None:
        time.sleep(2.5)  # > lifetime + check interval: the page's session is discarded
        route.continue_()

    # BokehJS loads before the websocket opens: holding it back delays the socket
    page.route(re.compile(r".*/static/js/bokeh\.min\.js.*"), late_script)
    _open(page, served_app, "d=7")
    assert _input(page, "d (arms / dimension)").input_value() == "7"
    assert _progress(page) == (0, 10_000, "ready")
    page.wait_for_function("() => Bokeh.documents[0].is_idle", timeout=WAIT_MS)
    assert page.external_requests == []
    assert page.console_errors == []


# ---------- 2. problem / algorithms
def test_problem_change_offers_other_algorithms_and_plots_after_run(page, served_app):
    _open(page, served_app, "horizon=100000&runs=1&speed=slow")
    options, value = _algorithm_widget(page)
    assert "CUCB" in options and "SBE" not in options
    assert page.locator(".weights-plot").count() == 0
    page.locator(".problem-select select").select_option(label="Semiparametric bandit")
    # (for one message the old choices may still be listed next to the new options)
    _poll(lambda: "SBE" in (o := _algorithm_widget(page)[0]) and "CUCB" not in o)
    options, value = _algorithm_widget(page)
    assert "AROQ-CMAB" not in options and "BOSE" in options
    assert value and set(value) <= set(options)
    # the semiparametric widgets replace the cmab ones
    assert _input(page, "K (arms)").is_visible()
    assert not _input(page, "m (max action size)").is_visible()
    _click(page, "run-button")
    _poll(lambda: _renderers(page) == sorted(value))
    for plot in ("weights-plot", "pac-plot", "shift-plot"):
        page.locator(f".{plot}").wait_for(state="visible", timeout=WAIT_MS)
    _click(page, "reset-button")
    assert page.console_errors == []


def test_problem_change_updates_plots_before_run(page, served_app, artifacts):
    _open(page, served_app)
    page.locator(".problem-select select").select_option(label="Semiparametric bandit")
    _poll(lambda: "SBE" in _algorithm_widget(page)[0])
    value = _algorithm_widget(page)[1]
    _poll(lambda: _renderers(page) == sorted(value), timeout=10)
    for plot in ("weights-plot", "pac-plot", "shift-plot"):
        page.locator(f".{plot}").wait_for(state="visible", timeout=WAIT_MS)
    assert _progress(page) == (0, 10_000, "ready")
    assert not page.locator(".notice-alert").is_visible()  # nothing out of date to warn about
    # and back: the combinatorial plots return, the semiparametric ones go
    page.locator(".problem-select select").select_option(label="Combinatorial semi-bandit")
    _poll(lambda: _renderers(page) == sorted(["CUCB", "AROQ-CMAB", "SROQ-CMAB"]), timeout=10)
    page.locator(".weights-plot").wait_for(state="detached", timeout=WAIT_MS)
    page.wait_for_function("() => Bokeh.documents[0].is_idle", timeout=WAIT_MS)
    page.screenshot(path=str(artifacts / "problem-switch-idle.png"))
    assert page.console_errors == []


def test_algorithm_choice_changes_regret_renderers_after_run(page, served_app):
    _open(page, served_app, "horizon=500&runs=1")
    assert _renderers(page) == sorted(["CUCB", "AROQ-CMAB", "SROQ-CMAB"])
    page.locator(".algorithm-select button[aria-label=\"Remove item: 'AROQ-CMAB'\"]").click()
    _poll(lambda: _algorithm_widget(page)[1] == ["CUCB", "SROQ-CMAB"])
    _poll(lambda: "AROQ-CMAB" not in _query(page).get("algorithms", "AROQ-CMAB"))
    _click(page, "run-button")
    _poll(lambda: _renderers(page) == ["CUCB", "SROQ-CMAB"])
    _poll(lambda: _progress(page)[2] == "done")
    assert _regret(page, "CUCB")[1] == 500 and _regret(page, "SROQ-CMAB")[1] == 500
    legend = page.evaluate(
        "() => { "
        + _FIGURE_JS
        + """ return [...figure.references()].filter((m) => m.type === 'LegendItem' && m.label
              && m.label.value).map((m) => m.label.value); }"""
    )
    assert "CUCB" in legend and "SROQ-CMAB" in legend and "AROQ-CMAB" not in legend


# change one setting from the page and click Run in the same JS turn: the click reaches the
# server while Panel still debounces the change
_CHANGE_AND_RUN_JS = """(change) => {
  let choice = null, horizon = null, run = null;
  for (const m of Bokeh.documents[0].all_models) {
    const css = m.css_classes || [];
    if (css.includes('algorithm-select')) choice = m;
    if (m.type === 'Spinner' && m.title === 'Horizon T') horizon = m;
    if (css.includes('run-button')) run = m;
  }
  if (change === 'algorithms') choice.value = ['CUCB', 'SROQ-CMAB'];
  else horizon.value = 700;
  run.trigger_event(new (Bokeh.require('core/bokeh_events').ButtonClick)());
  return true;
}"""


@pytest.mark.parametrize(
    ("change", "names", "T"),
    [
        ("algorithms", ["CUCB", "SROQ-CMAB"], 500),
        ("horizon", ["AROQ-CMAB", "CUCB", "SROQ-CMAB"], 700),
    ],
)
def test_run_clicked_while_a_change_is_pending_streams_to_done(
    page, served_app, server_log, change, names, T
):
    # a student edits a setting and clicks Run at once: Panel runs the click, and the change
    # it applies first, without the document lock; the progress line (a plain Bokeh model)
    # then raised '_pending_writes should be non-None', and the run started, never streamed
    # and never showed "done" (document.on_click, DashboardApp._on_status)
    _open(page, served_app, "horizon=500&runs=1")
    assert page.evaluate(_CHANGE_AND_RUN_JS, change)
    _poll(lambda: _progress(page)[2] == "done")
    assert _progress(page)[:2] == (T, T)  # the run used the new setting
    _poll(lambda: _renderers(page) == names)
    assert _regret(page, "CUCB")[1] == T
    assert "_pending_writes" not in server_log.read_text()
    assert page.console_errors == []


def _renderers(page: Any) -> list[str]:
    return page.evaluate(_RENDERERS_JS)


# ---------- 3. streaming, 10. screenshot
def test_run_streams_growing_data_and_progress(page, served_app, artifacts):
    _open(page, served_app, SLOW)
    _click(page, "run-button")
    _running(page, "CUCB")
    assert _progress(page)[1:] == (100_000, "running")
    lengths = _assert_grows(page, lambda: _regret(page, "CUCB"), "regret-CUCB (points, last t)")
    # every algorithm streams, and the progress text counts the same rounds
    for name in ("AROQ-CMAB", "SROQ-CMAB"):
        assert _regret(page, name)[0] > 0
    ts = _assert_grows(page, lambda: _progress(page)[0], "progress t")
    assert ts[-1] >= lengths[-1][1] and ts[-1] < 100_000
    # the bar is drawn (a design once dropped its stylesheet: no height, nothing to see),
    # filled in proportion to its percentage
    track_w, track_h, fill_w, percent = _bar(page)
    assert track_w > 100 and track_h >= 10 and 0 <= percent < 100
    assert abs(fill_w - track_w * percent / 100) <= 2
    shot = artifacts / "dashboard-mid-run.png"
    shot.unlink(missing_ok=True)
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 10_000 and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert _progress(page)[2] == "running"
    assert page.console_errors == []


_FRAME_ACK_JS = """() => {
  let sent = null, ack = null;
  for (const m of Bokeh.documents[0].all_models) {
    const css = m.css_classes || [];
    if (css.includes('frame-sent')) sent = Number(m.tags[0]);
    if (css.includes('frame-ack')) ack = Number(m.tags[0]);
  }
  return [sent, ack];
}"""


def test_the_page_acknowledges_frames_and_never_has_more_than_two_unacknowledged(page, served_app):
    # max speed: the server could send frames faster than the page draws them
    _open(page, served_app, "horizon=1000000&runs=4&speed=max")
    _click(page, "run-button")
    _running(page, "CUCB")
    seen = []
    for _ in range(12):
        sent, ack = page.evaluate(_FRAME_ACK_JS)
        seen.append((sent, ack))
        assert sent is not None and ack is not None, seen
        # at most two frames on their way (frame_ack.py), one more after a 3 s stall
        assert 0 <= sent - ack <= 3, seen
        time.sleep(0.25)
    assert seen[-1][1] > seen[0][1] >= 1, seen  # the page keeps acknowledging new frames
    _click(page, "pause-button")
    _poll(lambda: _progress(page)[2] == "paused")
    assert page.console_errors == []


# ---------- 4. pause / resume / step / reset
def test_pause_resume_step_and_reset(page, served_app):
    _open(page, served_app, SLOW)
    _click(page, "run-button")
    _running(page, "CUCB")
    _click(page, "pause-button")
    _poll(lambda: _progress(page)[2] == "paused")
    assert page.locator(".pause-button button").inner_text().strip() == "Resume"
    frozen = (_progress(page), _regret(page, "CUCB"))
    time.sleep(1.0)  # the property under test: nothing moves for a while when paused
    assert (_progress(page), _regret(page, "CUCB")) == frozen

    _click(page, "pause-button")  # Resume
    _poll(lambda: _progress(page)[2] == "running")
    _poll(lambda: _progress(page)[0] > frozen[0][0])
    _click(page, "pause-button")
    _poll(lambda: _progress(page)[2] == "paused")
    time.sleep(0.3)  # let a frame that was already on the wire arrive
    before = _progress(page)[0]

    _click(page, "step-button")
    after = _poll(lambda: (t := _progress(page)[0]) != before and t)
    # one step reaches the next decision point or recorded round: a bounded advance
    assert before < after <= before + 100_000 // 10
    assert _progress(page)[2] == "paused"
    time.sleep(0.5)
    assert _progress(page)[0] == after  # and stays there

    _click(page, "reset-button")
    _poll(lambda: _progress(page)[0] == 0)
    assert _progress(page) == (0, 100_000, "ready")
    _poll(lambda: _regret(page, "CUCB") == (0, 0))
    assert page.locator(".pause-button button").is_disabled()
    assert page.console_errors == []


# ---------- 5. isolation
def test_two_sessions_are_isolated(page, chromium, served_app):
    other_context = chromium.new_context(viewport={"width": 1600, "height": 1000})
    try:
        other = other_context.new_page()
        _open(page, served_app, SLOW)
        _open(other, served_app, SLOW)
        _click(page, "run-button")
        _running(page, "CUCB")
        _assert_grows(page, lambda: _progress(page)[0], "progress t of the running session")
        assert _progress(other) == (0, 100_000, "ready")
        assert _regret(other, "CUCB") == (0, 0)

        # an invalid configuration in the idle session: alert and disabled Run only there
        _set_number(other, "d (arms / dimension)", 2)
        _poll(lambda: _alert_visible(other))
        assert "m must be at most d" in _text(other, "error-alert")
        _poll(lambda: _run_disabled(other))
        assert not _alert_visible(page) and not _run_disabled(page)
        assert _input(page, "d (arms / dimension)").input_value() == "20"  # the cmab default
        assert _progress(page)[2] == "running"
        assert _progress(other)[0] == 0
    finally:
        other_context.close()


# ---------- 6. invalid input
def test_invalid_url_shows_alert_disables_run_without_traceback(page, served_app):
    """Settings valid one by one but not together (m > d): applied, explained, Run off."""
    _open(page, served_app, "d=3&m=5")
    _poll(lambda: _alert_visible(page))
    assert "m must be at most d" in _text(page, "error-alert")
    assert _run_disabled(page)
    text = page.evaluate(_DEEP_TEXT_JS)
    for leak in ("Traceback", 'File "', "Error:", "line "):
        assert leak not in text, leak
    assert page.console_errors == []


def test_another_problems_algorithm_in_the_url_is_a_notice_and_never_an_option(page, served_app):
    """The picker offers only the problem's algorithms (its options are Config.algorithms'
    objects): a link naming another problem's algorithm is refused with a notice naming the
    key, why, and what is allowed; the rest of the link applies and Run stays ready."""
    _open(page, served_app, "problem=cmab&algorithms=%5B%22SBE%22%5D&seed=5")
    page.locator(".url-notice").wait_for(state="visible", timeout=WAIT_MS)
    notice = _text(page, "url-notice")
    assert "Ignored algorithms='[\"SBE\"]'" in notice
    assert "SBE is an algorithm for the semiparametric problem, not cmab" in notice
    assert "allowed: CUCB, AROQ-CMAB" in notice
    options, value = _algorithm_widget(page)
    assert value == ["CUCB", "AROQ-CMAB", "SROQ-CMAB"] and "SBE" not in options
    assert _input(page, "Seed").input_value() == "5"
    assert not _alert_visible(page) and not _run_disabled(page)
    text = page.evaluate(_DEEP_TEXT_JS)
    for leak in ("Traceback", 'File "', "Error:", "line "):
        assert leak not in text, leak
    assert page.console_errors == []


# ---------- 7. URL state
def test_configuration_is_read_from_and_written_to_the_url(page, served_app):
    _open(page, served_app, "problem=semiparametric&K=12&seed=7&horizon=5000&d=4")
    assert page.locator(".problem-select select").input_value() == "Semiparametric bandit"
    assert _input(page, "K (arms)").input_value() == "12"
    assert _input(page, "Seed").input_value() == "7"
    assert _input(page, "Horizon T").input_value() == "5000"
    assert _input(page, "d (arms / dimension)").input_value() == "4"
    _poll(lambda: "SBE" in _algorithm_widget(page)[0] and "CUCB" not in _algorithm_widget(page)[0])

    _set_number(page, "Seed", 8)
    _poll(lambda: _query(page).get("seed") == "8")
    _set_number(page, "K (arms)", 15)
    _poll(lambda: _query(page).get("K") == "15")
    query = _query(page)
    assert query.get("problem") == "semiparametric" and query.get("horizon") == "5000"
    # the same link in a new session restores what this one shows
    shared = _url(page)
    assert page.url == shared  # playwright agrees once it has processed the events
    _open(page, shared)
    assert _input(page, "Seed").input_value() == "8"
    assert _input(page, "K (arms)").input_value() == "15"
    assert page.console_errors == []


def test_idle_progress_shows_the_configured_horizon(page, served_app):
    """Before any run the progress text follows T (from the URL, then from the widget)."""
    _open(page, served_app, "horizon=5000")
    _poll(lambda: _progress(page) == (0, 5000, "ready"), timeout=10)
    _set_number(page, "Horizon T", 7000)
    _poll(lambda: _progress(page) == (0, 7000, "ready"), timeout=10)


# ---------- 8. lessons
def test_lesson_text_with_rendered_math_and_preset(page, served_app):
    _open(page, served_app)
    assert not page.locator(".lesson-text").is_visible()
    assert page.locator(".load-preset-button button").is_disabled()
    select = page.locator(".lesson-select select")
    label = next(o for o in select.locator("option").all_inner_texts() if o.startswith("6."))
    select.select_option(label=label)
    page.locator(".lesson-text").wait_for(state="visible", timeout=WAIT_MS)
    _poll(lambda: len(_text(page, "lesson-text")) > 500)
    lesson = page.locator(".lesson-text")
    # MathJax typesets the math: mjx-container elements, and no raw TeX delimiters remain
    _poll(lambda: lesson.evaluate(_COUNT_DEEP_JS, "mjx-container, .katex") > 5)
    text = _text(page, "lesson-text")
    assert "$$" not in text and "\\(" not in text and "\\[" not in text
    assert "Kiefer" in text
    # the lesson sits beside the plots, not below them
    plots_box = page.locator(".regret-plot").bounding_box()
    lesson_box = lesson.bounding_box()
    assert lesson_box["x"] >= plots_box["x"] + plots_box["width"] - 1

    assert page.locator(".problem-select select").input_value() == "Combinatorial semi-bandit"
    _click(page, "load-preset-button")
    _poll(lambda: page.locator(".problem-select select").input_value() == "Semiparametric bandit")
    _poll(lambda: _algorithm_widget(page)[1] == ["SBE"])
    _poll(lambda: _query(page).get("problem") == "semiparametric")
    assert page.console_errors == []


# ---------- 9. CSV download
def test_csv_download_after_a_short_run(page, served_app, tmp_path):
    _open(page, served_app, "horizon=500&runs=1&algorithms=%5B%22CUCB%22%2C%22AROQ-CMAB%22%5D")
    assert page.locator(".download-csv button").is_disabled()
    _click(page, "run-button")
    _poll(lambda: _progress(page)[::2] == (500, "done"))
    button = page.locator(".download-csv button")
    _poll(lambda: button.is_enabled())
    with page.expect_download(timeout=WAIT_MS) as info:
        button.click()
    download = info.value
    assert download.suggested_filename.endswith(".csv")
    path = tmp_path / download.suggested_filename
    download.save_as(path)
    lines = Path(path).read_text().splitlines()
    assert lines[0].startswith("algorithm,run,t,")
    rows = [line.split(",") for line in lines[1:]]
    assert {r[0] for r in rows} == {"CUCB", "AROQ-CMAB"}
    assert max(int(r[2]) for r in rows) == 500
    assert page.console_errors == []
