"""Every module of the project imports on this machine (no GPU): a name moved out of a module leaves no
import behind that only a GPU run would find. Modules whose first import needs what a CPU machine lacks
(triton.experimental.gluon where the Triton has none) are skipped with the reason."""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("kernels", "profiler", "roofline", "reports")


def _modules() -> list[str]:
    names = []
    for package in PACKAGES:
        names.append(package)
        for info in pkgutil.walk_packages([str(ROOT / package)], prefix=f"{package}."):
            if not info.name.endswith(".__main__"):  # (runs its command line when imported)
                names.append(info.name)
    names += [f"benchmarks.{p.stem}" for p in sorted((ROOT / "benchmarks").glob("*.py")) if p.stem != "__init__"]
    return names


def test_the_walk_finds_the_layers():
    names = set(_modules())
    assert {"kernels.fast.seesaw", "roofline.pipelines.read_fit", "reports.markdown.in_kernel"} <= names


@pytest.mark.parametrize("name", _modules())
def test_module_imports(name: str):
    if name.startswith(("kernels.fast.", "roofline.pipelines.read_fit", "benchmarks.")):
        pytest.importorskip("triton.experimental.gluon")
    importlib.import_module(name)
