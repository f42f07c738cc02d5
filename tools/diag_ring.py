"""Where the ring kernel's time goes (issue 9): time it against copies of itself with one part of the
work removed (wrong results on purpose; the barriers and loads stay), one CUDA-graph replay each.

    PYTHONPATH=. python tools/diag_ring.py OUT_DIR [SHAPE [VARIANT,...]]   (SHAPE: "128k h8 p64", as search_gluon)

Variants: "ring" (as shipped), "no-tail-mma" (the tail warpgroup's S^T and P V MMAs removed),
"no-main-s" (the main warpgroups' score MMAs removed: S = 0), "no-main-pv" (their P V MMAs removed),
"no-mma" (all three: what is left is the loads, the softmax and the barriers).
"""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

import kernels.triton_mla_fast_ring as ring
from kernels.inputs import build_inputs
from kernels.triton_mla_fast import triton_mla_fast
from profiler.bench import graph_replay_ms

sys.path.insert(0, str(Path(__file__).resolve().parent))
from search_gluon import SHAPES  # noqa: E402

SRC = Path(ring.__file__).read_text()
# (text in kernels/triton_mla_fast_ring.py, what replaces it); each must occur exactly once
CUTS = {
    "no-tail-mma": [
        ("            s = warpgroup_mma(kb.slice(k * PW, PW, dim=1), "
         "qt_lat.slice(k * PW, PW, dim=1).permute((1, 0)), s,\n"
         "                              use_acc=k > 0, is_async=True)\n", "            pass\n"),
        ("        s = warpgroup_mma(pe, qt_pe_s.index(z).permute((1, 0)), s, is_async=True)\n", ""),
        ("        acc = warpgroup_mma(kb.permute((1, 0)), pt.permute((1, 0)), o, is_async=True)\n"
         "        o = warpgroup_mma_wait(0, deps=[acc])\n", ""),
    ],
    "no-main-s": [
        ("                s = warpgroup_mma(q_lat_s.index(z).slice(k * PW, PW, dim=1),\n"
         "                                  kb.slice(k * PW, PW, dim=1).permute((1, 0)), s, use_acc=k > 0, "
         "is_async=True)\n", "                pass\n"),
        ("            s = warpgroup_mma(q_pe_s.index(z), pe.permute((1, 0)), s, is_async=True)\n", ""),
    ],
    "no-main-pv": [
        ("        acc = warpgroup_mma(pe, kb.slice(W * HALF, HALF, dim=1), o, is_async=True)\n"
         "        o = warpgroup_mma_wait(0, deps=[acc])\n", ""),
    ],
}
CUTS["no-mma"] = CUTS["no-tail-mma"] + CUTS["no-main-s"] + CUTS["no-main-pv"]  # loads, softmax, barriers only


def variant_module(name: str):
    """The ring module with the named cuts, written next to it and imported."""
    src = SRC
    for old, new in CUTS[name]:
        assert src.count(old) == 1, f"{name}: the kernel changed; update CUTS"
        src = src.replace(old, new)
    path = Path(ring.__file__).with_name(f"_diag_{name.replace('-', '_')}.py")
    path.write_text(src)
    return importlib.import_module(f"kernels.{path.stem}")


def graph_ms(inp) -> float:
    return graph_replay_ms(lambda: triton_mla_fast(inp, path="gluon"))


def main() -> None:
    out_dir = Path(sys.argv[1])
    label = sys.argv[2] if len(sys.argv) > 2 else "128k h8 p64"
    workload = dict(SHAPES)[label]
    inp = build_inputs(workload, device="cuda")
    shipped = ring._gluon_ring_kernel
    rows = [dict(shape=label, variant="ring", graph_ms=graph_ms(inp))]
    for name in (sys.argv[3].split(",") if len(sys.argv) > 3 else CUTS):
        ring._gluon_ring_kernel = variant_module(name)._gluon_ring_kernel
        try:
            rows.append(dict(shape=label, variant=name, graph_ms=graph_ms(inp)))
        finally:
            ring._gluon_ring_kernel = shipped
        print(json.dumps(rows[-1]), flush=True)
    (out_dir / "diag-ring.json").write_text(json.dumps(rows, indent=1))
    for r in rows:
        print(f"{r['shape']:14} {r['variant']:12} {r['graph_ms']:.4f} ms")


if __name__ == "__main__":
    main()
