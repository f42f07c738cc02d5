"""compare says at what clocks each side's timing pass ran (text, one line, --format json) and flags a side that
throttled; analyze and the report say at what clock ncu's counters and the timing were taken."""

import json
import shutil

from click.testing import CliRunner

from profiler.rundir import MANIFEST, TIMING, sha256
from roofline.analysis.clocks import clock_note, ncu_clock_control
from roofline.cli import main
from tests.paths import FIXTURES, RUNS

FAST = RUNS / "h200-triton_mla_fast-128k-p64"
REAL = FIXTURES / "timing" / "timing-v3-triton_mla_fast-32k-p64.json"


def cli(*args):
    return CliRunner().invoke(main, list(map(str, args)), catch_exceptions=False)


def run_with(dst, timing: dict):
    """A copy of a real run with `timing` as its timing.json (the H200's format-3 file, changed)."""
    shutil.copytree(FAST, dst)
    m = json.loads((dst / MANIFEST).read_text())
    path = dst / TIMING
    path.write_text(json.dumps(dict(timing, kernel=None, workload=None)))
    m["reports"].append({"path": TIMING, "tool": "timing", "sha256": sha256(path), "bytes": path.stat().st_size})
    (dst / MANIFEST).write_text(json.dumps(m))
    return dst


def test_compare_holds_both_sides_clocks_and_flags_the_one_that_throttled(tmp_path):
    steady = json.loads(REAL.read_text())
    hot = json.loads(REAL.read_text())
    hot["clocks"][3]["end"]["reasons"] = 0x4 | 0x20  # sw power cap, sw thermal slowdown
    base, head = run_with(tmp_path / "base", steady), run_with(tmp_path / "head", hot)
    text = cli("compare", base, head).output
    line = next(x for x in text.splitlines() if x.startswith("clocks: "))
    assert line.startswith("clocks: base SM 1980 MHz (max 1980), memory 3201 MHz, 113-149 W, 37-38 °C over 4 rounds")
    assert (
        "none throttled | head SM 1980" in line
        and "THROTTLED: round 4: sw power cap, sw thermal slowdown at end" in line
    )
    assert "note: THROTTLED: the head's timing pass ran below the GPU's own clock in round 4" in text
    assert text.strip().splitlines()[-1].endswith("| THROTTLED: head (clocks below the GPU's own)")
    d = json.loads(cli("compare", base, head, "--format", "json").output)
    assert d["clocks"]["base"]["throttled"] == [] and d["clocks"]["base"]["sm_mhz"] == [1980.0, 1980.0]
    assert d["clocks"]["head"]["throttled"] == [{"round": 4, "why": ["sw power cap, sw thermal slowdown at end"]}]


def test_runs_without_clocks_say_so(tmp_path):
    old = RUNS / "h200-triton_mla_fast-both-32k-p64"  # its timing.json: format 1, no clocks
    base, head = shutil.copytree(old, tmp_path / "base"), shutil.copytree(old, tmp_path / "head")
    d = json.loads(cli("compare", base, head, "--format", "json").output)
    assert (
        d["clocks"]["base"]["recorded"] == 0 and d["clocks"]["base"]["why"] == "its timing.json predates clock records"
    )
    assert "clocks: base not recorded (its timing.json predates clock records)" in cli("compare", base, head).output


def test_analyze_says_at_what_clock_ncu_and_the_timing_ran(tmp_path):
    run = run_with(tmp_path / "run", json.loads(REAL.read_text()))
    out = " ".join(cli("analyze", run).output.split())
    assert "clocks: ncu's counters at ncu's clock control `none` (the GPU's own clock, as the timing pass; its" in out
    assert "the timing pass at the GPU's own clock: SM 1980 MHz (max 1980), memory 3201 MHz" in out
    report = tmp_path / "r.md"
    assert cli("report", run, "-o", report).exit_code == 0
    assert "- clocks: ncu's counters at ncu's clock control `none`" in report.read_text()


def test_ncus_clock_control_comes_from_its_command_line():
    assert ncu_clock_control(["/usr/local/cuda/bin/ncu --clock-control none -o x python -m h"]) == "none"
    assert ncu_clock_control(["ncu --clock-control=base -o x python"]) == "base"
    assert ncu_clock_control(["ncu -o x python -m h"]) == "base"  # ncu's default
    assert ncu_clock_control(["python -m profiler.harness --spec s"]) is None
    m = type("M", (), {"commands": ["ncu -o x python -m h"]})()
    note = clock_note(m, __import__("pandas").DataFrame({"sm_cycles_per_second": [1.59e9, 1.61e9]}), None)
    assert (
        note
        == "clocks: ncu's counters at ncu's clock control `base` (the clocks locked at the GPU's base clock; its launches report SM 1600 MHz)"
    )
