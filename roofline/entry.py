"""The `roofline` command's entry: first the check for a foreign `kernels` or `profiler` package (one
line, not a traceback), then the CLI, which imports them."""

from __future__ import annotations

import sys

from roofline.shadowing import exit_if_shadowed


def _doctor(argv: list[str]) -> int:
    """`roofline doctor` without the CLI (which imports the shadowed packages): the checks, exit 1."""
    from reports.doctor import render_doctor  # lazy: as below, it imports kernels/profiler only once ours
    from roofline.pipelines.doctor import doctor  # lazy: doctor imports profiler only once it is ours

    d = doctor()
    print(render_doctor(d, "json" if "json" in argv else "text"))
    return 0 if d.ok else 1


def main() -> None:
    exit_if_shadowed(sys.argv[1:], _doctor)
    from roofline.cli import main as cli  # lazy: the CLI imports kernels and profiler, checked just above

    cli()
