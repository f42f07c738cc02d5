"""Launch planning in plain Python: split counts, row tiles, per-architecture configs, code paths."""

import subprocess
import sys

import pytest

from kernels.plan import (ARCH_FAST_CONFIGS, FAST_DEFAULTS, code_path, fast_config_status, fast_launch_config,
                          plan_splits, split_rows)
from kernels.registry import KERNELS, code_path as registry_code_path


def test_splits_never_overfill_the_last_wave():
    # 9 M blocks (64 heads x 9 rows / 64) on 132 SMs: 14 splits (126 programs), not 15 (135)
    split_len, splits = plan_splits(131072 + 9, 1, 9, 132, 64, 1.0, 256)
    assert splits * 9 <= 132 and split_len % 64 == 0 and split_len * splits >= 131081
    _, splits = plan_splits(131081, 1, 9, 132, 64, 2.0, 256)
    assert 9 * splits <= 264
    _, splits = plan_splits(131081, 1, 2, 148, 64, 1.0, 256)  # the split count follows the SM count
    assert splits == 74


def test_short_context_keeps_min_split_len():
    split_len, splits = plan_splits(100, 1, 2, 132, 64, 1.0, 256)
    assert (split_len, splits) == (256, 1)


@pytest.mark.parametrize("m,block_m,tail_m,expected", [
    (72, 64, 16, (64, 16)),  # 9 x 8 heads: 64 + 16 rows, not 128
    (72, 64, 0, (64, 0)),
    (100, 64, 16, (64, 0)),  # 36 left over: no 16-row tail fits, plain M blocks
    (576, 64, 16, (64, 0)),
    (18, 16, 16, (16, 16)),
    (40, 64, 16, (64, 0)),  # one block holds all rows
])
def test_split_rows(m, block_m, tail_m, expected):
    assert split_rows(m, block_m, tail_m) == expected


def test_launch_config_per_architecture():
    h8_flat = fast_launch_config("sm_90", 8, 1)
    assert h8_flat["block_m"] == 32 and h8_flat["programs_per_sm"] == 2.0
    assert fast_launch_config("90", 64, 64)["programs_per_sm"] == 2.0
    sm120 = fast_launch_config("sm_120", 8, 64)
    assert sm120["block_n"] == 32  # half tiles: 99 KB of shared memory per block
    assert fast_launch_config("sm_100", 64, 64)["block_n"] == 32  # 64-token tiles need 356 KB there
    assert fast_launch_config("sm_75", 8, 1) == FAST_DEFAULTS
    assert fast_launch_config("interpreter", 8, 1) == FAST_DEFAULTS
    assert "untuned" in fast_config_status("sm_120") and "measured" in fast_config_status("sm_90")
    for arch, entry in ARCH_FAST_CONFIGS.items():  # every entry names only known launch parameters
        for e in entry["entries"]:
            assert set(e["config"]) <= set(FAST_DEFAULTS), (arch, e)


def test_code_paths_hopper_only_on_sm90_with_whole_page_tiles():
    assert code_path("triton_mla_fast", "sm_90", 64) == "hopper"
    assert code_path("triton_mla_fast", "sm_90", 1) == "portable"  # TMA tiles need whole pages
    assert code_path("triton_mla_fast", "sm_90", 16) == "portable"
    assert code_path("triton_mla_fast", "sm_90", 64, max_kv_len=32768 + 9) == "portable"  # host-bound there
    assert code_path("triton_mla_fast", "sm_90", 64, max_kv_len=131072 + 9) == "hopper"
    for arch in ("sm_100", "sm_120", "sm_80", "interpreter", "cpu"):
        assert code_path("triton_mla_fast", arch, 64) == "portable"
    assert code_path("triton_mla", "sm_90", 64) == "portable"
    assert registry_code_path("triton_mla_fast_graph", "sm_90", 64) == "hopper"
    assert "triton_mla_fast_graph" in KERNELS


def test_plan_imports_without_torch():
    code = ("import sys, kernels.plan, kernels.registry; kernels.plan.fast_launch_config('sm_120', 8, 1); "
            "kernels.registry.code_path('triton_mla_fast', 'sm_90', 64); assert 'torch' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)
