"""The PM sampling run directories (tests/fixtures/h200/pm-sampling/), unpacked: each stores its report gzip'd,
and a copy with the report unpacked beside the other files is the run as `roofline profile` wrote it."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

from tests.paths import ROOT

PM_RUNS = ROOT / "tests" / "fixtures" / "h200" / "pm-sampling"


def packed_reports(run: Path) -> list[Path]:
    """The gzip'd reports of a run directory whose manifest names them unpacked (.ncu-rep, nsys's .sqlite)."""
    return [
        p
        for p in run.glob("*.gz")
        if p.suffixes[-2:-1] in ([".ncu-rep"], [".sqlite"]) and not p.with_suffix("").exists()
    ]


def unpacked_run(run: Path, where: Path) -> Path:
    """A copy of `run` under `where` with its gzip'd reports unpacked (the .gz dropped)."""
    copy = where / run.name
    shutil.copytree(run, copy)
    for gz in packed_reports(copy):
        with gzip.open(gz, "rb") as src, open(gz.with_suffix(""), "wb") as dst:
            shutil.copyfileobj(src, dst)
        gz.unlink()
    return copy


def pm_run(name: str, where: Path) -> Path:
    """`flashmla` or `triton_mla_fast` at skew16, unpacked under `where`."""
    return unpacked_run(PM_RUNS / f"{name}-skew16", where)
