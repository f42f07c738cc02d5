"""The readers' typed results (profiler/launch_table.py): no metadata in DataFrame.attrs, and every
message and source names the file the user gave, never a temporary decompressed copy."""

import gzip
import importlib.util
import json
import re
from pathlib import Path

import pytest

import roofline
from profiler.errors import ReportError
from profiler.launch_table import LaunchTable
from profiler.nsys_reader import read_nsys_sqlite
from profiler.readers import read_launches
from tests.paths import FIXTURES, ROOT, SAMPLE_RUN

PACKAGES = ("kernels", "profiler", "roofline", "reports")
TEMP_DIR = re.compile(r"roofline-[a-z0-9_]{8}")  # tempfile's names for the decompressed copies


def test_no_package_module_keeps_metadata_in_attrs():
    uses = [
        f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if re.search(r"\.attrs\b", line)
    ]
    assert uses == []


def _gz(path: Path, tmp_path: Path) -> Path:
    out = tmp_path / (path.name + ".gz")
    out.write_bytes(gzip.compress(path.read_bytes()))
    return out


def test_a_gzip_nsys_export_is_named_as_given_not_as_its_temporary_copy(tmp_path):
    """Before LaunchTable the timeline of a .sqlite.gz named the deleted /tmp/roofline-*/ copy."""
    gz = _gz(FIXTURES / "nsys" / "triton_mla_8k.sqlite", tmp_path)
    timeline = read_nsys_sqlite(gz)
    assert timeline.source == timeline.summary["source"] == str(gz)
    table = read_launches(gz)
    assert isinstance(table, LaunchTable) and table.source == str(gz) and not table.counters
    shown = json.dumps(roofline.load(gz).to_dict())
    assert str(gz) in shown and not TEMP_DIR.search(shown)


def test_a_gzip_csv_names_the_file_given_and_keeps_its_note(tmp_path):
    gz = _gz(FIXTURES / "csv" / "fast8k.raw.csv", tmp_path)
    table = read_launches(gz)
    assert table.source == str(gz) and set(table.frame["source"]) == {gz.name}
    assert len(table.notes) == 1 and "no rule results" in table.notes[0] and not TEMP_DIR.search(table.notes[0])


def test_a_reader_crash_on_a_gzip_report_names_the_file_given(tmp_path, monkeypatch):
    """The ncu_report child reads the decompressed copy; its crash message names the .gz."""
    gz = _gz(SAMPLE_RUN / "profile.ncu-rep", tmp_path)
    (tmp_path / "ncu_report.py").write_text("import os\ndef load_report(path):\n    os.abort()\n")
    spec = importlib.util.spec_from_file_location("ncu_report_install", tmp_path / "ncu_report.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr("profiler.ncu_reader.import_ncu_report", lambda: module)
    with pytest.raises(ReportError, match="crashed while reading") as exc:
        read_launches(gz)
    assert str(exc.value).startswith(f"{gz}: ") and not TEMP_DIR.search(str(exc.value))


def test_a_cut_gzip_report_says_so_naming_the_file_given(tmp_path):
    data = (SAMPLE_RUN / "profile.ncu-rep").read_bytes()
    gz = tmp_path / "cut.ncu-rep.gz"
    gz.write_bytes(gzip.compress(data[: 2 * len(data) // 3]))
    table = read_launches(gz)
    assert table.source == str(gz) and len(table) == 1
    assert table.cut.startswith("cut inside launch record 2") and not TEMP_DIR.search(table.cut)
    with pytest.raises(ReportError, match="incomplete capture") as exc:
        roofline.load(gz)
    assert str(exc.value).startswith(f"{gz}: ") and not TEMP_DIR.search(str(exc.value))
