"""Where the warps wait cites file:line of the source the capture ran: the manifest records its commit, and
reading the run says when a cited file changed since, or that the run records none."""

import json
import shutil
import subprocess

import pytest

import roofline
from profiler.source_tree import ROOT, tree_commit
from tests.paths import SAMPLE_RUN

CITED = "kernels/cuts.py, kernels/softmax.py, kernels/triton_mla.py"


def git(*args) -> str:
    return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True, check=True).stdout.strip()


def with_commit(tmp_path, commit: str | None):
    run = shutil.copytree(SAMPLE_RUN, tmp_path / f"run-{commit}")
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["host"]["commit"] = commit
    (run / "manifest.json").write_text(json.dumps(manifest))
    return [n for n in roofline.load(run).analysis.notes if n.startswith("where the warps wait cites")]


needs_git = pytest.mark.skipif(tree_commit() is None, reason="not a git checkout")


def test_a_run_without_a_commit_says_its_lines_may_differ(tmp_path):
    assert with_commit(tmp_path, None) == [
        f"where the warps wait cites {CITED} by line as the captured source had them; the run records no "
        "commit, so today's lines may differ"
    ]


@needs_git
def test_a_file_changed_since_the_capture_is_named_with_the_command_that_shows_its_lines(tmp_path):
    first = git("log", "--format=%H", "--", "kernels/triton_mla.py").splitlines()[-1]
    (note,) = with_commit(tmp_path, first)
    assert note.startswith(f"where the warps wait cites {CITED} by line of commit {first[:12]}: ")
    assert "kernels/triton_mla.py" in note.split(": ", 1)[1] and f"`git show {first[:12]}:kernels/" in note


@needs_git
def test_lines_of_an_unchanged_tree_need_no_note(tmp_path):
    if git("status", "--porcelain", "--", "kernels"):
        pytest.skip("kernels/ has uncommitted changes here")
    assert with_commit(tmp_path, git("rev-parse", "HEAD")) == []
    (note,) = with_commit(tmp_path, "0" * 40)
    assert note.endswith(
        f"of commit {'0' * 12}; commit {'0' * 12} is not in this checkout, so today's lines may differ"
    )


@needs_git
def test_profile_records_the_commit_in_the_manifest():
    assert tree_commit().removesuffix("+dirty") == git("rev-parse", "HEAD")
