"""A report of one run: one self-contained HTML file for a slide, a handout or a lab notebook.

:func:`report_html` writes, for a :class:`~dashboard.simulation.results.SimulationResult`,
the run's plots as interactive Bokeh figures (the dashboard's own plot modules,
:data:`dashboard.ui.plots.PLOTS`, time axes linked), the settings, the seed, the versions
of the software, the link that reproduces the run (the dashboard's URL query,
:func:`dashboard.ui.urlstate.serialize`) and a table of the final numbers.  The page is
the report's own HTML text with the figures from ``bokeh.embed.components`` and Bokeh's
**inline** resources: it opens from disk with no
network (no CDN, no font, no server), which ``tests/browser/test_report_browser.py`` checks
in Chromium with every request refused.

Used by the dashboard's *Download report* button and by ``simulate ... --report FILE``.
Every text taken from the run (algorithm names, settings) is HTML-escaped.
"""

from __future__ import annotations

import html
import platform
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

__all__ = ["DEFAULT_BASE_URL", "report_html", "report_text", "reproduce_query", "write_report"]

#: Where ``python -m dashboard serve`` / ``make serve`` serves the dashboard by default.
DEFAULT_BASE_URL = "http://localhost:5006/dashboard"

_CSS = """
body { font-family: system-ui, sans-serif; margin: 16px 24px; color: #111; }
h1 { font-size: 26px; margin: 0 0 6px 0; } h2 { font-size: 20px; margin: 18px 0 6px 0; }
table.report { border-collapse: collapse; font-size: 15px; }
table.report th, table.report td { border: 1px solid #bbb; padding: 3px 10px; text-align: left; }
table.report td.num { text-align: right; font-variant-numeric: tabular-nums; }
code, .link { font-size: 14px; word-break: break-all; }
"""


def reproduce_query(result: Any, constants: Mapping[str, Any] | None = None) -> dict[str, str]:
    """The dashboard URL values that set up ``result``'s run again (problem, instance, the
    algorithms, T, runs, seed, constants): the Config's own URL serialization.  Settings the
    dashboard's Config cannot hold are left out."""
    from .config import Config
    from .urlstate import serialize, url_keys

    config = Config()
    keys = set(url_keys(config))
    values: dict[str, Any] = {
        k: v for k, v in dict(result.spec).items() if k in keys and v is not None
    }
    values.update(
        algorithms=[r.algorithm for r in result.results],
        horizon=int(result.horizon),
        runs=int(result.runs),
        seed=int(result.seed),
    )
    if constants:
        values["constants"] = {k: dict(v) for k, v in constants.items() if v}
    try:
        config.update_settings(values)
    except Exception:  # one by one: keep what the Config accepts
        for key, value in values.items():
            try:
                config.update_settings({key: value})
            except Exception:
                pass
    query = serialize(config)
    return {k: v for k, v in query.items() if k != "speed"}


def _versions() -> dict[str, str]:
    import bokeh
    import holoviews
    import numpy

    from .. import __version__

    out = {"dashboard": __version__, "python": platform.python_version()}
    out.update(numpy=numpy.__version__, bokeh=bokeh.__version__, holoviews=holoviews.__version__)
    try:
        import panel

        out["panel"] = panel.__version__
    except ImportError:  # pragma: no cover - panel is a dependency
        pass
    return out


def _table(rows: list[list[str]], head: list[str], numeric: set[int] | None = None) -> str:
    numeric = numeric or set()
    th = "".join(f"<th>{html.escape(h)}</th>" for h in head)
    body = "".join(
        "<tr>"
        + "".join(
            f'<td class="num">{html.escape(c)}</td>'
            if i in numeric
            else f"<td>{html.escape(c)}</td>"
            for i, c in enumerate(row)
        )
        + "</tr>"
        for row in rows
    )
    return f'<table class="report"><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>'


def _finals(result: Any) -> str:
    head = ["algorithm", "rounds", "regret (mean)", "regret (sd)", "queries", "adaptivity"]
    rows = []
    for r in result.results:
        s = r.summary()
        rows.append(
            [
                s["algorithm"],
                f"{s['rounds']:,}",
                f"{s['final_regret_mean']:.2f}",
                f"{s['final_regret_std']:.2f}",
                f"{s['oracle_queries_mean']:.1f}",
                f"{s['oracle_adaptivity_mean']:.1f}",
            ]
        )
    return _table(rows, head, numeric={1, 2, 3, 4, 5})


def _figures(result: Any, band: str) -> list[Any]:
    """The board's plots of ``result`` as Bokeh figures (time axes share one range)."""
    import holoviews as hv
    from bokeh.models import Range1d

    from .plots import PLOTS, PlotContext

    names = tuple(r.algorithm for r in result.results)
    problem = str(result.spec.get("problem", "cmab"))
    x_range = Range1d(0, max(int(result.horizon), 1))
    ctx = PlotContext(names, problem, False, x_range, result, band)
    figures = []
    for module in PLOTS:
        if not module.wanted(ctx):
            continue
        live = module.make(ctx)
        hv_plot = hv.renderer("bokeh").get_plot(live.builder(result))
        if live.x_range is not None:
            hv_plot.state.x_range = x_range
        if live.on_render is not None:
            live.on_render(hv_plot)  # (the regret curves' renderers named regret-<algorithm>)
        hv_plot.state.name = f"{module.key}-plot"
        figures.append(hv_plot.state)
    return figures


def _inline_resources() -> str:
    """Bokeh's scripts and styles as inline text only.  Importing Panel adds a *file* to
    Bokeh's inline resources (its ES-module shim, a path relative to a server's static route),
    which a page opened from disk would ask for and not find; plain figures do not need it."""
    from bokeh.resources import Resources

    res = Resources(mode="inline")
    css = "".join(f"<style>{c}</style>" for c in res.css_raw)
    return css + "".join(f'<script type="text/javascript">{js}</script>' for js in res.js_raw)


def report_text(
    result: Any,
    query: Mapping[str, str] | None = None,
    base_url: str = DEFAULT_BASE_URL,
    title: str = "Bandit teaching dashboard: run report",
) -> str:
    """The report's text as HTML (title, final numbers, the reproducing link, settings,
    versions); every value taken from the run or the caller is escaped."""
    query = dict(reproduce_query(result) if query is None else query)
    link = f"{base_url}?{urlencode(query)}"
    settings = [[k, str(v)] for k, v in dict(result.spec).items() if v is not None]
    settings += [
        ["algorithms", ", ".join(r.algorithm for r in result.results)],
        ["horizon T", f"{result.horizon:,}"],
        ["rounds played", f"{result.t:,}"],
        ["repetitions", str(result.runs)],
        ["seed", str(result.seed)],
    ]
    params = [
        [r.algorithm, ", ".join(f"{k} = {v}" for k, v in sorted(r.params.items()))]
        for r in result.results
        if r.params
    ]
    versions = [[k, v] for k, v in _versions().items()]
    text = (
        f"<h1>{html.escape(title)}</h1>"
        f"<p>{html.escape(str(result.spec.get('problem', '')))} problem, "
        f"T = {result.horizon:,}, {result.runs} run(s), seed {result.seed}.</p>"
        f"<h2>Final numbers</h2>{_finals(result)}"
        f"<h2>Reproduce this run</h2><p>Open this link on the server that serves the "
        f"dashboard, then press Run (same settings, same seed, same numbers):</p>"
        f'<p class="link"><a href="{html.escape(link, quote=True)}">{html.escape(link)}</a></p>'
        f"<h2>Settings</h2>{_table(settings, ['setting', 'value'])}"
        + (
            f"<h2>Algorithm settings</h2>{_table(params, ['algorithm', 'values'])}"
            if params
            else ""
        )
        + f"<h2>Versions</h2>{_table(versions, ['software', 'version'])}<h2>Plots</h2>"
    )
    return text


def report_html(
    result: Any,
    query: Mapping[str, str] | None = None,
    base_url: str = DEFAULT_BASE_URL,
    band: str = "sd",
    title: str = "Bandit teaching dashboard: run report",
) -> str:
    """The report of ``result`` as one self-contained HTML page (see the module docstring).

    ``query``: the dashboard URL values of the run (default :func:`reproduce_query`);
    ``base_url``: the dashboard's address the link starts with.
    """
    from bokeh.embed import components
    from bokeh.layouts import column, row

    text = report_text(result, query, base_url, title)
    figures = _figures(result, band)
    rows = [
        row(*figures[i : i + 2], sizing_mode="stretch_width") for i in range(0, len(figures), 2)
    ]
    # The text is the page's own HTML (readable without JavaScript, printable, searchable);
    # only the figures are Bokeh's, with its scripts inline.
    script, div = components(column(*rows, sizing_mode="stretch_width"))
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{html.escape(title)}</title>\n{_inline_resources()}\n<style>{_CSS}</style>\n"
        f"</head>\n<body>\n{text}\n{div}\n{script}\n</body>\n</html>\n"
    )


def write_report(result: Any, path: str | Path, **kwargs: Any) -> Path:
    """Write :func:`report_html` of ``result`` to ``path``; ValueError if it cannot be written."""
    path = Path(path)
    try:
        path.write_text(report_html(result, **kwargs), encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"cannot write the report to {str(path)!r}: {exc.strerror}") from None
    return path
