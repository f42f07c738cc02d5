"""`roofline validate` as text: each probe's verdict against its construction, then the count."""

from __future__ import annotations

from roofline.analysis.probe_checks import Validation


def render_validation(v: Validation) -> str:
    lines = [("ok    " if c.ok else "WRONG ") + c.message + (f"  [{c.run}]" if c.run else "") for c in v.checks]
    wrong = sum(not c.ok for c in v.checks)
    lines.append(f"{len(v.checks) - wrong} of {len(v.checks)} probes called as built (preset {v.preset}, {v.chip})")
    return "\n".join(lines)
