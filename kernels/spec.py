"""The verify-attention workload spec: pure Python, no torch, so every stage can read it."""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass

from kernels.errors import BadInput

# MLA with weight absorption (DeepSeek-V3 / Kimi K2 configs): one latent KV vector per token.
KV_LORA_RANK = 512
QK_ROPE_HEAD_DIM = 64
DTYPE_BYTES = {"bf16": 2, "fp16": 2, "fp32": 4}
TREE_MASKS = ("tree", "chain")

_CTX_RE = re.compile(r"^\s*(\d+)\s*([kKmM]?)\s*$")
# The longest prefix roofline models: 16m tokens are already 19.3 GB of bf16 MLA KV cache per layer and
# request, 1.18 TB over a 61-layer model (DeepSeek-V3), past any one GPU's memory (the H200's 141 GB); a
# larger number is a typo (100000m for 100000), not a workload.
MAX_CTX_LEN = 16 * 1024**2


class WorkloadError(BadInput):
    """A workload parameter that cannot describe a real verify step."""


def ctx_text(ctx_len: int) -> str:
    """A context length as parse_ctx_len reads it back: `1m` for a multiple of 1024**2, `128k` for one of
    1024, else the count."""
    if ctx_len and ctx_len % 1024**2 == 0:
        return f"{ctx_len // 1024**2}m"
    return f"{ctx_len // 1024}k" if ctx_len % 1024 == 0 else str(ctx_len)


def parse_ctx_len(text: str | int) -> int:
    """Parse a context length: `131072`, `128k`, `128K`, `1m` (k = 1024, m = 1024**2)."""
    if isinstance(text, bool):
        raise WorkloadError(f"context length {text!r} is not a number")
    if isinstance(text, int):
        value = text
    else:
        match = _CTX_RE.match(str(text))
        if not match:
            raise WorkloadError(
                f"context length {text!r} is not a positive token count (examples: 4096, 128k, 128K, 1m)"
            )
        value = int(match.group(1)) * {"": 1, "k": 1024, "m": 1024**2}[match.group(2).lower()]
    if value <= 0:
        raise WorkloadError(f"context length {text!r} must be at least 1 token")
    if value > MAX_CTX_LEN:
        raise WorkloadError(
            f"context length {text!r} ({value:,} tokens) is above the 16m ({MAX_CTX_LEN:,}) "
            f"tokens roofline models: 16m tokens already hold 19.3 GB of bf16 MLA KV cache "
            "per layer and request, 1.18 TB over a 61-layer model (DeepSeek-V3): more than any one GPU holds"
        )
    return value


@dataclass(frozen=True)
class VerifyWorkload:
    """One speculative-decoding verify step of MLA attention over a paged KV cache.

    `ctx_len` counts the prefix already in the cache; each request's `q_len` draft tokens
    have their own KV entries right after it in the same paged cache. `ctx_lens`, when
    given, makes the batch ragged (one prefix length per request) and overrides `ctx_len`.
    """

    ctx_len: int = 128 * 1024
    batch: int = 1
    heads: int = 8  # per GPU: Kimi K2's 64 heads at TP8
    q_len: int = 9  # draft-tree budget 8 + 1
    page_size: int = 1
    dtype: str = "bf16"
    kv_lora_rank: int = KV_LORA_RANK
    rope_dim: int = QK_ROPE_HEAD_DIM
    tree_mask: str = "tree"
    seed: int = 0
    ctx_lens: tuple[int, ...] | None = None

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if f.name == "ctx_lens":
                ok = value is None or (
                    isinstance(value, (list, tuple))
                    and all(isinstance(c, int) and not isinstance(c, bool) for c in value)
                )
                want = "a list of integers or null"
            elif f.type in ("int", int):
                ok, want = isinstance(value, int) and not isinstance(value, bool), "an integer"
            else:
                ok, want = isinstance(value, str), "a string"
            if not ok:
                raise WorkloadError(f"{f.name} must be {want}, got {json.dumps(value)}")
        checks = [
            (self.batch >= 1, f"batch must be >= 1, got {self.batch}"),
            (self.heads >= 1, f"heads must be >= 1, got {self.heads}"),
            (self.q_len >= 1, f"q_len must be >= 1, got {self.q_len}"),
            (self.page_size >= 1, f"page_size must be >= 1, got {self.page_size}"),
            (self.dtype in DTYPE_BYTES, f"dtype must be one of {sorted(DTYPE_BYTES)}, got {self.dtype!r}"),
            (self.tree_mask in TREE_MASKS, f"tree_mask must be one of {TREE_MASKS}, got {self.tree_mask!r}"),
            (self.kv_lora_rank >= 1 and self.rope_dim >= 0, "kv_lora_rank and rope_dim must be positive"),
        ]
        for ok, message in checks:
            if not ok:
                raise WorkloadError(message)
        parse_ctx_len(self.ctx_len)
        if self.ctx_lens is not None:
            object.__setattr__(self, "ctx_lens", tuple(int(c) for c in self.ctx_lens))
            if len(self.ctx_lens) != self.batch:
                raise WorkloadError(f"ctx_lens has {len(self.ctx_lens)} entries for batch {self.batch}")
            for c in self.ctx_lens:
                parse_ctx_len(c)

    @property
    def head_dim(self) -> int:
        """Lk: latent plus rope part (576 for MLA)."""
        return self.kv_lora_rank + self.rope_dim

    @property
    def v_dim(self) -> int:
        """Lv: the latent part, shared by K and V (512 for MLA)."""
        return self.kv_lora_rank

    @property
    def request_ctx_lens(self) -> tuple[int, ...]:
        return self.ctx_lens if self.ctx_lens is not None else (self.ctx_len,) * self.batch

    @property
    def kv_lens(self) -> tuple[int, ...]:
        """Tokens each request attends: its prefix plus its own draft tokens."""
        return tuple(c + self.q_len for c in self.request_ctx_lens)

    @property
    def kv_tokens(self) -> int:
        """Tokens attended over the whole batch (sum of kv_lens), without building one entry per request."""
        if self.ctx_lens is None:
            return self.batch * (self.ctx_len + self.q_len)
        return sum(self.ctx_lens) + self.batch * self.q_len

    @property
    def max_kv_len(self) -> int:
        """The longest request's tokens (max of kv_lens), without building one entry per request."""
        return (self.ctx_len if self.ctx_lens is None else max(self.ctx_lens)) + self.q_len

    @property
    def token_bytes(self) -> int:
        """Bytes of one cached token (1,152 for bf16 MLA)."""
        return self.head_dim * DTYPE_BYTES[self.dtype]

    def to_dict(self) -> dict:
        """The fields as JSON types (ctx_lens a list): what spec.json and analysis.json hold."""
        d = dataclasses.asdict(self)
        if d["ctx_lens"] is not None:
            d["ctx_lens"] = list(d["ctx_lens"])
        return d

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2)

    @classmethod
    def from_dict(cls, data: dict) -> VerifyWorkload:
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise WorkloadError(f"unknown workload fields: {', '.join(unknown)}")
        data = dict(data)
        if data.get("ctx_lens") is not None:
            data["ctx_lens"] = tuple(data["ctx_lens"])
        return cls(**data)

    def describe(self) -> str:
        ctx = ",".join(map(str, self.ctx_lens)) if self.ctx_lens else str(self.ctx_len)
        return (
            f"ctx_len={ctx} batch={self.batch} heads={self.heads} q_len={self.q_len} "
            f"page_size={self.page_size} dtype={self.dtype} mask={self.tree_mask}"
        )


def check_workload(name: str, workload) -> None:
    """The shapes a kernel cannot run, as a one-line WorkloadError (shared by `check`, `model` and the
    kernels themselves): triton_mla_fast(_graph) needs a power-of-two page_size, every Triton kernel
    power-of-two kv_lora_rank and rope_dim."""
    base = name.removesuffix("_graph")
    if base == "triton_mla_fast" and workload.page_size & (workload.page_size - 1):
        raise WorkloadError(f"{base} needs a power-of-two page_size (1, 16, 64, ...), got {workload.page_size}")
    if base != "torch_ref" and (workload.v_dim & (workload.v_dim - 1) or workload.rope_dim & (workload.rope_dim - 1)):
        raise WorkloadError(f"{base} needs power-of-two kv_lora_rank and rope_dim (MLA: 512 + 64)")
