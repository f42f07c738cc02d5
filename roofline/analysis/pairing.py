"""Which kernel of the base run is which of the head's, for `compare`: by name (and by launch
configuration where a name repeats on a side); where the names differ, as the user says (`--pair A=B`)
or by role, when each side has exactly one kernel of that role left: the combine (a kernel whose name
says it merges partial results: combine, merge, reduce, stage2) or the main pass (any other). So
FlashMLA's `flash_fwd_splitkv_mla_kernel` meets the fast kernel's `_gluon_ring_kernel`, and their
combines meet each other; one SGLang kernel under two names meets itself. Every pair not made by name
is said in a note, with how it was made."""

from __future__ import annotations

from dataclasses import dataclass

from kernels.errors import BadInput
from roofline.analysis.summary import KernelSummary

COMBINE_WORDS = ("combine", "merge", "reduce", "stage2")
BY_NAME = "name"
BY_USER = "--pair"


class PairError(BadInput):
    """A --pair that names a kernel a run does not hold, or one kernel twice."""


def role(kernel: str) -> str:
    """ "combine" for a kernel that merges partial results (by its name), else "main"."""
    return "combine" if any(w in kernel.lower() for w in COMBINE_WORDS) else "main"


@dataclass(frozen=True)
class Pair:
    base: KernelSummary | None
    head: KernelSummary | None
    how: str | None  # BY_NAME, BY_USER, "role (main)", "role (combine)"; None for a kernel on one side only


def parse_pairs(items: list[str] | tuple[str, ...]) -> dict[str, str]:
    """["A=B", ...] -> {A: B}: base kernel A is head kernel B."""
    pairs: dict[str, str] = {}
    for item in items:
        base, sep, head = item.partition("=")
        if not sep or not base.strip() or not head.strip():
            raise PairError(
                f"--pair {item!r}: give BASE_KERNEL=HEAD_KERNEL (e.g. flash_fwd_splitkv_mla_kernel=_gluon_ring_kernel)"
            )
        if base.strip() in pairs or head.strip() in pairs.values():
            raise PairError(f"--pair {item!r}: a kernel is paired twice")
        pairs[base.strip()] = head.strip()
    return pairs


def _by_config(b: list[KernelSummary], h: list[KernelSummary], how: str) -> list[Pair]:
    """One pair for one kernel a side; else by (grid, block), the rest on one side."""
    if len(b) == 1 and len(h) == 1:
        return [Pair(b[0], h[0], how)]
    pairs, h_left = [], list(h)
    for kb in b:
        same = next((kh for kh in h_left if (kh.grid_size, kh.block_size) == (kb.grid_size, kb.block_size)), None)
        if same is not None:
            h_left.remove(same)
        pairs.append(Pair(kb, same, how if same is not None else None))
    return pairs + [Pair(None, kh, None) for kh in h_left]


def pair_kernels(
    base: list[KernelSummary], head: list[KernelSummary], pairs: dict[str, str] | None = None
) -> tuple[list[Pair], list[str]]:
    """(the pairs, in the base's order then the head's leftovers; a note for each pair not made by name)."""
    pairs = pairs or {}
    base_names, head_names = {k.kernel for k in base}, {k.kernel for k in head}
    for b, h in pairs.items():
        for name, names, side in ((b, base_names, "base"), (h, head_names, "head")):
            if name not in names:
                raise PairError(
                    f"--pair {b}={h}: the {side} run has no kernel {name} (it has {', '.join(sorted(names))})"
                )
    out: list[Pair] = []
    notes: list[str] = []
    done_b, done_h = set(), set()
    for b, h in pairs.items():
        out += _by_config([k for k in base if k.kernel == b], [k for k in head if k.kernel == h], BY_USER)
        done_b.add(b)
        done_h.add(h)
        notes.append(f"paired as --pair says: {b} (base) with {h} (head)")
    for name in dict.fromkeys([k.kernel for k in base] + [k.kernel for k in head]):
        if name in done_b or name in done_h:
            continue
        b = [k for k in base if k.kernel == name]
        h = [k for k in head if k.kernel == name]
        if b and h:
            out += _by_config(b, h, BY_NAME)
            done_b.add(name)
            done_h.add(name)
    left_b = [k for k in base if k.kernel not in done_b]
    left_h = [k for k in head if k.kernel not in done_h]
    for r in ("main", "combine"):
        b = [k for k in left_b if role(k.kernel) == r]
        h = [k for k in left_h if role(k.kernel) == r]
        if len(b) == 1 and len(h) == 1:  # one of this role a side, under different names
            out.append(Pair(b[0], h[0], f"role ({r})"))
            left_b.remove(b[0])
            left_h.remove(h[0])
            notes.append(
                f"paired by role ({r}): {b[0].kernel} (base) with {h[0].kernel} (head), whose names differ; "
                "--pair BASE=HEAD pairs them otherwise"
            )
    out += [Pair(k, None, None) for k in left_b] + [Pair(None, k, None) for k in left_h]
    order = {id(k): i for i, k in enumerate(base)}
    out.sort(key=lambda p: order.get(id(p.base), len(base)))  # the base's order, head-only rows last
    return out, notes


def match_kernels(base: list[KernelSummary], head: list[KernelSummary]) -> list[tuple]:
    """Pairs (base, head) by name only (and launch configuration where a name repeats)."""
    pairs = []
    for name in dict.fromkeys([k.kernel for k in base] + [k.kernel for k in head]):
        pairs += [
            (p.base, p.head)
            for p in _by_config([k for k in base if k.kernel == name], [k for k in head if k.kernel == name], BY_NAME)
        ]
    return pairs
