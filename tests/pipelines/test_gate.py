"""roofline/pipelines/gate.py's pure parts on CPU (its GPU part is one call of profiler.bench.time_step)."""

import numpy as np

from roofline.pipelines import gate


def samples(median, seed, n=30, rel=0.004):
    return list(median * np.random.default_rng(seed).lognormal(0.0, rel, n))


def test_the_slow_context_is_whole_pages_about_3_percent_longer():
    assert gate.slower_ctx(131072, 64, 3.0) == 135040  # 131072 * 1.03 = 135004.2, up to 64
    assert gate.slower_ctx(32768, 1, 3.0) == 33752


def test_pairs_rates_and_table():
    thresholds = [0.0, 1.0, 5.0]
    aa = [gate.pair_result(samples(0.07, 2 * i), samples(0.07, 2 * i + 1), thresholds, 0.002) for i in range(20)]
    slow = [gate.pair_result(samples(0.07, 100 + i), samples(0.0721, 200 + i), thresholds, 0.002) for i in range(20)]
    aa_rates, slow_rates = gate.rates(aa, thresholds), gate.rates(slow, thresholds)
    assert aa_rates["5.0"] == {"gate": 0, "no_test": 0}
    # nothing changed: the medians alone call about half the pairs slower at 0%, the test almost none
    assert aa_rates["0.0"]["no_test"] >= 5 and aa_rates["0.0"]["gate"] <= 2
    assert slow_rates["1.0"]["gate"] == 20 and slow_rates["5.0"]["gate"] == 0  # +3% against 1% and 5%
    cfg = {
        "kernel": "triton_mla_fast",
        "ctx_len": 131072,
        "slow_ctx_len": 135040,
        "kv_bytes_pct": 3.02,
        "page_size": 64,
        "heads": 8,
        "samples": 30,
        "p_value": 0.002,
    }
    text = gate.table(
        {
            "config": cfg,
            "gpu": "test",
            "aa_pairs": aa,
            "slow_pairs": slow,
            "aa_rates": aa_rates,
            "slow_rates": slow_rates,
        }
    )
    last = text.splitlines()
    assert last[-4].split()[:2] == ["PCT", "A/A"] and last[-2].startswith("1.0 ") and "20/20 (100%)" in last[-2]
    assert "measured +3.0" in text and "A/A pairs: 20" in text


def test_the_spin_aims_at_the_asked_slowdown_and_the_table_says_so():
    # 3% of a 0.065 ms step at 1.98e6 cycles per ms
    assert gate.spin_cycles(3.0, 0.065, 1.98e6) == 3861
    assert gate.spin_cycles(0.0, 0.065, 1.98e6) == 1  # never a spin of 0 cycles (that would be no slowdown)
    cfg = {"slowdown": "spin", "spin_cycles": 3861, "slower_pct": 3.0, "ctx_len": 131072, "slow_ctx_len": 131072}
    assert gate.slowdown_text(cfg) == "a spin of 3861 cycles after each step (aimed at +3%)"
    assert "+3.02% KV bytes" in gate.slowdown_text({"ctx_len": 1, "slow_ctx_len": 2, "kv_bytes_pct": 3.02})
