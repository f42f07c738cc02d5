"""A newcomer's first hour: device choice in `check`, closed-form models at any
batch, option errors, per-user calibration, light start-up of the reading commands."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from kernels.spec import VerifyWorkload
from roofline.analysis.floor import workload_floor
from roofline.analysis.kernel_models import kernel_model
from roofline.catalogue.gpus import get_gpu
from roofline.cli import main

MODELLED = ("triton_mla", "triton_mla_decode", "triton_mla_fast")


def run(*args):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


# --- closed-form model: memory and time do not grow with batch ---------------------------------


def test_floor_and_models_never_list_every_request(monkeypatch):
    """A uniform batch is batch x one request: nothing may build kv_lens (one entry per request)."""

    def per_request_list(self):
        raise AssertionError("kv_lens built for a uniform batch")

    monkeypatch.setattr(VerifyWorkload, "kv_lens", property(per_request_list))
    gpu, w = get_gpu("h200"), VerifyWorkload(batch=100_000_000)
    floor = workload_floor(w, gpu, layers=61)
    assert floor.kv_bytes == 100_000_000 * (131072 + 9) * 1152 * 61
    for kernel in MODELLED:
        assert kernel_model(kernel, w, gpu).programs >= 100_000_000
    r = run("model", "--batch", "100000000", "--kernel", "triton_mla", "--format", "json")
    assert r.exit_code == 0 and json.loads(r.output)["kv_bytes"] == floor.kv_bytes // 61


def test_closed_form_matches_the_ragged_sum():
    gpu = get_gpu("h200")
    uniform = VerifyWorkload(ctx_len=5000, batch=3, heads=16)
    ragged = VerifyWorkload(ctx_len=5000, batch=3, heads=16, ctx_lens=(5000, 5000, 5000))
    mixed = VerifyWorkload(ctx_len=5000, batch=3, heads=16, ctx_lens=(100, 7000, 300))
    assert uniform.kv_tokens == sum(uniform.kv_lens) == sum(ragged.kv_lens)
    assert mixed.kv_tokens == sum(mixed.kv_lens) and mixed.max_kv_len == max(mixed.kv_lens)
    assert workload_floor(uniform, gpu) == workload_floor(ragged, gpu)
    for kernel in MODELLED:
        assert kernel_model(kernel, uniform, gpu) == kernel_model(kernel, ragged, gpu)


# --- check: device, dtype, interpreter size ------------------------------------------------------


def _no_run(*a, **k):
    raise AssertionError("the kernel ran")


def test_check_without_a_gpu_says_use_device_cpu(monkeypatch):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr("kernels.check.check_kernel", _no_run)
    for args in ([], ["--device", "cuda"]):
        r = run("check", "--ctx", "40", *args)
        assert r.exit_code == 1 and "--device cpu" in r.output and "torch sees no CUDA GPU" in r.output
        assert len(r.output.strip().splitlines()) == 1 and "Traceback" not in r.output


def test_check_cpu_bf16_is_refused_with_the_reason(monkeypatch):
    monkeypatch.setattr("kernels.check.check_kernel", _no_run)
    r = run("check", "--ctx", "40", "--device", "cpu", "--dtype", "bf16")
    assert r.exit_code == 2 and "triton-lang/triton#11584" in r.output and "--dtype fp16" in r.output


def test_check_cpu_refuses_a_large_interpreter_run_unless_allowed(monkeypatch):
    monkeypatch.setattr("kernels.check.check_kernel", _no_run)
    r = run("check", "--device", "cpu")  # the default 128k: many minutes in the interpreter
    assert r.exit_code == 2 and "1,048,648 KV token-heads" in r.output and "limit of 131,072" in r.output
    assert "--ctx 16375 or less" in r.output and "--allow-slow" in r.output

    from kernels.check import CheckResult

    calls = []

    def fake(name, workload, device, dtype):
        calls.append((workload.ctx_len, device, dtype))
        return CheckResult(name, workload.describe(), device, dtype, 0.0, 0.0, 2e-3, 0, True)

    monkeypatch.setattr("kernels.check.check_kernel", fake)
    r = CliRunner().invoke(main, ["check", "--device", "cpu", "--allow-slow"])
    assert r.exit_code == 0 and calls == [(131072, "cpu", "fp16")]
    assert "--allow-slow" in r.stderr and "min)" in r.stderr


# --- analyze --project-to ------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["", "  "])
def test_empty_project_to_is_a_usage_error_naming_the_option(value):
    r = run("analyze", "--project-to", value)
    assert r.exit_code == 2 and r.output.startswith("Error: --project-to ") and "needs a GPU name" in r.output


# --- calibrate --save: per user, never inside the package -----------------------------------------


def test_calibrate_saves_per_user_and_gpus_reads_it_first(monkeypatch, tmp_path):
    import torch

    from profiler.bench import MeasuredCeilings
    from roofline.catalogue.gpus import packaged_measured_file, user_measured_dir

    packaged = Path(packaged_measured_file("h200"))
    before = packaged.read_bytes()
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(
        "profiler.bench.measure_ceilings", lambda: MeasuredCeilings("NVIDIA H200", 4100.0, 4300.0, 650.0, 8000.0)
    )
    sizes = (75_497_472, 150_994_944, 301_989_888, 603_979_776)  # a reader of 10 us + 4,000 GB/s
    monkeypatch.setattr("profiler.read_sizes.read_times", lambda: [(b, 0.010 + b / 4000e9 * 1e3) for b in sizes])
    r = CliRunner().invoke(main, ["calibrate"])
    mine = tmp_path / "config" / "roofline" / "measured" / "h200.json"
    assert r.exit_code == 0, r.output
    assert mine.is_file() and str(mine) in r.stderr and user_measured_dir() == mine.parent
    assert packaged.read_bytes() == before  # the installed package is never written
    h200 = get_gpu("h200")
    assert h200.dram_ceiling().value == 4300.0 and h200.measured_from == str(mine)
    fit = h200.read_fit()  # the at-size floor's fit, measured by calibrate
    assert fit.fixed_us == pytest.approx(10.0) and fit.gbps == pytest.approx(4000.0)
    assert (fit.min_bytes, fit.max_bytes) == (sizes[0], sizes[-1]) and "read at size: 10.0 µs fixed" in r.stdout
    out = run("gpus").output
    assert f"h200 measured: {mine} (yours" in out and "read 4300 GB/s" in out

    mine.unlink()  # back to the packaged H200 numbers
    assert get_gpu("h200").measured_from == str(packaged) and "(packaged defaults)" in run("gpus").output

    mine.write_text("{not json")
    r = run("gpus")
    assert r.exit_code == 2 and str(mine) in r.output and "Traceback" not in r.output


# --- light start-up -----------------------------------------------------------------------------


def test_light_commands_do_not_import_pandas():
    code = (
        "import sys; from click.testing import CliRunner; from roofline.cli import main\n"
        "for args in (['gpus'], ['gpus', '--format', 'json'], ['model', '--kernel', 'triton_mla'], "
        "['kernels'], ['--help']):\n"
        "    r = CliRunner().invoke(main, args); assert r.exit_code == 0, (args, r.output)\n"
        "heavy = [m for m in ('pandas', 'numpy', 'torch') if m in sys.modules]\n"
        "assert not heavy, heavy"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
