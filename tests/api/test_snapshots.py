"""Every committed capture that `analyze` reads gives the same verdicts and numbers as its snapshot.

The snapshots are `analyze --format json` of each capture (run directories, and report files outside
them), taken from the code before a change that must not change behaviour. Paths are made relative to
the repository and floats rounded to 9 significant digits, so the comparison holds across machines.
A capture that `analyze` refuses is snapshotted as its exit code (its wording is the error tests').

    ROOFLINE_SNAPSHOT_WRITE=1 pytest tests/api/test_snapshots.py    # take them again (a deliberate change)
"""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from roofline.cli.run import analyze_cmd
from tests.paths import ROOT
from tests.pm_runs import packed_reports, unpacked_run

SNAPSHOTS = ROOT / "tests" / "fixtures" / "snapshots"
READ = ("*.ncu-rep", "*.ncu-rep.gz", "*.sqlite")  # an .nsys-rep is read through nsys: not on every machine


def captures() -> list[Path]:
    """Run directories (a manifest.json), then report files outside them, under the fixtures and samples."""
    roots = [ROOT / "tests" / "fixtures", ROOT / "roofline" / "data" / "samples"]
    runs = sorted({m.parent for r in roots for m in r.rglob("manifest.json")})
    files = sorted(
        {p for r in roots for pattern in READ for p in r.rglob(pattern) if not any(run in p.parents for run in runs)}
    )
    return [*runs, *files]


def snapshot_name(path: Path) -> str:
    return str(path.relative_to(ROOT)).replace("/", "__") + ".json.gz"


def _normal(value):
    """Paths relative to the repository, floats to 9 significant digits."""
    if isinstance(value, float):
        return float(f"{value:.9g}")
    if isinstance(value, str):
        return value.replace(str(ROOT) + "/", "").replace(str(ROOT), ".")
    if isinstance(value, list):
        return [_normal(v) for v in value]
    if isinstance(value, dict):
        return {k: _normal(v) for k, v in value.items()}
    return value


def analyze_json(path: Path, where: Path) -> dict:
    """analyze's JSON of `path`; a run directory whose reports are stored gzip'd is read from a copy under
    `where` with them unpacked, and named by its own path."""
    read = unpacked_run(path, where) if path.is_dir() and packed_reports(path) else path
    result = CliRunner().invoke(analyze_cmd, [str(read), "--format", "json"])
    if result.exit_code != 0:
        return {"exit_code": result.exit_code}
    got = json.loads(result.stdout)
    if isinstance(got.get("spec"), dict):  # the command as the capturing machine ran it: its paths, not a result
        got["spec"].pop("command", None)
    if read != path:
        got = json.loads(json.dumps(got).replace(str(read), str(path)))
    return _normal(got)


@pytest.mark.parametrize("path", captures(), ids=lambda p: str(p.relative_to(ROOT)))
def test_analyze_matches_its_snapshot(path, tmp_path):
    got = analyze_json(path, tmp_path)
    file = SNAPSHOTS / snapshot_name(path)
    if os.environ.get("ROOFLINE_SNAPSHOT_WRITE") == "1":
        SNAPSHOTS.mkdir(parents=True, exist_ok=True)
        with open(file, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as f:
            f.write((json.dumps(got, indent=0, sort_keys=True) + "\n").encode())  # the same bytes each time
        return
    assert file.is_file(), f"no snapshot for {path}: take one with ROOFLINE_SNAPSHOT_WRITE=1"
    with gzip.open(file, "rt") as f:
        want = json.load(f)
    assert got == want
