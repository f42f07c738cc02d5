"""`profile --in-kernel`'s evidence end to end without a GPU: a committed H200 run with the timeline of the same
workload beside it (tests/fixtures/h200/in_kernel/b1h8.npz, the run's own file name) is loaded, cited in the
split kernel's evidence and drawn in the report; a kernel without stamps gets one line."""

from __future__ import annotations

import shutil
from types import SimpleNamespace

from profiler.in_kernel import no_scopes_line
from roofline.api import load, report
from roofline.pipelines.in_kernel import in_kernel_pass
from tests.paths import FIXTURES, RUNS


def test_a_kernel_without_stamps_gets_one_line():
    assert no_scopes_line("triton_mla_fast") is None
    line = no_scopes_line("flashmla")
    assert line.startswith("in-kernel: flashmla has no in-kernel scopes") and "\n" not in line
    said = []
    done = in_kernel_pass(SimpleNamespace(say=said.append), "triton_mla", FIXTURES / "unused.json")
    assert done.file is None and done.notes == said == [no_scopes_line("triton_mla")]


def test_the_runs_timeline_is_loaded_cited_and_drawn(tmp_path):
    run_dir = tmp_path / "run"
    shutil.copytree(RUNS / "h200-triton_mla_fast-chain-128k-p64", run_dir)  # 128k, 8 heads, page 64, chain
    shutil.copy(FIXTURES / "in_kernel" / "b1h8.npz", run_dir / "in_kernel.npz")
    run = load(run_dir)
    assert run.in_kernel is not None and run.in_kernel.kernel == "_gluon_ring_kernel"
    ring = next(k for k in run.analysis.kernels if k.kernel == "_gluon_ring_kernel")
    assert any(e.startswith("in-kernel timeline: main 1 waits 40%") for e in ring.evidence)
    written = report(run, tmp_path / "rep" / "report.md")
    text = (tmp_path / "rep" / "report.md").read_text()
    assert "## Inside the kernel" in text and "report_in_kernel.png" in text
    assert "The stamps cost +2.2% on the step (67.0 µs without, 68.5 µs with them" in text
    assert "The step's critical path: `main 0` on SM 84 (program 66; 16 tiles) ends last." in text
    assert "| wait P | 18.6 | 29.2% | the other main warpgroup's P |" in text
    assert tmp_path / "rep" / "report_in_kernel.png" in written


def test_a_run_without_one_has_no_section(tmp_path):
    run = load(RUNS / "h200-triton_mla_fast-chain-128k-p64")
    assert run.in_kernel is None
    report(run, tmp_path / "report.md")
    assert "Inside the kernel" not in (tmp_path / "report.md").read_text()


def test_profile_in_kernel_reaches_the_api(monkeypatch):
    """`roofline profile ... --in-kernel` asks the API for the stamped step (stopped before any tool)."""
    from click.testing import CliRunner

    from kernels.errors import BadInput
    from roofline.cli import main

    seen = {}

    def fake(request, **kw):
        seen.update(kernel=request.kernel, in_kernel=request.in_kernel)
        raise BadInput("stopped before the capture (test)")

    monkeypatch.setattr("roofline.api.profile", fake)
    args = ["profile", "--kernel", "triton_mla_fast", "--ctx", "128k", "--page-size", "64", "--in-kernel"]
    CliRunner().invoke(main, args, catch_exceptions=False)
    assert seen["kernel"] == "triton_mla_fast" and seen["in_kernel"] is True
