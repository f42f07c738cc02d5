"""roofline/pipelines/gate.py's pure parts on CPU (its GPU part is timed_rounds of the harness)."""

import json

import numpy as np
from click.testing import CliRunner

from profiler.timing import TimingSamples, merge_rounds
from roofline.cli import main
from roofline.pipelines import gate


def run(median, seed, rounds=4, per_round=8, shift=0.003, rel=0.0005):
    """A run of `rounds` rounds, each with its own shift (a process's placement and clocks)."""
    rng = np.random.default_rng(seed)
    return merge_rounds(
        [
            TimingSamples(tuple(median * rng.lognormal(0, shift) * rng.lognormal(0, rel, per_round)), "rotated", 4, 8)
            for _ in range(rounds)
        ]
    )


CFG = {
    "kernel": "triton_mla_fast",
    "ctx_len": 32768,
    "page_size": 64,
    "heads": 8,
    "runs_a": 6,
    "runs_b": 6,
    "rounds": 4,
    "samples": 8,
    "slower_pct": 3.0,
    "spin_cycles": 2000,
    "thresholds": [0.0, 1.0, 2.0],
    "p_value": 0.002,
}


def test_pairs_rates_and_table():
    a = [run(0.0345, i) for i in range(6)]
    b = [run(0.0345 * 1.03, 100 + i) for i in range(6)]
    result = gate.evaluate(CFG, a, b, "test")
    assert len(result["aa_pairs"]) == 30 and len(result["slow_pairs"]) == 36  # ordered distinct A pairs; A x B
    aa, slow = result["aa_rates"], result["slow_rates"]
    # the rounds' shifts: the pooled within-run interval misses no change often, the between-run one rarely
    assert aa["between"]["holds_1"] >= 27 and aa["within"]["holds_1"] <= 20
    assert aa["between"]["gate_fails"]["1.0"] == 0 and slow["between"]["gate_fails"]["1.0"] >= 33
    text = gate.table(result)
    assert "A/A pairs (ordered, distinct runs): 30" in text and text.splitlines()[-2].startswith("between ")
    md = gate.table(result, markdown=True)
    assert "| test | A/A: 95% interval holds no change |" in md and "| between |" in md


def test_from_dir_recomputes_what_the_gpu_call_wrote(tmp_path):
    a = [run(0.0345, i) for i in range(3)]
    b = [run(0.0345 * 1.03, 100 + i) for i in range(3)]
    result = gate.evaluate(CFG, a, b, "NVIDIA H200")
    (tmp_path / "compare_gate.json").write_text(json.dumps(result))
    again = gate.from_dir(tmp_path)
    assert again["aa_rates"] == result["aa_rates"] and again["gpu"] == "NVIDIA H200"
    r = CliRunner().invoke(main, ["gate", str(tmp_path), "--from-dir", "--write", str(tmp_path / "t.md")])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "t.md").read_text().startswith("triton_mla_fast ctx 32768")


def test_the_spin_aims_at_the_asked_slowdown():
    assert gate.spin_cycles(3.0, 0.065, 1.98e6) == 3861  # 3% of a 0.065 ms step at 1.98e6 cycles per ms
    assert gate.spin_cycles(0.0, 0.065, 1.98e6) == 1  # never a spin of 0 cycles (that would be no slowdown)
