"""A metric's value as the analysis reads it: a float, or None where the report lacks it."""

from __future__ import annotations

import math


def num(x) -> float | None:
    """A finite-or-inf float, or None for None, NaN and non-numbers (metrics a report lacks)."""
    if x is None:
        return None
    try:
        x = float(x)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(x) else x
