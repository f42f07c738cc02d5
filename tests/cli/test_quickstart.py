"""tools/quickstart.sh: install into an active environment that already holds torch (a GPU box's
python3 is often such a venv), build its own venv only otherwise, and say why it analyzes the sample."""

import importlib.util
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from tests.paths import ROOT

QUICKSTART = ROOT / "tools" / "quickstart.sh"

_spec = importlib.util.spec_from_file_location("quickstart_env", ROOT / "tools" / "quickstart_env.py")
qs = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(qs)


def test_a_venv_or_conda_env_with_torch_is_used_as_it_is():
    # the H200 machine: python3 is /opt/torch/.venv (not activated), torch inside it
    where, why = qs.choose_env("/opt/torch/.venv", "/usr", None, "2.11.0+cu130", "/repo/.venv")
    assert where == "active" and "/opt/torch/.venv" in why and "torch 2.11.0+cu130" in why
    # a conda env: not a venv (prefix == base_prefix) but the active CONDA_PREFIX
    where, why = qs.choose_env(
        "/opt/conda/envs/gpu", "/opt/conda/envs/gpu", "/opt/conda/envs/gpu", "2.5.1", "/repo/.venv"
    )
    assert where == "active" and "conda env" in why


def test_no_torch_or_no_environment_builds_its_own_venv():
    where, why = qs.choose_env("/usr", "/usr", None, "2.5.1", "/repo/.venv")  # system python, even with torch
    assert where == "venv" and "--system-site-packages" in why
    where, why = qs.choose_env("/home/u/env", "/usr", None, None, "/repo/.venv")
    assert where == "venv" and "without torch" in why
    # CONDA_PREFIX left set by a shell while python3 comes from elsewhere: not that env
    assert qs.choose_env("/usr", "/usr", "/opt/conda", "2.5.1", "/repo/.venv")[0] == "venv"
    # quickstart's own venv, activated, reused rather than nested
    assert qs.choose_env("/repo/.venv", "/usr", None, None, "/repo/.venv")[0] == "active"


def test_missing_requirements_from_pyproject():
    reqs = qs.requirements()
    assert {"setuptools>=64", "pandas>=2.0", "ncu-report>=2025.1", "click>=8.1"} <= set(reqs)
    have = {r.split(">=")[0]: "99.0" for r in reqs}  # everything met, then take some away
    have.update({"pandas": "2.2.3", "numpy": "1.23.5", "ncu-report": None, "setuptools": "80.0"})
    assert qs.missing_from(reqs, have) == ["numpy>=1.24", "ncu-report>=2025.1"]
    # setuptools before 70.1 builds wheels only with `wheel` installed (Python 3.11's venv ships 65.5)
    assert qs.missing_from(reqs, {**have, "numpy": "2.0", "setuptools": "65.5.0"}) == ["ncu-report>=2025.1", "wheel"]
    assert qs.missing_from(reqs, {**have, "setuptools": None})[0] == "setuptools>=64"


def test_nsight_computes_own_ncu_report_meets_the_requirement(monkeypatch, tmp_path, capsys):
    """An offline GPU box (the H200 machine) has no ncu-report package but ncu's extras/python, which
    roofline reads reports with: quickstart must not stop on the missing wheel."""
    reqs = ["pandas>=2.0", "ncu-report>=2025.1"]
    monkeypatch.setattr(qs, "requirements", lambda: reqs)
    monkeypatch.setattr(qs, "installed_versions", lambda names: {"pandas": "2.2.3", "ncu-report": None})
    monkeypatch.setenv("NCU_REPORT_PYTHON", str(tmp_path))
    monkeypatch.setattr("profiler.ncu_paths.NCU_PYTHON_GLOBS", ())
    assert qs.missing() == ["ncu-report>=2025.1"]  # an extras/python without ncu_report.py is none
    (tmp_path / "ncu_report.py").write_text("")
    assert qs.missing() == []
    assert f"roofline will use Nsight Compute's own ({tmp_path})" in capsys.readouterr().err


def _gpu_box_venv(tmp: Path, lacking: tuple[str, ...]) -> Path:
    """A venv standing in for a GPU box's python3: torch, triton and pandas importable from it (through
    a .pth onto this test run's own packages), not from the base interpreter; `lacking` left out."""
    box = tmp / "gpubox"
    subprocess.run([getattr(sys, "_base_executable", sys.executable), "-m", "venv", str(box)], check=True)
    here = Path(sysconfig.get_paths()["purelib"])
    shared = tmp / "shared-site"
    shared.mkdir()
    skip = lacking + ("roofline", "__editable__", "_roofline", "pip", "setuptools", "_distutils_hack", "pkg_resources")
    for entry in here.iterdir():
        if not entry.name.lower().startswith(skip) and entry.suffix != ".pth":
            (shared / entry.name).symlink_to(entry)
    box_site = next(box.glob("lib/python3*/site-packages"))
    (box_site / "gpubox_torch.pth").write_text(str(shared) + "\n")
    return box


@pytest.mark.slow
def test_quickstart_installs_into_a_gpu_box_venv_and_says_why_it_analyzes_the_sample(tmp_path):
    box = _gpu_box_venv(tmp_path, lacking=("click", "ncu_report"))
    own_venv = tmp_path / "own-venv"
    env = {**os.environ, "PATH": f"{box / 'bin'}:/usr/bin:/bin", "ROOFLINE_VENV": str(own_venv)}
    for key in ("VIRTUAL_ENV", "CONDA_PREFIX", "PYTHONPATH", "ROOFLINE_WHEELS"):
        env.pop(key, None)

    # offline with a wheel folder that lacks what is missing: a clear error, nothing built
    empty = tmp_path / "wheels"
    empty.mkdir()
    r = subprocess.run(
        ["bash", str(QUICKSTART)],
        env={**env, "ROOFLINE_WHEELS": str(empty)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 1 and "could not install click>=8.1 ncu-report>=2025.1" in r.stderr
    assert f"from {empty}: put their wheels there" in r.stderr
    assert not own_venv.exists()

    r = subprocess.run(
        ["bash", str(QUICKSTART)],
        env={**env, "ROOFLINE_WHEELS": "-"},  # online, whatever .whl/ holds
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    assert f"{box} is a virtual environment with torch" in r.stderr
    assert "adding what this environment lacks: click>=8.1 ncu-report>=2025.1" in r.stderr  # (+ wheel on 3.11)
    assert "not profiling: no nvidia-smi on PATH" in r.stderr  # never a silent fallback
    assert "GPU: NVIDIA H200" in r.stdout and "_verify_extend_kernel" in r.stdout
    assert not own_venv.exists()  # no nested venv
    box_python = str(box / "bin" / "python")
    check = subprocess.run(
        [
            box_python,
            "-c",
            "import roofline.cli, click, ncu_report, torch, sys; print(roofline.cli.__file__, sys.prefix)",
        ],
        capture_output=True,
        text=True,
        env=env,
    )
    assert check.returncode == 0 and check.stdout.startswith(str(ROOT)), check.stderr
    assert f"{box / 'bin'}/roofline" in r.stderr.splitlines()[-1]  # its last line: how to reach `roofline`
    # from the folder that holds a clone named `roofline` (a namespace package to Python): the editable
    # install puts the checkout on sys.path (pyproject's package-dir), so the package is still found
    parent = tmp_path / "parent"
    parent.mkdir()
    (parent / "roofline").symlink_to(ROOT, target_is_directory=True)
    beside = subprocess.run(
        [box_python, "-c", "import roofline; print(roofline.__file__, roofline.load.__module__)"],
        capture_output=True,
        text=True,
        env=env,
        cwd=parent,
    )
    assert beside.returncode == 0 and beside.stdout.split() == [
        str(ROOT / "roofline" / "__init__.py"),
        "roofline.pipelines.loading",
    ], beside.stdout + beside.stderr

    # run again in the same environment: nothing is missing, nothing to add, still exit 0
    again = subprocess.run(
        ["bash", str(QUICKSTART)], env={**env, "ROOFLINE_WHEELS": "-"}, capture_output=True, text=True, timeout=600
    )
    assert again.returncode == 0, again.stderr[-3000:]
    assert "adding what this environment lacks" not in again.stderr and "Invalid requirement" not in again.stderr
    assert "roofline from this checkout is installed here already" in again.stderr  # no second install
    assert "_verify_extend_kernel" in again.stdout


def test_missing_prints_nothing_when_nothing_is_missing(monkeypatch, capsys):
    """Not an empty line: quickstart read one as a requirement '' (pip: Invalid requirement: '')."""
    monkeypatch.setattr(qs, "missing", lambda: [])
    assert qs.main(["quickstart_env.py", "missing"]) == 0
    assert capsys.readouterr().out == ""
    monkeypatch.setattr(qs, "missing", lambda: ["click>=8.1", "ncu-report>=2025.1"])
    qs.main(["quickstart_env.py", "missing"])
    assert capsys.readouterr().out == "click>=8.1\nncu-report>=2025.1\n"


def test_quickstart_without_torch_builds_its_own_venv_with_system_site_packages(tmp_path):
    """The other branch, up to the venv: python3 is a venv without torch, so quickstart builds its own
    (a stand-in `python3 -m venv` records the call; the install after it is the same pip -e)."""
    box = tmp_path / "plain"
    subprocess.run(
        [getattr(sys, "_base_executable", sys.executable), "-m", "venv", "--without-pip", str(box)], check=True
    )
    calls = tmp_path / "calls"
    fake_bin = tmp_path / "bin"
    fake_bin.mkdir()
    # python3 answers `where` for real, records `-m venv` and stops there
    (fake_bin / "python3").write_text(
        "#!/bin/sh\n"
        f'if [ "$1" = -m ] && [ "$2" = venv ]; then echo "$@" >> {calls}; exit 7; fi\n'
        f'exec {box}/bin/python "$@"\n'
    )
    (fake_bin / "python3").chmod(0o755)
    env = {**os.environ, "PATH": f"{fake_bin}:/usr/bin:/bin", "ROOFLINE_VENV": str(tmp_path / "own")}
    for key in ("VIRTUAL_ENV", "CONDA_PREFIX", "PYTHONPATH", "ROOFLINE_WHEELS"):
        env.pop(key, None)
    r = subprocess.run(["bash", str(QUICKSTART)], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 7 and "without torch: building" in r.stderr
    assert calls.read_text().split() == ["-m", "venv", "--system-site-packages", str(tmp_path / "own")]


def test_torch_built_for_cuda_is_read_from_its_version_file_without_importing_it(tmp_path):
    version = tmp_path / "version.py"
    version.write_text("__version__ = '2.11.0+cu130'\ncuda: Optional[str] = '13.0'\nhip = None\n")
    assert qs.torch_cuda(version) == "13.0"
    version.write_text("__version__ = '2.13.0+cpu'\ncuda: Optional[str] = None\n")
    assert qs.torch_cuda(version) is None
    assert qs.torch_cuda(tmp_path / "absent.py") is None


def test_a_gpu_box_whose_torch_has_no_cuda_is_not_profiled(monkeypatch, tmp_path):
    """nvidia-smi lists a GPU, but this machine's torch is a CPU build: the quickstart analyses the sample."""
    smi = tmp_path / "nvidia-smi"
    smi.write_text("#!/bin/sh\necho 'GPU 0: NVIDIA H200 (UUID: GPU-0)'\n")
    smi.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    monkeypatch.setattr(qs, "torch_cuda", lambda path: None)
    assert "a build without CUDA" in qs.gpu_blocker()
