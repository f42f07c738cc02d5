"""The fast kernel's split launches compiled to PTX for sm_90 on the CPU (Triton's own compiler),
debug info aside, one file per case, and compared against another such folder.

A refactor of kernels/fast/ must leave the code the H200 runs unchanged. Run it with the H200's
Triton (3.6.0) installed, on the tree before and after the change, and compare:

    python -m tests.ptx_check --out /tmp/ptx-before          # on the old tree
    python -m tests.ptx_check --out /tmp/ptx-after --compare /tmp/ptx-before
    python -m tests.ptx_check --expect tests/fixtures/ptx_sm90_triton36.txt   # the stored digests

Uses only kernels.launch.fast_specs and kernels.xcompile's specialization, so that it runs on
either tree. Exit status 1 when any case differs. tests/fixtures/ptx_sm90_triton36.txt holds the
sha256 of each case's code with Triton 3.6.0 (tests/kernels/test_compile.py checks them under that Triton).
"""

from __future__ import annotations

import argparse
import hashlib
import re
import sys
from pathlib import Path

from kernels import xcompile
from kernels.launch import fast_specs
from kernels.spec import VerifyWorkload

# (case name, workload, fast_specs keywords): every path and schedule, at 8 heads (72 rows: the
# tail warpgroup) and 64 heads (576 rows: whole M blocks); at batch 1 (one request: no item table) the code
# before the batch schedule. The batch schedule's item-table kernels: a ragged batch of 3, each path.
CASES = [
    ("ring-h8-p1", dict(ctx_len=131072, page_size=1), {}),
    ("ring-h8-p64", dict(ctx_len=131072, page_size=64), {}),
    ("ring-h8-p64-announce", dict(ctx_len=131072, page_size=64), dict(async_gather=False)),
    ("seesaw-h8-p64", dict(ctx_len=131072, page_size=64), dict(ring=False)),
    ("seesaw-h64-p64", dict(ctx_len=131072, page_size=64, heads=64), dict(ring=False, stagger=False)),
    ("ring-h64-p64", dict(ctx_len=131072, page_size=64, heads=64), dict(stagger=False)),  # ring_whole
    ("stagger-h64-p64", dict(ctx_len=131072, page_size=64, heads=64), {}),  # the 64-head default at page 64
    ("stagger-h64-p64-in-turn", dict(ctx_len=131072, page_size=64, heads=64), dict(scores_ahead=False)),
    ("hopper-h8-p64", dict(ctx_len=131072, page_size=64), dict(path="hopper")),
    ("hopper-h64-p64", dict(ctx_len=131072, page_size=64, heads=64), dict(path="hopper")),
    ("portable-h8-p64", dict(ctx_len=131072, page_size=64), dict(path="portable")),
    ("portable-h64-p1", dict(ctx_len=131072, page_size=1, heads=64), dict(path="portable")),
]
_RAGGED = dict(ctx_len=4093, batch=3, ctx_lens=(4093, 70001, 131072))
CASES += [
    ("items-ring-h8-p64", dict(_RAGGED, page_size=64), {}),
    ("items-ring-h8-p1", dict(_RAGGED, page_size=1), {}),
    ("items-ring-h16q2-p64", dict(_RAGGED, page_size=64, heads=16, q_len=2), dict(stagger=False)),  # ring_padded
    ("items-seesaw-h16q2-p64", dict(_RAGGED, page_size=64, heads=16, q_len=2), dict(ring_padded=False, stagger=False)),
    ("items-stagger-h16q2-p64", dict(_RAGGED, page_size=64, heads=16, q_len=2), {}),  # padded blocks: the default
    ("items-stagger-h64-p64", dict(_RAGGED, page_size=64, heads=64), {}),
    ("items-hopper-h8-p64", dict(_RAGGED, page_size=64), dict(path="hopper")),
    ("items-portable-h8-p64", dict(_RAGGED, page_size=64), dict(path="portable")),
]
# Debug info: line records, and the $L__tmpN labels that mark inlined functions' scopes for the
# .debug_info section (no branch goes to them; they are not emitted without line info, and moving
# code into a helper function moves them).
_DEBUG = re.compile(r"^\s*(\.loc|\.file)\b|^\$L__tmp\d+:$")


def ptx_code(ptx: str) -> str:
    """PTX without its debug info: .loc/.file lines, $L__tmp labels and the .debug_* sections at the end."""
    cut = ptx.find(".section\t.debug")
    cut = ptx.find(".section .debug") if cut < 0 else cut
    body = ptx if cut < 0 else ptx[:cut]
    return "".join(line for line in body.splitlines(keepends=True) if not _DEBUG.match(line))


def _no_cubin(backend, stages, options, language, capability) -> None:
    """Triton's stages up to PTX: the cubin stage (ptxas) gives an empty binary."""
    stages["cubin"] = lambda src, metadata: b""


def compile_ptx(spec, arch: str = "sm_90") -> str:
    """The PTX Triton compiles `spec` to for `arch` (as kernels.xcompile compiles it)."""
    import triton  # noqa: PLC0415  # lazy: the CLI's --help needs no Triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    signature, constexprs, attrs = xcompile.specialization(spec)
    fn = spec.load()
    if getattr(fn, "is_gluon", lambda: False)():
        from triton.experimental.gluon._runtime import GluonASTSource

        src = GluonASTSource(fn=fn, signature=xcompile.gluon_signature(signature), constexprs=constexprs, attrs=attrs)
    else:
        src = ASTSource(fn=fn, signature=signature, constexprs=constexprs, attrs=attrs)
    num_warps = spec.constexprs.get("num_warps", spec.num_warps)
    # Never from Triton's cache: after an edit inside only a warp_specialize partition it has given
    # back the PTX compiled before the edit. No ptxas: the PTX is what is compared (the same PTX assembles
    # as it did when its digest was stored), and ptxas is a quarter of each case's compile; test_compile.py
    # assembles every kernel.
    with triton.knobs.compilation.scope(), triton.knobs.runtime.scope():
        triton.knobs.compilation.always_compile = True
        triton.knobs.runtime.add_stages_inspection_hook = _no_cubin
        compiled = triton.compile(
            src,
            target=GPUTarget("cuda", int(arch[3:]), 32),
            options={"num_warps": num_warps, "num_stages": spec.num_stages},
        )
    return compiled.asm["ptx"]


def case_code(name: str) -> tuple[str, str]:
    """(kernel name, PTX code without debug info) of one case."""
    workload, kw = next((wl, kw) for n, wl, kw in CASES if n == name)
    spec = fast_specs(VerifyWorkload(**workload), arch="sm_90", **kw)[0]
    return spec.name, ptx_code(compile_ptx(spec))


def digest(code: str) -> str:
    return hashlib.sha256(code.encode()).hexdigest()


def read_digests(path: Path) -> dict[str, str]:
    """{case: sha256} from a file of "case sha256" lines."""
    return dict(line.split()[:2] for line in path.read_text().splitlines() if line.strip())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, help="folder for <case>.ptx (debug info stripped) and digests.txt")
    ap.add_argument("--compare", type=Path, help="a folder written by an earlier run: report differences")
    ap.add_argument("--expect", type=Path, help="a digest file (case sha256 per line): report differences")
    ap.add_argument("--case", action="append", help="only these cases (repeatable)")
    args = ap.parse_args(argv)
    import triton  # noqa: PLC0415  # lazy: see compile_ptx

    expected = read_digests(args.expect) if args.expect else {}
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
    differ, lines = 0, []
    for name, _, _ in CASES:
        if args.case and name not in args.case:
            continue
        kernel, code = case_code(name)
        lines.append(f"{name} {digest(code)}")
        if args.out:
            (args.out / f"{name}.ptx").write_text(code)
        verdict = ""
        if args.compare:
            old = args.compare / f"{name}.ptx"
            same = old.is_file() and old.read_text() == code
            differ += not same
            verdict = "identical" if same else ("DIFFERS" if old.is_file() else "missing before")
        if args.expect:
            same = expected.get(name) == digest(code)
            differ += not same
            verdict += (" " if verdict else "") + ("as stored" if same else "NOT AS STORED")
        print(f"{name:24s} {kernel:22s} {digest(code)[:16]}  {code.count(chr(10)):6d} lines  {verdict}", flush=True)
    if args.out:
        (args.out / "digests.txt").write_text("\n".join(lines) + "\n")
    print(f"triton {triton.__version__}, sm_90" + (f": {differ} case(s) differ" if args.compare or args.expect else ""))
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
