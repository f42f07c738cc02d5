"""Start-up time of the light commands (`gpus`, `model`, `kernels`, `--help`): median wall time of
fresh `python -m roofline ...` processes, and whether pandas/torch were imported (python -X importtime).
Target: under 0.4 s each, none of them importing pandas.

    python benchmarks/bench_startup.py [--repeat 7]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

COMMANDS = (["gpus"], ["model"], ["model", "--batch", "100000000", "--kernel", "triton_mla"], ["kernels"], ["--help"])


def wall_s(args: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "roofline", *args], check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0


def heavy_imports(args: list[str]) -> list[str]:
    """Top-level packages among pandas/torch/triton/numpy that the command imported."""
    err = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "roofline", *args],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    ).stderr
    names = {line.rsplit("|", 1)[-1].strip() for line in err.splitlines() if line.startswith("import time:")}
    return sorted(n for n in ("pandas", "numpy", "torch", "triton") if n in names)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    repeat = parser.parse_args().repeat
    print(f"python {sys.version.split()[0]}, {repeat} runs each (median, min)")
    for args in COMMANDS:
        wall_s(args)  # warm the file cache
        times = [wall_s(args) for _ in range(repeat)]
        heavy = heavy_imports(args)
        print(
            f"roofline {' '.join(args):45s} {statistics.median(times):.3f} s  {min(times):.3f} s  "
            f"imports: {', '.join(heavy) or 'none of pandas/numpy/torch/triton'}"
        )


if __name__ == "__main__":
    main()
