"""Kernel names a person reads: the function's own name, cut from a demangled signature.

ncu's CSV (`Kernel Name`) and some tools give the whole demangled signature, e.g. `void
at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, ...>(int, T2, T3)` (the
torch.randn kernel's runs to 600 characters); an `.ncu-rep` and nsys give the function's name alone
(`vectorized_elementwise_kernel`). The short name is that function name, so a report and its CSV name a
kernel alike; the full name stays beside it (`mangled_name`) for the one place that shows it whole.
"""

from __future__ import annotations


def short_kernel_name(name: str) -> str:
    """The function's name without return type, namespaces, template arguments or parameters
    ('void at::native::f<4, long>(char *, long)' -> 'f'); a plain name is returned as it is."""
    text = " ".join(str(name).split()).replace("(anonymous namespace)", "{anonymous}")
    if "(" not in text and "<" not in text and "::" not in text:
        return text
    head = _outside(text, "(")  # before the parameter list, skipping any '(' inside template arguments
    head = _outside(head, "<")  # before the template arguments
    head = head.split()[-1] if head.split() else head  # the return type ('void') dropped
    short = head.rsplit("::", 1)[-1].strip()
    return short or " ".join(str(name).split())


def _outside(text: str, mark: str) -> str:
    """`text` up to the first `mark` that is not inside <...> or (...)."""
    depth = 0
    for i, c in enumerate(text):
        if c == mark and depth == 0:
            return text[:i]
        if c in "<(":
            depth += 1
        elif c in ">)":
            depth = max(0, depth - 1)
    return text
