"""`roofline profile --in-kernel`: the in-kernel timeline in the same call. After the captures, a child runs the
profiled kernel's step with its stamps on (python -m profiler.in_kernel: the output checked, the step timed with
and without them) into the run's in_kernel.npz; `load` reads it back into the run's `in_kernel`
(roofline/analysis/timeline.py) and cites it in the split kernel's evidence.

Only kernels whose source stamps its stages can be seen inside (profiler.in_kernel.SCOPED): for any other the
note says so in one line.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from profiler.errors import ApplicationFailed
from profiler.in_kernel import no_scopes_line
from profiler.proc import run_tool
from profiler.rundir import RunDir
from profiler.timeline_reader import read_in_kernel
from roofline.analysis.timeline import InKernelTimeline, apply_in_kernel, in_kernel_timeline
from roofline.pipelines.capture import Capture

MODULE = "profiler.in_kernel"


@dataclass(frozen=True)
class InKernelPass:
    """The timeline's file in the run (None where the kernel has no scopes: the notes say so) and its wall time."""

    file: Path | None
    wall_s: float | None = None
    notes: list[str] = field(default_factory=list)


def in_kernel_pass(cap: Capture, kernel: str, spec_file: Path) -> InKernelPass:
    """The stamped step of `kernel` into the run being written; a one-line note where it has no scopes;
    ApplicationFailed where the child fails."""
    line = no_scopes_line(kernel)
    if line is not None:
        cap.say(line)
        return InKernelPass(None, None, [line])
    writer = cap.writer
    out, log = writer.file("in-kernel"), writer.file("in-kernel-log")
    cmd = [sys.executable, "-m", MODULE, "--spec", str(spec_file), "--kernel", kernel, "--out", str(out)]
    cap.say(f"[in-kernel] {kernel} with its stamps on: checked, timed with and without them")
    t0 = time.time()
    done = run_tool(cmd, log, "the in-kernel timeline", cap.control())
    writer.log_command(cmd)
    writer.add_log(log)
    if done.returncode != 0 or not out.is_file():
        raise ApplicationFailed(
            f"the in-kernel timeline failed (exit code {done.returncode}); profile without --in-kernel to skip it",
            done.lines,
            str(log),
        )
    said = next((ln for ln in reversed(done.lines) if ln.startswith("in-kernel:")), "")
    cap.say(f"[in-kernel] done in {time.time() - t0:.1f} s: {said.removeprefix('in-kernel: ')}")
    return InKernelPass(out, round(time.time() - t0, 1))


def load_in_kernel(folder: Path, analysis) -> InKernelTimeline | None:
    """The run's in-kernel timeline, where it has one, cited in `analysis`'s evidence of its split kernel."""
    path = RunDir(folder).file("in-kernel")
    if not path.is_file():
        return None
    tl = in_kernel_timeline(read_in_kernel(path))
    apply_in_kernel(analysis, tl)
    return tl
