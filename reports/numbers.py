"""The one home of number formatting in reports: one rounding rule for every number a user compares across
outputs (analyze, report, compare), so the same time or gap prints the same in the terminal, the markdown and
a PR comment; and the cells with a dash for a missing value. A missing value is "-" in text tables and "–"
in the markdown report; each function's default says which it is written for."""

from __future__ import annotations

import math

MS_DIGITS = 4  # significant figures of a time in ms
GAP_DIGITS = 3  # significant figures of a ratio (gap to the floor, speed-up, executed/useful)


def significant(value: float, digits: int) -> str:
    """`value` to `digits` significant figures, in positional notation (never 1e-05)."""
    if value == 0 or not math.isfinite(value):
        return format(value, "g") if not math.isfinite(value) else "0"
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(value))))
    text = f"{value:.{decimals}f}"
    # rounding can carry into a new digit (9.9996 -> 10.000): one decimal too many then
    if decimals and len(text.lstrip("-").replace(".", "").lstrip("0")) > digits:
        text = f"{value:.{decimals - 1}f}"
    return text


def ms(value: float | None, missing: str = "–") -> str:
    """A time in ms, 4 significant figures: 15.56, 0.1749, 0.03368."""
    return missing if value is None else significant(value, MS_DIGITS)


def us(value_ms: float | None, missing: str = "–") -> str:
    """A time given in ms, shown in µs (the floor's scale), 4 significant figures like ms: 33.68."""
    return missing if value_ms is None else significant(value_ms * 1e3, MS_DIGITS)


def ratio(value: float | None, missing: str = "–") -> str:
    """A ratio with its x, 3 significant figures: 462x, 43.2x, 2.15x."""
    return missing if value is None else significant(value, GAP_DIGITS) + "x"


def fmt(value, spec: str, missing: str = "-", suffix: str = "") -> str:
    """`value` formatted by `spec` and followed by `suffix`, or `missing` for None."""
    return missing if value is None else format(value, spec) + suffix


def pct(value: float | None, missing: str = "–") -> str:
    """A percentage, one decimal: 42.5%."""
    return fmt(value, ".1f", missing, "%")


def signed_pct(value: float | None, missing: str = "-") -> str:
    """A change in percent, signed, one decimal: +3.2%, -0.4%."""
    return fmt(value, "+.1f", missing, "%")


def known(value):
    """`value`, or None where it is missing: None or NaN (a table's empty cell)."""
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else value
