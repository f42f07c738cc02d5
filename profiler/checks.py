"""Numbers in and out of files. In: what every reader asks of a number it takes from a file (ceilings,
read fits, removal rows, bench rows, manifests, sweep records): a JSON number (not text, not a bool, not
a list), finite, in range. Each check returns None or the sentence that ends the caller's one-line error,
which names the file and field (`h200.json: read_fit.gbps must be a positive number, got -3`); the
caller raises its own error type. Out: `strict_json`, JSON with null where a number is unknown, never
a bare NaN (which strict readers refuse)."""

from __future__ import annotations

import json
import math

LIMIT = 1e15  # above any time, rate, size or ratio roofline reads: 1e300 is a typo or a bug, never a measure


def shown(value) -> str:
    """A value as JSON writes it (NaN and Infinity as Python's json does)."""
    try:
        return json.dumps(value)
    except (TypeError, ValueError):
        return repr(value)


def number_problem(
    value,
    *,
    positive: bool = True,
    maximum: float = LIMIT,
    integer: bool = False,
    null: bool = False,
) -> str | None:
    """None when `value` is a finite number above 0 (or >= 0 with `positive=False`) and at most `maximum`
    (an integer with `integer`; None allowed with `null`), else what is wrong with it."""
    if value is None and null:
        return None
    kind = "an integer" if integer else "a number"
    want = f"a positive {kind.split()[-1]}" if positive else f"{kind} >= 0"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return f"must be {want}, got {shown(value)}"
    if not math.isfinite(value) or (value <= 0 if positive else value < 0):
        return f"must be {want}, got {shown(value)}"
    if integer and not float(value).is_integer():
        return f"must be {want}, got {shown(value)}"
    if value > maximum:
        return f"must be {want} of at most {maximum:g}, got {shown(value)}"
    return None


def unknown_keys(data: dict, known) -> list[str]:
    """The keys of `data` a reader does not know (a misspelt field would otherwise be ignored)."""
    return sorted(k for k in data if k not in known)


def finite(value):
    """`value` with every NaN or infinity (floats, numpy scalars, in dicts, lists and tuples) made None:
    strict JSON has no NaN, and a reader that meets a bare `NaN` refuses the whole document."""
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    if isinstance(value, float) or type(value).__name__.startswith("float"):
        return float(value) if math.isfinite(value) else None
    if type(value).__name__.startswith(("int", "uint")) and not isinstance(value, (bool, int)):
        return int(value)  # a numpy integer
    return value


def strict_json(value, indent: int | None = 2) -> str:
    """JSON any reader accepts: NaN and infinities as null (`finite`), never a bare NaN."""
    return json.dumps(finite(value), indent=indent, allow_nan=False)
