"""Plain-text rendering of the catalogue (the ``algorithms`` CLI command's table format)."""

from __future__ import annotations

from typing import Any

__all__ = ["catalogue_table"]


def _algorithm_lines(alg: dict[str, Any]) -> list[str]:
    kind = "per-round" if alg["per_round"] else "rare-query"
    rewards = f"  rewards: {', '.join(alg['rewards'])}" if alg["rewards"] else ""
    lines = [f"{alg['name']}  [{alg['problem']}, {kind}]  {alg['reference']}{rewards}"]
    for c in alg["constants"]:
        lines.append(f"    {c['name']} = {c['default']!r}  {c['bounds']}  {c['doc']}")
    if not alg["constants"]:
        lines.append("    (no constants)")
    return lines


def catalogue_table(described: dict[str, Any]) -> str:
    """Readable listing of :func:`dashboard.simulation.catalogue.describe`'s output."""
    lines = ["Algorithms (constants: name = default  allowed  meaning)"]
    for alg in described["algorithms"]:
        lines += ["  " + line for line in _algorithm_lines(alg)]
    for key, title in (
        ("shifts", "Shifts"),
        ("actions", "Action families"),
        ("rewards", "Reward models"),
    ):
        if described.get(key):
            lines.append(title)
            for c in described[key]:
                ref = f"  ({c['reference']})" if c["reference"] else ""
                lines.append(f"  {c['name']}: {c['doc']}{ref}")
    return "\n".join(lines)
