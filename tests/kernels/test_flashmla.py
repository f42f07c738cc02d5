"""The optional `flashmla` peer kernel (kernels/flashmla.py, tools/build_flashmla.py): listed and refused
with a reason when not built, its limits (page size 64, chain mask) as one-line errors; on the GPU
(ROOFLINE_GPU_TESTS=1, built into .flashmla/ or $ROOFLINE_FLASHMLA) checked against torch_ref."""

import importlib.util
import json
import zipfile

import pytest
from click.testing import CliRunner

from kernels import flashmla
from kernels.registry import KernelUnsupported, get_kernel
from kernels.spec import VerifyWorkload
from roofline.cli import main
from tests.paths import ROOT

spec = importlib.util.spec_from_file_location("build_flashmla", ROOT / "tools" / "build_flashmla.py")
build_flashmla = importlib.util.module_from_spec(spec)
spec.loader.exec_module(build_flashmla)

CHAIN = VerifyWorkload(ctx_len=8192, page_size=64, tree_mask="chain")


def run(*args):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


@pytest.fixture
def not_built(tmp_path, monkeypatch):
    monkeypatch.setenv(flashmla.ENV, str(tmp_path))
    return tmp_path


@pytest.fixture
def built(tmp_path, monkeypatch):
    """An extension file where the kernel looks (never imported by these CPU tests)."""
    (tmp_path / "flashmla_dense.so").write_bytes(b"")
    monkeypatch.setenv(flashmla.ENV, str(tmp_path))
    return tmp_path


def test_listed_as_unavailable_with_the_reason(not_built):
    info = get_kernel("flashmla")
    assert info.unavailable().startswith(f"not built: no flashmla_dense*.so in ${flashmla.ENV}={not_built}")
    d = {k["name"]: k for k in json.loads(run("kernels", "--format", "json").output)}
    assert d["flashmla"]["available"] is False and "tools/build_flashmla.py build" in d["flashmla"]["unavailable"]
    assert d["triton_mla_fast"]["available"] is True and "unavailable" not in d["triton_mla_fast"]
    assert "unavailable: not built" in run("kernels").output
    r = run("check", "--kernel", "flashmla", "--ctx", "8k", "--page-size", "64", "--mask", "chain")
    assert r.exit_code == 1 and len(r.output.strip().splitlines()) == 1 and "flashmla is not built" in r.output


def test_what_it_does_not_support(built):
    info = get_kernel("flashmla")
    assert info.unavailable() is None and info.unsupported(CHAIN) is None
    tree = VerifyWorkload(ctx_len=8192, page_size=64, tree_mask="tree")
    assert "only the chain mask" in info.unsupported(tree)
    assert info.unsupported(VerifyWorkload(page_size=64, tree_mask="tree", q_len=1)) is None  # one token: no mask
    assert "page_size 64" in info.unsupported(VerifyWorkload(page_size=1, tree_mask="chain"))
    assert "bf16 only" in info.unsupported(VerifyWorkload(page_size=64, tree_mask="chain", dtype="fp16"))
    with pytest.raises(KernelUnsupported, match="needs page_size 64 .FlashMLA's block size., got 16"):
        info.require(VerifyWorkload(page_size=16, tree_mask="chain"))
    for args, says in (
        (("--page-size", "64"), "supports only the chain mask (--mask chain"),
        (("--page-size", "1", "--mask", "chain"), "flashmla needs page_size 64"),
    ):
        r = run("check", "--kernel", "flashmla", "--ctx", "8k", *args)
        assert r.exit_code == 1 and r.output.strip().splitlines() == [r.output.strip()] and says in r.output
    r = run("profile", "--kernel", "flashmla", "--ctx", "8k", "--page-size", "64", "--tool", "ncu")
    assert r.exit_code != 0 and "supports only the chain mask" in r.output and "Traceback" not in r.output


def test_the_kernel_refuses_a_cpu_tensor(built):
    import torch

    from kernels.inputs import build_inputs

    with pytest.raises(ValueError, match="runs on an sm_90 CUDA GPU, not on cpu"):
        flashmla.flashmla(build_inputs(VerifyWorkload(ctx_len=100, page_size=64, tree_mask="chain")))
    assert torch.get_default_dtype() == torch.float32


def test_build_script_checks_its_inputs(tmp_path):
    with pytest.raises(build_flashmla.BuildError, match=r"--src .*: no such folder"):
        build_flashmla.check_source(tmp_path / "none")
    with pytest.raises(build_flashmla.BuildError, match=r"missing csrc/smxx/decode/get_decoding_sched_meta"):
        build_flashmla.check_source(tmp_path)
    not_zip = tmp_path / "x.whl"
    not_zip.write_text("no")
    with pytest.raises(build_flashmla.BuildError, match="not a wheel"):
        build_flashmla.cutlass_includes(not_zip, tmp_path)
    whl = tmp_path / "nvidia_cutlass-4.2.0.0-py3-none-any.whl"  # the wheel's layout (cutlass_library/source/...)
    with zipfile.ZipFile(whl, "w") as z:
        for name in (
            "include/cutlass/cutlass.h",
            "include/cute/tensor.hpp",
            "tools/util/include/cutlass/util/debug.h",
            "examples/x.cu",
        ):
            z.writestr(build_flashmla.WHEEL_ROOT + name, "//")
    inc, util = build_flashmla.cutlass_includes(whl, tmp_path / "out")
    assert (inc / "cutlass" / "cutlass.h").exists() and (util / "cutlass" / "util" / "debug.h").exists()
    assert not (tmp_path / "out" / "cutlass" / build_flashmla.WHEEL_ROOT / "examples").exists()
    assert build_flashmla.cutlass_includes(tmp_path / "out" / "cutlass", tmp_path) == [inc, util]  # unpacked
    assert build_flashmla.main(["build", "--src", str(tmp_path / "none"), "--cutlass", str(whl)]) == 2


GPU_CASES = [
    dict(ctx_len=128 * 1024),
    dict(ctx_len=128 * 1024, heads=64),
    dict(ctx_len=100_003),
    dict(ctx_len=1000, ctx_lens=(4093, 70001, 128 * 1024), batch=3),
]


@pytest.mark.gpu
@pytest.mark.parametrize("case", GPU_CASES, ids=lambda c: f"h{c.get('heads', 8)}-b{c.get('batch', 1)}-{c['ctx_len']}")
def test_flashmla_matches_reference_on_gpu(case):
    from kernels.check import check_kernel

    if get_kernel("flashmla").unavailable():
        pytest.skip(get_kernel("flashmla").unavailable())
    result = check_kernel("flashmla", VerifyWorkload(seed=7, page_size=64, tree_mask="chain", **case), device="cuda")
    print(result)
    assert result.ok, result


def test_the_flashmla_capture_analyzes_on_cpu():
    """`roofline profile --kernel flashmla --ctx 128k --page-size 64 --mask chain --tool ncu --preset verdict`
    on the H200 (tests/fixtures/capture/flashmla_h200.sh): the toolkit's first capture of a kernel nobody here wrote."""
    import roofline
    from kernels.registry import project_kernel_of
    from tests.paths import RUNS

    flash = roofline.load(RUNS / "h200-flashmla-chain-128k-p64")
    k = flash.kernels.set_index("kernel")
    assert list(k.index) == ["flash_fwd_splitkv_mla_kernel", "flash_fwd_mla_combine_kernel"]  # schedule: before
    split, combine = k.loc["flash_fwd_splitkv_mla_kernel"], k.loc["flash_fwd_mla_combine_kernel"]
    assert (split.launches, split.grid_size, split.block_size, split.registers_per_thread) == (3, 132, 256, 240)
    # one block per SM by design (TMA + wgmma): a pipeline cause, never occupancy advice
    assert (split.bound, split.cause, split.unit) == ("latency", "pipelined: the loads are late", "tensor pipe 56%")
    assert "occupancy" not in split.advice
    assert (combine.grid_size, combine.bound, combine.cause) == (9, "latency", "small grid")  # 9 rows x 8 heads / 8
    assert {project_kernel_of(n) for n in k.index} == {"flashmla"}
    assert abs(flash.step.kernel_ms_per_step - 0.0988) < 5e-4 and abs(flash.step.gap - 2.93) < 0.01
    cmp = roofline.compare(RUNS / "h200-flashmla-chain-128k-p64", RUNS / "h200-triton_mla_fast-chain-128k-p64")
    assert cmp.same_workload and abs(cmp.speedup - 1.41) < 0.01
    r = run("analyze", str(RUNS / "h200-flashmla-chain-128k-p64"))
    assert r.exit_code == 0 and "flash_fwd_splitkv_mla_kernel" in r.output and "mask=chain" in r.output
