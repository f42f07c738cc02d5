"""The NVTX ranges the harness marks and the profilers look for, named once.

    roofline            the harness's outer range: the `iters` launches of the kernel's step
      step              one launch of the step, nested inside it (nsys reads per-step time from it)

ncu profiles only what runs inside the outer range (`--nvtx-include roofline/`); nsys's reader takes
the launches inside it and splits them by `step`. Warm-up runs outside, so neither sees it.
"""

from __future__ import annotations

RANGE = "roofline"
STEP = "step"


def include_filter(name: str = RANGE) -> str:
    """ncu's `--nvtx-include` for a push/pop range: the range name and a slash."""
    return f"{name}/"
