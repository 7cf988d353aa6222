"""The page a lecture hall sees, measured in Chromium: the run toolbar, the plots' frames, tick
labels, present mode, the keyboard and the PNG / SVG export of the plot board.

One served app and ONE page for the module (a page load costs seconds on a loaded machine):
the viewport is resized (1024x768, 1280x720, 1920x1080), a lesson opened and closed, present
mode switched, and after each change the page is measured through BokehJS's views
(``Bokeh.index``: each figure's drawing frame ``frame.bbox``, its axes' tick labels as BokehJS
lays them out) and the toolbar buttons' bounding boxes.
"""

from __future__ import annotations

import time
import xml.etree.ElementTree as ET
from typing import Any

import pytest
from test_dashboard import WAIT_MS, _poll, _progress

pytestmark = pytest.mark.browser

SIZES = [(1024, 768), (1280, 720), (1920, 1080)]
#: Accessible names of the toolbar's run buttons (Pause reads Resume when paused).
RUN_BUTTONS = ("Run", "Pause", "Step", "Reset")

# Every shown board figure: name, frame size, outer box, title lines' widths vs the canvas,
# and per axis the tick labels BokehJS draws (its own label policy applied), as boxes.
_MEASURE_JS = """() => {
  const Indices = Bokeh.require("core/types").Indices;
  const px = (size) => parseFloat(size) * (String(size).endsWith("pt") ? 4 / 3 : 1);
  const out = [];
  const shown = [...Bokeh.index.query((v) => v.model && v.model.type === "Figure"
      && String(v.model.name || "").endsWith("-plot") && v.el.isConnected
      && v.el.getBoundingClientRect().width > 0)];
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
