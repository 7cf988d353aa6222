"""``python -m dashboard reproduce FIGURE --out DIR``: the papers' figures as offline HTML + CSV.

For each figure (see :mod:`dashboard.simulation.experiments`) this runs the experiment at the
chosen scale and writes

* ``DIR/<figure>.html``: a standalone page (Bokeh/Panel resources inlined, so it opens offline)
  with what the paper shows, what we get, and the plots (the dashboard's plot builders from
  :mod:`dashboard.ui.plots` plus the figure-specific ones below);
* ``DIR/<figure>.csv``: the curves in long format ``figure,panel,algorithm,run,t,metric,value``.

The figure builders (:func:`figure_layout`, :func:`pac_curve_plot`,
:func:`overall_complexity_plot`) are plain functions, usable from notebooks.
"""

from __future__ import annotations

import argparse
import html as html_lib
import json
import re
import time
from pathlib import Path
from typing import Any

import numpy as np

from .simulation.experiments import (
    FIGURES,
    SCALES,
    ExperimentResult,
    PACResult,
    get_figure,
    run_experiment,
    run_experiments,
)

__all__ = [
    "add_parser",
    "figure_layout",
    "inline_panel_stylesheets",
    "overall_complexity_plot",
    "pac_curve_plot",
    "reproduce",
    "write_figure",
]


# ------------------------------------------------------------------------------------ plots
#: Height of a figure whose legend sits below the frame (the dashboard's plots do the same:
#: a legend inside the frame covers data), and the legend's spacing there.
_LEGEND_HEIGHT = 380
_LEGEND_OPTS = {"margin": 8, "padding": 6, "spacing": 12, "label_height": 24, "glyph_height": 22}


def pac_curve_plot(result: PACResult, title: str = "") -> Any:
    """Appendix I.2's PAC plot: ``sqrt(t) e_t`` over t, mean over repetitions with a +-1 sd
    band (the paper's error bars), and the reference line ``10 sqrt(d log K)``; the legend
    below the frame (it never covers the curve)."""
    import holoviews as hv

    from .ui.plots.common import BAND_POINTS, FONTS, PALETTE, REF_COLOR, T_DIM

    color = PALETTE[0]  # the palette's first colour, >= 3:1 on both themes' backgrounds

    t = result.times.astype(float)
    vals = result.scaled
    mean = vals.mean(axis=0)
    std = vals.std(axis=0, ddof=1) if result.runs > 1 else np.zeros_like(mean)  # sample sd
    keep = np.unique(np.r_[np.linspace(0, t.size - 1, BAND_POINTS).round().astype(int), t.size - 1])
    ydim = hv.Dimension("sqrt_t_e_t", label="√t · e_t")
    band = hv.Area(
        (t[keep], np.maximum(mean - std, 0)[keep], (mean + std)[keep]),
        kdims=[T_DIM],
        vdims=[ydim, "hi"],
        label="±1 sd over runs",
    ).opts(color=color, alpha=0.2, line_alpha=0)
    curve = hv.Curve((t, mean, std), kdims=[T_DIM], vdims=[ydim, "sd"], label="DEO (mean)").opts(
        color=color, line_width=3, tools=["hover"]
    )
    ref = hv.Curve(
        ([1.0, t[-1]], [result.bound, result.bound]),
        kdims=[T_DIM],
        vdims=[ydim],
        label=f"10 √(d log K) = {result.bound:.1f}",
    ).opts(color=REF_COLOR, line_dash="dashed", line_width=2)
    return (band * curve * ref).opts(
        title=title or f"√t · e_t, d = {result.d}, K = {result.K} ({result.runs} runs)",
        responsive=True,
        height=_LEGEND_HEIGHT,
        min_height=_LEGEND_HEIGHT,
        fontsize=FONTS,
        show_grid=True,
        legend_position="bottom",
        legend_cols=2,
        legend_opts=_LEGEND_OPTS,
        ylim=(0, max(result.bound, float((mean + std).max())) * 1.1),
    )


def overall_complexity_plot(result: Any) -> Any:
    """Figures 2-4 (e) and (f): overall oracle adaptivity and query complexity up to T per
    algorithm (mean over runs), grouped bars on a log axis (the palette's first two colours;
    no legend: the x axis names each bar)."""
    import holoviews as hv

    from .ui.plots import FONTS, PALETTE

    rows = []
    for r in result.results:
        rows.append((r.algorithm, "queries", float(r.queries[:, -1].mean())))
        rows.append((r.algorithm, "adaptivity", float(r.adaptivity[:, -1].mean())))
    return hv.Bars(
        rows,
        kdims=[hv.Dimension("algorithm"), hv.Dimension("complexity")],
        vdims=[hv.Dimension("calls", label="oracle calls up to T (mean)")],
    ).opts(
        title="Overall oracle query / adaptivity complexity",
        logy=True,
        ylim=(0.8, None),
        responsive=True,
        height=320,
        min_height=320,
        fontsize=FONTS,
        tools=["hover"],
        cmap={"queries": PALETTE[0], "adaptivity": PALETTE[1]},
        color=hv.dim("complexity"),
        line_alpha=0,  # no black outline (1.6:1 on the dark theme's background)
        show_legend=False,
        xrotation=0,
    )


def _panel_plots(res: ExperimentResult, key: str, value: Any) -> list[Any]:
    from .ui import plots

    title = res.panel_title(key)
    if isinstance(value, PACResult):
        return [pac_curve_plot(value, f"√t · e_t: {title} ({value.runs} runs)")]
    if res.figure.baseline is None:  # semiparametric regret
        return [plots.regret_plot(value, show_rate=False).opts(title=f"Regret: {title}")]
    return [
        plots.complexity_plot(value).opts(title="(a, b) cumulative adaptivity / queries"),
        plots.regret_plot(value, show_rate=False).opts(title="(c) cumulative regret"),
        plots.wall_time_plot(value).opts(title="(d) runtime"),
        overall_complexity_plot(value).opts(title="(e, f) overall adaptivity / queries"),
    ]


def figure_layout(res: ExperimentResult) -> Any:
    """A Panel layout: title, setting, "what the paper shows", "what we get" and the plots."""
    import panel as pn

    fig = res.figure
    we_get = res.we_get.replace("\n", "\n\n")
    header = pn.pane.Markdown(
        f"# {fig.title}\n\n"
        f"*Source: {fig.source}.*  Scale **{res.scale}**: T = {res.horizon:,}, "
        f"{res.runs} run(s), seed {res.seed}; computed in {res.seconds:.1f} s.\n\n"
        f"**What the paper shows.** {res.paper_shows}\n\n"
        f"**What we get.** {we_get}",
        sizing_mode="stretch_width",
    )
    plots = [
        pn.pane.HoloViews(p, sizing_mode="stretch_width", linked_axes=False)
        for key, value in res.panels.items()
        for p in _panel_plots(res, key, value)
    ]
    items: list[Any] = [header, pn.GridBox(*plots, ncols=2, sizing_mode="stretch_width")]
    return pn.Column(*items, sizing_mode="stretch_width")


# ------------------------------------------------------------------------------------ writing
def write_figure(res: ExperimentResult, out: str | Path) -> tuple[Path, Path]:
    """Write ``<out>/<figure>.html`` (standalone, inline resources) and ``<out>/<figure>.csv``.

    Returns the two paths.  Raises ValueError if ``out`` cannot be created or written.
    """
    from bokeh.resources import INLINE

    out = _output_dir(out)
    html = out / f"{res.name}.html"
    csv_path = out / f"{res.name}.csv"
    try:
        csv_path.write_text(res.to_csv())
        figure_layout(res).save(str(html), embed=False, resources=INLINE, title=res.figure.title)
        html.write_text(inline_panel_stylesheets(html.read_text(encoding="utf-8")), "utf-8")
    except OSError as exc:
        raise ValueError(f"cannot write to output directory {str(out)!r}: {exc}") from None
    return html, csv_path


_IMPORTED_CSS = re.compile(
    r'\{"type":"object","name":"ImportedStyleSheet","id":"([^"]+)",'
    r'"attributes":\{"url":"https?://cdn\.holoviz\.org/panel/[^/"]+/dist/([^"?]+)(?:\?[^"]*)?"\}\}'
)


def inline_panel_stylesheets(page: str) -> str:
    """Replace Panel's CDN stylesheet references in a saved page by the same CSS inlined.

    ``Panel.save(..., resources=INLINE)`` inlines every script but still points Panel's
    component stylesheets (``ImportedStyleSheet``) at cdn.holoviz.org.  The files ship in the
    installed ``panel/dist`` directory, so each reference becomes an ``InlineStyleSheet`` with
    that file's CSS (HTML-escaped like the rest of Bokeh's document JSON).  References whose
    file is not installed are left unchanged.
    """
    import panel

    dist = Path(panel.__file__).resolve().parent / "dist"

    def repl(m: re.Match[str]) -> str:
        path = (dist / m.group(2)).resolve()
        if dist not in path.parents or not path.is_file():
            return m.group(0)
        css = html_lib.escape(json.dumps(path.read_text(encoding="utf-8")), quote=False)
        return (
            f'{{"type":"object","name":"InlineStyleSheet","id":"{m.group(1)}",'
            f'"attributes":{{"css":{css}}}}}'
        )

    page = _IMPORTED_CSS.sub(repl, page)
    # favicons are decoration: drop the CDN links so the page makes no network request
    return re.sub(r'<link rel="(?:apple-touch-)?icon"[^>]*https?://[^>]*>\n?', "", page)


def _output_dir(out: str | Path) -> Path:
    path = Path(out)
    if path.exists() and not path.is_dir():
        raise ValueError(f"output path {str(out)!r} is not a directory")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise ValueError(f"cannot create output directory {str(out)!r}: {reason}") from None
    probe = path / ".reproduce-write-test"
    try:
        probe.write_text("")
        probe.unlink()
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise ValueError(f"cannot write to output directory {str(out)!r}: {reason}") from None
    return path


def reproduce(
    figure: str,
    out: str | Path,
    scale: str = "classroom",
    seed: int = 0,
    horizon: int | None = None,
    runs: int | None = None,
    echo: Any = print,
    scheduler: str | None = None,
    tune: bool | None = None,
    band: str | None = None,
) -> list[tuple[Path, Path]]:
    """Run one figure (or ``"all"``) and write its HTML and CSV into ``out``.

    Everything is validated before anything runs: an unknown figure or scale, or an output
    directory that cannot be written, raises ValueError at once.  The simulations run on the
    sweep engine (:mod:`dashboard.simulation.sweep`): at the paper scale on a local Dask
    cluster, or on the cluster at ``scheduler``; ``tune`` (default: at the paper scale) follows
    Appendix I's protocol (best c in {1, 2, 4, 8} per setting, reported).
    """
    key = str(figure).strip().lower()
    names = list(FIGURES) if key == "all" else [get_figure(key).name]
    if band is not None:
        from .simulation.bands import check_band

        if check_band(band) == "runs":
            raise ValueError("--band runs is the figure's own CSV (every run); choose another")
    for name in names:
        FIGURES[name].scale(scale)
    _output_dir(out)
    from .simulation.user_files import check_output

    for name in names:  # a FIFO or device left under a figure's name would block the write
        files = [f"{name}.html", f"{name}.csv"]
        files += [f"{name}-band-{band.strip().lower()}.csv"] if band is not None else []
        for file in files:
            check_output(Path(out) / file, "output file")
    start = time.perf_counter()
    settings = {
        "scale": scale,
        "seed": seed,
        "horizon": horizon,
        "runs": runs,
        "scheduler": scheduler,
        "tune": tune,
    }
    done: dict[str, tuple[Path, Path]] = {}

    def emit(res: ExperimentResult) -> None:
        html, csv_path = write_figure(res, out)
        done[res.name] = (html, csv_path)
        with csv_path.open(encoding="utf-8") as fh:
            n_rows = sum(1 for _ in fh) - 1
        echo(
            f"{res.name}: {res.figure.title} (scale {res.scale}, T = {res.horizon:,}, "
            f"{res.runs} run(s), {time.perf_counter() - start:.1f} s)"
        )
        echo(f"  wrote {html} ({html.stat().st_size / 1e6:.1f} MB, opens offline)")
        echo(f"  wrote {csv_path} ({n_rows:,} rows)")
        if band is not None:
            from .simulation.bands import experiment_band_csv

            band_path = Path(out) / f"{res.name}-band-{band.strip().lower()}.csv"
            band_path.write_text(experiment_band_csv(res, band))
            echo(f"  wrote {band_path} (mean, lo, hi per round: {band})")
        for line in res.we_get.splitlines():
            echo(f"  {line}")

    if len(names) == 1:
        emit(run_experiment(names[0], **settings))
    else:
        # one pool of tasks for all figures; each is written as soon as its tasks are done
        # while the workers run the others' (times below: since the start)
        echo(f"running {len(names)} figures as one pool of tasks; each is written when done")
        run_experiments(names, on_result=emit, **settings)
    return [done[name] for name in names]


# ------------------------------------------------------------------------------------ CLI
def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add the ``reproduce`` subcommand to the CLI's subparsers."""
    p = subparsers.add_parser(
        "reproduce",
        help="reproduce a paper figure: standalone HTML + CSV",
        description=(
            "Run a paper experiment and write DIR/<figure>.html (opens offline) and "
            "DIR/<figure>.csv (long format). Figures: " + ", ".join(FIGURES) + ", or all."
        ),
    )
    p.add_argument("figure", help=f"one of: {', '.join(FIGURES)}, all")
    p.add_argument("--out", required=True, help="output directory (created if missing)")
    p.add_argument(
        "--scale",
        default="classroom",
        help=f"{' | '.join(SCALES)} (default classroom: tens of seconds; paper: full size)",
    )
    from .cli_args import cli_type
    from .simulation.specs import FIELDS

    p.add_argument("--seed", type=cli_type(FIELDS["seed"]), default=0, help=FIELDS["seed"].help())
    p.add_argument(
        "--horizon",
        type=cli_type(FIELDS["horizon"]),
        help="override the scale's horizon T; " + FIELDS["horizon"].allowed(),
    )
    p.add_argument(
        "--runs",
        type=cli_type(FIELDS["runs"]),
        help="override the scale's number of repetitions; " + FIELDS["runs"].allowed(),
    )
    p.add_argument(
        "--scheduler",
        help="tcp://host:port of a running Dask cluster (default at the paper scale: a local "
        "cluster; below it: in-process), or inprocess",
    )
    p.add_argument(
        "--tune",
        choices=["auto", "yes", "no"],
        default="auto",
        help="Appendix I's protocol, best c in {1,2,4,8} per setting (auto: paper scale only)",
    )
    p.add_argument(
        "--band",
        help="also write DIR/<figure>-band-<band>.csv, mean, lo, hi over the runs per round: "
        "sd (ddof=1) | se | ci95 (Student t) | q10-90",
    )
    p.set_defaults(func=_cmd_reproduce)
    return p


def _cmd_reproduce(args: argparse.Namespace) -> int:
    from .simulation.engine import check_address, close_clients

    scheduler = args.scheduler
    if scheduler is not None and scheduler.strip().lower() != "inprocess":
        scheduler = check_address(scheduler)
    elif scheduler is not None:
        scheduler = "inprocess"
    try:
        reproduce(
            args.figure,
            args.out,
            scale=args.scale,
            seed=args.seed,
            horizon=args.horizon,
            runs=args.runs,
            scheduler=scheduler,
            tune={"auto": None, "yes": True, "no": False}[args.tune],
            band=args.band,
        )
    finally:
        close_clients()
    return 0
