"""-o/--out FILE on the commands that print a result (analyze, model, compare): the printed output, in
--format, also written to a file, put in place whole (profiler/staging.py) and refused before any work
when it exists, unless --force."""

from __future__ import annotations

from pathlib import Path

from profiler.staging import OutputExists, Staged
from roofline.cli.common import BadInputExit, force_option, out_option

OUT_HELP = "also write the output (in --format) to this file; refused if it exists unless --force"


def printed_output_options(f):
    """-o/--out FILE and --force, as compare, analyze and model take them (the values go to `out`, `force`)."""
    return out_option("out", OUT_HELP)(force_option(f))


def claim(out: str | None, force: bool) -> Staged | None:
    """The output file claimed before any work (an existing one refused, exit 2); None without -o."""
    if not out:
        return None
    try:
        return Staged([Path(out)], force=force)
    except OutputExists as exc:
        raise BadInputExit(str(exc)) from None


def write(staged: Staged | None, out: str | None, text: str) -> None:
    """Put `text` at `out` whole (nothing when there is no -o); one that appeared meanwhile is refused."""
    if staged is None or not out:
        return
    with staged:
        staged.path(Path(out)).write_text(text)
        try:
            staged.commit()
        except OutputExists as exc:
            raise BadInputExit(str(exc)) from None
