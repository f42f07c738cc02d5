"""Cross-compile a kernel's launches for an architecture without a GPU, with Triton's own
compiler and bundled ptxas, and read what the compiled code needs: registers, spills, shared
memory, and which tensor-core instructions it uses.

Registers and spills come from ptxas's verbose log of the compile Triton runs itself
(`TRITON_DUMP_PTXAS_LOG`), so the flags are Triton's; shared memory is Triton's dynamic
allocation (`metadata.shared`) plus any static shared memory ptxas reports. Triton is imported
only when compiling.
"""

from __future__ import annotations

import contextlib
import inspect
import io
import json
import os
import re
import subprocess
import sys
import warnings
from dataclasses import asdict, dataclass

from kernels.errors import RooflineError
from kernels.launch_spec import LaunchSpec

# PTX instruction prefix -> MMA family (Hopper warpgroup MMA, Blackwell 5th-gen tensor core,
# the warp-level MMA every architecture since sm_80 has).
MMA_FAMILIES = (("wgmma.mma_async", "wgmma"), ("tcgen05.mma", "tcgen05"), ("mma.sync.aligned", "mma.sync"))
_USED = re.compile(r"Used (\d+) registers")
_SPILL = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_SMEM = re.compile(r"(\d+) bytes smem")


class CompileError(RooflineError, RuntimeError):
    """Triton or ptxas could not compile a launch for an architecture (the message says which)."""


@dataclass(frozen=True)
class CompiledLaunch:
    name: str
    arch: str
    num_warps: int
    num_stages: int
    registers: int  # per thread
    spill_stores: int  # bytes per thread
    spill_loads: int
    stack_bytes: int
    shared_bytes: int  # per block, what the kernel asks for (dynamic + static); the driver adds its reserve
    mma: str  # "wgmma", "tcgen05", "mma.sync" (joined with "+" when mixed) or "none"
    triton_version: str


@dataclass(frozen=True)
class PtxasUsage:
    registers: int
    spill_stores: int
    spill_loads: int
    stack_bytes: int
    static_shared_bytes: int


def parse_ptxas_log(log: str, name: str) -> PtxasUsage:
    """The `name` entry of a `ptxas -v` log (the lines after "Compiling entry function 'name'")."""
    start = log.find(f"entry function '{name}'")
    if start < 0:
        raise CompileError(f"ptxas log has no entry for {name!r}:\n{log.strip()}")
    part = log[start:]
    used, spill, smem = _USED.search(part), _SPILL.search(part), _SMEM.search(part)
    if not used:
        raise CompileError(f"ptxas log for {name!r} has no 'Used N registers' line:\n{log.strip()}")
    stack, stores, loads = (int(g) for g in spill.groups()) if spill else (0, 0, 0)
    return PtxasUsage(
        registers=int(used.group(1)),
        spill_stores=stores,
        spill_loads=loads,
        stack_bytes=stack,
        static_shared_bytes=int(smem.group(1)) if smem else 0,
    )


def mma_family(ptx: str) -> str:
    found = [family for prefix, family in MMA_FAMILIES if prefix in ptx]
    return "+".join(found) or "none"


def specialization(spec: LaunchSpec) -> tuple[dict, dict, dict]:
    """(signature, constexprs, attrs) as Triton's JIT builds them at launch time: pointers get a
    16-byte divisibility hint (torch allocations are aligned), an int argument equal to 1 becomes
    a constant, one divisible by 16 gets the hint, one past int32 is i64. A trailing parameter with a default
    that the spec leaves out (the in-kernel timeline's, kernels/fast/timeline.py) takes its default. A tuple
    parameter (spec.tuples) gets a tuple of its names' types, and its constexprs and attrs go by path
    (parameter, place in the tuple), as the JIT keys them."""
    fn = spec.load()
    runtime = list(spec.signature)
    params = inspect.signature(getattr(fn, "fn", fn)).parameters  # a JIT or an interpreted function's Python one
    defaults = {n: p.default for n, p in params.items() if p.default is not p.empty and n not in spec.signature}
    spec_constexprs = {**{n: d for n, d in defaults.items() if n not in spec.constexprs}, **spec.constexprs}
    names = list(fn.arg_names)
    flat = [n for name in names for n in spec.tuples.get(name, (name,))]
    expected = [n for n in flat if n not in spec_constexprs]
    if runtime != expected or set(spec.constexprs) - set(flat):
        raise CompileError(
            f"{spec.name}: launch spec arguments {runtime} + constexprs {sorted(spec.constexprs)} "
            f"do not match the jit function's {names}" + (f" (tuples {spec.tuples})" if spec.tuples else "")
        )
    signature, constexprs, attrs = {}, {}, {}

    def specialize(name: str, key, path: tuple) -> str:
        """One argument's type; its constexpr value under `key`, its attrs under `path`."""
        if name in spec_constexprs:
            constexprs[key] = spec_constexprs[name]
            return "constexpr"
        ty, value = spec.signature[name], spec.int_args.get(name)
        if ty.startswith("*"):
            attrs[path] = [["tt.divisibility", 16]]
        elif ty in ("i32", "i64") and value is not None:
            if value == 1:
                constexprs[key] = 1
                return "constexpr"
            if value % 16 == 0:
                attrs[path] = [["tt.divisibility", 16]]
            if ty == "i32" and not -(2**31) <= value < 2**31:
                ty = "i64"
        return ty

    for i, name in enumerate(names):
        if name in spec.tuples:
            signature[name] = tuple(specialize(n, (i, j), (i, j)) for j, n in enumerate(spec.tuples[name]))
        else:
            signature[name] = specialize(name, name, (i,))
    return signature, constexprs, attrs


_DESC = re.compile(r"tensordesc<(\w+)\[(\d+),\s*(\d+)\]>")


def gluon_signature(signature: dict) -> dict:
    """Gluon's descriptor types name their shared layout: "tensordesc<bf16[64,512]>" becomes the
    type the Gluon launcher gives a descriptor built with NVMMASharedLayout.get_default_for."""
    from triton.experimental.gluon import language as gl  # lazy

    def gluon_type(ty):
        if isinstance(ty, tuple):
            return tuple(gluon_type(t) for t in ty)
        m = _DESC.fullmatch(ty)
        if not m:
            return ty
        dt, rows, cols = m.group(1), int(m.group(2)), int(m.group(3))
        layout = gl.NVMMASharedLayout.get_default_for([rows, cols], {"bf16": gl.bfloat16, "fp16": gl.float16}[dt])
        return f"tensordesc<{dt}[{rows}, {cols}],{layout!r}>"

    return {name: gluon_type(ty) for name, ty in signature.items()}


def _capability(arch: str) -> int:
    if not re.fullmatch(r"sm_\d+", arch):
        raise CompileError(f"architecture {arch!r} is not of the form sm_90, sm_100, sm_120")
    return int(arch[3:])


_RESULTS: dict = {}  # memo of compile results by (spec, arch): compiling is pure and takes seconds


def compile_launch(spec: LaunchSpec, arch: str) -> CompiledLaunch:
    """Compile one launch for `arch` (e.g. "sm_120") and read its resources (memoized)."""
    return compile_launches([spec], arch)[0]


def compile_launches(specs: list[LaunchSpec], arch: str) -> list[CompiledLaunch]:
    """Compile launches for `arch`. Under Triton's interpreter (TRITON_INTERPRET=1, as in the CPU
    tests) the jit functions of this process cannot be compiled, so a child process without the
    interpreter compiles them."""
    todo = [s for s in dict.fromkeys(specs) if (s, arch) not in _RESULTS]
    if todo:
        # A child process compiles under the interpreter, and Gluon kernels (Triton 3.9 reports
        # leaked IR objects on stderr when a process that compiled Gluon exits).
        child = _interpreting() or any(_is_gluon(s) for s in todo)
        done = _compile_in_child(todo, arch) if child else [_compile(s, arch) for s in todo]
        _RESULTS.update({(s, arch): c for s, c in zip(todo, done)})
    return [_RESULTS[(s, arch)] for s in specs]


def _is_gluon(spec: LaunchSpec) -> bool:
    return bool(getattr(spec.load(), "is_gluon", lambda: False)())


def _interpreting() -> bool:
    return os.environ.get("TRITON_INTERPRET", "0").lower() in ("1", "true", "on", "yes")


def _compile_in_child(specs: list[LaunchSpec], arch: str) -> list[CompiledLaunch]:
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    payload = json.dumps({"arch": arch, "specs": [asdict(s) for s in specs]})
    proc = subprocess.run(
        [sys.executable, "-m", "kernels.xcompile"], input=payload, capture_output=True, text=True, env=env
    )
    try:
        out = json.loads(proc.stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        raise CompileError(
            f"the compile process failed (exit {proc.returncode}): {proc.stderr.strip()[-2000:]}"
        ) from None
    if "error" in out:
        raise CompileError(out["error"])
    return [CompiledLaunch(**c) for c in out["launches"]]


def _child_main() -> None:
    job = json.loads(sys.stdin.read())
    specs = [
        LaunchSpec(**{**d, "grid": tuple(d["grid"]), "tuples": {k: tuple(v) for k, v in d["tuples"].items()}})
        for d in job["specs"]
    ]
    try:
        with contextlib.redirect_stdout(sys.stderr):
            done = [_compile(s, job["arch"]) for s in specs]
        print(json.dumps({"launches": [asdict(c) for c in done]}))
    except CompileError as exc:
        print(json.dumps({"error": str(exc)}))


def _compile(spec: LaunchSpec, arch: str) -> CompiledLaunch:
    import triton  # lazy
    from triton import knobs  # lazy
    from triton.backends.compiler import GPUTarget  # lazy
    from triton.compiler import ASTSource  # lazy

    signature, constexprs, attrs = specialization(spec)
    fn = spec.load()
    if getattr(fn, "is_gluon", lambda: False)():  # a Gluon kernel: its own front end, descriptors with layouts
        from triton.experimental.gluon._runtime import GluonASTSource  # lazy

        src = GluonASTSource(fn=fn, signature=gluon_signature(signature), constexprs=constexprs, attrs=attrs)
    else:
        src = ASTSource(fn=fn, signature=signature, constexprs=constexprs, attrs=attrs)
    target = GPUTarget("cuda", _capability(arch), 32)
    log = io.StringIO()
    try:
        with (
            knobs.compilation.scope(),
            knobs.nvidia.scope(),
            warnings.catch_warnings(),
            contextlib.redirect_stdout(log),
        ):
            warnings.simplefilter("ignore", UserWarning)  # triton 3.9's TRITON_DEFAULT_FP_FUSION notice
            knobs.compilation.always_compile = True  # a cache hit would run no ptxas, so print no log
            knobs.nvidia.dump_ptxas_log = True
            # A Gluon kernel's num_warps constexpr is its first partition's (a warp-specialised one adds more)
            num_warps = spec.constexprs.get("num_warps", spec.num_warps)
            compiled = triton.compile(
                src, target=target, options={"num_warps": num_warps, "num_stages": spec.num_stages}
            )
    except Exception as exc:  # Triton raises many types (CompilationError, PTXASError, MLIR errors)
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise CompileError(
            f"{spec.name} for {arch} with triton {triton.__version__}: {type(exc).__name__}: {first}"
        ) from exc
    usage = parse_ptxas_log(log.getvalue(), spec.name)
    return CompiledLaunch(
        name=spec.name,
        arch=arch,
        num_warps=spec.num_warps,
        num_stages=spec.num_stages,
        registers=usage.registers,
        spill_stores=usage.spill_stores,
        spill_loads=usage.spill_loads,
        stack_bytes=usage.stack_bytes,
        shared_bytes=int(compiled.metadata.shared) + usage.static_shared_bytes,
        mma=mma_family(compiled.asm["ptx"]),
        triton_version=triton.__version__,
    )


if __name__ == "__main__":
    _child_main()
