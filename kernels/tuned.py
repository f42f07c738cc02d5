"""Launch parameters found by a sweep on a GPU, kept in kernels/data/tuned.json (the sweep, tune_fast.py, a
finished search kept in git history: `git show 5669a6f:benchmarks/tune_fast.py`; its CSVs in tests/fixtures/h200/tune/).

An entry applies to one kernel on one device name; among a device's entries the one with the
nearest heads count, then the same page-size class (1 vs paged), wins. No entry: defaults.
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources

TUNED_FILE = "data/tuned.json"


@lru_cache(maxsize=1)
def _entries() -> tuple:
    f = resources.files("kernels").joinpath(TUNED_FILE)
    if not f.is_file():
        return ()
    return tuple(json.loads(f.read_text()).get("entries", []))


@lru_cache(maxsize=256)
def _tuned(kernel: str, device_name: str, heads: int, page_size: int) -> tuple:
    cands = [e for e in _entries() if e["kernel"] == kernel and e["device"] == device_name]
    if not cands:
        return ()
    best = min(cands, key=lambda e: (abs(e["heads"] - heads), (e["page_size"] > 1) != (page_size > 1)))
    return tuple(best["config"].items())


def tuned_config(kernel: str, device_name: str, heads: int, page_size: int) -> dict:
    """The tuned keyword arguments for this case, or {} (cached: it runs before every launch)."""
    return dict(_tuned(kernel, device_name, heads, page_size))
