"""A label for each row of an analysis that no other row shares: the kernel's name, plus what tells it apart."""

from __future__ import annotations

from collections.abc import Sequence


def distinct_labels(kernels: Sequence) -> list[str]:
    """Each row's (summary.KernelSummary) kernel name, plus what tells it apart from rows of the same name (its file, grid, block,
    each added only where it differs within the clash; then a number for different instantiations, e.g.
    templates, with the same launch shape)."""
    labels = [k.kernel for k in kernels]
    for describe in (
        lambda k: k.source or "",
        lambda k: f"grid {_int(k.grid_size)}",
        lambda k: f"block {_int(k.block_size)}",
    ):
        clash = _clashing(labels)
        for label in {labels[i] for i in clash}:
            group = [i for i in clash if labels[i] == label]
            said = [describe(kernels[i]) for i in group]
            if len(set(said)) > 1:  # this describes the difference: every row of the clash says it
                for i, text in zip(group, said):
                    labels[i] = f"{labels[i]} [{text}]"
    clash = _clashing(labels)
    seen: dict[str, int] = {}
    out = []
    for i, lab in enumerate(labels):
        if i in clash:
            seen[lab] = seen.get(lab, 0) + 1
            lab = f"{lab} #{seen[lab]}"
        out.append(lab)
    return out


def _int(x) -> str:
    return "?" if x is None else f"{x:.0f}"


def _clashing(labels: list[str]) -> set[int]:
    counts: dict[str, int] = {}
    for lab in labels:
        counts[lab] = counts.get(lab, 0) + 1
    return {i for i, lab in enumerate(labels) if counts[lab] > 1}
