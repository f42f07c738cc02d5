"""`roofline profile --why`: the removal experiment in the same call. After the captures, a child runs the
profiled kernel's removal variants (its MMAs, its softmax, its gathers, everything but the loads compiled
out: `roofline removal --for`, roofline/pipelines/removal_experiment.py) at the workload of the run's spec.json,
which the child reads there, timed by the bench's method (CUDA-graph replays over
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

from profiler.errors import ApplicationFailed
from profiler.proc import run_tool
from roofline.pipelines.capture import Capture

WHY_KERNELS = ("triton_mla_fast", "triton_mla", "flashmla")  # removal_experiment.REGISTERED (a test keeps them equal)
# the experiment's own names of what it times (removal_experiment.KNOWN), for `roofline removal --kernel`
EXPERIMENT_KERNELS = ("ring", "seesaw", "stagger", "hopper", "portable", "triton_mla", "flashmla", "gemm")
NO_SUBJECT = 3  # the experiment's exit status where the kernel's plan at this workload has nothing to cut


@dataclass(frozen=True)
class WhyPass:
    """The experiment's file in the run (None where there is none: the notes say why) and its wall time."""

    report: Path | None
    wall_s: float | None = None
    notes: list[str] = field(default_factory=list)


def why_command(kernel: str, spec: Path, out: Path, experiment: list[str] | None = None) -> list[str]:
    """The experiment's command line for `kernel` at the workload of the run's `spec` (spec.json: the child reads
    the workload there). `experiment`: the program, default this Python running `roofline removal`."""
    program = experiment or [sys.executable, "-m", "roofline", "removal"]
    return [*program, "--for", kernel, "--spec", str(spec), "--method", "rotated", "--file", str(out)]


def why_pass(cap: Capture, kernel: str, spec: Path, experiment: list[str] | None = None) -> WhyPass:
    """The removal experiment of `kernel` at the workload of the run's `spec` into the run being written (report
    tool "removal"); a note instead where the kernel has no switches, or its plan here nothing to cut (the
    experiment says why, naming the workload it read). ApplicationFailed when
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
    writer = cap.writer
    out, log = writer.file("removal"), writer.file("removal-log")
    cmd = why_command(kernel, spec, out, experiment)
    cap.say(f"[why] the removal experiment of {kernel}: its variants timed by the bench's method (rotated inputs)")
    t0 = time.time()
    done = run_tool(cmd, log, "the removal experiment", cap.control())
    writer.log_command(cmd)
    writer.add_log(log)
    said = next((ln for ln in reversed(done.lines) if ln.strip()), "")
    if done.returncode == NO_SUBJECT:
        note = f"--why: {said}"
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
