"""`roofline compile`: every registered Triton kernel cross-compiled for sm_90, sm_100 and sm_120
without a GPU, checked against the architecture's limits; the occupancy rules checked against ncu's
own numbers on the H200; the launch specs checked against the jit functions the launchers call."""

import dataclasses
import json
import os
import subprocess
import sys

import pandas as pd
import pytest
from click.testing import CliRunner

from kernels import xcompile
from kernels.fast.common import FAST_ARCH_CONFIGS, fast_launch_config
from kernels.hardware import get_arch
from kernels.launch import ARCHS, EXTEND_BLOCKS, SPECS, extend_specs, fast_specs, launch_specs
from kernels.registry import KERNELS
from kernels.spec import VerifyWorkload
from kernels.xcompile import CompileError, compile_launches, mma_family, parse_ptxas_log, specialization
from roofline.analysis.kernel_models import kernel_model
from roofline.analysis.resources import kernel_resources
from roofline.catalogue.archs import occupancy
from roofline.catalogue.gpus import get_gpu
from roofline.cli import main
from tests.paths import ROOT, RUNS
from tests.ptx_check import ptx_code

FIXTURES = ROOT / "tests" / "fixtures"
# One workload for every compile here: compiled code depends on constexprs and integer
# specialization, not on ctx_len, so compiles are shared (and cached) across the tests.
W = VerifyWorkload(ctx_len=131072, heads=8, page_size=64)
MMA = {"sm_90": "wgmma", "sm_100": "tcgen05", "sm_120": "mma.sync"}
# Registered kernels that launch no Triton kernel; every other one is compiled on every architecture.
NOT_TRITON = {"torch_ref": "plain PyTorch", "flashmla": "FlashMLA's CUDA C++, built for sm_90a"}
COMPILED = sorted(k for k in KERNELS if k not in NOT_TRITON)


@pytest.fixture(scope="module", autouse=True)
def compiled_once():
    """Compile every launch of W once per architecture (one child process each under the interpreter)."""
    for arch in ARCHS:
        sm = get_gpu(get_arch(arch).reference_gpu).sm_count
        compile_launches([s for k in SPECS for s in launch_specs(k, W, arch, sm)], arch)


def run(*args):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def compile_json(kernel: str, arch: str) -> dict:
    """`roofline compile --format json` of `kernel` for `arch` at 128k, page size 64."""
    return json.loads(
        run(
            "compile", "--kernel", kernel, "--arch", arch, "--ctx", "128k", "--page-size", "64", "--format", "json"
        ).output
    )


def test_every_kernel_is_checked_on_each_architecture():
    """The fit test below runs on every architecture the table has, and these three are among them."""
    assert {"sm_90", "sm_100", "sm_120"} <= set(ARCHS) and "triton_mla" in COMPILED


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("kernel", COMPILED)
def test_every_kernel_compiles_and_fits(kernel, arch):
    r = kernel_resources(kernel, W, arch)
    for x in r["launches"]:
        assert x["fits"], f"{kernel} {x['name']} on {arch}: {x['problems']}"
        assert 0 < x["registers"] <= 255 and x["blocks_per_sm"] >= 1 and x["shared_bytes"] > 0
        assert x["shared_bytes"] <= get_arch(arch).shared_per_block_bytes
    split = r["launches"][0]
    if kernel.startswith("triton_mla_fast"):  # tensor-core dots: each architecture's own MMA
        assert split["mma"] == MMA[arch]
    if arch == "sm_120":  # nothing Hopper- or sm_100-only on the RTX parts
        assert all(x["mma"] in ("mma.sync", "none") for x in r["launches"])


def test_triton_mla_on_sm120_departs_from_sglang_only_where_its_tile_does_not_fit():
    """SGLang's extend kernel picks 32 x 32 for capability 12 (MLA, Lq > 256): under Triton 3.6 that asks
    for 102,400 B of shared memory per block, over sm_120's 101,376 B, so the fit check refuses it; the
    kernel runs 16 x 32 there (the same KV tile), and `roofline compile` says where it departs."""
    assert EXTEND_BLOCKS == {"sm_90": (32, 64), "sm_100": (32, 64), "sm_120": (16, 32)}
    (sglang,) = extend_specs(W, "sm_120", block_m=32, block_n=32)
    c = xcompile.compile_launch(sglang, "sm_120")
    occ = occupancy(get_arch("sm_120"), sglang.threads, c.registers, c.shared_bytes)
    assert not occ.fits and c.shared_bytes > get_arch("sm_120").shared_per_block_bytes
    if c.triton_version == "3.6.0":
        assert c.shared_bytes == 102400
    ours = kernel_resources("triton_mla", W, "sm_120")
    split = ours["launches"][0]
    assert (split["constexprs"]["BLOCK_M"], split["constexprs"]["BLOCK_N"], split["grid"]) == (16, 32, (1, 8, 1))
    assert split["fits"] and (c.triton_version != "3.6.0" or split["shared_bytes"] == 83968)
    assert len(ours["notes"]) == 1 and "departs from SGLang: BLOCK_M=16, BLOCK_N=32" in ours["notes"][0]
    text = run("compile", "--kernel", "triton_mla", "--arch", "sm_120", "--ctx", "128k", "--page-size", "64").output
    assert ours["notes"][0] in text
    assert kernel_resources("triton_mla", W, "sm_90")["notes"] == []
    assert compile_json("triton_mla", "sm_100")["notes"] == []


def test_sm90_resources_match_ncu_on_the_h200():
    """ncu on the H200 (triton 3.6): registers per thread, threads and shared memory per block (ncu's
    launch__shared_mem_per_block is the kernel's own plus the driver's 1 KB)."""
    fast = kernel_resources("triton_mla_fast", W, "sm_90")["launches"][0]
    decode = kernel_resources("triton_mla_decode", W, "sm_90")["launches"][0]
    ncu = pd.read_csv(RUNS / "h200-triton_mla_fast-ring-128k-p64" / "launches.csv").drop_duplicates("kernel")
    ring = ncu[ncu.kernel == "_gluon_ring_kernel"].iloc[0]
    # 8 heads x 9 tokens = 72 rows: one 64-row block and the 8-row tail warpgroup (3 x 128 threads,
    # 168 registers each at launch, redistributed by setmaxnreg), the ring schedule at page 64
    assert fast["name"] == "_gluon_ring_kernel" and fast["programs"] == 129 == ring.grid_size
    assert (fast["threads"], fast["registers"]) == (ring.block_size, ring.registers_per_thread) == (384, 168)
    assert abs(fast["shared_bytes"] - (ring.shared_mem_per_block - 1024)) <= 64
    p1 = pd.read_csv(RUNS / "h200-triton_mla_fast-ring-128k-p1" / "launches.csv").drop_duplicates("kernel").iloc[0]
    gathered = kernel_resources("triton_mla_fast", dataclasses.replace(W, page_size=1), "sm_90")["launches"][0]
    assert gathered["name"] == p1.kernel == "_gluon_ring_kernel"  # at page 1 too, with async_gather
    assert (gathered["programs"], gathered["threads"], gathered["registers"]) == (
        p1.grid_size,
        p1.block_size,
        p1.registers_per_thread,
    )
    old = pd.read_csv(RUNS / "h200-triton_mla_fast-gluon-128k-p64" / "launches.csv").drop_duplicates("kernel")
    old = old[old.kernel == "_gluon_seesaw_kernel"].iloc[0]  # the pairs-of-tiles schedule, ring=False
    seesaw = xcompile.compile_launch(fast_specs(W, arch="sm_90", ring=False)[0], "sm_90")
    assert (seesaw.registers, abs(seesaw.shared_bytes - (old.shared_mem_per_block - 1024)) <= 64) == (168, True)
    hopper = xcompile.compile_launch(fast_specs(W, arch="sm_90", path="hopper")[0], "sm_90")
    assert (hopper.shared_bytes, hopper.registers) == (229376, 255)
    assert decode["shared_bytes"] == 56320 and decode["programs"] == 72
    assert abs(decode["registers"] - 153) <= 8  # 153 with triton 3.6, 150 with 3.9: the compiler's choice
    assert fast["blocks_per_sm"] == 1 and fast["limited_by"] == "registers"
    combine = kernel_resources("triton_mla_fast", W, "sm_90")["launches"][1]  # 129 splits: a row and 32 columns
    assert combine["name"] == "_combine_kernel" and combine["programs"] == 72 * 16 == ncu.iloc[1].grid_size
    assert combine["threads"] == ncu.iloc[1].block_size == 128


def test_ring_cuts_compile_out_what_they_name():
    """The ring's removal experiments are compile-time switches: with no_mma the kernel has no MMA at all."""
    cut = fast_specs(dataclasses.replace(W, page_size=1), arch="sm_90", no_mma=True, no_softmax=True, no_gather=True)[0]
    assert cut.name == "_gluon_ring_kernel" and xcompile.compile_launch(cut, "sm_90").mma == "none"


@pytest.mark.parametrize("cut", ["no_mma", "no_softmax", "no_gather"])
def test_hopper_cuts_fit_the_h200(cut):
    """Each removal experiment of the Triton TMA kernel fits the H200's shared memory (227 KB a block): the
    no-gather cut once staged its constant zero tiles to 360 KB, and the H200 refused to launch it."""
    spec = fast_specs(W, arch="sm_90", path="hopper", **{cut: True})[0]
    assert xcompile.compile_launch(spec, "sm_90").shared_bytes <= 232448


@pytest.mark.parametrize("cut", ["no_mma", "no_softmax", "no_gather"])
@pytest.mark.parametrize("heads, kw", [(64, dict(ring=False)), (8, dict(ring=False))], ids=["h64", "h8-tail"])
def test_seesaw_cuts_compile(cut, heads, kw):
    """The seesaw kernel's removal experiments compile for sm_90, each alone (page 1: every tile gathered);
    no_mma leaves no MMA at all, in the main warpgroups and the tail."""
    spec = fast_specs(dataclasses.replace(W, heads=heads, page_size=1), arch="sm_90", **kw, **{cut: True})[0]
    assert spec.name == "_gluon_seesaw_kernel" and spec.constexprs[cut.upper()]
    mma = xcompile.compile_launch(spec, "sm_90").mma
    assert (mma == "none") == (cut == "no_mma")


def test_fast_kernel_ptx_as_stored_under_triton_36():
    """The H200's Triton (3.6.0) compiles every split path to the PTX code (debug info aside) whose
    digests tests/fixtures/ptx_sm90_triton36.txt holds (tests/ptx_check.py); other Tritons skip."""
    triton = pytest.importorskip("triton")
    if triton.__version__ != "3.6.0":
        pytest.skip(f"the digests are triton 3.6.0's; this is {triton.__version__}")
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    expect = FIXTURES / "ptx_sm90_triton36.txt"
    proc = subprocess.run(
        [sys.executable, "-m", "tests.ptx_check", "--expect", str(expect)],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr[-2000:]


def test_ptx_code_leaves_out_debug_scope_labels():
    """$L__tmpN labels mark inlined functions' scopes for the debug sections (moving code into a helper
    moves them); branch targets ($L__BB) and instructions stay. Lines from Triton 3.6.0's sm_90 PTX."""
    ptx = (
        "\t@%p2 ld.global.v4.b32 { %r112, %r113, %r114, %r115 }, [ %rd24 + 0 ];\n"
        "\t// end inline asm\n"
        "$L__tmp3:\n"
        "\t.loc\t1 128 8\n"
        "\tshl.b32 \t%r136, %r2, 4;\n"
        "$L__BB0_7:                              // %__nv_exp2f.exit\n"
    )
    assert ptx_code(ptx) == (
        "\t@%p2 ld.global.v4.b32 { %r112, %r113, %r114, %r115 }, [ %rd24 + 0 ];\n"
        "\t// end inline asm\n"
        "\tshl.b32 \t%r136, %r2, 4;\n"
        "$L__BB0_7:                              // %__nv_exp2f.exit\n"
    )


@pytest.mark.parametrize(
    "run_dir",
    [
        "h200-triton_mla_fast-128k-p64",
        "h200-triton_mla_decode-128k-p64",
        "h200-triton_mla_fast-128k-h64",
        "h200-triton_mla_fast-gluon-128k-p64",
        "h200-triton_mla_fast-ring-128k-p64",
        "h200-triton_mla_fast-ring-128k-p1",
    ],
)
def test_occupancy_rules_agree_with_ncu(run_dir):
    """The same registers, threads and shared memory give ncu's own occupancy limits on the H200."""
    df = pd.read_csv(RUNS / run_dir / "launches.csv").drop_duplicates("kernel")
    for row in df.itertuples():
        occ = occupancy(
            get_arch("sm_90"), int(row.block_size), int(row.registers_per_thread), int(row.shared_mem_per_block) - 1024
        )  # ncu's figure includes the driver's 1 KB
        assert occ.limits["registers"] == row.occupancy_limit_registers
        assert occ.limits["warps"] == row.occupancy_limit_warps
        if row.shared_mem_per_block > 48 * 1024:  # small blocks: ncu divides the carveout the driver chose
            assert occ.limits["shared memory"] == row.occupancy_limit_shared_mem


def test_occupancy_says_what_does_not_fit():
    occ = occupancy(get_arch("sm_120"), 256, 255, 131072)
    assert not occ.fits and occ.blocks_per_sm == 0
    assert occ.problems == ("131072 B shared memory per block > 101376 B (99 KB) on sm_120",)
    assert occupancy(get_arch("sm_90"), 256, 255, 131072).fits
    assert "48" in str(get_arch("sm_120").max_warps_per_sm)


def test_graph_kernels_compile_the_launches_they_replay():
    assert set(COMPILED) == set(SPECS) | {"triton_mla_fast_graph"}
    assert launch_specs("triton_mla_fast_graph", W, "sm_120", 188) == launch_specs("triton_mla_fast", W, "sm_120", 188)
    d = compile_json("triton_mla_fast_graph", "sm_90")
    assert (d["kernel"], [x["name"] for x in d["launches"]]) == (
        "triton_mla_fast_graph",
        ["_gluon_ring_kernel", "_combine_kernel"],
    )
    r = run("compile", "--kernel", "flashmla", "--arch", "sm_90")
    assert r.exit_code == 2 and "Error: flashmla launches no Triton kernel; Triton kernels: triton_mla," in r.output


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("kernel", sorted(SPECS))
def test_launch_specs_name_every_jit_argument(kernel, arch):
    """Every jit parameter gets a type (a tuple parameter's a tuple of its names'), every spec constexpr a value:
    by name, or in a tuple parameter by path (parameter, place)."""
    for spec in launch_specs(kernel, VerifyWorkload(ctx_len=300, page_size=16, batch=2), arch):
        sig, constexprs, _ = specialization(spec)
        params = list(spec.load().arg_names)
        named = {k if isinstance(k, str) else spec.tuples[params[k[0]]][k[1]] for k in constexprs}
        assert list(sig) == params and set(spec.constexprs) <= named
        assert all(len(sig[p]) == len(names) for p, names in spec.tuples.items())


def test_sm120_never_gets_hopper_configs():
    from kernels.fast.common import arch_fast_config as arch_config
    from kernels.plan import code_path

    for heads in (8, 16, 64, 128):
        for page in (1, 16, 64):
            for arch in ("sm_120", "sm_100"):
                assert fast_launch_config(arch, heads, page) == arch_config(arch, heads, page)
                assert code_path("triton_mla_fast", arch, page, 131081) == "portable"
                assert all(
                    s.name != "_hopper_split_kernel"
                    for s in launch_specs("triton_mla_fast", VerifyWorkload(heads=heads, page_size=page), arch)
                )
            assert fast_launch_config("sm_120", heads, page)["block_n"] == 32
    assert FAST_ARCH_CONFIGS["sm_120"] == fast_launch_config("sm_120", 8, 1)
    assert fast_launch_config("sm_90", 8, 1)["block_m"] == 32  # the H200's tuned entry


def test_ptxas_log_parser_on_real_logs():
    u = parse_ptxas_log((FIXTURES / "ptxas" / "fast_split_sm_90.log").read_text(), "_fast_split_kernel")
    assert (u.registers, u.spill_stores, u.spill_loads, u.stack_bytes, u.static_shared_bytes) == (255, 272, 268, 264, 0)
    u = parse_ptxas_log((FIXTURES / "ptxas" / "fast_split_sm_120.log").read_text(), "_fast_split_kernel")
    assert (u.registers, u.spill_stores) == (255, 244)
    with pytest.raises(CompileError, match="no entry for '_combine_kernel'"):
        parse_ptxas_log((FIXTURES / "ptxas" / "fast_split_sm_90.log").read_text(), "_combine_kernel")
    assert mma_family("wgmma.mma_async.sync x; mma.sync.aligned.m16n8k16 y") == "wgmma+mma.sync"
    assert mma_family("ld.global") == "none"


def test_compile_cli_json_and_errors(monkeypatch):
    d = compile_json("triton_mla_fast", "sm_120")
    assert (d["kernel"], d["arch"], d["gpu"], d["sm_count"]) == ("triton_mla_fast", "sm_120", "rtx-pro-6000", 188)
    assert [x["name"] for x in d["launches"]] == ["_fast_split_kernel", "_combine_kernel"]
    assert {"name", "registers", "spill_bytes", "shared_bytes", "mma", "fits"} <= set(d["launches"][0])
    text = run(
        "compile", "--kernel", "triton_mla_fast", "--arch", "sm_120", "--ctx", "128k", "--page-size", "64"
    ).output
    assert "_fast_split_kernel" in text and "mma.sync" in text
    r = run("compile", "--kernel", "torch_ref", "--arch", "sm_90")
    assert r.exit_code == 2 and "launches no Triton kernel" in r.output
    r = run("compile", "--kernel", "triton_mla", "--arch", "sm_80")
    assert r.exit_code == 2 and "sm_80" in r.output
    r = run("compile", "--kernel", "triton_mla", "--arch", "sm_90", "--gpu", "rtx-pro-6000")
    assert r.exit_code == 2 and "rtx-pro-6000 is sm_120, not sm_90" in r.output
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "triton" else real(name, *a))
    r = run("compile", "--kernel", "triton_mla", "--arch", "sm_90")
    assert r.exit_code == 2 and len(r.output.strip().splitlines()) == 1, r.output  # one line, a usage-class error
    assert "needs" in r.output and "triton" in r.output.lower()


def test_model_on_blackwell_uses_that_architecture():
    rtx, b200 = get_gpu("rtx-pro-6000"), get_gpu("b200")
    m = kernel_model("triton_mla_fast", W, rtx)
    assert m.arch == "sm_120" and m.grid[0] == 3  # 72 rows in blocks of 32 (sm_120's config), not 64
    kinds = {name: kind for name, _, kind, _ in m.inputs}
    assert kinds == {
        "sm_count": "datasheet",
        "dram_gbps": "datasheet",
        "launch configuration": "unconfirmed",
        "blocks_per_sm": "unconfirmed",
    }
    compiled = kernel_resources("triton_mla_fast", W, "sm_120", rtx)
    mc = kernel_model("triton_mla_fast", W, rtx, compiled)
    assert mc.blocks_per_sm == compiled["launches"][0]["blocks_per_sm"]
    assert dict((n, k) for n, _, k, _ in mc.inputs)["blocks_per_sm"] == "derived"
    assert kernel_model("triton_mla_fast", W, b200).arch == "sm_100"
    assert kernel_model("triton_mla", W, b200).grid == (1, 8, 1)
    d = json.loads(run("model", "--kernel", "triton_mla_decode", "--gpu", "rtx-pro-6000", "--format", "json").output)
    assert d["kernel_model"]["arch"] == "sm_120" and d["kernel_model"]["inputs"]


def test_compile_takes_a_ragged_batch_and_launches_its_batch_schedule():
    """`roofline compile --lens`: the split launch the batch schedule plans, grid (m_blocks, items, 1)."""
    r = run(
        "compile", "--kernel", "triton_mla_fast", "--arch", "sm_90", "--lens", "mix:1x128k,15x2k", "--heads", "16",
        "--q-len", "4", "--page-size", "64", "--mask", "chain", "--format", "json",
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    split = json.loads(r.output)["launches"][0]
    assert split["grid"] == [1, 128, 1] and split["fits"]


_STAMPED = """
import dataclasses, json, sys
from kernels.launch import fast_specs
from kernels.spec import VerifyWorkload
from tests.ptx_check import compile_ptx
spec = fast_specs(VerifyWorkload(ctx_len=131072, heads=int(sys.argv[1]), page_size=64), arch="sm_90")[0]
on = dataclasses.replace(
    spec, signature={**spec.signature, "Stamps": "*i64"}, constexprs={**spec.constexprs, "STAMP_TILES": 16}
)
off_ptx, on_ptx = compile_ptx(spec), compile_ptx(on)
print(json.dumps([spec.name, off_ptx.count("%clock64"), on_ptx.count("%clock64"), on_ptx.count("%globaltimer"),
                  on_ptx.count("%smid")]))
"""


@pytest.mark.parametrize(
    "heads, kernel", [(8, "_gluon_ring_kernel"), (64, "_gluon_seesaw_kernel")], ids=["ring", "stagger"]
)
def test_in_kernel_stamps_compile_only_when_asked(heads, kernel):
    """The in-kernel timeline's stamps (kernels/fast/timeline.py): none in the code a launch compiles by
    default (the stored digests above check that code is unchanged), %clock64 reads with STAMP_TILES (compiled
    in a child without the interpreter)."""
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    proc = subprocess.run(
        [sys.executable, "-c", _STAMPED, str(heads)], capture_output=True, text=True, env=env, cwd=ROOT
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    name, off, on, timer, smid = json.loads(proc.stdout.strip().splitlines()[-1])
    assert name == kernel and off == 0 and on > 20 and timer >= 4 and smid >= 2
