"""Where an Nsight Compute install keeps its own `ncu_report` module (standard library only: the
quickstart reads it before anything is installed)."""

from __future__ import annotations

import glob
import os

NCU_PYTHON_GLOBS = ("/opt/nvidia/nsight-compute/*/extras/python", "/usr/local/cuda/nsight-compute-*/extras/python")


def ncu_python_dirs() -> list[str]:
    """$NCU_REPORT_PYTHON, then every install's extras/python (newest first) that holds ncu_report.py."""
    found = [os.environ["NCU_REPORT_PYTHON"]] if os.environ.get("NCU_REPORT_PYTHON") else []
    for pattern in NCU_PYTHON_GLOBS:
        found += sorted(glob.glob(pattern), reverse=True)
    return [d for d in found if os.path.isfile(os.path.join(d, "ncu_report.py"))]
