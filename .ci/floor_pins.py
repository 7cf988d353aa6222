"""The floor pins: every runtime dependency of pyproject.toml at its declared lower bound.

``python .ci/floor_pins.py`` prints one ``name==version`` line per entry of
``[project] dependencies`` (its ``>=`` bound), for ``pip install -c``: the floor job (.ci/floors)
installs them, so the floors it tests are the ones pyproject declares and cannot drift apart.
A runtime dependency without a ``>=`` bound is an error (a floor nobody tests is not a floor).
``--check`` instead compares the installed versions with the pins (exit 1 on a difference).
"""

from __future__ import annotations

import re
import sys
import tomllib
from importlib import metadata
from pathlib import Path

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"
_REQ = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*([^;]*)")


def floors(pyproject: Path = PYPROJECT) -> dict[str, str]:
    """``{name: lower bound}`` of the project's runtime dependencies."""
    deps = tomllib.loads(pyproject.read_text())["project"]["dependencies"]
    out: dict[str, str] = {}
    for dep in deps:
        m = _REQ.match(dep)
        if m is None:
            raise SystemExit(f"error: cannot read the requirement {dep!r}")
        name, spec = m.group(1), m.group(2)
        lows = [s.strip()[2:].strip() for s in spec.split(",") if s.strip().startswith(">=")]
        if len(lows) != 1:
            raise SystemExit(f"error: {name} needs exactly one '>=' floor in pyproject.toml")
        out[name] = lows[0]
    return out


def _same(installed: str, floor: str) -> bool:
    """Whether ``installed`` is the release ``floor`` names (``1.26`` is ``1.26.0``)."""
    a, b = installed.split("."), floor.split(".")
    n = max(len(a), len(b))
    return a + ["0"] * (n - len(a)) == b + ["0"] * (n - len(b))


def main(argv: list[str]) -> int:
    pins = floors()
    if argv[1:] == ["--check"]:
        bad = []
        for name, floor in pins.items():
            have = metadata.version(name)
            print(f"{name:12} floor {floor:10} installed {have}")
            if not _same(have, floor):
                bad.append(name)
        if bad:
            print(f"error: not at their floors: {', '.join(bad)}", file=sys.stderr)
            return 1
        return 0
    for name, floor in pins.items():
        print(f"{name}=={floor}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
