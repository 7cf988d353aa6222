"""Benchmark: the cost of building one live frame of the regret plots for each band choice.

A frame of the live dashboard recomputes the band of every algorithm from the frame's curves
(``dashboard/simulation/bands.py``) and patches the plot's Bokeh sources in place
(``dashboard/ui/live.py``).  This script builds one result of the issue-9 frame problem
(cmab, d = 20, m = 3, m-sets; CUCB, AROQ-CMAB, SROQ-CMAB, alpha-AROQ-CMAB; 16 repetitions)
and times, per band kind,

* ``frames_ms``: the regret plot's and the alpha-regret plot's column data (``regret_frames``
  + ``alpha_regret_frames``: the band math and thinning, no HoloViews);
* ``send_ms``: a full in-place update of both live plots (``LivePlot.send``: the column data,
  their assignment to the Bokeh sources and the ranges), as a streaming frame does.

Medians of ``--repeat`` calls.  Usage: ``python benchmarks/bench_band_frames.py [--horizon T]``
prints a JSON dict.
"""

from __future__ import annotations

import argparse
import inspect
import json
import time
from typing import Any

import numpy as np
from bokeh.document import Document

from dashboard.simulation.runner import simulate
from dashboard.simulation.specs import make_spec
from dashboard.ui.plots import alpha_regret, regret

ALGORITHMS = ["CUCB", "AROQ-CMAB", "SROQ-CMAB", "alpha-AROQ-CMAB"]


def _median_ms(fn: Any, repeat: int) -> float:
    fn()  # warm-up
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return 1e3 * float(np.median(times))


def run(horizon: int = 100_000, runs: int = 16, repeat: int = 50) -> dict[str, Any]:
    spec = make_spec("cmab", d=20, m=3)
    result = simulate(spec, ALGORITHMS, horizon=horizon, runs=runs, seed=0)
    has_band = "band" in inspect.signature(regret.regret_frames).parameters
    kinds = ["sd", "se", "ci95", "q10-90", "runs"] if has_band else ["sd (ddof = 0, no chooser)"]
    out: dict[str, Any] = {
        "problem": "cmab d=20 m=3",
        "algorithms": ALGORITHMS,
        "runs": runs,
        "horizon": horizon,
        "grid_points": int(result.results[0].times.size),
        "bands": {},
    }
    for kind in kinds:
        kw = {"band": kind} if has_band else {}
        ctx = regret.PlotContext(tuple(ALGORITHMS), "cmab", False, None, None, **kw)
        lives = [regret.PLOT.make(ctx), alpha_regret.PLOT.make(ctx)]
        for live in lives:
            live.x_range = None
            live.ensure_rendered(Document())

        def frames(kw: dict[str, Any] = kw) -> None:
            regret.regret_frames(result, ALGORITHMS, **kw)
            alpha_regret.alpha_regret_frames(result, ALGORITHMS, **kw)

        def send(lives: list[Any] = lives) -> None:
            for live in lives:
                live.send(result)

        renders = sum(live.renders for live in lives)
        out["bands"][kind] = {
            "frames_ms": round(_median_ms(frames, repeat), 3),
            "send_ms": round(_median_ms(send, repeat), 3),
            "re_renders": sum(live.renders for live in lives) - renders,  # 0: patched in place
        }
        for live in lives:
            live.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--horizon", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=50)
    args = ap.parse_args()
    print(json.dumps(run(args.horizon, repeat=args.repeat), indent=1))


if __name__ == "__main__":
    main()
