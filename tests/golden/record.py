"""Run every golden case and compare with (or, with ``--write``, record) the stored output.

``python -m tests.golden.record --write`` records; the test module calls :func:`run_case`.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from dashboard.cli import main

from .cases import CASES, DESIGN_CASES

HERE = Path(__file__).resolve().parent
STORE = HERE / "outputs"


def _strip_walls(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: _strip_walls(v) for k, v in obj.items() if not k.endswith("seconds")}
    if isinstance(obj, list):
        return [_strip_walls(v) for v in obj]
    return obj


def run_case(name: str) -> dict[str, Any]:
    """The case's JSON (wall times removed) and, for simulations, its CSV curves."""
    argv = list(CASES.get(name) or DESIGN_CASES[name])
    with tempfile.TemporaryDirectory() as tmp:
        csv_path = Path(tmp) / "curves.csv"
        if name in CASES:
            argv += ["--csv", str(csv_path)]
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = main(argv)
        if code != 0:
            raise RuntimeError(f"golden case {name} exited {code}")
        doc = {"json": _strip_walls(json.loads(out.getvalue()))}
        if name in CASES:
            doc["csv"] = csv_path.read_text()
    return doc


def main_record(argv: list[str]) -> int:
    STORE.mkdir(exist_ok=True)
    for name in [*CASES, *DESIGN_CASES]:
        doc = run_case(name)
        path = STORE / f"{name}.json"
        text = json.dumps(doc, indent=1, sort_keys=True) + "\n"
        if "--write" in argv:
            path.write_text(text)
            print("recorded", name)
        else:
            print(name, "same" if path.read_text() == text else "DIFFERENT")
    return 0


if __name__ == "__main__":
    sys.exit(main_record(sys.argv[1:]))
