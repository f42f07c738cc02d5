"""`roofline doctor`: can this machine profile, and if not, what to do about it. One screen.

Checks: this project's packages are the ones imported; ncu and nsys found (paths, versions); nsys's
importer libraries; GPU and driver (nvidia-smi, kernels.hardware.local_gpu); whether the performance counters are readable
(RmProfilingAdminOnly, ERR_NVGPUCTRPERM); ncu_report (the PyPI wheel); torch, triton and CUDA as
the profiled child process sees them. Every problem comes with a fix. Exit 1 when profiling
cannot work (the verdict over the checks: roofline/analysis/diagnosis.py); a CPU analysis environment (no
driver, no CUDA torch) is said to be one, its profiling checks shown as information, and exits 0. Imports nothing from kernels/
or profiler/ before it knows they are this project's.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import os
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

from roofline.analysis.diagnosis import Check, Diagnosis, verdict
from roofline.shadowing import shadowed_packages

PARAMS = Path("/proc/driver/nvidia/params")


def _run(cmd: list[str], timeout: float = 60) -> tuple[int, str]:
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.SubprocessError) as exc:
        return -1, str(exc)
    return p.returncode, (p.stdout + p.stderr).strip()


def check_packages() -> list[Check]:
    found = shadowed_packages()
    if not found:
        return [Check("packages", "ok", "kernels, profiler, reports are roofline's own")]
    return [
        Check(
            f"package {s.package}",
            "FAIL",
            s.message().split(". Fix: ")[0],
            fix=s.message().split(". Fix: ")[1],
            blocks=True,
        )
        for s in found
    ]


def check_tools(own_profiler: bool) -> tuple[list[Check], dict]:
    """ncu and nsys: path and version, and nsys's importer libraries."""
    if not own_profiler:
        return [Check("ncu/nsys", "info", "not checked: `profiler` or `kernels` is not roofline's own (above)")], {}
    from profiler.errors import ToolNotFound  # lazy: only once `profiler` is known to be roofline's own
    from profiler.ncu import find_ncu, ncu_version  # lazy, as above
    from profiler.nsys import IMPORTER_LIBS, find_nsys, importer_missing, nsys_version  # lazy, as above

    checks, found = [], {}
    for name, find, tool_version, what in (
        ("ncu", find_ncu, ncu_version, "hardware counters"),
        ("nsys", find_nsys, nsys_version, "timeline"),
    ):
        try:
            path = find()
        except ToolNotFound as exc:
            checks.append(
                Check(
                    name,
                    "warn",
                    str(exc).split(":")[0] + f" (no {what})",
                    fix=f"install Nsight {'Compute' if name == 'ncu' else 'Systems'}, or put it on PATH, or set "
                    f"{name.upper()}=/path/to/{name} (profile also takes --{name} PATH)",
                )
            )
            continue
        found[name] = path
        checks.append(Check(name, "ok", f"{path} ({tool_version(path) or 'version unknown'})"))
    if "nsys" in found:
        missing = importer_missing(found["nsys"])
        if missing:
            checks.append(
                Check(
                    "nsys importer",
                    "FAIL",
                    f"cannot load {', '.join(missing)}: nsys would leave a .qdstrm and no report",
                    blocks=False,
                    fix="install them (e.g. `apt-get install libdw1 libelf1`) or put a folder "
                    "holding them on LD_LIBRARY_PATH",
                )
            )
            found.pop("nsys")
        else:
            checks.append(Check("nsys importer", "ok", f"{', '.join(IMPORTER_LIBS)} load"))
    if not found:
        checks.append(
            Check(
                "profilers",
                "FAIL",
                "neither ncu nor a working nsys: nothing to profile with",
                fix="install Nsight Compute (ncu) and/or Nsight Systems (nsys)",
                blocks=True,
            )
        )
    return checks, found


def check_gpu(own_kernels: bool = True) -> list[Check]:
    """The local GPU (kernels.hardware.local_gpu) and its record in the hardware table."""
    if not own_kernels:
        return [Check("GPU", "info", "not checked: `kernels` is not roofline's own (above)")]
    from kernels.hardware import HARDWARE_FILE, NoLocalGpu, local_gpu  # lazy: only once `kernels` is roofline's own

    try:
        here = local_gpu()
    except NoLocalGpu as exc:
        fix = (
            "run `roofline profile` on a machine with an NVIDIA GPU and driver (analyze, report and model work without one)"
            if exc.no_driver
            else "check the driver (`nvidia-smi`); in a container, run it with the GPU passed in (e.g. --gpus all)"
        )
        return [Check("GPU", "FAIL", str(exc), fix=fix, blocks=True)]
    more = f" (and {here.count - 1} more)" if here.count > 1 else ""
    chip = f"ncu chip {here.chip}" if here.chip else "no ncu chip: gh100 metric names"
    if here.gpu is None:
        known = f"not in {HARDWARE_FILE} (no ceilings: floors need --gpu); {chip}"
    else:
        known = f"{here.gpu.short_name} in {HARDWARE_FILE} ({here.gpu.arch}, {chip})"
    return [Check("GPU", "ok", f"{here.name}, {here.driver}{more}; {known}")]


def check_counters(params: Path = PARAMS, euid: int | None = None) -> list[Check]:
    """Whether ncu may read the performance counters (else it fails with ERR_NVGPUCTRPERM)."""
    euid = os.geteuid() if euid is None else euid
    try:
        text = params.read_text()
    except OSError:
        return [Check("counters", "info", f"{params} not readable (no NVIDIA kernel driver loaded here)")]
    value = next(
        (
            ln.split(":", 1)[1].strip()
            for ln in text.splitlines()
            if ln.split(":", 1)[0].strip() == "RmProfilingAdminOnly"
        ),
        None,
    )
    if value is None:
        return [Check("counters", "info", f"{params} has no RmProfilingAdminOnly line")]
    if value == "0":
        return [Check("counters", "ok", "readable by every user (RmProfilingAdminOnly: 0)")]
    if euid == 0:
        return [Check("counters", "ok", "admin-only (RmProfilingAdminOnly: 1), and this user is root")]
    return [
        Check(
            "counters",
            "FAIL",
            "admin-only (RmProfilingAdminOnly: 1) and this user is not root: ncu would fail with ERR_NVGPUCTRPERM",
            blocks=False,
            fix="run as root (sudo), or allow all users: `options nvidia "
            "NVreg_RestrictProfilingToAdminUsers=0` in /etc/modprobe.d/, then reload the driver "
            "or reboot (https://developer.nvidia.com/ERR_NVGPUCTRPERM)",
        )
    ]


def check_ncu_report() -> list[Check]:
    spec = importlib.util.find_spec("ncu_report")
    if spec is None or not spec.origin:
        return [
            Check("ncu_report", "FAIL", "not installed: .ncu-rep files cannot be read", fix="pip install ncu-report")
        ]
    origin = spec.origin
    try:
        wheel = version("ncu-report")
    except Exception:  # noqa: BLE001
        wheel = None
    if "extras/python" in origin.replace("\\", "/") or wheel is None:
        return [
            Check(
                "ncu_report",
                "warn",
                f"imports from {origin}, an Nsight Compute install's copy, not the "
                "PyPI wheel (that copy crashed reading reports on the H200)",
                fix="pip install ncu-report",
            )
        ]
    code, out = _run([sys.executable, "-c", "import ncu_report"], timeout=120)
    if code != 0:
        return [
            Check(
                "ncu_report",
                "FAIL",
                f"the PyPI wheel {wheel} does not import: {out.splitlines()[-1] if out else code}",
                fix="pip install --force-reinstall ncu-report",
            )
        ]
    return [Check("ncu_report", "ok", f"PyPI ncu-report {wheel} ({origin})")]


_CHILD = """import json, importlib.metadata as m
out = {}
for d in ("torch", "triton"):
    try: out[d] = m.version(d)
    except Exception: out[d] = None
try:
    import torch
    out["cuda_build"] = torch.version.cuda
    out["cuda"] = torch.cuda.is_available()
    out["devices"] = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())] if out["cuda"] else []
except Exception as exc:
    out["error"] = f"{type(exc).__name__}: {exc}"
print(json.dumps(out))
"""


def check_python() -> list[Check]:
    """torch, triton and CUDA as the profiled child (the same interpreter) sees them."""
    code, out = _run([sys.executable, "-c", _CHILD], timeout=300)
    try:
        info = json.loads(out.splitlines()[-1])
    except (ValueError, IndexError):
        return [
            Check(
                "torch",
                "FAIL",
                f"{sys.executable} could not report torch/triton: {out[-200:]}",
                fix="pip install 'roofline[kernels]'",
                blocks=True,
            )
        ]
    checks = [Check("python", "info", f"{sys.executable} ({sys.version.split()[0]})")]
    missing = [d for d in ("torch", "triton") if not info.get(d)]
    if missing:
        checks.append(
            Check(
                " and ".join(missing),
                "FAIL",
                "not installed: the profiled harness needs them",
                fix="pip install 'roofline[kernels]' (a GPU build of torch on a GPU machine)",
                blocks=True,
            )
        )
    versions = ", ".join(f"{d} {info[d]}" for d in ("torch", "triton") if info.get(d))
    if info.get("error") and info.get("torch"):  # installed but broken (never "reinstall" one never installed)
        checks.append(
            Check(
                "torch",
                "FAIL",
                f"{versions}; import torch failed: {info['error']}",
                fix="reinstall torch for this machine",
                blocks=True,
            )
        )
    elif info.get("torch") and not info.get("cuda"):
        why = "a CPU-only build" if not info.get("cuda_build") else f"built for CUDA {info['cuda_build']}"
        checks.append(
            Check(
                "CUDA",
                "FAIL",
                f"{versions}; torch sees no CUDA device ({why})",
                fix="install a CUDA build of torch, and check CUDA_VISIBLE_DEVICES and the driver",
                blocks=True,
            )
        )
    elif info.get("torch"):
        checks.append(
            Check("CUDA", "ok", f"{versions}; CUDA {info.get('cuda_build')}: {', '.join(info.get('devices', []))}")
        )
    return checks


def run_checks() -> list[Check]:
    checks = check_packages()
    # profiler imports kernels (its errors derive from kernels.errors): both must be roofline's own
    own_profiler = not any(c.name in ("package profiler", "package kernels") for c in checks)
    tools, _ = check_tools(own_profiler)
    own_kernels = not any(c.name == "package kernels" for c in checks)
    checks += tools + check_gpu(own_kernels) + check_counters() + check_ncu_report() + check_python()
    return checks


PROFILING_ONLY = (
    "ncu",
    "nsys",
    "nsys importer",
    "profilers",
    "GPU",
    "counters",
    "torch",
    "triton",
    "torch and triton",
    "CUDA",
)


def analysis_environment(checks: list[Check]) -> bool:
    """A machine meant for reading captures, not making them: no NVIDIA driver, and no CUDA build of torch
    (none at all, or a CPU build). analyze, report, compare and model work there without either."""
    no_driver = any(c.name == "GPU" and c.status == "FAIL" and "no NVIDIA driver" in c.detail for c in checks)
    no_cuda_torch = any(c.name in ("torch and triton", "torch") and c.status == "FAIL" for c in checks) or any(
        c.name == "CUDA" and c.status == "FAIL" and "CPU-only build" in c.detail for c in checks
    )
    return no_driver and no_cuda_torch


def doctor() -> Diagnosis:
    """Run every check (a few seconds: it asks nvidia-smi, ncu, nsys and a child Python). In a CPU analysis
    environment the checks only profiling needs are information, not failures, and the verdict says what
    works here (roofline/analysis/diagnosis.py)."""
    checks = run_checks()
    analysis = analysis_environment(checks)
    if analysis:
        checks = [
            dataclasses.replace(c, status="info") if c.name in PROFILING_ONLY and c.status in ("FAIL", "warn") else c
            for c in checks
        ]
    ok, line = verdict(checks, analysis_environment=analysis)
    return Diagnosis(
        tuple(checks), ok, line, analysis_environment=analysis and not any(c.status == "FAIL" for c in checks)
    )
