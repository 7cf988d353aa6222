"""Benchmark: the batched per-round CMAB baselines against a former commit, side by side.

The two per-round engines that dominate ``reproduce all --scale paper`` (issue 9) are run on
the settings of their paper tasks, ``R = 10`` repetitions in one engine:

* ``OLS-UCB-C`` -- ``cmab-fig3``: d = 10, m = 3 (m-sets), covariance rewards (A.11.1);
* ``SDCB`` -- ``cmab-fig4``: d = 5, m = 2, general rewards on {0.2, ..., 1} (A.11.2).

The former engines come from ``dashboard/algorithms`` of ``--former`` (a commit; default: the
commit before this work), extracted with ``git archive`` into a temporary directory and
imported as a separate package, so both run in this process, interleaved, and each timing is
process CPU seconds (best of ``--repeats``).  Each pair must give identical cumulative regrets.
The engine is advanced in 400 chunks, as a figure's recorded curve does.

Run: ``python benchmarks/bench_baselines.py [--horizon 20000] [--repeats 2] [--only SDCB]``.
"""

from __future__ import annotations

import argparse
import importlib
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
#: The last commit before issue 9's work on these two engines (this branch's base).
DEFAULT_FORMER = "943d737"


def _former_package(commit: str, where: Path) -> str:
    """Extract ``dashboard/algorithms`` of ``commit`` as the package ``former_alg``."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", commit, "dashboard/algorithms"],
        check=True,
        capture_output=True,
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(where)], input=archive, check=True)
    (where / "dashboard" / "algorithms").rename(where / "former_alg")
    sys.path.insert(0, str(where))
    return "former_alg"


def _modules(package: str) -> dict[str, Any]:
    return {
        "actions": importlib.import_module(f"{package}.cmab.actions"),
        "rewards": importlib.import_module(f"{package}.cmab.rewards"),
        "covariance": importlib.import_module(f"{package}.cmab.policies.covariance"),
        "general": importlib.import_module(f"{package}.cmab.policies.general"),
    }


def _run(mods: dict[str, Any], algorithm: str, T: int, R: int) -> tuple[float, np.ndarray]:
    a, r = mods["actions"], mods["rewards"]
    if algorithm == "OLS-UCB-C":
        model, family = r.CovarianceRewards(10, seed=0), a.MSets(10, 3)
        engine = mods["covariance"].BatchedOLSUCBC()
    else:
        model, family = r.GeneralRewards(5, seed=0), a.MSets(5, 2)
        engine = mods["general"].BatchedSDCB()
    envs = [model.environment(family, i) for i in range(R)]
    start = time.process_time()
    engine.reset(envs, T)
    step = max(1, T // 400)
    while engine.t < T:
        engine.advance(min(T, engine.t + step))
    return time.process_time() - start, np.array(engine.cum_regret, dtype=float)


def measure(former: str, horizon: int, repeats: int, only: list[str]) -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory() as tmp:
        old = _modules(_former_package(former, Path(tmp)))
        new = _modules("dashboard.algorithms")
        rows = []
        for algorithm in only:
            t_old, t_new = [], []
            for _ in range(repeats):
                s_old, reg_old = _run(old, algorithm, horizon, 10)
                s_new, reg_new = _run(new, algorithm, horizon, 10)
                if not np.array_equal(reg_old, reg_new):
                    raise SystemExit(f"error: {algorithm}: the regrets differ from {former}")
                t_old.append(s_old)
                t_new.append(s_new)
            rows.append(
                {
                    "algorithm": algorithm,
                    "T": horizon,
                    "R": 10,
                    "former": former,
                    "former_cpu_s": round(min(t_old), 3),
                    "new_cpu_s": round(min(t_new), 3),
                    "ratio": round(min(t_old) / min(t_new), 2),
                    "identical": True,
                }
            )
            print(json.dumps(rows[-1]), flush=True)
        return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--former", default=DEFAULT_FORMER, help="commit to compare against")
    parser.add_argument("--horizon", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument(
        "--only", action="append", choices=["OLS-UCB-C", "SDCB"], help="one engine (repeatable)"
    )
    args = parser.parse_args()
    measure(args.former, args.horizon, args.repeats, args.only or ["OLS-UCB-C", "SDCB"])


if __name__ == "__main__":
    main()
