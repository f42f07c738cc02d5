"""Foreign captures keep their numbers. The gather (`torch.index_select`, H200, ncu asked only
for dram__bytes_read.sum and dram__bytes_write.sum: 1.078 GB read a launch) as a report and as its raw CSV, and
the SGLang-shaped verify kernel captured by plain ncu: DRAM GB/s from their bytes, the metrics named, and a
roofline chart (a bytes-only kernel is its bandwidth line)."""

import pytest

import roofline
from tests.paths import FIXTURES

FOREIGN = FIXTURES / "foreign"
GATHER_READ, GATHER_WRITTEN, GATHER_MS = 1.078e9, 1.053e9, 0.6408


@pytest.mark.parametrize("name", ["gather.ncu-rep.gz", "gather.raw.csv"])
def test_the_gathers_dram_bandwidth_comes_from_its_bytes(name):
    (k,) = roofline.load(FOREIGN / name).analysis.kernels
    assert k.dram_gbps == pytest.approx((GATHER_READ + GATHER_WRITTEN) / (GATHER_MS * 1e-3) / 1e9, rel=2e-3)
    assert k.dram_from == "dram__bytes_read.sum + dram__bytes_write.sum, over gpu__time_duration.sum"
    line = next(e for e in k.evidence if e.startswith("DRAM 3,3"))
    assert "1.078 GB read + 1.053 GB written a launch" in line and "NVIDIA H200 SXM datasheet" in line


@pytest.mark.parametrize("name", ["gather.ncu-rep.gz", "gather.raw.csv", "sglang_verify.ncu-rep.gz"])
def test_a_foreign_capture_with_bytes_gets_a_roofline_chart(tmp_path, name):
    run = roofline.load(FOREIGN / name)
    files = roofline.report(run, tmp_path / "report.md")
    md = (tmp_path / "report.md").read_text()
    assert (tmp_path / "report_roofline.png") in files and "No roofline chart" not in md
    assert "A dashed kernel line is a kernel whose capture counts bytes but no FLOPs" in md
    assert "dram__bytes_read.sum + dram__bytes_write.sum" in md and "no byte counts in the report" not in md
