"""A run holds several times of one step (the headline under ncu, the kernel table's median launch, nsys's
step, the timing pass that compare tests): analyze and report say which is which, on the bundled sample."""

import json
import statistics

from click.testing import CliRunner

from profiler.timing import read_timing
from roofline.cli import main
from tests.paths import SAMPLE_RUN


def test_analyze_says_which_time_is_which_and_shows_the_timing_pass():
    r = CliRunner().invoke(main, ["analyze", str(SAMPLE_RUN)])
    assert r.exit_code == 0
    block = r.output.split("times of one step, which is which:\n")[1]
    rows = [line.split(" ms  ", 1) for line in block.splitlines() if " ms  " in line]
    said = {what.split(":")[0]: float(value) for value, what in rows}
    timing = read_timing(SAMPLE_RUN)
    assert said == {
        "step": 15.51,
        "_verify_extend_kernel": 15.53,
        "nsys": 15.48,
        "the timing pass (timing.json)": round(statistics.median(timing.samples_ms), 2),
    }
    out = json.loads(CliRunner().invoke(main, ["analyze", str(SAMPLE_RUN), "--format", "json"]).stdout)
    assert out["timing"]["median_ms"] == statistics.median(timing.samples_ms) and out["timing"]["n"] == 32


def test_the_report_has_the_same_times(tmp_path):
    r = CliRunner().invoke(main, ["report", str(SAMPLE_RUN), "-o", str(tmp_path / "r.md")])
    assert r.exit_code == 0, r.output
    md = (tmp_path / "r.md").read_text()
    section = md.split("## Times of one step\n")[1].split("\n## ")[0]
    rows = [line.split(" | ") for line in section.splitlines() if line.startswith("| 15.")]
    assert [row[0] for row in rows] == ["| 15.51", "| 15.53", "| 15.48", "| 15.50"]
    assert "what `roofline compare` tests" in rows[-1][1]
