"""What the default capture promises. The serving runs of docs/results/h200-serving-g1 (H200, `roofline profile` with the
`roofline` preset, 6 replay passes) hold the L2 hit rate for every kernel, the analysis asks for nothing the
preset lacks (DRAM bytes come whole as dram__bytes.sum; the L1 hit rate decides no verdict), and the note
says what the capture cost."""

import pytest

import roofline
from tests.paths import RUNS

SKEW = sorted(RUNS.glob("*skew16*"))


@pytest.mark.parametrize("run_dir", SKEW, ids=[p.name for p in SKEW])
def test_the_roofline_preset_gives_every_kernel_an_l2_hit_rate_and_asks_for_nothing_more(run_dir):
    run = roofline.load(run_dir)
    assert len(run.analysis.kernels) == 2
    assert all(k.l2_hit_rate_pct is not None and 0 < k.l2_hit_rate_pct < 100 for k in run.analysis.kernels)
    assert run.analysis.missing_metrics == []
    assert not any("does not ask for" in n or "absent from the report" in n for n in run.analysis.notes)
    assert "ncu captured profile.ncu-rep: preset roofline, 6 replay passes per launch" in run.analysis.notes
