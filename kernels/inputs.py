"""Build the tensors of a verify step: queries, a paged KV cache in shuffled page order, tree masks."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from kernels.spec import VerifyWorkload

TORCH_DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}


@dataclass
class VerifyInputs:
    """Tensors shared by every kernel (one calling convention).

    q:            [batch * q_len, heads, head_dim]       queries, request-major
    kv_cache:     [num_pages, page_size, head_dim]       latent + rope per token; V = first v_dim
    page_table:   [batch, max_pages] int32               page ids, shuffled (non-contiguous)
    kv_lens:      [batch] int32                          prefix + draft tokens per request
    tree_mask:    [batch, q_len, q_len] int8 (0/1)       draft token i may see draft token j
    token_slots:  [sum(kv_lens)] int32                   per-token cache slot (page * page_size + offset)
    kv_indptr:    [batch + 1] int32                      offsets of each request in token_slots
    """

    workload: VerifyWorkload
    q: torch.Tensor
    kv_cache: torch.Tensor
    page_table: torch.Tensor
    kv_lens: torch.Tensor
    tree_mask: torch.Tensor
    token_slots: torch.Tensor
    kv_indptr: torch.Tensor
    sm_scale: float


def draft_tree_parents(q_len: int, kind: str, generator: torch.Generator) -> list[int]:
    """Parent of each draft token (token 0 is the root, parent -1). A chain is a line."""
    if kind == "chain":
        return [-1] + list(range(q_len - 1))
    parents = [-1]
    for i in range(1, q_len):
        parents.append(int(torch.randint(0, i, (1,), generator=generator)))
    return parents


def ancestor_mask(parents: list[int]) -> torch.Tensor:
    """mask[i, j] is True when draft token j is token i itself or one of its ancestors."""
    n = len(parents)
    mask = torch.zeros(n, n, dtype=torch.bool)
    for i in range(n):
        j = i
        while j >= 0:
            mask[i, j] = True
            j = parents[j]
    return mask


def build_inputs(
    workload: VerifyWorkload, device: str | torch.device = "cpu", dtype: str | None = None
) -> VerifyInputs:
    """Fresh random inputs for `workload` (seeded), with the KV cache pages in shuffled order.

    `dtype` overrides the workload's (the CPU interpreter runs fp16: see kernels/README notes).
    """
    w = workload
    tdtype = TORCH_DTYPES[dtype or w.dtype]
    gen = torch.Generator().manual_seed(w.seed)
    kv_lens = w.kv_lens
    pages_per_req = [-(-n // w.page_size) for n in kv_lens]
    num_pages = sum(pages_per_req)
    max_pages = max(pages_per_req)

    # Pages handed out in a random order, as an allocator that has run for a while would.
    perm = torch.randperm(num_pages, generator=gen).to(torch.int32)
    page_table = torch.zeros(w.batch, max_pages, dtype=torch.int32)
    start = 0
    for b, n in enumerate(pages_per_req):
        page_table[b, :n] = perm[start : start + n]
        start += n

    slots = []
    for b, n in enumerate(kv_lens):
        pos = torch.arange(n, dtype=torch.int64)
        slots.append(page_table[b, pos // w.page_size].to(torch.int64) * w.page_size + pos % w.page_size)
    token_slots = torch.cat(slots).to(torch.int32)
    kv_indptr = torch.zeros(w.batch + 1, dtype=torch.int32)
    kv_indptr[1:] = torch.cumsum(torch.tensor(kv_lens), 0)

    # Random data, never zeros. Scaled so that softmax is neither flat nor one-hot.
    # Drawn on the device itself: a 128k-token cache is 75M values.
    masks = torch.stack([ancestor_mask(draft_tree_parents(w.q_len, w.tree_mask, gen)) for _ in range(w.batch)])
    dev = torch.device(device)
    dev_gen = torch.Generator(device=dev).manual_seed(w.seed)
    kv_cache = torch.randn(num_pages, w.page_size, w.head_dim, generator=dev_gen, device=dev)
    q = torch.randn(w.batch * w.q_len, w.heads, w.head_dim, generator=dev_gen, device=dev)

    return VerifyInputs(
        workload=w,
        q=q.to(tdtype),
        kv_cache=kv_cache.to(tdtype),
        page_table=page_table.to(dev),
        kv_lens=torch.tensor(kv_lens, dtype=torch.int32, device=dev),
        tree_mask=masks.to(torch.int8).to(dev),
        token_slots=token_slots.to(dev),
        kv_indptr=kv_indptr.to(dev),
        sm_scale=w.head_dim**-0.5,
    )
