"""The page's keyboard, present mode's page side and the plot board's PNG / SVG export.

:class:`PageKeys` is a small :class:`panel.custom.JSComponent` (no file, no CDN: its module is
the string below).  In the browser it

* listens to the keys of :data:`KEYS` (Space: Run / Pause / Resume, ArrowRight: Step, R:
  Reset, P: present mode, ?: the overlay listing the keys, Escape: close it) and answers each
  by **clicking the real button** of the visible toolbar (so a key does exactly what the
  click does, with the same checks and the same accessible names); nothing fires while the
  focus is in an input, a text area, a select or an editable element, nor with Ctrl / Alt /
  Meta held;
* follows :attr:`PageKeys.present`: the page's ``<body>`` gets the class ``bandit-present``,
  which hides the template's sidebar (:data:`PAGE_CSS`); the server side of present mode
  (projector fonts) is the plot board's;
* offers ``window.banditExport("png" | "svg")``: every plot of the board drawn by BokehJS's
  own exporter (``PlotView.export``: a canvas for PNG, its SVG backend for SVG) into one
  image at the plots' on-screen positions, downloaded by the browser.  Nothing runs on the
  server, so no browser or driver is needed there.

Hooks for tests: ``window.banditKeysReady`` (true once the listener is installed),
``window.banditLastExport`` (``{kind, size, type}`` of the last export) and the overlay's
CSS class ``keys-overlay``.
"""

from __future__ import annotations

import param
from panel.custom import JSComponent

__all__ = ["KEYS", "PAGE_CSS", "PageKeys"]

#: Key -> what it does (the overlay lists these; the Sweep and Play tabs have no run keys).
KEYS: dict[str, str] = {
    "Space": "Run, Pause or Resume",
    "→": "Step to the next decision",
    "R": "Reset",
    "P": "Present mode on / off",
    "?": "Show / hide this list",
    "Esc": "Close this list",
}

#: Page-wide CSS (the template's own elements live outside any shadow root).
PAGE_CSS = """
body.bandit-present #sidebar, body.bandit-present #sidebar-toggle { display: none !important; }
body.bandit-present #main { margin-left: 0 !important; }
"""

_ESM = """
const TYPING = new Set(["INPUT", "TEXTAREA", "SELECT"]);

function deepAll(root, selector, out) {
  for (const el of root.querySelectorAll("*")) {
    if (el.matches(selector)) out.push(el);
    if (el.shadowRoot) deepAll(el.shadowRoot, selector, out);
  }
  return out;
}

// shown on the page: a hidden tab keeps its size (Bokeh hides it with visibility: hidden)
function shown(el) {
  return el.getBoundingClientRect().width > 0 && getComputedStyle(el).visibility === "visible";
}

// the shown button of the widget carrying this CSS class (the open tab's toolbar)
function shownButton(css) {
  for (const host of deepAll(document, "." + css, [])) {
    const root = host.shadowRoot || host;
    const button = root.querySelector("button");
    if (button && shown(button)) return button;
  }
  return null;
}

function press(css) {
  const b = shownButton(css);
  if (b && !b.disabled) { b.click(); return true; }
  return false;
}

function typing(event) {
  const target = event.composedPath()[0];
  if (!target || !target.tagName) return false;
  return TYPING.has(target.tagName) || target.isContentEditable;
}

function overlayHtml(keys) {
  const rows = Object.entries(keys).map(
    ([k, v]) => `<tr><th><kbd>${k}</kbd></th><td>${v}</td></tr>`).join("");
  return `<div class="keys-box" role="dialog" aria-label="Keyboard shortcuts">
    <h2>Keyboard shortcuts</h2><table>${rows}</table>
    <p>Keys do nothing while you type in a field.</p></div>`;
}

async function exportBoard(kind) {
  const views = [...Bokeh.index.query((v) => v.model && v.model.type === "Figure"
      && String(v.model.name || "").endsWith("-plot") && v.el.isConnected
      && shown(v.el))];
  if (!views.length) return null;
  const boxes = views.map((v) => v.el.getBoundingClientRect());
  const x0 = Math.min(...boxes.map((b) => b.left)), y0 = Math.min(...boxes.map((b) => b.top));
  const width = Math.ceil(Math.max(...boxes.map((b) => b.right)) - x0);
  const height = Math.ceil(Math.max(...boxes.map((b) => b.bottom)) - y0);
  const bg = getComputedStyle(document.body).backgroundColor || "white";
  let blob;
  if (kind === "png") {
    const canvas = document.createElement("canvas");
    canvas.width = width; canvas.height = height;
    const ctx = canvas.getContext("2d");
    ctx.fillStyle = bg; ctx.fillRect(0, 0, width, height);
    views.forEach((v, i) => {
      const layer = v.export("png", false);
      ctx.drawImage(layer.canvas, boxes[i].left - x0, boxes[i].top - y0);
    });
    blob = await new Promise((ok) => canvas.toBlob(ok, "image/png"));
  } else {
    const parts = views.map((v, i) => {
      const svg = v.export("svg", false).ctx.get_serialized_svg(true)
        .replace(/^<\\?xml[^>]*>/, "");
      const x = (boxes[i].left - x0).toFixed(1), y = (boxes[i].top - y0).toFixed(1);
      return `<g transform="translate(${x},${y})">${svg}</g>`;
    });
    const text = `<svg xmlns="http://www.w3.org/2000/svg" `
      + `xmlns:xlink="http://www.w3.org/1999/xlink" width="${width}" height="${height}" `
      + `viewBox="0 0 ${width} ${height}"><rect width="100%" height="100%" fill="${bg}"/>`
      + parts.join("") + `</svg>`;
    blob = new Blob([text], {type: "image/svg+xml"});
  }
  const url = URL.createObjectURL(blob);
  const a = document.createElement("a");
  a.href = url; a.download = `bandit-plots.${kind}`;
  document.body.appendChild(a); a.click(); a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60000);
  window.banditLastExport = {kind, size: blob.size, type: blob.type};
  return window.banditLastExport;
}

export function render({ model, el }) {
  const overlay = document.createElement("div");
  overlay.className = "keys-overlay";
  overlay.hidden = true;
  overlay.innerHTML = overlayHtml(model.keys);
  overlay.addEventListener("click", () => { overlay.hidden = true; });
  el.appendChild(overlay);
  const toggleHelp = (show) => { overlay.hidden = show === undefined ? !overlay.hidden : !show; };
  const applyPresent = () => {
    document.body.classList.toggle("bandit-present", Boolean(model.present));
    window.dispatchEvent(new Event("resize"));
  };
  model.on("present", applyPresent);
  applyPresent();
  const onKey = (event) => {
    if (event.ctrlKey || event.altKey || event.metaKey || typing(event)) return;
    const key = event.key;
    let done = false;
    if (key === " " || key === "Spacebar") {
      done = press("pause-button") || press("run-button");
      event.preventDefault();  // never the focused button's own click as well
    } else if (key === "ArrowRight") done = press("step-button");
    else if (key === "r" || key === "R") done = press("reset-button");
    else if (key === "p" || key === "P") done = press("present-button");
    else if (key === "?") { toggleHelp(); done = true; }
    else if (key === "Escape") { toggleHelp(false); done = true; }
    if (done) event.preventDefault();
  };
  const onKeyUp = (event) => {
    if ((event.key === " " || event.key === "Spacebar") && !typing(event)) event.preventDefault();
  };
  window.addEventListener("keydown", onKey, true);
  window.addEventListener("keyup", onKeyUp, true);
  window.addEventListener("bandit-keys-help", () => toggleHelp());
  window.banditExport = exportBoard;
  window.banditKeysReady = true;
}
"""

_STYLES = """
.keys-overlay { position: fixed; inset: 0; background: rgba(0, 0, 0, 0.45); z-index: 2000;
  display: flex; align-items: center; justify-content: center; }
.keys-overlay[hidden] { display: none; }
.keys-box { background: white; color: #111; border-radius: 10px; padding: 18px 28px;
  font-size: 20px; box-shadow: 0 4px 24px rgba(0, 0, 0, 0.4); }
.keys-box h2 { font-size: 26px; margin: 0 0 10px 0; }
.keys-box th { text-align: left; padding: 4px 18px 4px 0; }
.keys-box kbd { font-size: 18px; border: 1px solid #888; border-radius: 4px; padding: 1px 8px;
  background: #f4f4f4; }
.keys-box p { font-size: 16px; margin: 10px 0 0 0; }
"""


class PageKeys(JSComponent):
    """The keyboard listener, the keys overlay and present mode's page side (see the module
    docstring).  Zero-sized in the layout; its overlay covers the page when open."""

    present = param.Boolean(default=False, doc="Present mode: the sidebar hidden.")
    keys = param.Dict(default=KEYS, constant=True, doc="Key -> what it does (the overlay).")

    _esm = _ESM
    _stylesheets = [_STYLES]

    def __init__(self, **params):
        params.setdefault("width", 0)
        params.setdefault("height", 0)
        params.setdefault("margin", 0)
        super().__init__(**params)
