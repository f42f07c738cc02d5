"""The decisions behind tools/quickstart.sh, standard library only (it runs before anything is installed).

    python3 tools/quickstart_env.py where     # "active <why>" or "venv <why>": install here or build a venv
    python3 tools/quickstart_env.py missing   # the project's requirements this interpreter lacks, one per line
    python3 tools/quickstart_env.py gpu       # nothing when `roofline profile` can run here, else why not (exit 1)
    python3 tools/quickstart_env.py current   # exit 0 when this checkout is installed here, editable, up to date

An environment that already holds torch (a venv, or a conda env) is used as it is: a GPU box's
python3 is often such a venv (the H200 machine's is /opt/torch/.venv), and a venv nested in it
with --system-site-packages would see the base interpreter's packages, not that venv's torch.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def in_environment(prefix: str, base_prefix: str, conda_prefix: str | None) -> bool:
    """True when the interpreter is a venv (prefix differs from its base) or the active conda env."""
    if prefix != base_prefix:
        return True
    return bool(conda_prefix) and os.path.realpath(conda_prefix) == os.path.realpath(prefix)


def choose_env(
    prefix: str, base_prefix: str, conda_prefix: str | None, torch_version: str | None, own_venv: str
) -> tuple[str, str]:
    """("active" | "venv", why): install into this interpreter's environment, or build `own_venv`."""
    kind = "conda env" if conda_prefix and prefix == base_prefix else "virtual environment"
    if in_environment(prefix, base_prefix, conda_prefix):
        if torch_version:
            return "active", f"{prefix} is a {kind} with torch {torch_version}: installing roofline into it"
        if os.path.realpath(prefix) == os.path.realpath(own_venv):
            return "active", f"{prefix} is quickstart's own venv: reusing it"
        return "venv", (f"{prefix} is a {kind} without torch: building {own_venv} (it sees the system's site-packages)")
    return "venv", (
        f"{prefix} is not a virtual environment: building {own_venv} with --system-site-packages "
        "(a system-wide torch/triton stays visible)"
    )


def torch_version() -> str | None:
    """torch's version from its installed metadata (importing torch takes seconds; a torch that is
    installed but broken is found by `gpu`, which imports it), else from an import where there is none."""
    try:
        return importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        pass
    try:
        import torch
    except Exception:  # a broken torch is no torch here; `gpu` says why
        return None
    return str(getattr(torch, "__version__", "unknown"))


def installed_here(root: Path = ROOT) -> str | None:
    """None when this interpreter's environment holds `root` installed editable, with its `roofline` command
    and metadata no older than pyproject.toml (nothing to install again); else what is not so. Every
    `roofline` distribution on the path is looked at: the build leaves roofline.egg-info in the checkout,
    which a PYTHONPATH naming the checkout puts first."""
    dists = list(importlib.metadata.distributions(name="roofline"))
    if not dists:
        return "roofline is not installed here"
    for dist in dists:
        try:
            url = json.loads(dist.read_text("direct_url.json") or "{}")
        except ValueError:
            continue
        if url.get("dir_info", {}).get("editable") and url.get("url") == root.resolve().as_uri():
            break
    else:
        return "roofline here is not this checkout installed editable"
    command = Path(sys.executable).parent / "roofline"
    if not command.is_file():
        return f"no {command}"
    metadata = getattr(dist, "_path", None)  # the dist-info folder (importlib.metadata.PathDistribution)
    if metadata is None or Path(metadata).stat().st_mtime < (root / "pyproject.toml").stat().st_mtime:
        return "pyproject.toml changed since roofline was installed"
    return None


def requirements(pyproject: Path = ROOT / "pyproject.toml") -> list[str]:
    """The build requirements and runtime dependencies pyproject.toml lists (e.g. 'pandas>=2.0')."""
    text = pyproject.read_text()
    out = []
    for key in ("requires", "dependencies"):
        block = re.search(rf"^{key}\s*=\s*\[(.*?)\]", text, re.M | re.S)
        if block:
            out += re.findall(r'"([^"]+)"', block.group(1))
    return out


def _version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", text.split("+")[0])[:3])


def unmet(requirement: str, installed: dict[str, str | None]) -> bool:
    """True when `requirement` ('name', 'name>=X.Y') is not satisfied by `installed` (name -> version)."""
    match = re.match(r"^\s*([A-Za-z0-9_.\-]+)\s*(?:>=\s*([0-9][0-9.]*))?", requirement)
    name, minimum = match.group(1), match.group(2)
    have = installed.get(name.lower().replace("_", "-"))
    if have is None:
        return True
    return bool(minimum) and _version_tuple(have) < _version_tuple(minimum)


def installed_versions(names: list[str]) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for name in names:
        key = re.match(r"^\s*([A-Za-z0-9_.\-]+)", name).group(1).lower().replace("_", "-")
        try:
            out[key] = importlib.metadata.version(key)
        except importlib.metadata.PackageNotFoundError:
            out[key] = None
    return out


def missing_from(reqs: list[str], have: dict[str, str | None]) -> list[str]:
    """The requirements `have` does not meet, plus `wheel` where an installed setuptools older than
    70.1 needs it to build (pip's --no-build-isolation uses the environment's own)."""
    out = [r for r in reqs if unmet(r, have)]
    old_setuptools = have.get("setuptools") is not None and unmet("setuptools>=70.1", have)
    if old_setuptools and have.get("wheel") is None:
        out.append("wheel")
    return out


def missing() -> list[str]:
    """The unmet requirements; `ncu-report` counts as met where Nsight Compute ships its own
    ncu_report (roofline reads reports with it: an offline GPU box needs no wheel for it)."""
    reqs = requirements()
    out = missing_from(reqs, installed_versions(reqs + ["wheel"]))
    own = [r for r in out if r.lower().replace("_", "-").startswith("ncu-report")]
    if own:
        sys.path.insert(0, str(ROOT))
        from profiler.ncu_paths import ncu_python_dirs  # standard library only

        dirs = ncu_python_dirs()
        if dirs:
            print(
                f"quickstart: no ncu-report package: roofline will use Nsight Compute's own ({dirs[0]})",
                file=sys.stderr,
            )
            out = [r for r in out if r not in own]
    return out


def torch_cuda(version_file: Path) -> str | None:
    """The CUDA version a torch build was made for, read from its torch/version.py (`cuda = '13.0'`;
    None for a CPU-only build), without importing torch."""
    try:
        text = version_file.read_text()
    except OSError:
        return None
    match = re.search(r"^cuda\s*(?::[^=]*)?=\s*['\"]([^'\"]+)['\"]", text, re.M)
    return match.group(1) if match else None


def gpu_blocker() -> str | None:
    """Why `roofline profile` cannot run here, or None when it can: a driver that lists a GPU, torch built
    for CUDA, triton, ncu. Nothing is imported (torch alone takes seconds to import); a torch that is
    installed but broken fails the profile itself, which says why."""
    if shutil.which("nvidia-smi") is None:
        return "no nvidia-smi on PATH (no NVIDIA driver on this machine)"
    try:
        smi = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"nvidia-smi -L failed: {exc}"
    if smi.returncode != 0 or "GPU" not in smi.stdout:
        first = (smi.stdout + smi.stderr).strip().splitlines()
        return f"nvidia-smi -L lists no GPU (exit {smi.returncode}): {first[0] if first else 'no output'}"
    for module in ("torch", "triton"):
        if importlib.util.find_spec(module) is None:
            return f"{module} is not installed for {sys.executable}"
    torch_dirs = importlib.util.find_spec("torch").submodule_search_locations or []
    if not any(torch_cuda(Path(d) / "version.py") for d in torch_dirs):
        return f"torch {torch_version()} is a build without CUDA (torch/version.py names no CUDA version)"
    try:
        from profiler.ncu import find_ncu

        find_ncu()
    except Exception as exc:
        return str(exc)
    return None


def main(argv: list[str]) -> int:
    what = argv[1] if len(argv) > 1 else ""
    if what == "where":
        own = os.environ.get("ROOFLINE_VENV") or str(ROOT / ".venv")
        decision, why = choose_env(sys.prefix, sys.base_prefix, os.environ.get("CONDA_PREFIX"), torch_version(), own)
        print(decision, why)
        return 0
    if what == "missing":
        for requirement in missing():  # nothing at all when nothing is missing (not an empty line)
            print(requirement)
        return 0
    if what == "current":
        reason = installed_here()
        if reason:
            print(reason)
        return 1 if reason else 0
    if what == "gpu":
        sys.path.insert(0, str(ROOT))
        reason = gpu_blocker()
        if reason:
            print(reason)
        return 1 if reason else 0
    print("usage: python3 tools/quickstart_env.py where|missing|gpu|current", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
