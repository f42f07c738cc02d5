"""A step whose launches overlap in time, as the fast kernel's are on an nsys timeline (its combine is a
programmatic dependent launch: nsys times it from its start, while the split kernel still runs, to its end):
the headline step counts the overlap once, and a capture whose launches ncu replayed one by one still sums them.
The H200 capture: tests/fixtures/h200/runs/h200-triton_mla_fast-ragged32-pdl-nsys (its README entry)."""

from __future__ import annotations

import pytest

import roofline
from tests.paths import FIXTURES
from tests.pm_runs import unpacked_run

PDL_RUN = FIXTURES / "runs" / "h200-triton_mla_fast-ragged32-pdl-nsys"


@pytest.fixture(scope="module")
def pdl(tmp_path_factory):
    return roofline.load(unpacked_run(PDL_RUN, tmp_path_factory.mktemp("pdl")))


def test_the_step_counts_overlapping_launches_once(pdl):
    launches = pdl.launches
    summed = launches["duration_ms"].sum() / 3  # three steps
    step = pdl.analysis.step.kernel_ms_per_step
    span = pdl.timeline.summary["step_ms_median"]  # nsys: first kernel start to last kernel end, per step
    assert summed > 1.35 * step  # the combine's own time covers most of the split kernel's
    assert step == pytest.approx(span, rel=0.01)
    assert pdl.timeline.summary["kernel_ms_per_step"] == pytest.approx(span, rel=1e-6)  # no idle gap
    assert pdl.timeline.summary["launch_ms_per_step"] > 1.35 * span
    note = next(n for n in pdl.analysis.notes if n.startswith("launches overlap in time"))
    assert f"{step:.4g} ms per step" in note and f"{summed:.4g} ms" in note


def test_the_step_agrees_with_the_timing_pass(pdl):
    """The headline within 3% of the same step timed with no profiler (it was 1.45x before overlaps counted once)."""
    import json

    timing = json.loads((PDL_RUN / "timing.json").read_text())
    samples = sorted(timing["samples_ms"])
    median = samples[len(samples) // 2]
    assert pdl.analysis.step.kernel_ms_per_step == pytest.approx(median, rel=0.03)


def test_replayed_launches_still_sum():
    run = roofline.load(FIXTURES / "runs" / "h200-triton_mla_fast-skew16-p64")
    iterations = run.spec.iterations
    summed = run.launches["duration_ms"].sum() / iterations
    assert run.analysis.step.kernel_ms_per_step == pytest.approx(summed, rel=1e-9)
    assert not any(n.startswith("launches overlap") for n in run.analysis.notes)


def test_the_report_says_the_launches_overlap(pdl, tmp_path):
    from click.testing import CliRunner

    from roofline.cli import main

    out = tmp_path / "report.md"
    assert CliRunner().invoke(main, ["report", str(pdl.source), "-o", str(out)]).exit_code == 0
    md = out.read_text()
    assert "0.2044 ms of kernels per step" in md  # the headline, overlaps once
    assert "| the launches' own times summed (they overlap) | 0.2939 |" in md  # nsys's per-step median
    assert "launches overlap in time" in md
