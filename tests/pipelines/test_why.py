"""`roofline profile --why` runs the kernel's removal experiment in the same call. Its
pass (roofline/pipelines/why.py) is run here on a run being written that holds the ring kernel's real H200
capture at 8 heads (tests/fixtures/h200/runs/h200-triton_mla_fast-ring-128k-p64), with a stand-in for the
experiment's GPU child that writes the committed experiment's rows (docs/results/h200-removal): the run
then names the loads, with the experiment's numbers, in `load`, `analyze` and the report alike."""

import json
import shutil
import sys

from click.testing import CliRunner

import roofline
from kernels.spec import VerifyWorkload
from profiler.run_writer import RunWriter
from profiler.rundir import RunSpec
from roofline.cli import main
from roofline.pipelines.capture import Capture
from roofline.pipelines.removal_experiment import KNOWN, REGISTERED, subject_for
from roofline.pipelines.why import EXPERIMENT_KERNELS, NO_SUBJECT, WHY_KERNELS, why_command, why_pass
from tests.paths import ROOT, RUNS

RING = RUNS / "h200-triton_mla_fast-ring-128k-p64"
EXPERIMENT = ROOT / "docs" / "results" / "h200-removal" / "_gluon_ring_kernel.json"
H200 = ("NVIDIA H200", 132, "sm_90")
STAND_IN = """
import json, sys
args = sys.argv[1:]
value = lambda flag: args[args.index(flag) + 1]
doc = json.load(open({experiment!r}))
w = json.load(open(value("--spec")))["workload"]
point = dict(ctx_len=w["ctx_len"], heads=w["heads"], page_size=w["page_size"])
doc["rows"] = [r for r in doc["rows"] if all(r[k] == v for k, v in point.items())]
if not doc["rows"]:
    print("no experiment for " + value("--for") + " here: the stand-in has no rows for it")
    sys.exit({no_subject})
open(value("--file"), "w").write(json.dumps(doc))
print("wrote", value("--file"))
"""


def _writer(tmp_path):
    """A run being written that holds the ring capture (its report, spec and harness record)."""
    writer = RunWriter(tmp_path / "run")
    spec = json.loads((RING / "spec.json").read_text())
    writer.write_spec(RunSpec(**{k: spec[k] for k in ("kernel", "workload", "iterations", "created")}))
    for role in ("ncu", "harness"):
        shutil.copy(RING / writer.file(role).name, writer.file(role))
    writer.add_report(writer.file("ncu"), "ncu", launches=6, passes=4, preset="verdict")
    return writer, writer.file("spec")


def _spec_of(tmp_path, workload: VerifyWorkload):
    """A run's spec.json holding `workload` (what the experiment child reads)."""
    path = tmp_path / "other" / "spec.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(RunSpec(kernel="triton_mla_fast", workload=workload.to_dict(), iterations=3).to_dict()))
    return path


def _stand_in(tmp_path):
    script = tmp_path / "experiment.py"
    script.write_text(STAND_IN.format(experiment=str(EXPERIMENT), no_subject=NO_SUBJECT))
    return [sys.executable, str(script)]


def test_the_why_pass_names_the_loads_with_the_experiments_numbers(tmp_path):
    writer, spec = _writer(tmp_path)
    said = []
    cap = Capture(writer, ["python3", "-m", "profiler.harness"], said.append)
    done = why_pass(cap, "triton_mla_fast", spec, _stand_in(tmp_path))
    assert done.report == writer.file("removal") and not done.notes
    assert [e.tool for e in writer.manifest.reports] == ["ncu", "removal"]
    assert f"--for triton_mla_fast --spec {spec} --method rotated" in writer.manifest.commands[-1]
    final = writer.commit()
    run = roofline.load(final)  # the run's own experiment applies, as `roofline analyze RUN` reads it
    ring = next(k for k in run.analysis.kernels if k.kernel == "_gluon_ring_kernel")
    assert ring.cause == "pipelined: the loads set the pace, by a removal experiment"
    said = ring.evidence[0]
    assert "the step takes 0.0706 ms" in said and "the loads alone 0.0638 ms (90% of it)" in said
    assert str(final / "removal.json") in said
    text = CliRunner().invoke(main, ["analyze", str(final)]).output
    assert "_gluon_ring_kernel: latency (pipelined: the loads set the pace, by a removal experiment)" in text
    md = tmp_path / "report" / "report.md"
    roofline.report(run, md)
    report = md.read_text()
    assert "the loads set the pace" in report and "--removal" not in report  # the run carries its own


def test_a_kernel_without_removal_switches_is_told_the_experiment_needs_its_source(tmp_path):
    writer, spec = _writer(tmp_path)
    done = why_pass(Capture(writer, [], lambda s: None), "triton_mla_decode", spec, _stand_in(tmp_path))
    assert done.report is None and "needs a kernel with them" in done.notes[0]
    assert not writer.file("removal").exists()


def test_where_the_plan_has_nothing_to_cut_the_experiment_says_why(tmp_path):
    writer, _ = _writer(tmp_path)
    other = _spec_of(tmp_path, VerifyWorkload(ctx_len=8192, heads=8, page_size=64))  # the stand-in has no rows at 8k
    done = why_pass(Capture(writer, [], lambda s: None), "triton_mla_fast", other, _stand_in(tmp_path))
    assert done.report is None and done.notes == [
        "--why: no experiment for triton_mla_fast here: the stand-in has no rows for it"
    ]


def test_the_plan_chooses_the_subject_and_a_kernel_without_switches_is_named():
    assert set(WHY_KERNELS) == set(REGISTERED)
    eight = VerifyWorkload(ctx_len=131072, heads=8, page_size=64)
    assert subject_for("triton_mla_fast", eight, *H200) == ("ring", "")
    assert subject_for("triton_mla", VerifyWorkload(ctx_len=131072), *H200) == ("triton_mla", "")
    sixty_four = VerifyWorkload(ctx_len=131072, heads=64, page_size=64)
    assert subject_for("triton_mla_fast", sixty_four, *H200) == ("stagger", "")  # the seesaw kernel, staggered
    assert subject_for("triton_mla_fast", VerifyWorkload(ctx_len=32768, heads=16, q_len=4, page_size=64), *H200) == (
        "stagger",
        "",
    )
    name, why = subject_for("triton_mla_decode", eight, *H200)
    assert name is None and "has no removal switches" in why


def test_the_why_command_is_one_the_experiment_takes(tmp_path):
    assert KNOWN == EXPERIMENT_KERNELS
    cmd = why_command("triton_mla_fast", tmp_path / "spec.json", ROOT / "r.json")
    removal = main.get_command(None, "removal")
    params = removal.make_context("removal", cmd[4:]).params
    assert cmd[1:4] == ["-m", "roofline", "removal"]
    assert (params["registered"], params["spec"], params["method"]) == (
        "triton_mla_fast",
        str(tmp_path / "spec.json"),
        "rotated",
    )
    r = CliRunner().invoke(main, ["removal", "--for", "triton_mla_fast"])
    assert r.exit_code == 2 and "--for needs --spec" in r.output


def test_the_experiments_for_pass_times_each_variant_by_the_bench_method(tmp_path, monkeypatch):
    """`removal_experiment --for` on the CPU, the GPU parts faked: the subject the plan launches, each variant
    through the rotated timing (the bench's method), one document written to --file."""
    from roofline.analysis.removal import read_removal
    from roofline.pipelines import removal_experiment as cuts

    timed = []
    monkeypatch.setattr(cuts.torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(cuts.torch.cuda, "get_device_name", lambda *a: "NVIDIA H200")
    monkeypatch.setattr(cuts.torch.cuda, "empty_cache", lambda: None)
    monkeypatch.setattr(cuts, "device_facts", lambda device: H200)
    monkeypatch.setattr(cuts, "rotated_input_sets", lambda w: ["set 0", "set 1"])
    monkeypatch.setattr(cuts, "_rotated_ms", lambda call, sets: timed.append(sets) or 0.07 - 0.001 * len(timed))
    out = tmp_path / "removal.json"
    w8 = VerifyWorkload(ctx_len=131072, heads=8, page_size=64)
    assert cuts.run_for("triton_mla_fast", w8, out, "rotated", "test", lambda s: None) == 0
    (removal,) = read_removal(out)
    assert removal.kernel == "_gluon_ring_kernel" and set(removal.ms) == {
        "read",
        "full",
        "no-mma",
        "no-softmax",
        "no-gather",
        "loads-only",
    }
    assert removal.method.startswith("the bench's method: CUDA-graph replays of the whole step over rotated input sets")
    assert all(sets == ["set 0", "set 1"] for sets in timed) and len(timed) == 6
    w64 = VerifyWorkload(ctx_len=131072, heads=64, page_size=64)
    assert cuts.run_for("triton_mla_fast", w64, out, "rotated", "test", lambda s: None) == 0  # stagger, its switches
    assert read_removal(out)[0].kernel == "_gluon_seesaw_kernel"
    assert cuts.run_for("triton_mla_decode", w64, out, "rotated", "test", lambda s: None) == NO_SUBJECT
