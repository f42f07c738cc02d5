"""The GPU catalogue (roofline/catalogue/gpus.py): every GPU with its sources, measured ceilings over the
datasheet's, and `roofline gpus`."""

import json

from click.testing import CliRunner

from roofline.catalogue.gpus import get_gpu, load_catalogue, match_gpu
from roofline.cli import main


def run(*args):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_catalogue_covers_the_field_with_sources():
    names = {g.short_name for g in load_catalogue()}
    assert {
        "rtx-pro-6000",
        "rtx-pro-6000-server",
        "rtx-pro-6000-maxq",
        "rtx-5090",
        "b200",
        "gb200",
        "h100",
        "h100-pcie",
        "h200",
        "h800",
        "a100",
        "l40s",
    } <= names
    for g in load_catalogue():
        for key in ("dram_gbps", "bf16_dense_tflops", "fp32_tflops", "sm_count"):
            assert g.sources.get(key), f"{g.short_name}.{key} has no source"
    assert match_gpu("NVIDIA RTX PRO 6000 Blackwell Server Edition").short_name == "rtx-pro-6000-server"
    assert match_gpu("NVIDIA GB200").short_name == "gb200" and match_gpu("Tesla T4") is None


def test_measured_ceilings_win_and_are_labelled():
    h200 = get_gpu("h200")
    assert h200.dram_ceiling().kind == "measured" and 4000 < h200.dram_ceiling().value < 4800
    assert get_gpu("rtx-pro-6000").dram_ceiling().kind == "datasheet"
    kinds = {c.kind for c in h200.ceilings()}
    assert kinds == {"datasheet", "measured"}


def test_gpus_command():
    out = run("gpus").output
    assert "rtx-pro-6000" in out and "dense" in out
    data = json.loads(run("gpus", "--format", "json").output)
    assert any(g["short_name"] == "h200" and g["measured"] for g in data)
