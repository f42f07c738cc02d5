"""`roofline report`: markdown + charts from real captures (the bundled run, fixture runs, bare reports)."""

import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from reports.markdown import render_markdown
from reports.meta import ReportMeta
from roofline.api import load
from roofline.cli import main
from tests.paths import FULL_SET, RUNS, SAMPLE_V1 as SAMPLE_RUN, TORCH_DEFAULT  # numbers of the first sample

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def report(*args):
    return CliRunner().invoke(main, ["report", *map(str, args)], catch_exceptions=False)


def linked_images(md: str) -> list[str]:
    return re.findall(r"!\[[^\]]*\]\(([^)]+)\)", md)


def check_charts(md_path: Path) -> list[str]:
    """Every linked image exists beside the markdown, is a real PNG, and its SVG parses."""
    import matplotlib.image

    links = linked_images(md_path.read_text())
    for link in links:
        assert not Path(link).is_absolute() and "/" not in link  # relative: the folder can move
        png = md_path.parent / link
        data = png.read_bytes()
        assert data[:8] == PNG_MAGIC and len(data) > 1000
        h, w = matplotlib.image.imread(png).shape[:2]
        assert h > 200 and w > 400
        ET.parse(png.with_suffix(".svg"))  # raises on malformed XML
        assert png.with_suffix(".svg").name in md_path.read_text()
    return links


def test_bundled_run_report(tmp_path):
    out = tmp_path / "evidence" / "report.md"
    r = report(SAMPLE_RUN, "-o", out)
    assert r.exit_code == 0, r.output
    md = out.read_text()
    assert "| # | kernel | launches | time (ms) | % of step | DRAM GB/s |" in md
    assert "| K1 | `_verify_extend_kernel` | 3 | 15.2407 |" in md and "**latency**: small grid" in md
    assert "## Floor" in md and "452.5x" in md
    assert "roofline profile --kernel triton_mla --ctx 128k" in md and "--section SpeedOfLight" in md
    assert "| triton | `3.6.0` |" in md and "| ncu | `2025.3.1 (build 36398880)` |" in md
    assert md.count("<details>") == md.count("</details>") >= 2
    assert check_charts(out) == ["report_roofline.png", "report_stalls.png"]
    assert "## Where the warps wait" not in md and "no PC samples in this capture" in md  # its old metric list
    svg = (tmp_path / "evidence" / "report_roofline.svg").read_text()
    for kind in ("(datasheet)", "(measured)", "(report's own)"):  # every kind of roof, labelled
        assert kind in svg


@pytest.mark.parametrize("run", sorted(p.name for p in RUNS.iterdir() if p.name != "h200-triton_mla-128k"))  # two-kernel runs
def test_fixture_runs(tmp_path, run):
    out = tmp_path / "report.md"
    assert report(RUNS / run, "-o", out).exit_code == 0
    md = out.read_text()
    assert "## Floor" in md and "| K2 |" in md and "_combine_kernel" in md
    assert "gap to floor |" in md  # the column is there; a value only where one kernel is the whole step
    manifest = json.loads((RUNS / run / "manifest.json").read_text())
    verdict_preset = any(r.get("preset") == "verdict" for r in manifest["reports"])
    # no DRAM bytes or FLOP in the verdict preset: a stall chart and no roofline chart
    waits = ["waits.png"] if "## Where the warps wait" in md else []  # captures with PC samples
    assert [c.split("_")[-1] for c in check_charts(out)] == waits + (["stalls.png"] if verdict_preset else
                                                                     ["roofline.png", "stalls.png"])
    assert bool(waits) != ("no PC samples in this capture" in md)  # older metric lists had none: one line says so


def test_bare_foreign_report_has_no_floor_and_says_why(tmp_path):
    out = tmp_path / "torch" / "report.md"
    assert report(TORCH_DEFAULT, "-o", out).exit_code == 0
    md = out.read_text()
    assert "## Floor" not in md and "no floor section" in md and "bare report" in md
    assert "nvjet_sm90" in md and "**compute**: tensor pipe" in md
    # ncu's default sections have no FLOP/byte or stall counters: no charts, and the report says so
    assert linked_images(md) == [] and "No roofline chart: no kernel" in md and "no warp-stall metrics" in md
    assert sorted(p.name for p in out.parent.iterdir()) == ["report.md"]


def test_bare_report_of_our_kernel(tmp_path):
    out = tmp_path / "report.md"
    assert report(FULL_SET, "-o", out).exit_code == 0
    md = out.read_text()
    assert "## Floor" not in md and "no floor section" in md and "_verify_extend_kernel" in md
    assert len(check_charts(out)) == 3 and "## Where the warps wait" in md  # --set full: PC samples


def test_never_overwrites_without_force(tmp_path):
    out = tmp_path / "report.md"
    out.write_text("another run's evidence\n")
    r = report(SAMPLE_RUN, "-o", out)
    assert r.exit_code == 1 and "already exists" in r.output and "--force" in r.output
    assert "Traceback" not in r.output and len(r.output.strip().splitlines()) == 1
    assert out.read_text() == "another run's evidence\n" and not (tmp_path / "report_roofline.png").exists()
    assert report(SAMPLE_RUN, "-o", out, "--force").exit_code == 0
    assert "_verify_extend_kernel" in out.read_text()


def test_existing_chart_also_blocks(tmp_path):
    (tmp_path / "report_stalls.svg").write_text("<svg/>")
    r = report(SAMPLE_RUN, "-o", tmp_path / "report.md")
    assert r.exit_code == 1 and "report_stalls.svg already exists" in r.output


def test_output_folder_and_bad_path(tmp_path):
    assert report(SAMPLE_RUN, "-o", str(tmp_path) + "/").exit_code == 0
    assert (tmp_path / "report.md").exists()
    r = report(tmp_path / "nope")
    assert r.exit_code == 1 and "no such run directory or report" in r.output


def test_rerun_gives_identical_files(tmp_path):
    out = tmp_path / "a" / "report.md"
    assert report(RUNS / "h200-triton_mla_decode-128k-p64", "-o", out).exit_code == 0
    (tmp_path / "a").rename(tmp_path / "b")
    assert report(RUNS / "h200-triton_mla_decode-128k-p64", "-o", out).exit_code == 0
    for f in ("report.md", "report_roofline.svg", "report_stalls.svg", "report_roofline.png"):
        assert (tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes(), f


def test_renderer_takes_a_plain_dict():
    """Any source of Analysis.to_dict() works: a JSON round trip, no charts, minimal metadata."""
    analysis = json.loads(json.dumps(load(SAMPLE_RUN).analysis.to_dict()))
    md = render_markdown(analysis, ReportMeta(source="somewhere/run"))
    assert "| K1 | `_verify_extend_kernel` |" in md and "charts were not written" in md
    assert "The capture command is not recorded" in md


def test_markdown_renders_to_html(tmp_path):
    markdown_it = pytest.importorskip("markdown_it")
    out = tmp_path / "report.md"
    report(RUNS / "h200-triton_mla_fast-128k-p64", "-o", out)
    html = markdown_it.MarkdownIt("commonmark").enable("table").render(out.read_text())
    assert html.count("<table>") >= 6 and not re.search(r"^\|", html, re.M)  # no table left as raw text
    folded = re.findall(r"<details>(.*?)</details>", html, re.S)
    assert len(folded) >= 3 and any("<ul>" in f and "<table>" in f for f in folded)
    assert re.findall(r'<img src="([^"]+)"', html) == ["report_roofline.png", "report_stalls.png"]


def test_missing_matplotlib_is_a_one_line_error(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError
    r = report(SAMPLE_RUN, "-o", tmp_path / "report.md")
    assert r.exit_code == 1 and "pip install" in r.output and "Traceback" not in r.output


def test_reading_commands_do_not_import_matplotlib():
    code = ("import sys; from click.testing import CliRunner; from roofline.cli import main; "
            "r = CliRunner().invoke(main, ['analyze', '--format', 'json']); assert r.exit_code == 0; "
            "print('matplotlib' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_api_report(tmp_path):
    """roofline.report(run, path): the same report from the Python API."""
    import roofline

    files = roofline.report(roofline.load(RUNS / "h200-triton_mla_fast-128k-p64"), tmp_path / "r.md")
    assert [f.name for f in files] == ["r.md", "r_roofline.png", "r_roofline.svg", "r_stalls.png", "r_stalls.svg"]
    with pytest.raises(FileExistsError, match="--force"):
        roofline.report(RUNS / "h200-triton_mla_fast-128k-p64", tmp_path / "r.md")
