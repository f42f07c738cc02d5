"""Which commit of this project's source a run captured, and whether a file changed since: the manifest
records the commit (`host.commit`, with `+dirty` when the kernels differ from it), so that a report citing
`kernels/triton_mla.py:33` can say when today's file is not the one the samples were taken on."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]  # the checkout holding kernels/ and profiler/
DIRTY = "+dirty"


def _git(*args: str) -> subprocess.CompletedProcess | None:
    try:
        return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None


def tree_commit() -> str | None:
    """The checkout's commit, `+dirty` when kernels/ differs from it; None outside a git checkout."""
    head = _git("rev-parse", "HEAD")
    if head is None or head.returncode != 0:
        return None
    status = _git("status", "--porcelain", "--", "kernels")
    dirty = status is not None and status.returncode == 0 and bool(status.stdout.strip())
    return head.stdout.strip() + (DIRTY if dirty else "")


def changed_since(commit: str, files: list[str]) -> tuple[list[str], str | None]:
    """(the files of this checkout that differ from `commit`, why none could be checked or None)."""
    commit = commit.removesuffix(DIRTY)
    if tree_commit() is None:
        return [], "this copy of roofline is not a git checkout"
    known = _git("cat-file", "-e", f"{commit}^{{commit}}")
    if known is None or known.returncode != 0:
        return [], f"commit {commit[:12]} is not in this checkout"
    changed = []
    for f in files:
        diff = _git("diff", "--quiet", commit, "--", f)
        if diff is not None and diff.returncode == 1:
            changed.append(f)
    return changed, None
