"""The verdict preset (4 replay passes) against --set full (38), both captured on the H200 by
`roofline profile --preset verdict|full` (tests/fixtures/capture/verify_h200.sh): same bound and cause per kernel."""

import pytest

import roofline
from tests.paths import FIXTURES

PRESETS = FIXTURES / "presets"


@pytest.mark.parametrize("kernel", ["triton_mla", "triton_mla_fast"])
def test_verdict_preset_agrees_with_full(kernel):
    fast = roofline.load(PRESETS / f"{kernel}-verdict")
    full = roofline.load(PRESETS / f"{kernel}-full.ncu-rep.gz")
    (entry,) = [e for e in fast.manifest.reports if e.tool == "ncu"]
    assert entry.preset == "verdict" and entry.passes == 4
    got = {k.kernel: (k.bound, k.cause) for k in fast.analysis.kernels}
    want = {k.kernel: (k.bound, k.cause) for k in full.analysis.kernels}
    assert got == want and len(got) >= 1


def test_a_verdict_run_says_what_its_preset_did_not_collect():
    run = roofline.load(PRESETS / "triton_mla_fast-verdict")
    assert any("preset verdict does not ask for" in n and "no DRAM bytes" in n for n in run.analysis.notes)
    # captured before the verdict preset gained the L2 hit rate and the SMs' busy cycles: said, by name
    (absent,) = [n for n in run.analysis.notes if "metrics absent from the report" in n]
    assert absent.startswith("5 metrics absent") and "lts__t_sector_hit_rate.pct" in absent
    assert "sm__cycles_active.max" in absent
