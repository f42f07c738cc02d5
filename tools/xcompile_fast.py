"""Cross-compile triton_mla_fast's split kernel(s) for an architecture without a GPU and print
registers, spills and shared memory per config (evidence for kernels/plan.py's per-arch configs).

    python tools/xcompile_fast.py --arch 90 --heads 8 --page-size 64 [--kernel portable|hopper]
Run it under the Triton version the GPU machine uses (3.6 for the H200 here).
"""

from __future__ import annotations

import argparse
import itertools
import json
import re

import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

PORTABLE_SIG = {"Q": "*bf16", "KV": "*bf16", "PageTable": "*i32", "KVLens": "*i32", "TreeMask": "*i8",
                "PartO": "*fp32", "PartLse": "*fp32", "qk_scale": "fp32", "split_len": "i32",
                "stride_pt": "i32", "total_rows": "i32"}


DIVISIBLE_INTS = {"split_len", "stride_pt", "total_rows"}


def compile_one(fn, sig: dict, consts: dict, arch: int, num_warps: int, num_stages: int) -> dict:
    full_sig = dict(sig)
    for name in consts:
        full_sig[name] = "constexpr"
    # As at run time: pointers (and ints that are) divisible by 16 are specialised as such.
    names = list(full_sig)
    attrs = {(names.index(n),): [["tt.divisibility", 16]] for n, t in sig.items()
             if t.startswith("*") or n in DIVISIBLE_INTS}
    src = ASTSource(fn, full_sig, consts, attrs)
    k = triton.compile(src, target=GPUTarget("cuda", arch, 128 if arch == 90 else 32),
                       options=dict(num_warps=num_warps, num_stages=num_stages))
    ptx = k.asm.get("ptx", "")
    mma = "wgmma" if "wgmma" in ptx else "tcgen05" if "tcgen05" in ptx else "mma.sync" if "mma.sync" in ptx else "none"
    n_regs = getattr(k, "n_regs", None)
    n_spills = getattr(k, "n_spills", None)
    if n_regs is None:  # metadata only filled when loaded on a device: read ptxas's verbose line
        n_regs = n_spills = None
    return dict(shared=k.metadata.shared, mma=mma, regs=n_regs, spills=n_spills, ptx=ptx, kernel=k)


def ptxas_usage(k, arch: int) -> tuple[int, int]:
    """(registers, spill bytes) by running the bundled ptxas -v on the kernel's PTX."""
    import os
    import subprocess
    import tempfile

    from triton.backends.nvidia.compiler import get_ptxas

    ptxas = get_ptxas(arch).path
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "k.ptx")
        open(p, "w").write(k.asm["ptx"])
        arch_s = f"sm_{arch}a" if arch >= 90 else f"sm_{arch}"
        r = subprocess.run([ptxas, "-v", f"--gpu-name={arch_s}", p, "-o", os.path.join(d, "k.o")],
                           capture_output=True, text=True)
    out = r.stderr + r.stdout
    regs = re.search(r"Used (\d+) registers", out)
    spill = re.search(r"(\d+) bytes spill stores", out)
    return (int(regs.group(1)) if regs else -1, int(spill.group(1)) if spill else -1)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--arch", type=int, default=90)
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--page-size", type=int, default=64)
    ap.add_argument("--kernel", default="portable")
    ap.add_argument("--configs", default="", help="JSON list of config dicts; default a small grid")
    args = ap.parse_args()
    rows = []
    if args.kernel == "portable":
        from kernels.triton_mla_fast import _fast_split_kernel as fn
        configs = json.loads(args.configs) if args.configs else [
            dict(block_m=bm, block_n=bn, num_warps=nw, num_stages=ns, tail_m=tm)
            for bm, bn, nw, ns, tm in [(64, 64, 8, 2, 0), (64, 64, 8, 2, 16), (64, 32, 8, 2, 16), (64, 32, 8, 3, 16),
                                       (32, 64, 4, 2, 0), (64, 32, 4, 2, 0), (64, 64, 4, 2, 16), (128, 32, 8, 2, 0)]]
        for c in configs:
            consts = dict(HEADS=args.heads, Q_LEN=9, PAGE_SIZE=args.page_size, D_LATENT=512, D_ROPE=64,
                          BLOCK_M=c["block_m"], BLOCK_N=c["block_n"], TAIL_M=c.get("tail_m", 0),
                          EVICT="evict_first" if c.get("evict_first") else "")
            try:
                r = compile_one(fn, PORTABLE_SIG, consts, args.arch, c["num_warps"], c["num_stages"])
                regs, spill = ptxas_usage(r["kernel"], args.arch)
                rows.append(dict(c, shared=r["shared"], mma=r["mma"], regs=regs, spill_bytes=spill))
            except Exception as e:  # report and go on: one config that does not fit is a result
                rows.append(dict(c, error=str(e).splitlines()[0][:160]))
    else:  # the Hopper path: tensor descriptors for the latent and rope parts of a KV tile
        from kernels.triton_mla_fast_hopper import _hopper_split_kernel as fn
        configs = json.loads(args.configs) if args.configs else [
            dict(block_m=64, block_n=bn, num_warps=8, num_stages=ns, tail_m=tm)
            for bn, ns, tm in [(64, 2, 0), (32, 3, 0), (32, 4, 0), (32, 3, 16), (16, 4, 16)]]
        for c in configs:
            bn = c["block_n"]
            sig = {"Q": "*bf16", "KLat": f"tensordesc<bf16[{bn},512]>", "KPe": f"tensordesc<bf16[{bn},64]>",
                   **{k: v for k, v in PORTABLE_SIG.items() if k != "Q"}}
            sig = {k: sig[k] for k in ["Q", "KLat", "KPe", "KV", "PageTable", "KVLens", "TreeMask", "PartO",
                                       "PartLse", "qk_scale", "split_len", "stride_pt", "total_rows"]}
            consts = dict(HEADS=args.heads, Q_LEN=9, PAGE_SIZE=args.page_size, D_LATENT=512, D_ROPE=64,
                          BLOCK_M=c["block_m"], BLOCK_N=bn, TAIL_M=c.get("tail_m", 0))
            try:
                r = compile_one(fn, sig, consts, args.arch, c["num_warps"], c["num_stages"])
                regs, spill = ptxas_usage(r["kernel"], args.arch)
                tg = r["kernel"].asm["ttgir"]
                rows.append(dict(c, shared=r["shared"], mma=r["mma"], regs=regs, spill_bytes=spill,
                                 tma_loads=tg.count("async_tma_copy_global_to_local")))
            except Exception as e:
                rows.append(dict(c, error=str(e).splitlines()[0][:200]))
    for r in rows:
        print(json.dumps(r))


if __name__ == "__main__":
    main()
