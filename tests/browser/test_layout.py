"""The page a lecture hall sees, measured in Chromium: the run toolbar (and the Sweep and Play
tabs' toolbars), the plots' frames, tick labels, present mode (key P, the Present button,
``?present=1``), the keyboard, the PNG / SVG export of the plot board and the light / dark
themes (the switch, and every curve's, band's and reference line's contrast against its plot).

One served app and ONE page for the module (a page load costs seconds on a loaded machine):
the viewport is resized (1024x768, 1280x720, 1920x1080), a lesson opened and closed, present
mode switched, the tabs opened, and after each change the page is measured through BokehJS's
views (``Bokeh.index``: each figure's drawing frame ``frame.bbox``, its axes' tick labels as
BokehJS lays them out, its glyphs' colours as BokehJS draws them) and the toolbar's bounding
boxes.  Only ``?present=1`` needs a page of its own; the theme test comes last, because its
switch reloads the shared page in the dark theme.  Screenshots (for the README) go to
``test-artifacts/layout-*.png``.

Three tests guard bugs they found: the keys and the PNG / SVG export reached into a hidden tab
(Bokeh hides an inactive tab with ``visibility: hidden``, its boxes keep their size), and the
Play tab's arm buttons did not wrap (arms 11-19 lay off screen at 1280 px).
"""

from __future__ import annotations

import re
import time
import xml.etree.ElementTree as ET
from contextlib import contextmanager
from typing import Any

import pytest
from test_dashboard import WAIT_MS, _poll, _progress, _query, _set_number

pytestmark = pytest.mark.browser

SIZES = [(1024, 768), (1280, 720), (1920, 1080)]
#: Accessible names of the toolbar's run buttons (Pause reads Resume when paused).
RUN_BUTTONS = ("Run", "Pause", "Step", "Reset")
#: The playback speed selector's options (``dashboard.ui.config.SPEEDS``), buttons of one group.
SPEED_OPTIONS = ("slow", "normal", "fast", "max")
#: Tab header, toolbar CSS class and the toolbar's buttons (accessible names) of the Sweep and
#: Play tabs (``dashboard/ui/tabs.py``, ``dashboard/ui/play.py``), and the toolbar's status text.
TAB_TOOLBARS = {
    "sweep": ("Sweep", "sweep-toolbar", ("Run sweep", "Cancel"), "sweep-toolbar-status"),
    "play": ("Play:", "play-toolbar", ("Play this round", "New game"), None),
}
#: WCAG 2's contrast ratio for graphical objects (success criterion 1.4.11).
MIN_CONTRAST = 3.0

# Every shown board figure (an inactive tab's figures keep their layout boxes: Bokeh's Tabs hide
# them with ``visibility: hidden``, hence the visibility test): name, frame size, outer box,
# title lines' widths vs the canvas, and per axis the tick labels BokehJS draws (its own label
# policy applied), as boxes.
_MEASURE_JS = """() => {
  const Indices = Bokeh.require("core/types").Indices;
  const px = (size) => parseFloat(size) * (String(size).endsWith("pt") ? 4 / 3 : 1);
  const out = [];
  const shown = [...Bokeh.index.query((v) => v.model && v.model.type === "Figure"
      && String(v.model.name || "").endsWith("-plot") && v.el.isConnected
      && v.el.getBoundingClientRect().width > 0
      && getComputedStyle(v.el).visibility === "visible")];
  for (const v of shown) {
    const r = v.el.getBoundingClientRect();
    const axes = [];
    let labelSize = Infinity;
    for (const av of v.renderer_views.values()) {
      if ("tick_coords" in av && av.model.visible && av.model.axis_label)
        labelSize = Math.min(labelSize, px(av.model.axis_label_text_font_size));
      if (!("tick_coords" in av) || !av.model.visible || !av.model.major_label_text_font_size)
        continue;
      const coords = av.tick_coords.major;
      const labels = av.compute_labels(coords[av.dimension]);
      if (labels.length === 0) { axes.push({dim: av.dimension, boxes: []}); continue; }
      const [sxs, sys] = av.scoords(coords);
      const [nx, ny] = av.normals;
      const standoff = av.model.major_label_standoff;
      const orient = av.model.major_label_orientation;
      const {vertical_align, align} = av.panel.get_label_text_heuristics(orient);
      labels.visuals = av.visuals.major_label_text.values();
      labels.angle = av.panel.get_label_angle_heuristic(orient);
      labels.base_font_size = av.plot_view.base_font_size;
      labels.items.forEach((label, i) => {
        label.position = {sx: sxs[i] + nx * standoff, sy: sys[i] + ny * standoff,
                          x_anchor: align, y_anchor: vertical_align};
        if ("align" in label) label.align = align;
      });
      const bboxes = labels.items.map((l) => l.bbox());
      const dist = av.dimension == 0 ? (i, j) => bboxes[j].left - bboxes[i].right
                                     : (i, j) => bboxes[i].top - bboxes[j].bottom;
      const drawn = [...av.model.major_label_policy.filter(
          Indices.all_set(labels.length), bboxes, dist)];
      axes.push({dim: av.dimension, total: labels.length,
                 boxes: drawn.map((k) => [bboxes[k].left, bboxes[k].top,
                                          bboxes[k].right, bboxes[k].bottom])});
    }
    const ctx = document.createElement("canvas").getContext("2d");
    const title = v.model.title;
    let titleWidth = 0;
    if (title && title.text) {
      ctx.font = `${title.text_font_style} ${title.text_font_size} ${title.text_font}`;
      titleWidth = Math.max(...title.text.split("\\n").map((t) => ctx.measureText(t).width));
    }
    out.push({name: v.model.name, frame: [v.frame.bbox.width, v.frame.bbox.height],
              box: [r.left, r.top, r.width, r.height], titleWidth,
              titleSize: title ? px(title.text_font_size) : 0,
              labelSize, axes});
  }
  return out;
}"""


def _measure(page: Any) -> dict[str, dict[str, Any]]:
    """The shown figures, newest per name (``{name: measures}``)."""
    page.wait_for_function("() => Bokeh.documents[0].is_idle", timeout=WAIT_MS)
    time.sleep(0.6)  # a resize relays out on the next animation frames
    return {f["name"]: f for f in page.evaluate(_MEASURE_JS)}


def _overlaps(boxes: list[list[float]]) -> list[tuple[int, int]]:
    return [
        (i, j)
        for i in range(len(boxes))
        for j in range(i + 1, len(boxes))
        if boxes[i][0] < boxes[j][2] - 0.5
        and boxes[j][0] < boxes[i][2] - 0.5
        and boxes[i][1] < boxes[j][3] - 0.5
        and boxes[j][1] < boxes[i][3] - 0.5
    ]


def _check_figures(figures: dict[str, Any], where: str) -> None:
    for name, f in figures.items():
        w = f["box"][2]
        assert f["titleWidth"] <= w + 1, f"{where}: {name} title cut ({f['titleWidth']} > {w})"
        for axis in f["axes"]:
            assert not _overlaps(axis["boxes"]), f"{where}: {name} tick labels overlap: {axis}"
            if axis.get("total", 0) >= 2:
                assert len(axis["boxes"]) >= 2, f"{where}: {name} axis kept < 2 labels: {axis}"


def _buttons_in_view(page: Any, names: tuple[str, ...], size: tuple[int, int]) -> None:
    for name in names:
        box = page.get_by_role("button", name=name, exact=True).bounding_box()
        assert box is not None, name
        assert box["x"] >= 0 and box["y"] >= 0, (name, box)
        assert box["x"] + box["width"] <= size[0] and box["y"] + box["height"] <= size[1], (
            name,
            box,
            size,
        )


def _in_view(box: dict[str, float] | None, size: tuple[int, int], what: str) -> None:
    """``box`` (a playwright bounding box) lies wholly inside the first screen of ``size``."""
    assert box is not None, f"{what}: not rendered"
    assert box["width"] > 0 and box["height"] > 0, (what, box)
    assert box["x"] >= 0 and box["y"] >= 0, (what, box, size)
    assert box["x"] + box["width"] <= size[0] + 0.5, (what, box, size)
    assert box["y"] + box["height"] <= size[1] + 0.5, (what, box, size)


def _speed_and_progress_in_view(page: Any, size: tuple[int, int], where: str) -> None:
    """The toolbar's playback speed selector (each of its buttons) and its ``t / T`` progress
    line are wholly in the first screen, the progress text not cut (no overflow)."""
    bar = page.locator(".run-toolbar").first
    group = bar.locator(".bk-btn-group").filter(
        has=page.get_by_role("button", name=SPEED_OPTIONS[0], exact=True)
    )
    assert group.count() == 1, f"{where}: speed selector not found in the run toolbar"
    _in_view(group.bounding_box(), size, f"{where}: speed selector")
    for option in SPEED_OPTIONS:
        button = group.get_by_role("button", name=option, exact=True)
        _in_view(button.bounding_box(), size, f"{where}: speed {option!r}")
    line = bar.locator(".progress-text .progress-line").first
    text = " ".join(line.inner_text().replace("\xa0", " ").split())
    assert re.search(r"t = [\d,]+ / [\d,]+", text), f"{where}: progress text {text!r}"
    _in_view(line.bounding_box(), size, f"{where}: progress text {text!r}")
    overflow = line.evaluate(
        "(el) => [el.scrollWidth - el.clientWidth, el.scrollHeight - el.clientHeight]"
    )
    assert overflow[0] <= 1 and overflow[1] <= 1, f"{where}: progress text cut {overflow}"


def _settle(page: Any) -> None:
    page.wait_for_function("() => Bokeh.documents[0].is_idle", timeout=WAIT_MS)
    time.sleep(0.6)  # a resize relays out on the next animation frames


def _present_on(page: Any) -> bool:
    return page.evaluate("() => document.body.classList.contains('bandit-present')")


@contextmanager
def _own_page(chromium: Any, url: str, size: tuple[int, int] = (1280, 720)):
    """A page of its own (for a test that needs its own address), offline like ``hall``."""
    origin = url.split("/dashboard")[0]
    context = chromium.new_context(viewport={"width": size[0], "height": size[1]})
    page = context.new_page()
    page.console_errors = []  # type: ignore[attr-defined]
    page.on("pageerror", lambda exc: page.console_errors.append(str(exc)))
    page.route(lambda u: not u.startswith(origin), lambda route: route.abort())
    try:
        page.goto(url, timeout=WAIT_MS)
        page.wait_for_function("() => window.banditKeysReady === true", timeout=WAIT_MS)
        page.wait_for_function("() => Bokeh.documents[0].is_idle", timeout=WAIT_MS)
        yield page
    finally:
        context.close()


@pytest.fixture(scope="module")
def hall(chromium, served_app):
    """One page on the served app for the module's tests (viewport changed per test)."""
    origin = served_app.split("/dashboard")[0]
    context = chromium.new_context(viewport={"width": 1280, "height": 720}, accept_downloads=True)
    page = context.new_page()
    page.console_errors = []  # type: ignore[attr-defined]
    page.on("pageerror", lambda exc: page.console_errors.append(str(exc)))
    page.route(
        lambda url: not url.startswith(origin), lambda route: route.abort()
    )  # offline, as a classroom may be
    page.goto(served_app + "?horizon=20000&runs=2&speed=slow", timeout=WAIT_MS)
    page.wait_for_function("() => window.banditKeysReady === true", timeout=WAIT_MS)
    page.wait_for_function("() => Bokeh.documents[0].is_idle", timeout=WAIT_MS)
    yield page
    context.close()


def _lesson(page: Any, open_: bool) -> None:
    select = page.locator(".lesson-select select")
    if open_:
        label = next(o for o in select.locator("option").all_inner_texts() if o.startswith("1."))
        select.select_option(label=label)
        page.locator(".lesson-text").wait_for(state="visible", timeout=WAIT_MS)
    else:
        select.select_option(index=0)
        page.locator(".lesson-column").wait_for(state="hidden", timeout=WAIT_MS)


def test_toolbar_in_the_first_screen_and_frames_big_enough_at_every_size(hall):
    page = hall
    for lesson in (True, False):
        _lesson(page, lesson)
        for size in SIZES:
            page.set_viewport_size({"width": size[0], "height": size[1]})
            figures = _measure(page)
            where = f"{size[0]}x{size[1]} lesson={'open' if lesson else 'closed'}"
            assert "regret-plot" in figures, where
            _buttons_in_view(page, RUN_BUTTONS, size)
            _speed_and_progress_in_view(page, size, where)
            _check_figures(figures, where)
            for name, f in figures.items():
                width, height = f["frame"]
                assert width >= 320 and height >= 200, f"{where}: {name} frame {f['frame']}"
            if not lesson:
                assert figures["regret-plot"]["frame"][0] >= 480, where
    page.set_viewport_size({"width": 1280, "height": 720})


def test_present_mode_by_key_hides_the_sidebar_and_enlarges_the_fonts(hall):
    page = hall
    page.set_viewport_size({"width": 1280, "height": 720})
    _lesson(page, True)
    page.locator("body").click(position={"x": 5, "y": 700})  # focus the page, not an input
    page.keyboard.press("p")
    _poll(lambda: page.evaluate("() => document.body.classList.contains('bandit-present')"))
    _poll(lambda: not page.locator("#sidebar").is_visible())
    _poll(lambda: _measure(page)["regret-plot"]["titleSize"] >= 22)
    figures = _measure(page)
    _buttons_in_view(page, RUN_BUTTONS, (1280, 720))
    _check_figures(figures, "present")
    regret = figures["regret-plot"]
    assert regret["frame"][0] >= 640, regret
    for name, f in figures.items():
        assert f["titleSize"] >= 22 and f["labelSize"] >= 18, (name, f)
    assert page.get_by_role("button", name="Exit present").is_visible()
    page.keyboard.press("p")  # and back
    _poll(lambda: page.locator("#sidebar").is_visible())
    _lesson(page, False)
    assert page.console_errors == []


def _focus_page(page: Any) -> None:
    page.evaluate("() => document.activeElement && document.activeElement.blur()")


def test_keys_run_pause_and_do_nothing_while_typing(hall):
    page = hall
    page.set_viewport_size({"width": 1280, "height": 720})
    # typing in an input: Space, R, P and the arrow go to the field, never to the toolbar
    seed = page.get_by_label("Seed", exact=True)
    seed.click()
    for key in (" ", "r", "p", "ArrowRight", "?"):
        seed.press(key)
    time.sleep(0.8)
    assert _progress(page)[2] == "ready"
    assert not page.evaluate("() => document.body.classList.contains('bandit-present')")
    assert not page.locator(".keys-overlay").is_visible()
    seed.fill("0")
    seed.press("Enter")
    _focus_page(page)
    page.keyboard.press(" ")  # Space: Run
    _poll(lambda: _progress(page)[2] == "running")
    page.keyboard.press(" ")  # Space: Pause
    _poll(lambda: _progress(page)[2] == "paused")
    assert page.get_by_role("button", name="Resume", exact=True).is_visible()
    before = _progress(page)[0]
    page.keyboard.press("ArrowRight")  # Step
    _poll(lambda: _progress(page)[0] > before)
    page.keyboard.press("?")
    page.locator(".keys-overlay").wait_for(state="visible", timeout=WAIT_MS)
    assert "Space" in page.locator(".keys-overlay").inner_text()
    page.keyboard.press("Escape")
    page.locator(".keys-overlay").wait_for(state="hidden", timeout=WAIT_MS)
    page.keyboard.press("r")  # Reset
    _poll(lambda: _progress(page)[0] == 0 and _progress(page)[2] == "ready")
    assert page.console_errors == []


def test_png_and_svg_of_the_plot_board_are_valid_files(hall, tmp_path):
    page = hall
    page.set_viewport_size({"width": 1280, "height": 720})
    for kind, css in (("png", "export-png"), ("svg", "export-svg")):
        with page.expect_download(timeout=WAIT_MS) as info:
            page.locator(f".{css} button").click()
        path = tmp_path / info.value.suggested_filename
        info.value.save_as(path)
        data = path.read_bytes()
        assert path.suffix == f".{kind}" and len(data) > 2000, (kind, len(data))
        if kind == "png":
            assert data[:8] == b"\x89PNG\r\n\x1a\n"
        else:
            root = ET.fromstring(data)
            assert root.tag.endswith("svg")
            assert len(root.findall(".//{http://www.w3.org/2000/svg}g")) >= 3
    assert page.console_errors == []


def _open_tab(page: Any, key: str) -> None:
    header = "Live run" if key == "live" else TAB_TOOLBARS[key][0]
    ready = ".run-toolbar" if key == "live" else f".{TAB_TOOLBARS[key][1]}"
    page.locator(".bk-tab", has_text=header).first.click()
    page.locator(ready).first.wait_for(state="visible", timeout=WAIT_MS)
    _settle(page)


def test_sweep_and_play_toolbars_in_the_first_screen(hall, artifacts):
    """Each tab's toolbar (Sweep: Run sweep, Cancel and the status; Play: Play this round, the
    round and New game) is wholly in the first screen at 1024x768 and 1280x720."""
    page = hall
    for key, (_header, css, names, status) in TAB_TOOLBARS.items():
        _open_tab(page, key)
        bar = page.locator(f".{css}").first
        _poll(lambda key=key: _query(page).get("tab") == key)
        for size in SIZES[:2]:
            page.set_viewport_size({"width": size[0], "height": size[1]})
            _settle(page)
            where = f"{key} tab {size[0]}x{size[1]}"
            _in_view(bar.bounding_box(), size, f"{where}: toolbar")
            for name in names:
                button = bar.get_by_role("button", name=name, exact=True)
                assert button.count() == 1, f"{where}: no {name!r} button in the toolbar"
                _in_view(button.bounding_box(), size, f"{where}: {name!r}")
            if status:
                _in_view(page.locator(f".{status}").first.bounding_box(), size, f"{where}: status")
        page.screenshot(path=str(artifacts / f"layout-{key}-1280x720.png"))
    _open_tab(page, "live")
    _buttons_in_view(page, RUN_BUTTONS, (1280, 720))
    assert page.console_errors == []


def test_every_arm_button_of_the_play_tab_in_the_first_screen(hall):
    """A game on the default Live settings (d = 20 base arms) shows every arm button in the
    first screen at 1024x768 and 1280x720: none is reached by scrolling sideways."""
    page = hall
    try:
        _open_tab(page, "play")
        arms = page.locator(".play-arms").first.get_by_role("button")
        count = arms.count()
        assert count >= 2, count
        for size in SIZES[:2]:
            page.set_viewport_size({"width": size[0], "height": size[1]})
            _settle(page)
            for i in range(count):
                _in_view(arms.nth(i).bounding_box(), size, f"{size}: {arms.nth(i).inner_text()}")
    finally:
        page.set_viewport_size({"width": 1280, "height": 720})
        _open_tab(page, "live")


def test_run_keys_do_nothing_on_the_sweep_and_play_tabs(hall):
    """The keys overlay says the Sweep and Play tabs have no run keys: Space and the arrow
    there must not start or step the Live run behind the hidden tab."""
    page = hall
    page.set_viewport_size({"width": 1280, "height": 720})
    try:
        for key in ("sweep", "play"):
            _open_tab(page, key)
            _focus_page(page)
            for press in (" ", "ArrowRight"):
                page.keyboard.press(press)
                time.sleep(1.0)  # (the property: nothing happens)
                t, _, status = _progress(page)
                assert (t, status) == (0, "ready"), f"{key} tab, key {press!r}: {t} {status}"
    finally:
        _open_tab(page, "live")
        if _progress(page)[2] != "ready":
            page.get_by_role("button", name="Reset", exact=True).click()
            _poll(lambda: _progress(page)[2] == "ready")


def test_png_of_the_board_holds_only_the_live_plots_after_the_sweep_tab(hall, tmp_path):
    """After a visit to the Sweep tab, the Live board's PNG is still the Live plots' box
    (the sweep plot, hidden in its tab, is not drawn into it)."""
    page = hall
    page.set_viewport_size({"width": 1280, "height": 720})
    _open_tab(page, "sweep")
    _open_tab(page, "live")
    boxes = [f["box"] for f in _measure(page).values()]
    assert boxes
    width = max(b[0] + b[2] for b in boxes) - min(b[0] for b in boxes)
    height = max(b[1] + b[3] for b in boxes) - min(b[1] for b in boxes)
    with page.expect_download(timeout=WAIT_MS) as info:
        page.locator(".export-png button").click()
    path = tmp_path / "board.png"
    info.value.save_as(path)
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    size = (int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big"))
    assert abs(size[0] - width) <= 2 and abs(size[1] - height) <= 2, (size, width, height)


def _title_size(page: Any) -> float:
    """The regret figure's title size in px (0 while BokehJS has no view of it)."""
    return _measure(page).get("regret-plot", {}).get("titleSize", 0)


def _check_present(page: Any, size: tuple[int, int], where: str) -> None:
    """Present mode as a hall sees it: sidebar hidden, projector fonts, a wide regret plot
    and the whole run toolbar in the first screen."""
    assert _present_on(page), where
    assert not page.locator("#sidebar").is_visible(), f"{where}: sidebar shown"
    _poll(lambda: _title_size(page) >= 22)
    figures = _measure(page)
    _check_figures(figures, where)
    regret = figures["regret-plot"]
    assert regret["frame"][0] >= 640, (where, regret)
    for name, f in figures.items():
        assert f["titleSize"] >= 22 and f["labelSize"] >= 18, (where, name, f)
    _buttons_in_view(page, RUN_BUTTONS, size)
    _speed_and_progress_in_view(page, size, where)
    exit_button = page.get_by_role("button", name="Exit present", exact=True)
    _in_view(exit_button.bounding_box(), size, f"{where}: Exit present")


def _check_not_present(page: Any, where: str) -> None:
    _poll(lambda: not _present_on(page) and page.locator("#sidebar").is_visible())
    _poll(lambda: 0 < _title_size(page) < 22)
    _poll(lambda: "present" not in _query(page))
    assert page.get_by_role("button", name="Present", exact=True).is_visible(), where


def test_present_mode_from_the_address_and_by_the_present_button(chromium, served_app, artifacts):
    """``?present=1`` opens the page in present mode; the Present button (Exit present while
    on) switches it off, on and off again, and the address follows (``present=1`` / none)."""
    size = (1280, 720)
    with _own_page(chromium, served_app + "?present=1&horizon=2000&runs=2&speed=max", size) as page:
        _poll(lambda: _present_on(page))
        _check_present(page, size, "present=1")
        _run_to_done(page)  # (the screenshot shows plots, not the welcome card)
        _check_present(page, size, "present=1, run done")
        page.screenshot(path=str(artifacts / "layout-present-1280x720.png"))
        page.get_by_role("button", name="Exit present", exact=True).click()  # off
        _check_not_present(page, "first click")
        page.get_by_role("button", name="Present", exact=True).click()  # on
        _poll(lambda: _present_on(page) and not page.locator("#sidebar").is_visible())
        _poll(lambda: _query(page).get("present") == "1")
        _check_present(page, size, "second click")
        page.get_by_role("button", name="Exit present", exact=True).click()  # off again
        _check_not_present(page, "third click")
        assert page.console_errors == []


# Every shown board figure's (as in _MEASURE_JS) plot background (and border fill, beneath it)
# and the colours its visible glyph renderers with data draw (line and fill visuals that draw:
# alpha > 0), as BokehJS resolved them (``visuals``: constant or per-point colours alike), plus
# Span lines.
_COLORS_JS = """() => {
  const {decode_rgba, color2rgba} = Bokeh.require("core/util/color");
  const rgba = (c) => (typeof c === "number" ? decode_rgba(c) : color2rgba(c));
  const out = [];
  const shown = [...Bokeh.index.query((v) => v.model && v.model.type === "Figure"
      && String(v.model.name || "").endsWith("-plot") && v.el.isConnected
      && v.el.getBoundingClientRect().width > 0
      && getComputedStyle(v.el).visibility === "visible")];
  for (const v of shown) {
    const m = v.model;
    const fig = {name: m.name, bg: color2rgba(m.background_fill_color, m.background_fill_alpha),
                 border: color2rgba(m.border_fill_color, m.border_fill_alpha), colors: []};
    const add = (what, kind, c, alpha) => {
      if (alpha > 0 && c[3] > 0 && !fig.colors.some((x) => x.what === what
          && x.kind === kind && x.rgb.join() === c.slice(0, 3).join()))
        fig.colors.push({what, kind, rgb: c.slice(0, 3), alpha: alpha * c[3] / 255});
    };
    for (const rv of v.renderer_views.values()) {
      const rm = rv.model;
      if (!rm.visible) continue;
      if (rm.type === "Span" && rv.visuals.line.doit) {
        add(rm.name || "Span", "line", rgba(rv.visuals.line.get_line_color()),
            rv.visuals.line.get_line_alpha());
        continue;
      }
      if (rm.type !== "GlyphRenderer") continue;
      const n = rm.data_source.get_length();
      if (!n) continue;
      for (const kind of ["line", "fill"]) {
        const vis = rv.glyph.visuals[kind];
        if (!vis || !vis.doit) continue;
        const color = vis[kind + "_color"], alpha = vis[kind + "_alpha"];
        const count = color.is_Scalar() && alpha.is_Scalar() ? 1 : Math.min(n, 1000);
        for (let i = 0; i < count; i++)
          add(`${rm.name || "(unnamed)"} ${rm.glyph.type}`, kind,
              rgba(color.is_Scalar() ? color.value : color.get(i)),
              alpha.is_Scalar() ? alpha.value : alpha.get(i));
      }
    }
    out.push(fig);
  }
  return out;
}"""


def _luminance(rgb: list[float]) -> float:
    """WCAG 2 relative luminance of 0-255 channels (written out: the product's own function
    is not the judge of its colours)."""
    srgb = [c / 255 for c in rgb]
    lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in srgb]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def _contrast(a: list[float], b: list[float]) -> float:
    hi, lo = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def _over(top: list[float], below: list[float]) -> list[float]:
    """``top`` (RGBA, alpha 0-255) composited over the opaque RGB ``below``."""
    a = top[3] / 255 if len(top) > 3 else 1.0
    return [a * t + (1 - a) * b for t, b in zip(top[:3], below[:3])]


def _body_rgb(page: Any) -> list[float]:
    css = page.evaluate("() => getComputedStyle(document.body).backgroundColor")
    channels = [float(x) for x in re.findall(r"[\d.]+", css)]
    if len(channels) == 4 and channels[3] == 0:  # transparent body: the canvas is white
        return [255.0, 255.0, 255.0]
    return channels[:3]


def _check_contrast(page: Any, theme: str) -> list[dict[str, Any]]:
    """Every drawn colour of every shown figure keeps ``MIN_CONTRAST`` against the figure's
    background as shown (its fill over its border fill over the page); returns the figures."""
    _settle(page)
    body = _body_rgb(page)
    figures = page.evaluate(_COLORS_JS)
    assert {"regret-plot"} <= {f["name"] for f in figures}, figures
    failures = []
    for f in figures:
        backdrop = _over(f["bg"], _over(f["border"], body))
        f["backdrop"] = backdrop
        assert f["colors"], f"{theme}: {f['name']} draws no colour"
        for c in f["colors"]:
            ratio = _contrast(c["rgb"], backdrop)
            if ratio < MIN_CONTRAST:
                failures.append((f["name"], c["what"], c["kind"], c["rgb"], round(ratio, 2)))
    assert not failures, f"{theme}: colours under {MIN_CONTRAST}:1 vs the plot: {failures}"
    regret = next(f for f in figures if f["name"] == "regret-plot")
    assert sum(c["kind"] == "line" for c in regret["colors"]) >= 2, regret  # curves drawn
    return figures


def _run_to_done(page: Any) -> None:
    page.get_by_role("button", name="Run", exact=True).click()
    _poll(lambda: _progress(page)[2] == "done", 90)


def test_theme_switch_reloads_dark_and_every_curve_keeps_3_to_1(hall, artifacts):
    """The theme switch (Panel's ``?theme=``; the button reloads the page with it flipped and
    every other key kept) is in the first screen; after a short run every curve, band and
    reference line keeps 3:1 against its plot in the light theme, then in the dark one, whose
    page and plots really are dark.  Last test of the module: it leaves ``hall`` dark."""
    page = hall
    size = (1280, 720)
    page.set_viewport_size({"width": size[0], "height": size[1]})
    switch = page.get_by_role("button", name="Dark theme", exact=True)
    _in_view(switch.bounding_box(), size, "theme switch (light page)")
    _set_number(page, "Horizon T", 2000)
    page.locator(".run-toolbar").first.get_by_role("button", name="max", exact=True).click()
    _poll(lambda: _query(page).get("horizon") == "2000")
    _poll(lambda: _query(page).get("speed", "max") == "max")
    _run_to_done(page)
    light = _check_contrast(page, "light")
    assert all(_luminance(f["backdrop"]) > 0.5 for f in light), light
    page.screenshot(path=str(artifacts / "layout-light-1280x720.png"))

    switch.click()
    page.wait_for_url(re.compile(r"[?&]theme=dark(&|$)"), timeout=WAIT_MS)
    page.wait_for_function("() => window.banditKeysReady === true", timeout=WAIT_MS)
    page.wait_for_function("() => Bokeh.documents[0].is_idle", timeout=WAIT_MS)
    query = _query(page)
    assert query.get("theme") == "dark" and query.get("horizon") == "2000", query
    assert query.get("runs") == "2", query
    assert _luminance(_body_rgb(page)) < 0.2, _body_rgb(page)
    back = page.get_by_role("button", name="Light theme", exact=True)
    _in_view(back.bounding_box(), size, "theme switch (dark page)")
    _buttons_in_view(page, RUN_BUTTONS, size)
    _speed_and_progress_in_view(page, size, "dark")
    _run_to_done(page)
    dark = _check_contrast(page, "dark")
    assert all(_luminance(f["backdrop"]) < 0.2 for f in dark), dark
    page.screenshot(path=str(artifacts / "layout-dark-1280x720.png"))
    assert page.console_errors == []
