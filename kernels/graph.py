"""One launch per verify step: a kernel's launches (split + combine) captured in a CUDA graph.

At short context the host cost of two launches is as large as the kernels; replaying a graph
is one launch. The graph is captured on the first call for given inputs and replayed after;
it reads the input tensors at their captured addresses, and returns the same output tensor on
every replay (copy it to keep a result across steps).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable

import torch

from kernels.inputs import VerifyInputs


class GraphedKernel:
    """Wrap `fn(inp, **kw) -> out` so that each call on the same inputs replays one CUDA graph."""

    def __init__(self, fn: Callable[..., torch.Tensor], max_graphs: int = 8) -> None:
        self.fn = fn
        self.max_graphs = max_graphs
        self._graphs: OrderedDict[tuple, tuple[torch.cuda.CUDAGraph, torch.Tensor]] = OrderedDict()

    @staticmethod
    def key(inp: VerifyInputs, kw: dict) -> tuple:
        tensors = (inp.q, inp.kv_cache, inp.page_table, inp.kv_lens, inp.tree_mask)
        return (
            inp.workload,
            inp.sm_scale,
            tuple(sorted(kw.items())),
            tuple((t.data_ptr(), tuple(t.shape), tuple(t.stride()), t.dtype) for t in tensors),
        )

    def __call__(self, inp: VerifyInputs, **kw) -> torch.Tensor:
        if inp.q.device.type != "cuda":
            return self.fn(inp, **kw)  # no graphs without a GPU (the interpreter)
        k = self.key(inp, kw)
        hit = self._graphs.get(k)
        if hit is None:
            stream = torch.cuda.Stream()
            stream.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(stream):
                self.fn(inp, **kw)  # compile and warm up outside the capture
            torch.cuda.current_stream().wait_stream(stream)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                out = self.fn(inp, **kw)
            hit = self._graphs[k] = (graph, out)
            while len(self._graphs) > self.max_graphs:
                self._graphs.popitem(last=False)
        graph, out = hit
        graph.replay()
        return out
