"""`roofline doctor`'s screen: one line a check, its fix under it, the verdict last. Imports nothing from
kernels/ or profiler/ (it also runs when a foreign package shadows them)."""

from __future__ import annotations

import json

from roofline.analysis.diagnosis import Diagnosis


def render_doctor(d: Diagnosis, fmt: str = "text") -> str:
    """The checks as text (fmt "text") or JSON ("json")."""
    if fmt == "json":
        return json.dumps(d.to_dict(), indent=2)
    width = max(len(c.name) for c in d.checks)
    lines = []
    for c in d.checks:
        lines.append(f"{c.status:<4}  {c.name:<{width}}  {c.detail}")
        if c.fix and c.status != "ok":
            lines.append(f"{'':<4}  {'':<{width}}  fix: {c.fix}")
    return "\n".join(lines) + "\n\n" + d.verdict
