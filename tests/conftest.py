import os

import pytest

# Kernel tests on a CPU-only machine go through Triton's interpreter; set it before any
# kernel module imports triton. On a GPU machine (ROOFLINE_GPU_TESTS=1) leave it off.
if os.environ.get("ROOFLINE_GPU_TESTS") != "1":
    os.environ.setdefault("TRITON_INTERPRET", "1")


def _cuda() -> bool:
    if os.environ.get("ROOFLINE_GPU_TESTS") != "1":
        return False
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


# The slow kinds of test, by file, so that an inner loop can leave them out:
#   pytest -m "not interpreter and not compile and not subprocess and not slow"   (about a minute)
KINDS = {
    "interpreter": ("test_kernels_cpu.py",),  # kernels through Triton's interpreter
    "compile": ("test_compile.py", "test_plan.py"),  # Triton's compiler, cross-compiling for sm_90/100/120
    "subprocess": (
        "test_bad_input.py",
        "test_cli.py",
        "test_doctor.py",
        "test_failures.py",
        "test_newcomer.py",
        "test_quickstart.py",
        "test_report.py",
        "test_sweep.py",
    ),  # the CLI and tools as child processes
}


def pytest_collection_modifyitems(config, items):
    for item in items:
        for kind, files in KINDS.items():
            if item.path.name in files:
                item.add_marker(getattr(pytest.mark, kind))
    if _cuda():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU (run with ROOFLINE_GPU_TESTS=1 on the GPU machine)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def _own_config_home(tmp_path_factory, monkeypatch):
    """Ceilings a user saved with `roofline calibrate --save` must not change what the tests see."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("config")))


@pytest.fixture
def no_tools(tmp_path, monkeypatch):
    """Neither ncu nor nsys to be found: not on PATH, not named by $NCU or $NSYS, not in the usual folders."""
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    for var in ("NCU", "NSYS"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr("profiler.ncu._INSTALL_GLOBS", ())
    monkeypatch.setattr("profiler.nsys.INSTALL_GLOBS", ())
