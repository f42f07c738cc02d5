"""A run directory: everything later stages need, so they run without a GPU.

    spec.json         kernel, workload, iterations, versions
    commands.txt      every command run, exactly
    profile.ncu-rep   the raw Nsight Compute report; profile.ncu.log its log
    launches.csv      the parsed table, one row per launch
    analysis.json     per-kernel verdicts
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass
from pathlib import Path

from profiler.errors import ReportError

SPEC = "spec.json"
COMMANDS = "commands.txt"
LAUNCHES = "launches.csv"
ANALYSIS = "analysis.json"


@dataclass
class RunDir:
    path: Path

    @classmethod
    def create(cls, path: str | Path) -> "RunDir":
        p = Path(path)
        p.mkdir(parents=True, exist_ok=True)
        return cls(p)

    def write_spec(self, spec: dict) -> None:
        (self.path / SPEC).write_text(json.dumps(spec, indent=2) + "\n")

    def read_spec(self) -> dict | None:
        f = self.path / SPEC
        if not f.exists():
            return None
        try:
            return json.loads(f.read_text())
        except json.JSONDecodeError as exc:
            raise ReportError(f"{f}: not valid JSON ({exc})") from None

    def log_command(self, cmd: list[str]) -> None:
        with open(self.path / COMMANDS, "a") as f:
            f.write(shlex.join(cmd) + "\n")

    def ncu_report(self) -> Path:
        reports = sorted(self.path.glob("*.ncu-rep"))
        if not reports:
            raise ReportError(f"{self.path}: no .ncu-rep report in this run directory")
        return reports[0]
