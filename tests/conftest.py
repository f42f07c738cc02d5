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


def pytest_collection_modifyitems(config, items):
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
