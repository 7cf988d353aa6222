"""Real browser: a saved run uploaded through the file input is overlaid (dashed legend entry
labelled with its seed and horizon) on the regret plot, with the band chosen by the URL's
``band`` key (every run as a thin line)."""

from __future__ import annotations

import pytest
from test_dashboard import _DEEP_TEXT_JS

from dashboard.cli import main

pytestmark = pytest.mark.browser

#: Generous: the first page of a fresh server on a loaded 2-core machine.
WAIT_MS = 120_000

_LEGEND_JS = """(needle) => {
    let best = null, key = -1;
    for (const m of Bokeh.documents[0].all_models) {
        if (m.type !== 'Figure' || m.name !== 'regret-plot') continue;
        const n = Number(String(m.id).replace(/\\D/g, ''));
        if (n > key) { best = m; key = n; }
    }
    if (best === null) return null;
    const labels = [];
    const panels = [...best.right, ...best.center, ...best.left, ...best.above, ...best.below];
    const legends = panels.filter((m) => m.type === 'Legend');
    for (const legend of legends) for (const item of legend.items) {
        const v = item.label && (item.label.value ?? item.label);
        if (typeof v === 'string') labels.push(v);
    }
    return labels.filter((l) => l.includes(needle));
}"""


def test_upload_a_saved_run_and_see_it_overlaid(page, served_app, tmp_path):
    path = tmp_path / "run.jsonl"
    argv = ["simulate", "--problem", "cmab", "--algorithm", "AROQ-CMAB", "--d", "6", "--m", "2"]
    argv += ["--horizon", "500", "--runs", "3", "--seed", "7", "--format", "json"]
    assert main([*argv, "--save", str(path)]) == 0
    page.goto(served_app + "?band=runs", timeout=WAIT_MS)
    page.wait_for_function(
        """() => window.Bokeh !== undefined && Bokeh.documents.length > 0
        && [...Bokeh.documents[0].all_models].some((m) => m.name === 'regret-plot')""",
        timeout=WAIT_MS,
    )
    assert "every run" in page.locator(".band-select select").input_value() or (
        page.locator(".band-select select").input_value() == "runs"
    )
    page.locator(".saved-file input[type=file]").set_input_files(str(path), timeout=WAIT_MS)
    page.wait_for_function(f"() => ({_LEGEND_JS})('(saved:')?.length > 0", timeout=WAIT_MS)
    labels = page.evaluate(_LEGEND_JS, "(saved:")
    assert labels == ["AROQ-CMAB (saved: seed 7, T=500)"]
    notice = page.locator(".saved-notice").first.evaluate(_DEEP_TEXT_JS)
    assert "Overlaid (dashed) from run.jsonl" in notice
    assert "band=runs" in page.url  # the band is in the shareable link
    page.locator(".saved-clear button").click()
    page.wait_for_function(f"() => ({_LEGEND_JS})('(saved:')?.length === 0", timeout=WAIT_MS)
    assert page.console_errors == []


def _socket_watch(page) -> list[str]:
    """Close codes of the page's websockets, as they happen."""
    closed: list[str] = []
    page.on("websocket", lambda ws: ws.on("close", lambda *_: closed.append(ws.url)))
    return closed


def test_a_15_mib_upload_is_refused_in_the_page_which_stays_connected(page, served_app, tmp_path):
    """A valid 15 MiB saved run (and an empty file) get their refusal; the websocket stays
    open (it closed with "1009 message too big" when the whole file went in one message),
    and a small saved run uploaded afterwards is overlaid."""
    small = tmp_path / "run.jsonl"
    argv = ["simulate", "--problem", "cmab", "--algorithm", "CUCB", "--d", "5", "--m", "2"]
    argv += ["--horizon", "300", "--runs", "2", "--seed", "3", "--format", "json"]
    assert main([*argv, "--save", str(small)]) == 0
    data = small.read_bytes()
    big = tmp_path / "big.jsonl"
    big.write_bytes(data + b" " * (15 * 2**20 - len(data) - 1) + b"\n")  # still a valid run
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    closed = _socket_watch(page)
    page.goto(served_app, timeout=WAIT_MS)
    page.wait_for_function(
        """() => window.Bokeh !== undefined && Bokeh.documents.length > 0
        && [...Bokeh.documents[0].all_models].some((m) => m.name === 'regret-plot')""",
        timeout=WAIT_MS,
    )
    drop = page.locator(".saved-file").first
    page.locator(".saved-file input[type=file]").set_input_files(str(big), timeout=WAIT_MS)
    page.wait_for_function(
        "(el) => (" + _DEEP_TEXT_JS + ")(el).includes('File is too large')",
        arg=drop.element_handle(),
        timeout=WAIT_MS,
    )
    assert "Maximum file size is 10 MB" in drop.evaluate(_DEEP_TEXT_JS)
    page.locator(".saved-file input[type=file]").set_input_files(str(empty), timeout=WAIT_MS)
    notice = page.locator(".saved-notice").first
    page.wait_for_function(
        "(el) => (" + _DEEP_TEXT_JS + ")(el).includes('is empty')",
        arg=notice.element_handle(),
        timeout=WAIT_MS,
    )
    assert "Not overlaid: 'empty.jsonl' is empty (0 bytes)" in notice.evaluate(_DEEP_TEXT_JS)
    page.locator(".saved-file input[type=file]").set_input_files(str(small), timeout=WAIT_MS)
    page.wait_for_function(f"() => ({_LEGEND_JS})('(saved:')?.length > 0", timeout=WAIT_MS)
    assert page.evaluate(_LEGEND_JS, "(saved:") == ["CUCB (saved: seed 3, T=300)"]
    assert closed == []
    assert page.console_errors == []
