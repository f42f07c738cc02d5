"""Whether the source lines "where the warps wait" cites are this checkout's: the samples name a file and a
line of the source the capture ran (roofline/analysis/waits.py), which later commits move. The run's manifest
records that commit (profiler/source_tree.py); a note says when a cited file changed since, or when the run
cannot tell (no commit recorded)."""

from __future__ import annotations

from profiler.rundir import Manifest
from profiler.source_tree import DIRTY, ROOT, changed_since


def cited_files(analysis) -> list[str]:
    """This project's files that the kernels' top waiting lines cite by line, without their text."""
    waits = [k.waits for k in analysis.kernels if k.waits is not None and k.waits.line_info]
    files = {ln.where.rsplit(":", 1)[0] for w in waits if not w.source_text for ln in w.lines}
    return sorted(f for f in files if not f.startswith("pc ") and (ROOT / f).is_file())


def source_lines_note(analysis, manifest: Manifest | None) -> str | None:
    """One line when the cited lines may not be today's (None when they are, or none is cited)."""
    files = cited_files(analysis)
    if not files:
        return None
    cited = f"where the warps wait cites {', '.join(files)} by line"
    commit = str((manifest.host or {}).get("commit") or "") if manifest is not None else ""
    if not commit:
        return f"{cited} as the captured source had them; the run records no commit, so today's lines may differ"
    short = commit[:12] + (DIRTY if commit.endswith(DIRTY) else "")
    changed, why = changed_since(commit, files)
    if why:
        return f"{cited} of commit {short}; {why}, so today's lines may differ"
    if changed:
        return (
            f"{cited} of commit {short}: {', '.join(changed)} changed since "
            f"(`git show {commit[:12]}:{changed[0]}` has the lines cited)"
        )
    if commit.endswith(DIRTY):
        return f"{cited} of commit {short}: the kernels had uncommitted changes then, so the lines may differ"
    return None
