"""`flashmla`: FlashMLA's sm90 dense decode (deepseek-ai/FlashMLA, MIT) as a peer kernel, when built.

`python tools/build_flashmla.py build --src FLASHMLA --cutlass WHEEL --out .flashmla` compiles it; the
extension is found in `$ROOFLINE_FLASHMLA` or the repo's `.flashmla/`. FlashMLA reads the same paged
cache (64-token pages, its block size) and folds the q_len x heads rows of a request into one
sequence of q_len * heads queries over a single KV head, as its decode does for MTP. Its causal mode
lets draft token i see the prefix and draft tokens 0..i: the chain mask, not a tree.

Like FlashMLA's own `get_mla_metadata`, the schedule (a metadata kernel) runs on the first call for a
set of inputs and is reused after, so a step is its split kernel and its combine kernel.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING

from kernels.spec import KV_LORA_RANK, QK_ROPE_HEAD_DIM, VerifyWorkload

if TYPE_CHECKING:
    import torch

    from kernels.inputs import VerifyInputs

EXTENSION = "flashmla_dense"  # tools/build_flashmla.py builds this module
ENV = "ROOFLINE_FLASHMLA"
PAGE_SIZE = 64
DEVICE_KERNELS = ("flash_fwd_splitkv_mla_kernel", "flash_fwd_mla_combine_kernel", "get_mla_metadata_kernel")
BUILD_HINT = "python tools/build_flashmla.py build --src FLASHMLA_CHECKOUT --cutlass CUTLASS_WHEEL --out .flashmla"


def extension_dir() -> Path:
    """Where the extension is looked for: $ROOFLINE_FLASHMLA, else the repo's .flashmla/."""
    return Path(os.environ[ENV]) if os.environ.get(ENV) else Path(__file__).resolve().parents[1] / ".flashmla"


def extension_path() -> Path | None:
    found = sorted(extension_dir().glob(f"{EXTENSION}*.so"))
    return found[0] if found else None


def unavailable() -> str | None:
    """Why `flashmla` cannot run here (None when its extension is built); imports nothing."""
    if extension_path() is None:
        where = f"${ENV}={os.environ[ENV]}" if os.environ.get(ENV) else str(extension_dir())
        return f"not built: no {EXTENSION}*.so in {where} (build it on an sm_90 GPU machine: {BUILD_HINT})"
    return None


def unsupported(w: VerifyWorkload) -> str | None:
    """What in workload `w` FlashMLA's dense decode cannot run (None when it can)."""
    if w.page_size != PAGE_SIZE:
        return f"flashmla needs page_size {PAGE_SIZE} (FlashMLA's block size), got {w.page_size}"
    if w.tree_mask != "chain" and w.q_len > 1:
        return (
            "flashmla supports only the chain mask (--mask chain: FlashMLA's causal mode over the draft "
            f"tokens), not a {w.tree_mask} mask"
        )
    if (w.kv_lora_rank, w.rope_dim) != (KV_LORA_RANK, QK_ROPE_HEAD_DIM):
        return f"flashmla needs kv_lora_rank {KV_LORA_RANK} and rope_dim {QK_ROPE_HEAD_DIM} (head dims 576/512)"
    if w.dtype != "bf16":
        return f"flashmla is built for bf16 only, got {w.dtype}"
    return None


def load_extension(path: Path | None = None):
    """Import the built extension (torch must be imported first: it links against libtorch)."""
    path = path or extension_path()
    if path is None:
        raise RuntimeError(f"flashmla is {unavailable()}")
    spec = importlib.util.spec_from_file_location(
        EXTENSION, path, loader=importlib.machinery.ExtensionFileLoader(EXTENSION, str(path))
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class FlashMLA:
    """Calls the extension; keeps each input set's schedule metadata (FlashMLA's FlashMLASchedMeta)."""

    def __init__(self, max_schedules: int = 16) -> None:
        self._ext = None
        self.max_schedules = max_schedules
        self._schedules: OrderedDict[tuple, tuple] = OrderedDict()

    def __call__(self, inp: VerifyInputs) -> torch.Tensor:
        w = inp.workload
        problem = unsupported(w) or (
            None if inp.q.device.type == "cuda" else f"flashmla runs on an sm_90 CUDA GPU, not on {inp.q.device.type}"
        )
        if problem:
            raise ValueError(problem)
        if self._ext is None:
            self._ext = load_extension()
        q = inp.q.view(w.batch, w.q_len, w.heads, w.head_dim)
        kv = inp.kv_cache.view(-1, PAGE_SIZE, 1, w.head_dim)  # one latent KV head
        # The schedule depends on kv_lens' values: keyed by the workload (which fixes them) and the tensor.
        key = (w, inp.kv_lens.data_ptr(), inp.q.device.index)
        meta, splits = self._schedules.get(key, (None, None))
        out, _lse, meta, splits = self._ext.dense_decode_fwd(
            q, kv, w.v_dim, inp.kv_lens, inp.page_table, inp.sm_scale, w.q_len > 1, meta, splits
        )
        self._schedules[key] = (meta, splits)
        while len(self._schedules) > self.max_schedules:
            self._schedules.popitem(last=False)
        return out.reshape(w.batch * w.q_len, w.heads, w.v_dim)


flashmla = FlashMLA()
