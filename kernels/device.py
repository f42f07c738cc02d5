"""Where `roofline check` runs a kernel: the device, the dtype it may use there, and how large a
workload Triton's interpreter (the cpu path) is allowed before it refuses. Imports torch only to
ask whether it sees a GPU."""

from __future__ import annotations

from kernels.errors import BadInput
from kernels.spec import VerifyWorkload

# Interpreter cost grows with the KV tokens every head walks. On the 2-core CPU machine an 8k
# context at 8 heads (65,536 token-heads) took 34-68 s per kernel (triton_mla_fast to triton_mla);
# the default 128k is 16x that. The limit allows about two minutes.
INTERPRETER_TOKEN_HEADS = 131_072
SECONDS_PER_TOKEN_HEAD = (34 / 65_536, 68 / 65_536)  # measured range, for the estimate in the refusal


class DeviceError(BadInput):
    """A device or dtype this run cannot use, with what to do instead."""


def pick_device(requested: str | None) -> str:
    """`requested` when usable; None means cuda when torch sees a GPU. No GPU for cuda is an error
    that says to use the interpreter (`--device cpu`)."""
    if requested == "cpu":
        return "cpu"
    import torch  # lazy

    if torch.cuda.is_available():
        return "cuda"
    why = "torch sees no CUDA GPU" + (
        f" (torch {torch.__version__} is a CPU build)" if torch.version.cuda is None else ""
    )
    raise DeviceError(
        f"{why}: use --device cpu to run the kernel in Triton's interpreter (slow: small workloads, e.g. --ctx 4k)"
    )


def pick_dtype(device: str, dtype: str | None) -> str:
    """bf16 on cuda and fp16 on cpu by default; bf16 on cpu is refused (the interpreter's bf16 dots are
    wrong, triton-lang/triton#11584, so a correct kernel would fail)."""
    if device != "cpu":
        return dtype or "bf16"
    if dtype == "bf16":
        raise DeviceError(
            "--dtype bf16 is refused on --device cpu: Triton's interpreter computes bf16 dots "
            "wrongly (triton-lang/triton#11584), so the check would fail a correct kernel; "
            "use --dtype fp16 (the cpu default) or fp32, and check bf16 on a GPU"
        )
    return dtype or "fp16"


def token_heads(w: VerifyWorkload) -> int:
    """The interpreter's cost measure: KV tokens over the batch times heads."""
    return w.kv_tokens * w.heads


def interpreter_too_slow(w: VerifyWorkload) -> str | None:
    """Why Triton's interpreter should not run `w` (its size and the minutes it would take), or None."""
    cost = token_heads(w)
    if cost <= INTERPRETER_TOKEN_HEADS:
        return None
    low, high = (cost * s / 60 for s in SECONDS_PER_TOKEN_HEAD)
    return (
        f"ctx_len {w.max_kv_len - w.q_len} x batch {w.batch} x heads {w.heads} is {cost:,} KV token-heads, above the interpreter's limit of "
        f"{INTERPRETER_TOKEN_HEADS:,} (an 8k context at 8 heads takes about a minute on a 2-core machine; "
        f"this would take roughly {low:.0f}-{high:.0f} min)"
    )


def interpreter_max_ctx(w: VerifyWorkload) -> int:
    """The largest uniform ctx_len the interpreter accepts at `w`'s batch, heads and q_len (0 if none)."""
    return max(0, INTERPRETER_TOKEN_HEADS // (w.batch * w.heads) - w.q_len)
