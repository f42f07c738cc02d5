"""The GPU's clocks as a bench timed its rows (bench.json's clock columns): their range, and the rows that throttled."""

from __future__ import annotations

import pandas as pd


def _span(values: pd.Series, unit: str) -> str | None:
    got = pd.to_numeric(values, errors="coerce").dropna()
    if got.empty:
        return None
    lo, hi = got.min(), got.max()
    return f"{lo:.0f} {unit}" if round(lo) == round(hi) else f"{lo:.0f}-{hi:.0f} {unit}"


def throttled_rows(table: pd.DataFrame) -> pd.Series:
    """Which rows ran below the GPU's own clock (their `throttled` column says why)."""
    if "throttled" not in table.columns:
        return pd.Series(False, index=table.index)
    return table["throttled"].fillna("").astype(str) != ""


def bench_clock_line(table: pd.DataFrame, meta: dict) -> str:
    """One line: the SM and memory clock, power and temperature over the rows as they were timed, or why none."""
    parts = [
        ("SM", pd.concat([table.get("sm_mhz_start", pd.Series()), table.get("sm_mhz_end", pd.Series())]), "MHz"),
        ("memory", table.get("mem_mhz", pd.Series()), "MHz"),
        ("power", pd.concat([table.get("power_w_start", pd.Series()), table.get("power_w_end", pd.Series())]), "W"),
        ("temperature", table.get("temp_c_end", pd.Series()), "°C"),
    ]
    said = [f"{name} {span}" for name, values, unit in parts if (span := _span(values, unit))]
    if not said:
        return f"clocks: {meta.get('clocks') or 'not recorded (a bench.json from before clocks were recorded)'}"
    n = int(throttled_rows(table).sum())
    flag = f"; THROTTLED: {n} row(s), marked !" if n else "; no row throttled"
    return "clocks as each row was timed (NVML, the GPU's own clock): " + ", ".join(said) + flag
