"""Build FlashMLA's sm90 dense bf16 decode (deepseek-ai/FlashMLA, MIT) as the `flashmla` peer kernel.

    python tools/build_flashmla.py build --src FLASHMLA_CHECKOUT --cutlass nvidia_cutlass-4.2.0.0-py3-none-any.whl --out .flashmla
    python tools/build_flashmla.py sources --src FLASHMLA_CHECKOUT     # what it compiles, no build

Only what the dense decode needs is compiled (its schedule metadata, split and combine kernels, and a
one-function binding), for sm_90a, with torch's extension loader: about 100 s on 16 cores. FlashMLA's
code stays outside the project; `--cutlass` is the `nvidia-cutlass` wheel (its headers under
`cutlass_library/source/`), an unpacked one, or a CUTLASS checkout. The extension lands in `--out`
(`flashmla_dense.so` and `build.json`), where kernels/flashmla.py finds it (or `$ROOFLINE_FLASHMLA`).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

EXTENSION = "flashmla_dense"  # kernels/flashmla.py imports this module name
SOURCES = (  # relative to the FlashMLA checkout
    "csrc/smxx/decode/get_decoding_sched_meta/get_decoding_sched_meta.cu",
    "csrc/smxx/decode/combine/combine.cu",
    "csrc/sm90/decode/dense/instantiations/bf16.cu",
)
HEADERS = ("csrc/api/dense_decode.h", "csrc/api/common.h", "csrc/params.h", "csrc/kerutils/include")
INCLUDES = ("csrc", "csrc/kerutils/include", "csrc/sm90")
# One function of FlashMLA's own API (csrc/api/api.cpp binds five; the others need sm100 and sparse sources).
BINDING = """#include <pybind11/pybind11.h>
#include "api/dense_decode.h"

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.doc() = "FlashMLA sm90 dense decode (deepseek-ai/FlashMLA), built by roofline's tools/build_flashmla.py";
    m.def("dense_decode_fwd", &dense_attn_decode_interface);
}
"""
# FlashMLA's setup.py flags for its sm90 sources; fp16 left out (FLASH_MLA_DISABLE_FP16).
CXX_FLAGS = ["-O3", "-std=c++20", "-DNDEBUG", "-Wno-deprecated-declarations", "-DFLASH_MLA_DISABLE_FP16"]
NVCC_FLAGS = [
    "-O3",
    "-std=c++20",
    "-DNDEBUG",
    "-D_USE_MATH_DEFINES",
    "-Wno-deprecated-declarations",
    "-U__CUDA_NO_HALF_OPERATORS__",
    "-U__CUDA_NO_HALF_CONVERSIONS__",
    "-U__CUDA_NO_HALF2_OPERATORS__",
    "-U__CUDA_NO_BFLOAT16_CONVERSIONS__",
    "--expt-relaxed-constexpr",
    "--expt-extended-lambda",
    "--use_fast_math",
    "--ptxas-options=-v,--register-usage-level=10",
    "-lineinfo",
    "-DFLASH_MLA_DISABLE_FP16",
    "-gencode",
    "arch=compute_90a,code=sm_90a",
]
WHEEL_ROOT = "cutlass_library/source/"
WHEEL_PARTS = (WHEEL_ROOT + "include/", WHEEL_ROOT + "tools/util/include/")


class BuildError(Exception):
    """A bad option or a failed build: one line for the user."""


def check_source(src: Path) -> list[Path]:
    """The sources to compile from a FlashMLA checkout at `src`; BuildError naming what is missing."""
    if not src.is_dir():
        raise BuildError(f"--src {src}: no such folder (a deepseek-ai/FlashMLA checkout)")
    missing = [p for p in SOURCES + HEADERS if not (src / p).exists()]
    if missing:
        raise BuildError(
            f"--src {src}: not a FlashMLA checkout with the sm90 dense decode: missing {', '.join(missing)}"
        )
    return [src / p for p in SOURCES]


def cutlass_includes(cutlass: Path, work: Path) -> list[Path]:
    """CUTLASS's `include` and `tools/util/include` from the wheel (unpacked into `work`), an unpacked
    wheel, or a CUTLASS checkout."""
    if cutlass.is_file():
        if not zipfile.is_zipfile(cutlass):
            raise BuildError(f"--cutlass {cutlass}: not a wheel (zip) or a folder")
        dest = work / "cutlass"
        with zipfile.ZipFile(cutlass) as whl:
            names = [n for n in whl.namelist() if n.startswith(WHEEL_PARTS)]
            if not names:
                raise BuildError(
                    f"--cutlass {cutlass}: the wheel has no {WHEEL_ROOT}include (nvidia-cutlass 4.2.0.0 has)"
                )
            shutil.rmtree(dest, ignore_errors=True)
            for n in names:
                whl.extract(n, dest)
        cutlass = dest / WHEEL_ROOT
    for root in (cutlass, cutlass / WHEEL_ROOT, cutlass / "cutlass_library" / "source"):
        inc, util = root / "include", root / "tools" / "util" / "include"
        if (inc / "cutlass" / "cutlass.h").exists() and (inc / "cute").is_dir() and util.is_dir():
            return [inc, util]
    raise BuildError(f"--cutlass {cutlass}: no include/cutlass/cutlass.h, include/cute and tools/util/include under it")


def source_commit(src: Path) -> str | None:
    """The FlashMLA checkout's commit, when it is a git checkout (or has a COMMIT file beside csrc/)."""
    if (src / "COMMIT").exists():
        return (src / "COMMIT").read_text().strip()
    try:
        out = subprocess.run(
            ["git", "-C", str(src), "rev-parse", "HEAD"], check=False, capture_output=True, text=True, timeout=10
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() or None


def cuda_include_dirs() -> list[Path]:
    """CCCL's headers for the host compiler (CUDA 13 moved them under include/cccl)."""
    from torch.utils.cpp_extension import CUDA_HOME  # lazy: torch only for a build

    cccl = Path(CUDA_HOME or "/usr/local/cuda") / "include" / "cccl"
    return [cccl] if cccl.is_dir() else []


def build(src: Path, cutlass: Path, out: Path, jobs: int | None = None, verbose: bool = False) -> Path:
    """Compile the dense decode into `out`/flashmla_dense.so; returns its path."""
    sources = check_source(src)
    out.mkdir(parents=True, exist_ok=True)
    includes = [src / p for p in INCLUDES] + cutlass_includes(cutlass, out)
    binding = out / "binding.cpp"
    binding.write_text(BINDING)
    build_dir = out / "build"
    build_dir.mkdir(exist_ok=True)
    jobs = jobs or os.cpu_count() or 4
    os.environ.setdefault("MAX_JOBS", str(jobs))
    from torch.utils import cpp_extension  # lazy: torch only for a build

    started = time.time()
    try:
        cpp_extension.load(
            name=EXTENSION,
            sources=[str(binding)] + [str(s) for s in sources],
            extra_include_paths=[str(p) for p in includes + cuda_include_dirs()],
            extra_cflags=CXX_FLAGS,
            extra_cuda_cflags=NVCC_FLAGS + ["--threads", str(max(1, jobs // 4))],
            build_directory=str(build_dir),
            verbose=verbose,
            with_cuda=True,
        )
    except (RuntimeError, OSError, subprocess.CalledProcessError) as exc:
        lines = [ln for ln in str(exc).splitlines() if ln.strip()]
        raise BuildError(f"the build failed in {build_dir}: {lines[-1] if lines else type(exc).__name__}") from None
    built = build_dir / f"{EXTENSION}.so"
    target = out / f"{EXTENSION}.so"
    shutil.copy2(built, target)
    import torch  # lazy

    info = {
        "extension": target.name,
        "flashmla_commit": source_commit(src),
        "cutlass": str(cutlass),
        "sources": list(SOURCES),
        "nvcc_flags": NVCC_FLAGS,
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "build_s": round(time.time() - started, 1),
        "built": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    (out / "build.json").write_text(json.dumps(info, indent=2))
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python tools/build_flashmla.py")
    sub = parser.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build", help="compile the sm90 dense bf16 decode into --out")
    b.add_argument("--src", required=True, type=Path, help="a deepseek-ai/FlashMLA checkout")
    b.add_argument(
        "--cutlass", required=True, type=Path, help="nvidia-cutlass wheel, unpacked wheel or CUTLASS checkout"
    )
    b.add_argument("--out", type=Path, default=Path(".flashmla"), help="where the extension goes (default .flashmla)")
    b.add_argument("--jobs", type=int, default=None, help="parallel compile jobs (default: the CPU count)")
    b.add_argument("--verbose", action="store_true", help="print the compiler commands")
    s = sub.add_parser("sources", help="check --src and list the files the build compiles")
    s.add_argument("--src", required=True, type=Path)
    args = parser.parse_args(argv)
    try:
        if args.cmd == "sources":
            print("\n".join(str(p) for p in check_source(args.src)))
            return 0
        started = time.time()
        target = build(args.src, args.cutlass, args.out, args.jobs, args.verbose)
    except BuildError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"built {target} in {time.time() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
