"""A bench's serving rows (`roofline bench --serving`, kernels/batches.py SERVING): one line per row, each
kernel's time beside a bare read of the batch's bytes and FlashMLA in the same run, as text and as the README's
markdown table. A run by the "layered" method (another layer's kernel between steps) adds that kernel's own time;
the markdown table can carry such a run's ratios beside a back-to-back run's."""

from __future__ import annotations

from kernels.spec import ctx_text
from reports.table import align
from roofline.analysis.bench_table import ragged_lens

READ, PEER = "read", "flashmla"


def serving_rows(table) -> tuple[list[str], list[dict]]:
    """(the kernels in the order first timed, one dict per named row: row, batch, heads, q_len, kv_mb,
    `times` {kernel: ms or None}, `throttled`, the kernels whose timing had a throttle reason on record, and
    `layer_ms`, the kernel between steps timed alone ("layered" runs; None otherwise)); rows without a name
    (grid points) are left out."""
    named = table[table["row"].fillna("").astype(str) != ""] if "row" in table else table.iloc[0:0]
    kernels = list(dict.fromkeys(named["kernel"]))
    rows: dict[str, dict] = {}
    for _, r in named.iterrows():
        lens = ragged_lens(r)
        entry = rows.setdefault(
            r["row"],
            {
                "row": r["row"],
                "batch": f"{len(lens)} x {ctx_text(min(lens))}-{ctx_text(max(lens))}" if lens else _equal(r),
                "heads": int(r.heads),
                "q_len": int(r.q_len),
                "kv_mb": r.kv_bytes / 1e6,
                "times": {},
                "throttled": set(),
                "layer_ms": None,
            },
        )
        layer = r.get("layer_ms")
        if entry["layer_ms"] is None and isinstance(layer, float) and layer == layer:
            entry["layer_ms"] = layer
        if isinstance(r.get("throttled"), str) and r.get("throttled"):
            entry["throttled"].add(r.kernel)
        ok = not r.get("error") and r.median_ms == r.median_ms
        entry["times"][r.kernel] = float(r.median_ms) if ok else None
    return kernels, list(rows.values())


def _equal(r) -> str:
    ctx = ctx_text(int(r.ctx_len))
    return ctx if int(r.batch) == 1 else f"{int(r.batch)} x {ctx}"


def _ours(kernels: list[str]) -> str | None:
    """The kernel the ratios are for: the first that is neither the read nor FlashMLA."""
    return next((k for k in kernels if k not in (READ, PEER)), None)


def _cells(kernels: list[str], row: dict) -> list[str]:
    times = row["times"]
    out = [_us(times.get(k)) + ("!" if k in row["throttled"] else "") for k in kernels]
    ours = _ours(kernels)
    if ours is not None:
        out += [_ratio(times.get(ours), times.get(PEER)), _ratio(times.get(ours), times.get(READ))]
    return out


def _us(ms: float | None) -> str:
    return "-" if ms is None else f"{ms * 1e3:.1f}"


def _ratio(a: float | None, b: float | None) -> str:
    return "-" if a is None or b is None or not b else f"{a / b:.2f}"


def _header(kernels: list[str], tick: str = "") -> list[str]:
    head = ["row", "batch (prefixes)", "heads", "q_len", "KV MB"] + [f"{tick}{k}{tick} µs" for k in kernels]
    ours = _ours(kernels)
    if ours is not None:
        head += [f"{tick}{ours}{tick} / FlashMLA", f"{tick}{ours}{tick} / read"]
    return head


HOW = {
    "rotated": "steps back to back",
    "layered": "another layer's GEMM between steps, its own time taken out",
    "flush": "the L2 flushed before each step",
}


def render_serving_text(table, method: str = "rotated") -> str:
    """The serving rows as a text table ('' without named rows); `method`: how the bench timed them."""
    kernels, rows = serving_rows(table)
    if not rows:
        return ""
    layered = any(r["layer_ms"] is not None for r in rows)
    lines = [_header(kernels) + (["GEMM between µs"] if layered else [])] + [
        [r["row"], r["batch"], str(r["heads"]), str(r["q_len"]), f"{r['kv_mb']:.1f}"]
        + _cells(kernels, r)
        + ([_us(r["layer_ms"])] if layered else [])
        for r in rows
    ]
    return (
        f"serving rows (µs per step, {HOW.get(method, method)}; the ratios are the first kernel other than read "
        "and flashmla over each):\n" + align(lines) + _throttle_note(rows)
    )


def render_serving_markdown(table, layered=None) -> str:
    """The serving rows as a markdown table ('' without named rows). `layered`: the table of a "layered" run of
    the same rows and kernels, whose two ratios are added as the last columns (marked where either time was)."""
    kernels, rows = serving_rows(table)
    if not rows:
        return ""
    head = _header(kernels, "`")
    ours = _ours(kernels)
    between = None  # the layered run's rows by name, when its ratios are shown
    if layered is not None and ours is not None:
        between = {r["row"]: r for r in serving_rows(layered)[1]}
        head += [f"a layer between: `{ours}` / FlashMLA", "/ read"]
    out = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    for r in rows:
        cells = [r["row"], r["batch"], str(r["heads"]), str(r["q_len"]), f"{r['kv_mb']:.1f}"] + _cells(kernels, r)
        if between is not None:
            other = between.get(r["row"], {"times": {}, "throttled": set()})
            t, marked = other["times"], other["throttled"]
            cells += [
                _ratio(t.get(ours), t.get(peer)) + ("!" if {ours, peer} & marked else "") for peer in (PEER, READ)
            ]
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n" + _throttle_note(rows + list((between or {}).values()))


def _throttle_note(rows: list[dict]) -> str:
    """A line under the table where a time is marked: a throttle reason was on record when it was taken."""
    if not any(r["throttled"] for r in rows):
        return ""
    return (
        "\n! NVML had a clock or power throttle reason on record as that timing began or ended (a ratio: either's).\n"
    )
