"""The `roofline` command's entry: first the check for a foreign `kernels` or `profiler` package (one
line, not a traceback), then the CLI, which imports them."""

from __future__ import annotations

import sys

from roofline.shadowing import exit_if_shadowed


def _doctor(argv: list[str]) -> int:
    from roofline.doctor import main as doctor_main  # lazy: doctor imports profiler only once it is ours

    return doctor_main(argv)


def main() -> None:
    exit_if_shadowed(sys.argv[1:], _doctor)
    from roofline.cli import main as cli  # lazy: the CLI imports kernels and profiler, checked just above

    cli()
