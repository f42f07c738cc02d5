"""`roofline profile --why`: the removal experiment in the same call. After the captures, a child runs the
profiled kernel's removal variants (its MMAs, its softmax, its gathers, everything but the loads compiled
out: roofline/pipelines/removal_experiment.py `--for`), timed by the bench's method (CUDA-graph replays over
rotated input sets), into the run's removal.json; the run's verdict takes the experiment's reading
(roofline/analysis/removal.py) and every later `load` of the run applies it again.

Only kernels with removal switches can be cut (triton_mla_fast's split kernels, triton_mla; FlashMLA gets a
bare read beside it): for any other the note says the experiment needs the kernel's source.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from kernels.spec import VerifyWorkload
from profiler.errors import ApplicationFailed
from profiler.proc import run_tool
from roofline.pipelines.capture import Capture

MODULE = "roofline.pipelines.removal_experiment"
WHY_KERNELS = ("triton_mla_fast", "triton_mla", "flashmla")  # removal_experiment.REGISTERED (a test keeps them equal)
NO_SUBJECT = 3  # the experiment's exit status where the kernel's plan at this workload has nothing to cut


@dataclass(frozen=True)
class WhyPass:
    """The experiment's file in the run (None where there is none: the notes say why) and its wall time."""

    report: Path | None
    wall_s: float | None = None
    notes: list[str] = field(default_factory=list)


def why_command(kernel: str, workload: VerifyWorkload, out: Path, experiment: list[str] | None = None) -> list[str]:
    """The experiment's command line for `kernel` at `workload` (`experiment`: the program, default this
    Python running removal_experiment)."""
    return [
        *(experiment or [sys.executable, "-m", MODULE]),
        "--for",
        kernel,
        "--ctx",
        str(workload.ctx_len),
        "--heads",
        str(workload.heads),
        "--page-size",
        str(workload.page_size),
        "--mask",
        workload.tree_mask,
        "--method",
        "rotated",
        "--file",
        str(out),
    ]


def why_pass(cap: Capture, kernel: str, workload: VerifyWorkload, experiment: list[str] | None = None) -> WhyPass:
    """The removal experiment of `kernel` at `workload` into the run being written (report tool "removal");
    a note instead where the kernel has no switches, or its plan here nothing to cut. ApplicationFailed when
    the experiment itself fails. A `*_graph` kernel is its kernel replayed in one CUDA graph: the same cuts."""
    kernel = kernel.removesuffix("_graph")
    if kernel not in WHY_KERNELS:
        note = (
            f"--why: no removal experiment for {kernel}: it compiles parts of a kernel's source out (its NO_MMA, "
            "NO_SOFTMAX and NO_GATHER switches), so it needs a kernel with them (triton_mla_fast, triton_mla); "
            "the capture alone gives the verdict"
        )
        cap.say(note)
        return WhyPass(None, None, [note])
    if workload.ctx_lens:
        note = "--why: no removal experiment for a ragged batch (it times one context length per row)"
        cap.say(note)
        return WhyPass(None, None, [note])
    writer = cap.writer
    out, log = writer.file("removal"), writer.file("removal-log")
    cmd = why_command(kernel, workload, out, experiment)
    cap.say(f"[why] the removal experiment of {kernel}: its variants timed by the bench's method (rotated inputs)")
    t0 = time.time()
    done = run_tool(cmd, log, "the removal experiment", cap.control())
    writer.log_command(cmd)
    writer.add_log(log)
    said = next((ln for ln in reversed(done.lines) if ln.strip()), "")
    if done.returncode == NO_SUBJECT:
        note = f"--why: {said.removeprefix('removal_cuts: ')}"
        cap.say(note)
        return WhyPass(None, round(time.time() - t0, 1), [note])
    if done.returncode != 0 or not out.is_file():
        raise ApplicationFailed(
            f"the removal experiment failed (exit code {done.returncode}); profile without --why to skip it",
            done.lines,
            str(log),
        )
    writer.add_report(out, "removal")
    cap.say(f"[why] done in {time.time() - t0:.1f} s: {cap.shown(out)}")
    return WhyPass(out, round(time.time() - t0, 1))
