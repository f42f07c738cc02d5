"""What `roofline doctor` found: one Check a line (ok, warn, FAIL or info, with its fix), and the verdict
over them: whether profiling can work here, and with which tool. The checks that run the tools are
roofline/pipelines/doctor.py. Imports nothing from kernels/ or profiler/ (doctor's screen shows it when a
foreign package shadows them)."""

from __future__ import annotations

from dataclasses import asdict, dataclass

STATUS = ("ok", "warn", "FAIL", "info")


@dataclass
class Check:
    name: str
    status: str  # ok | warn | FAIL | info
    detail: str
    fix: str | None = None
    blocks: bool = False  # profiling cannot work while this is so


ANALYSIS_ENVIRONMENT = (
    "a CPU analysis environment (no NVIDIA driver, no CUDA build of torch): analyze, report, compare, model "
    "and sweep --summarize work here; profile, bench, calibrate and validate need a GPU machine (run "
    "`roofline doctor` there)"
)


def verdict(checks: list[Check], analysis_environment: bool = False) -> tuple[bool, str]:
    """(can profile, one line saying so); in a CPU analysis environment the line says what works there."""
    blocking = [c for c in checks if c.blocks]
    if analysis_environment and not any(c.status == "FAIL" for c in checks):
        return False, ANALYSIS_ENVIRONMENT
    ncu_ok = any(c.name == "ncu" and c.status == "ok" for c in checks) and not any(
        c.name == "counters" and c.status == "FAIL" for c in checks
    )
    nsys_ok = any(c.name == "nsys" and c.status == "ok" for c in checks) and not any(
        c.name == "nsys importer" and c.status == "FAIL" for c in checks
    )
    if not (ncu_ok or nsys_ok) and not any(c.name == "profilers" for c in blocking):
        blocking.append(
            Check(
                "profilers", "FAIL", "no usable profiler (ncu needs readable counters, nsys its importer)", blocks=True
            )
        )
    if blocking:
        return False, f"profiling cannot work here ({', '.join(c.name for c in blocking)}: see FAIL above)"
    usable = " and ".join(n for n, ok in (("ncu", ncu_ok), ("nsys", nsys_ok)) if ok)
    return True, f"ready to profile with {usable}"


@dataclass(frozen=True)
class Diagnosis:
    """Every check, and whether profiling can work here (the verdict line says with which tool).
    `analysis_environment`: a CPU machine meant for reading captures, where what it is for works."""

    checks: tuple[Check, ...]
    ok: bool
    verdict: str
    analysis_environment: bool = False

    @property
    def exit_code(self) -> int:
        """0 when profiling works here, or in a CPU analysis environment (analysis works there, as the
        verdict says); 1 when profiling cannot work on a machine meant for it."""
        return 0 if self.ok or self.analysis_environment else 1

    def to_dict(self) -> dict:
        return {
            "ok": self.ok,
            "analysis_environment": self.analysis_environment,
            "verdict": self.verdict,
            "checks": [asdict(c) for c in self.checks],
        }
