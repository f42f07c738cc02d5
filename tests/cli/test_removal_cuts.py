"""benchmarks/removal_cuts.py's parts that need no GPU: its variants and skips per kernel, the files it
writes (read back by roofline/removal.py), and its one-line error where there is no GPU."""

import importlib.util
import os
import subprocess
import sys

import pytest

from roofline.removal import read_removal
from tests.paths import ROOT

SCRIPT = ROOT / "benchmarks" / "removal_cuts.py"
spec = importlib.util.spec_from_file_location("removal_cuts", SCRIPT)
cuts = importlib.util.module_from_spec(spec)
sys.modules["removal_cuts"] = cuts  # its dataclass looks its module up there
spec.loader.exec_module(cuts)


def test_each_kernel_gets_the_variants_it_has_switches_for():
    every = ["full", "no-mma", "no-softmax", "no-gather", "loads-only"]
    assert {name: list(cuts.variants(s)) for name, s in cuts.SUBJECTS.items()} == {
        "ring": every,
        "seesaw": every,
        "hopper": every,
        "portable": ["full", "no-mma", "no-softmax", "loads-only"],  # its every tile load is a gather
        "triton_mla": ["full", "no-mma", "no-softmax", "loads-only"],
    }
    assert cuts.SUBJECTS["seesaw"].kernel == "_gluon_seesaw_kernel"
    assert cuts.SUBJECTS["triton_mla"].kernel == "_verify_extend_kernel"


@pytest.mark.parametrize(
    "name, heads, page_size, skipped",
    [
        ("ring", 8, 64, None),
        ("ring", 64, 64, "the plan launches _gluon_seesaw_kernel"),  # whole M blocks: no tail, no ring
        ("seesaw", 8, 1, None),  # ring=False at 8 heads
        ("seesaw", 64, 64, None),
        ("hopper", 8, 1, "multiple of block_n"),
        ("portable", 64, 1, None),
        ("triton_mla", 8, 1, None),
    ],
)
def test_a_kernel_is_timed_where_its_plan_launches_it(name, heads, page_size, skipped):
    w = cuts.VerifyWorkload(ctx_len=131072, heads=heads, page_size=page_size)
    reason = cuts.SUBJECTS[name].skip_reason(w, "NVIDIA H200", 132, "sm_90")
    assert reason == skipped if skipped is None else skipped in reason


def test_the_file_it_writes_is_a_removal_experiment(tmp_path):
    rows = [
        dict(ctx_len=131072, heads=64, page_size=64, variant=v, graph_ms=ms)
        for v, ms in (("full", 0.2), ("no-mma", 0.15), ("read", 0.05))
    ]
    doc = cuts.removal_doc(cuts.SUBJECTS["seesaw"], rows, "NVIDIA H200", "test")
    path = tmp_path / "_gluon_seesaw_kernel.json"
    path.write_text(cuts.json.dumps(doc))
    (removal,) = read_removal(path)
    assert removal.kernel == "_gluon_seesaw_kernel" and removal.ms == {"full": 0.2, "no-mma": 0.15, "read": 0.05}
    assert removal.workload == dict(batch=1, q_len=9, tree_mask="tree", ctx_len=131072, heads=64, page_size=64)
    assert doc["registered"] == "triton_mla_fast"
    line = cuts.table({"seesaw": rows}).splitlines()[1].split()
    assert line == ["_gluon_seesaw_kernel", "131072", "64", "64", "0.2000", "0.1500", "-", "-", "-", "0.0500"]


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--kernel", "ring,flash"], "--kernel flash: known: ring, seesaw, hopper, portable, triton_mla"),
        (["--ctx", "12q"], "--ctx '12q': context length '12q' is not a positive token count"),
        (["--heads", "0"], "--heads '0': a comma list of positive integers expected"),
    ],
)
def test_bad_options_are_one_line_errors(argv, message):
    with pytest.raises(SystemExit, match=message):
        cuts.main(argv)


def test_without_a_gpu_it_says_so_in_one_line(tmp_path):
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": "", "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--kernel", "seesaw,triton_mla", "--out", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
    )
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.strip() == "removal_cuts: needs a CUDA GPU (sm_90 for ring, seesaw and hopper); torch sees none"
    assert not (tmp_path / "out").exists()
