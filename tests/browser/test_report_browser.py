"""The run report opened as a student would open a handout: from disk (``file://``), in
Chromium, with every network request refused.  Its figures must be drawn (BokehJS views with
painted canvases), its text readable without them, and nothing may have been asked of a
network."""

from __future__ import annotations

import pytest

from dashboard.simulation import Simulation
from dashboard.simulation.specs import make_spec
from dashboard.ui.report import write_report

pytestmark = pytest.mark.browser

# Figures BokehJS built, each with the size of its canvas and whether any pixel is painted.
_FIGURES_JS = """() => {
  const views = [...Bokeh.index.query((v) => v.model && v.model.type === "Figure")];
  return views.map((v) => {
    const canvas = v.canvas_view.primary.canvas;
    const ctx = canvas.getContext("2d");
    const px = ctx.getImageData(0, 0, canvas.width, canvas.height).data;
    let painted = 0;
    for (let i = 3; i < px.length; i += 4) if (px[i] > 0) painted++;
    return {name: v.model.name, width: canvas.width, height: canvas.height, painted};
  });
}"""


@pytest.mark.parametrize("problem", ["cmab", "semiparametric"])
def test_the_report_opens_offline_from_disk_with_its_figures_drawn(chromium, tmp_path, problem):
    kw = {"d": 6, "m": 2} if problem == "cmab" else {"d": 4, "K": 6}
    algorithms = ["CUCB", "AROQ-CMAB"] if problem == "cmab" else ["SBE", "BOSE"]
    with Simulation(make_spec(problem, **kw), algorithms, horizon=400, runs=2, seed=5) as sim:
        path = write_report(sim.run(), tmp_path / "report.html")

    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    asked: list[str] = []
    errors: list[str] = []

    def refuse(route) -> None:
        asked.append(route.request.url)
        route.abort()

    page.route(lambda url: not url.startswith("file://"), refuse)
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        page.goto(path.as_uri())
        page.wait_for_function(
            "() => window.Bokeh && Bokeh.documents.length > 0 && Bokeh.documents[0].is_idle",
            timeout=30_000,
        )
        figures = page.evaluate(_FIGURES_JS)
        text = page.inner_text("body")
    finally:
        context.close()
    assert asked == [], asked
    assert errors == [], errors
    names = {f["name"] for f in figures}
    assert {"regret-plot", "complexity-plot"} <= names, names
    for fig in figures:
        assert fig["width"] >= 300 and fig["height"] >= 200, fig
        assert fig["painted"] > 1000, fig  # axes, curves and labels drawn
    for heading in ("Final numbers", "Reproduce this run", "Settings", "Versions"):
        assert heading in text
    for name in algorithms:
        assert name in text
