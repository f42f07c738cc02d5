"""The launch plan on record: the harness writes the plan the kernel ran into the run (plan.json), and the
imbalance analysis names the requests behind the tail from it; a capture without one is re-planned by
today's code, and the line says so."""

import json
import shutil

import pytest

import roofline
from kernels.fast.paths import plan_fast
from kernels.fast.run import plan_json
from kernels.inputs import build_inputs
from kernels.registry import get_kernel
from profiler import harness
from profiler.rundir import RunDir, sha256
from roofline.analysis.imbalance import REPLANNED
from tests.paths import RUNS

SKEW = RUNS / "h200-triton_mla_fast-skew16-p64"


def _tail(run) -> dict:
    (k,) = [k for k in run.analysis.kernels if k.kernel == "_gluon_seesaw_kernel"]
    return k, k.imbalance["tail"]


def test_a_capture_without_its_plan_is_replanned_and_says_so():
    k, tail = _tail(roofline.load(SKEW))
    assert tail["recorded"] is False and tail["grid"] == (1, 8, 16) and tail["split_len"] == 16448
    assert any(e.startswith("the tail, by the launch plan") and e.endswith(REPLANNED) for e in k.evidence)


def test_the_runs_recorded_plan_is_the_one_read(tmp_path):
    """plan.json's plan (here: the uniform schedule at another split length than today's) names the tail."""
    run = tmp_path / "run"
    shutil.copytree(SKEW, run)
    w = RunDir(run).spec().workload
    record = plan_json(plan_fast(roofline.make_workload(**_fields(w)), "sm_90", 132, "NVIDIA H200", schedule="uniform"))
    record["split_len"] = 20000  # not what today's code plans: the record, not a re-plan, is read
    (run / "plan.json").write_text(json.dumps({"format": harness.PLAN_FORMAT, "kernel": "triton_mla_fast", **record}))
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["files"]["plan.json"] = sha256(run / "plan.json")
    (run / "manifest.json").write_text(json.dumps(manifest))
    k, tail = _tail(roofline.load(run))
    assert tail["recorded"] is True and tail["split_len"] == 20000 and tail["grid"] == (1, 8, 16)
    assert not any(e.endswith(REPLANNED) for e in k.evidence)


def _fields(w: dict) -> dict:
    lens = ",".join(str(n) for n in w["ctx_lens"])
    return dict(lens=lens, heads=w["heads"], q_len=w["q_len"], page_size=w["page_size"], tree_mask=w["tree_mask"])


def test_the_harness_records_the_plan_the_kernel_ran(tmp_path, monkeypatch):
    """The profiled child on this CPU (the launches stood in): plan.json holds the plan of the spec's workload."""
    import torch

    w = roofline.make_workload(lens="mix:1x128k,15x2k", q_len=4, heads=16, page_size=64, tree_mask="chain", seed=3)
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"workload": w.to_dict()}))
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr("kernels.inputs.build_inputs", lambda w, device: build_inputs(w, device="cpu"))
    monkeypatch.setattr(harness, "run_in_range", lambda call, iters, warmup: None)
    monkeypatch.setattr(harness, "device_facts", lambda device: ("NVIDIA H200", 132, "sm_90"))
    out = tmp_path / "plan.json"
    argv = ["--spec", str(spec), "--kernel", "triton_mla_fast", "--iters", "1", "--plan", str(out)]
    assert harness.main(argv) == 0
    record = json.loads(out.read_text())
    assert record["format"] == harness.PLAN_FORMAT and record["workload"] == w.to_dict()
    want = get_kernel("triton_mla_fast").plan_record(build_inputs(w, device="cpu"))
    assert {k: record[k] for k in want} == json.loads(json.dumps(want))
    assert record["schedule"] == "batch" and {item[0] for item in record["items"]} == set(range(16))


@pytest.mark.parametrize("name", ["triton_mla", "flashmla"])
def test_a_kernel_without_a_plan_records_none(name):
    assert get_kernel(name).plan is None
