"""The hardware table (kernels/data/hardware.json) holds every number the three files it replaced
held (roofline/data/gpus.json, chips.json, archs.json, copied below before they were deleted), and
local_gpu() answers "which GPU is here" from nvidia-smi: a fake nvidia-smi on PATH stands in here."""

import hashlib
import json
from dataclasses import fields

import pytest

from kernels.hardware import ARCHS, CHIPS, NoLocalGpu, chip_of, find_gpu, get_arch, gpus, local_gpu
from kernels.launch import EXTEND_BLOCKS
from kernels.launch_spec import device_facts
from profiler.metrics import CHIPS as PRESET_CHIPS
from roofline.catalogue.chips import local_device_name
from roofline.catalogue.gpus import get_gpu

# short_name: (chip, arch, sm_count, dram_gbps, l2_mb, fp32_tflops, bf16_dense_tflops, fp16_dense_tflops,
# fp8_dense_tflops, boost_clock_mhz, dram_type); chip: what chips.json gave the GPU's name
OLD_GPUS = {
    "rtx-pro-6000": ("gb202", "sm_120", 188, 1792, 128, 125, 503.8, 503.8, 1007.6, 2617, "GDDR7 512-bit 28 Gbps"),
    "rtx-pro-6000-server": (
        "gb202",
        "sm_120",
        188,
        1792,
        128,
        120,
        503.8,
        503.8,
        1007.6,
        2617,
        "GDDR7 512-bit 28 Gbps",
    ),
    "rtx-pro-6000-maxq": ("gb202", "sm_120", 188, 1792, 128, 110, 439, 439, 878, 2288, "GDDR7 512-bit 28 Gbps"),
    "rtx-5090": ("gb202", "sm_120", 170, 1792, 96, 104.8, 209.5, 209.5, 419, 2407, "GDDR7 512-bit 28 Gbps"),
    "b200": ("gb100", "sm_100", 148, 8000, 126, 75, 2250, 2250, 4500, 1965, "HBM3e"),
    "gb200": ("gb100", "sm_100", 148, 8000, 126, 80, 2500, 2500, 5000, None, "HBM3e"),
    "h200": ("gh100", "sm_90", 132, 4800, 60, 67, 989.5, 989.5, 1979, 1980, "HBM3e"),
    "h100": ("gh100", "sm_90", 132, 3350, 50, 67, 989.5, 989.5, 1979, 1980, "HBM3"),
    "h100-pcie": ("gh100", "sm_90", 114, 2000, 50, 51, 756, 756, 1513, 1755, "HBM2e"),
    "h800": ("gh100", "sm_90", 132, 3350, 50, 67, 989.5, 989.5, 1979, 1980, "HBM3"),
    "a100": (None, "sm_80", 108, 2039, 40, 19.5, 312, 312, None, 1410, "HBM2e"),
    "l40s": (None, "sm_89", 142, 864, 96, 91.6, 362.05, 362.05, 733, 2520, "GDDR6"),
}
OLD_MATCH = {
    "rtx-pro-6000": ("RTX PRO 6000 Blackwell Workstation", "RTX PRO 6000 Blackwell"),
    "rtx-pro-6000-server": ("RTX PRO 6000 Blackwell Server",),
    "rtx-pro-6000-maxq": ("RTX PRO 6000 Blackwell Max-Q",),
    "rtx-5090": ("RTX 5090",),
    "b200": ("B200",),
    "gb200": ("GB200",),
    "h200": ("H200",),
    "h100": ("H100 80GB HBM3", "H100 SXM"),
    "h100-pcie": ("H100 PCIe",),
    "h800": ("H800",),
    "a100": ("A100",),
    "l40s": ("L40S",),
}
OLD_GPU_SOURCES_SHA = "b0afc452cd60609c"  # sha256 of {short_name: sources} (json, sorted keys) in gpus.json
# arch: (family, max_threads_per_block, max_blocks_per_sm, max_warps_per_sm, registers_per_sm,
# max_registers_per_block, max_registers_per_thread, register_alloc_unit, shared_per_sm_bytes,
# shared_per_block_bytes, reserved_shared_per_block_bytes, shared_alloc_unit, reference_gpu)
OLD_ARCHS = {
    "sm_90": ("Hopper", 1024, 32, 64, 65536, 65536, 255, 256, 233472, 232448, 1024, 128, "h200"),
    "sm_100": (
        "Blackwell (datacenter: B200, GB200)",
        *(1024, 32, 64, 65536, 65536, 255, 256, 233472, 232448, 1024, 128, "b200"),
    ),
    "sm_120": (
        "Blackwell (RTX: RTX PRO 6000, RTX 5090)",
        *(1024, 32, 48, 65536, 65536, 255, 256, 102400, 101376, 1024, 128, "rtx-pro-6000"),
    ),
}
OLD_ARCH_SOURCES_SHA = "55961f60fd94c3dc"  # the same of archs.json's sources, reference_gpu's text left out
OLD_CHIPS = {  # chip: (arch, device-name patterns) from chips.json
    "gh100": ("sm_90", ("H100", "H200", "GH200", "H800", "H20")),
    "gb100": ("sm_100", ("B200", "GB200", "B100")),
    "gb202": ("sm_120", ("RTX PRO 6000", "RTX 5090")),
}


def _sha(obj) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True).encode()).hexdigest()[:16]


def test_every_gpu_keeps_its_old_numbers():
    table = {g.short_name: g for g in gpus()}
    assert list(table) == list(OLD_GPUS)
    for short_name, (chip, arch, sm, dram, l2, fp32, bf16, fp16, fp8, boost, dram_type) in OLD_GPUS.items():
        g = table[short_name]
        assert (g.chip, g.arch, g.sm_count, g.dram_gbps, g.l2_mb, g.fp32_tflops) == (chip, arch, sm, dram, l2, fp32)
        assert (g.bf16_dense_tflops, g.fp16_dense_tflops, g.fp8_dense_tflops) == (bf16, fp16, fp8), short_name
        assert (g.boost_clock_mhz, g.dram_type, g.match) == (boost, dram_type, OLD_MATCH[short_name])
        assert g.limits == (get_arch(arch) if arch in OLD_ARCHS else None)
    assert _sha({g.short_name: g.sources for g in gpus()}) == OLD_GPU_SOURCES_SHA


def test_every_arch_keeps_its_old_limits():
    assert ARCHS == tuple(OLD_ARCHS)
    for arch, old in OLD_ARCHS.items():
        limits = get_arch(arch)
        assert tuple(getattr(limits, f.name) for f in fields(limits))[1:-1] == old
    assert (
        _sha({a: {k: v for k, v in get_arch(a).sources.items() if k != "reference_gpu"} for a in ARCHS})
        == OLD_ARCH_SOURCES_SHA
    )


def test_chips_name_every_device_as_before():
    assert CHIPS == PRESET_CHIPS == tuple(OLD_CHIPS)
    for chip, (arch, patterns) in OLD_CHIPS.items():
        for p in patterns:  # boards with no record of their own too (H20, B100, an H100 NVL)
            assert chip_of(f"NVIDIA {p}") == chip, p
        assert all(g.arch == arch for g in gpus() if g.chip == chip)
    assert chip_of("NVIDIA H100 NVL") == "gh100" and find_gpu("NVIDIA H100 NVL") is None
    assert chip_of("NVIDIA A100-SXM4-80GB") is None and chip_of("Tesla T4") is None
    assert set(EXTEND_BLOCKS) == set(ARCHS)  # kernels.launch's per-arch tiles cover every arch


def test_the_catalogue_is_the_table_with_measured_ceilings():
    h200 = get_gpu("h200")
    assert h200.chip == "gh100" and h200.limits.shared_per_block_bytes == 232448
    assert h200.measured_from.endswith("h200.json") and h200.dram_ceiling().kind == "measured"
    assert device_facts("cpu") == ("cpu", 132, "sm_90")  # the interpreter is sized as sm_90's reference GPU


def smi(tmp_path, monkeypatch, text, code=0):
    path = tmp_path / "nvidia-smi"
    path.write_text(f"#!/bin/sh\ncat <<'EOF'\n{text}\nEOF\nexit {code}\n")
    path.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:/usr/bin:/bin")


def test_local_gpu_names_the_gpu_and_its_record(tmp_path, monkeypatch):
    smi(tmp_path, monkeypatch, "NVIDIA H200, 580.159.04\nNVIDIA H200, 580.159.04")
    here = local_gpu()
    assert (here.name, here.driver, here.count, here.gpu.short_name, here.chip) == (
        "NVIDIA H200",
        "580.159.04",
        2,
        "h200",
        "gh100",
    )
    assert local_device_name() == "NVIDIA H200"
    smi(tmp_path, monkeypatch, "NVIDIA H20, 570.1")
    assert local_gpu().gpu is None and local_gpu().chip == "gh100"


def test_no_local_gpu_says_why(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(NoLocalGpu, match="nvidia-smi not found") as info:
        local_gpu()
    assert info.value.no_driver and local_device_name() is None
    smi(tmp_path, monkeypatch, "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver", 9)
    with pytest.raises(NoLocalGpu, match="nvidia-smi failed: NVIDIA-SMI has failed") as info:
        local_gpu()
    assert not info.value.no_driver


def test_gpus_table_has_a_header_for_every_column():
    from reports.hardware import render_gpus
    from roofline.catalogue.gpus import load_catalogue, user_measured_dir

    lines = render_gpus(load_catalogue(), user_measured_dir()).splitlines()
    header, rule = lines[0], lines[1]
    columns = [c for c in header.split("  ") if c.strip()]  # names are apart by two spaces or more
    assert "ncu chip" in columns and len(rule.split()) == len(columns)
    h200 = next(line for line in lines if line.startswith("h200 "))
    assert h200[header.index("ncu chip") :].startswith("gh100")
