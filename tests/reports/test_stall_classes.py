"""An instruction that is no memory access (SHF, CS2R) is put in a memory class only by the stall its samples
show; where the warps wait says so beside the line, on the bundled H200 capture."""

import roofline
from profiler.ncu_pcs import by_stall
from reports.waits import waits_markdown, waits_text
from tests.paths import SAMPLE_RUN


def test_by_stall_tells_the_opcode_from_the_stall():
    assert by_stall("SHF.R.S32.HI R23, RZ, 0x1f, R22", "global memory")
    assert by_stall("CS2R R144, SRZ", "global memory")
    assert not by_stall("LDG.E.128 R4, desc[UR6][R2.64]", "global memory")
    assert not by_stall("@P0 STS.128 [R9+UR8+0x10000], R176", "shared memory")
    assert not by_stall("SHF.R.S32.HI R23, RZ, 0x1f, R22", "math")


def test_the_sample_says_why_shf_and_cs2r_are_global_memory():
    run = roofline.load(SAMPLE_RUN)
    (k,) = run.analysis.kernels
    flagged = {ln.sass.split()[0] for ln in k.waits.lines if ln.by_stall}
    assert flagged == {"SHF.R.S32.HI", "CS2R"}
    text = " ".join(" ".join(waits_text(run.analysis)).split())
    assert "(CS2R, SHF: no memory access; classed global memory by the stall its samples show (long_scoreboard" in text
    md = waits_markdown(run.analysis)
    assert any(line.startswith("*CS2R, SHF: no memory access; classed global memory") for line in md)
