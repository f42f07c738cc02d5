"""What each probe kernel (kernels/probes.py) must be called, by construction."""

from __future__ import annotations

# probe -> (bound, roof or cause prefix)
EXPECTED = {
    "stream_copy": ("bandwidth", "DRAM"),
    "matmul": ("compute", "tensor pipe"),
    "pointer_chase": ("latency", "waiting on global memory loads"),
    "small_grid": ("latency", "small grid"),
    "l2_reread": ("bandwidth", "L2"),
}


def check_probe(name: str, bound: str, roof: str | None, cause: str | None) -> tuple[bool, str]:
    """(ok, message) for one probe's verdict against what its construction guarantees."""
    want_bound, want = EXPECTED[name]
    got = roof if want_bound != "latency" else cause
    ok = bound == want_bound and bool(got) and got.startswith(want)
    return ok, f"{name}: expected {want_bound} ({want}), got {bound} ({got})"
