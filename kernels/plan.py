"""Launch shapes of the kernels, in plain Python (no torch), so models can reason about them: the
SGLang-shaped kernels' defaults, architecture names, and which code path runs where. The fast
kernel's own configs and split plan: kernels/fast/common.py."""

from __future__ import annotations


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def next_pow2(n: int) -> int:
    return 1 << max(0, (n - 1).bit_length())


# Default launch parameters, shared by the kernels and by roofline's models of them.
EXTEND_BLOCK_M = 32  # triton_mla: query rows per program, SGLang's on sm_90 (per arch: launch.EXTEND_BLOCKS)
DECODE_BLOCK_H = 16  # triton_mla_decode: heads per program
DECODE_KV_SPLITS = 8  # triton_mla_decode: splits per row (SGLang's default)

# Which code path of each kernel runs on which architecture; anything not named: portable.
# On sm_90 the Gluon kernels (kernels/fast/) run at every page size: whole-page
# tiles by TMA, smaller pages by cp.async gathers. The Triton TMA kernel ("hopper") stays
# selectable with path="hopper" (page_size a multiple of its block_n).
CODE_PATHS: dict[str, dict[str, str]] = {
    "triton_mla_fast": {"sm_90": "gluon"},
}


def normalise_arch(arch: str) -> str:
    """ "sm_90", "sm90", "90", "9.0" -> "sm_90"."""
    a = str(arch).strip().lower().removeprefix("sm_").removeprefix("sm").replace(".", "")
    if not a.isdigit():
        raise ValueError(f"architecture {arch!r} is not like sm_90, sm_100, sm_120")
    return f"sm_{a}"


def code_path(kernel: str, arch: str, page_size: int = 1, max_kv_len: int | None = None) -> str:
    """The code path of `kernel` on `arch`: "gluon" where kernels.plan.CODE_PATHS selects it
    (triton_mla_fast on sm_90, any page size and length), else "portable" (every other GPU and
    the interpreter). `page_size` and `max_kv_len` are kept for callers; no rule uses them now."""
    try:
        arch = normalise_arch(arch)
    except ValueError:
        return "portable"
    return CODE_PATHS.get(kernel, {}).get(arch, "portable")
