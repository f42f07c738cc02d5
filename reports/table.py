"""Aligned plain-text tables. Standard library only, so light commands (`roofline gpus`) stay fast."""

from __future__ import annotations


def align(rows: list[list[str]]) -> str:
    """Left-aligned columns, a dashed rule under the header row."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)
