"""Child process that runs one probe kernel (kernels/probes.py) inside the NVTX range.

python -m profiler.probes NAME [--iters N]
"""

from __future__ import annotations

import argparse
import sys

from kernels.launch_spec import device_facts
from profiler.harness import run_in_range


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m profiler.probes")
    parser.add_argument("name")
    parser.add_argument("--iters", type=int, default=1)
    args = parser.parse_args(argv)

    from kernels.probes import PROBES  # lazy: imports torch and triton

    if args.name not in PROBES:
        print(f"unknown probe {args.name!r}; known: {', '.join(PROBES)}", file=sys.stderr)
        return 2
    run_in_range(PROBES[args.name]("cuda"), args.iters)
    print(f"probe {args.name} ran {args.iters} time(s) on {device_facts('cuda')[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
