"""`roofline report`: markdown + charts from real captures (the bundled run, fixture runs, bare reports)."""

import copy
import dataclasses
import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from reports.markdown import ReportInput, render_markdown
from reports.meta import ReportMeta
from roofline.api import load
from roofline.cli import main
from tests.paths import FULL_SET, ROOT, RUNS, TORCH_DEFAULT  # numbers of the first sample
from tests.paths import SAMPLE_V1 as SAMPLE_RUN

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
    assert "| K1 | `_verify_extend_kernel` | 3 | 15.24 |" in md and "**latency**: small grid" in md
    assert "## Floor" in md and "453x" in md
    assert "roofline profile --kernel triton_mla --ctx 128k" in md and "--section SpeedOfLight" in md
    assert "| triton | `3.6.0` |" in md and "| ncu | `2025.3.1 (build 36398880)` |" in md
    assert md.count("<details>") == md.count("</details>") >= 2
    assert check_charts(out) == ["report_roofline.png", "report_stalls.png"]
    assert "## Where the warps wait" not in md and "no PC samples in this capture" in md  # its old metric list
    svg = (tmp_path / "evidence" / "report_roofline.svg").read_text()
    for kind in ("(datasheet)", "(measured)", "(report's own)"):  # every kind of roof, labelled
        assert kind in svg


def _ncu_runs() -> list[str]:
    """The two-kernel fixture runs with an ncu report (the nsys-only one: tests/analysis/test_overlapping_launches.py)."""
    runs = (p for p in RUNS.iterdir() if p.name != "h200-triton_mla-128k")
    return sorted(
        p.name
        for p in runs
        if any(r["tool"] == "ncu" for r in json.loads((p / "manifest.json").read_text())["reports"])
    )


@pytest.mark.parametrize("run", _ncu_runs())
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
    timeline = ["timeline.png"] if any(r["tool"] == "nsys-sqlite" for r in manifest["reports"]) else []
    batch = ["batch.png"] if "## Batch" in md else []  # a ragged batch's histogram, in its section above the rest
    assert bool(batch) == bool(json.loads((RUNS / run / "spec.json").read_text())["workload"].get("ctx_lens"))
    assert [c.split("_")[-1] for c in check_charts(out)] == batch + waits + (
        ["stalls.png"] if verdict_preset else ["roofline.png", "stalls.png"]
    ) + timeline
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
    assert len(check_charts(out)) == 4 and "## Where the warps wait" in md  # --set full: PC samples
    assert "## Over the launch's lifetime (ncu PM sampling)" in md  # and its PmSampling section


def test_never_overwrites_without_force(tmp_path):
    out = tmp_path / "report.md"
    out.write_text("another run's evidence\n")
    r = report(SAMPLE_RUN, "-o", out)
    assert r.exit_code == 2 and "already exists" in r.output and "--force" in r.output
    assert "Traceback" not in r.output and len(r.output.strip().splitlines()) == 1
    assert out.read_text() == "another run's evidence\n" and not (tmp_path / "report_roofline.png").exists()
    assert report(SAMPLE_RUN, "-o", out, "--force").exit_code == 0
    assert "_verify_extend_kernel" in out.read_text()


def test_existing_chart_also_blocks(tmp_path):
    (tmp_path / "report_stalls.svg").write_text("<svg/>")
    r = report(SAMPLE_RUN, "-o", tmp_path / "report.md")
    assert r.exit_code == 2 and "report_stalls.svg: already exists" in r.output


def test_output_folder_and_bad_path(tmp_path):
    assert report(SAMPLE_RUN, "-o", str(tmp_path) + "/").exit_code == 0
    assert (tmp_path / "report.md").exists()
    r = report(tmp_path / "nope")
    assert r.exit_code == 2 and "no such run directory or report" in r.output


def test_rerun_gives_identical_files(tmp_path):
    out = tmp_path / "a" / "report.md"
    assert report(RUNS / "h200-triton_mla_decode-128k-p64", "-o", out).exit_code == 0
    (tmp_path / "a").rename(tmp_path / "b")
    assert report(RUNS / "h200-triton_mla_decode-128k-p64", "-o", out).exit_code == 0
    for f in ("report.md", "report_roofline.svg", "report_stalls.svg", "report_roofline.png"):
        assert (tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes(), f


def test_renderer_takes_typed_input():
    """The renderer reads the typed Analysis (no to_dict round trip): no charts, minimal metadata."""
    md = render_markdown(ReportInput(load(SAMPLE_RUN).analysis), ReportMeta(source="somewhere/run"))
    assert "| K1 | `_verify_extend_kernel` |" in md and "charts were not written" in md
    assert "The capture command is not recorded" in md and "## Timeline" not in md


def test_ragged_workload_shows_its_ctx_lens_as_a_list():
    """The workload's ctx_lens tuple prints as the list analysis.json holds, as it did from the dict."""
    analysis = load(SAMPLE_RUN).analysis
    ragged = dataclasses.replace(analysis.workload, batch=2, ctx_lens=(1024, 2048))
    md = render_markdown(ReportInput(dataclasses.replace(analysis, workload=ragged)), ReportMeta(source="run"))
    assert "| `ctx_lens` | `[1024, 2048]` |" in md and "| `batch` | `2` |" in md


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
    code = (
        "import sys; from click.testing import CliRunner; from roofline.cli import main; "
        "r = CliRunner().invoke(main, ['analyze', '--format', 'json']); assert r.exit_code == 0; "
        "print('matplotlib' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_api_report(tmp_path):
    """roofline.report(run, path): the same report from the Python API."""
    import roofline

    files = roofline.report(roofline.load(RUNS / "h200-triton_mla_fast-128k-p64"), tmp_path / "r.md")
    assert [f.name for f in files] == ["r.md", "r_roofline.png", "r_roofline.svg", "r_stalls.png", "r_stalls.svg"]
    with pytest.raises(FileExistsError, match="--force"):
        roofline.report(RUNS / "h200-triton_mla_fast-128k-p64", tmp_path / "r.md")


# --- the report tells the whole story -------------------------------------------

NSYS_FAST_128K = RUNS.parent / "nsys" / "triton_mla_fast_128k.sqlite"
SAMPLE = ROOT / "roofline" / "data" / "samples" / "h200-triton_mla-128k"  # both tools


@pytest.fixture(scope="module")
def sample_report(tmp_path_factory):
    out = tmp_path_factory.mktemp("sample") / "report.md"
    assert report(SAMPLE, "-o", out).exit_code == 0
    return out


def test_useful_and_executed_flops_and_the_roof_agrees_with_the_floor(sample_report):
    md = sample_report.read_text()
    assert "bandwidth-bound" in md.split("## Floor")[1].split("##")[0]
    assert "20.54 GFLOP, the workload's" in md and "73.49 GFLOP counted by ncu" in md
    assert "tensor alone 3.56x: MMA padding: 9 query rows padded to 32-row MMA tiles" in md
    # DRAM row: useful 130.0 FLOP/B -> memory roof (as the floor says); executed 465.0 -> compute
    assert re.search(r"\| DRAM \| 158\.0 MB \| 130\.0 \| 465\.0 \| 10 \| 0\.21 \| [\d,.]+ \| memory \| compute \|", md)
    k = load(SAMPLE).analysis.kernels[0]
    assert k.hierarchy["levels"][-1]["roof"] == "memory" and k.hierarchy["executed_over_useful"] == pytest.approx(
        3.58, abs=0.01
    )


def test_roofline_chart_draws_the_floor_the_gap_and_the_executed_work(sample_report):
    svg = sample_report.with_name("report_roofline.svg").read_text()
    assert "the workload's floor (33.68 µs)" in svg and "461x from the floor" in svg
    assert "FLOPs ncu counted (executed, padding included)" in svg
    md = sample_report.read_text()
    assert "an x marks the work ncu counted" in md and "The star is the workload's floor" in md


def test_timeline_section_and_chart(sample_report):
    md = sample_report.read_text()
    assert "## Timeline" in md and "From nsys 2025.3.1.0: 3 launches in the NVTX range 'roofline', 3 steps." in md
    assert "| host time (the NVTX step range) | 0.08601 |" in md and "not launch-bound" in md
    assert sorted(check_charts(sample_report)) == [
        "report_roofline.png",
        "report_stalls.png",
        "report_timeline.png",
        "report_waits.png",
    ]


def test_timeline_of_an_nsys_export_and_launch_bound(tmp_path):
    out = tmp_path / "report.md"
    assert report(NSYS_FAST_128K, "-o", out).exit_code == 0
    md = out.read_text()
    assert "## Timeline" in md and "| kernel time (2 kernels) | 0.1878 |" in md
    assert "the source is an nsys timeline, without hardware counters" in md and "ncu's default sections" not in md
    assert check_charts(out) == ["report_timeline.png"]
    run = load(NSYS_FAST_128K)
    busy = {**run.timeline.summary, "gpu_busy_pct_of_range": 24.0}  # as the H200 run with both tools printed
    md = render_markdown(ReportInput(run.analysis, dataclasses.replace(run.timeline, summary=busy)), ReportMeta("run"))
    assert "**launch-bound**: the GPU ran kernels only 24% of the profiled range; it waits for the host" in md
    assert "; **launch-bound**: the GPU ran kernels only 24% of the profiled range (nsys)." in md.splitlines()[2]


def test_one_colour_per_stall_reason_in_every_chart(tmp_path):
    from profiler.metrics import STALL_REASONS
    from reports.charts.stalls import STALL_COLOR, stall_chart

    assert set(STALL_REASONS) <= set(STALL_COLOR) and len(set(STALL_COLOR.values())) == len(STALL_COLOR)
    base = load(SAMPLE).analysis
    svgs = []
    for n, stalls in enumerate([["wait", "long_scoreboard"], ["long_scoreboard"]]):
        k = dataclasses.replace(base.kernels[0], top_stalls=[{"reason": r, "cycles_per_issue": 2.0} for r in stalls])
        svgs.append(stall_chart(dataclasses.replace(base, kernels=[k]), tmp_path / f"s{n}")[1].read_text())
    assert all(STALL_COLOR["long_scoreboard"] in s for s in svgs)  # first in one chart, second in the other


def test_one_stall_unit(sample_report):
    md = sample_report.read_text() + sample_report.with_name("report_stalls.svg").read_text()
    assert "cycles/issue" not in md and "cycles per issue" not in md
    assert "warps/issue: warps stalled per issued instruction" in md and "top stalls (warps/issue)" in md
    full = CliRunner().invoke(main, ["analyze", str(FULL_SET)]).output  # stall counters, not PC sampling
    assert "7.0 warps stalled per issued instruction, from the stall" in full and "cycles per" not in full


def test_one_rounding_rule_in_analyze_and_report(sample_report):
    from reports.numbers import ms, ratio

    assert (ms(15.564992), ms(15.568661), ms(0.0336764), ms(9.99996)) == ("15.56", "15.57", "0.03368", "10.00")
    assert (ratio(462.30), ratio(462.18), ratio(43.21), ratio(2.1499)) == ("462x", "462x", "43.2x", "2.15x")
    text = CliRunner().invoke(main, ["analyze", str(SAMPLE)]).output
    md = sample_report.read_text()
    for out in (text, md):
        assert "461x" in out and not re.search(r"461\.\dx", out) and "15.5127" not in out and "15.5252" not in out
    assert "step: 15.51 ms of kernels vs floor 0.03368 ms: 461x from the floor" in text
    assert "15.51 ms of kernels per step against a floor of 33.68 µs: **461x**" in md
    cmp = CliRunner().invoke(main, ["compare", str(SAMPLE), str(SAMPLE)]).output  # compare: the same helper
    assert "15.51 ms -> 15.51 ms of kernels per iteration" in cmp and "| gap to floor" not in cmp
    assert re.search(r"gap to floor +461x +461x", cmp) and "15.53 ms" in cmp


def test_reproduce_notes_and_nsys_version(sample_report):
    md = sample_report.read_text()
    assert "```console\nroofline profile --kernel triton_mla --ctx 128k --tool both" in md and "__main__.py" not in md
    assert "\\`" not in md  # code spans, not literal backticks
    assert "does not ask for" not in md  # the default preset holds all the analysis reads
    assert "| nsys | `2025.3.1.0` |" in md and "2025.3.2.0" not in md
    text = CliRunner().invoke(main, ["analyze", str(SAMPLE)]).output
    assert "timeline (nsys 2025.3.1.0," in text and "2025.3.2.0" not in text


def test_preset_sentence_is_true_of_the_run(tmp_path):
    out = tmp_path / "report.md"
    assert report(RUNS / "h200-triton_mla_fast-ring-128k-p64", "-o", out).exit_code == 0
    md = out.read_text()
    assert "this run's preset, `verdict`, does not collect them; `--preset roofline` (the default)" in md
    assert "`roofline profile` collects them" not in md


def test_roofline_axis_ignores_an_outlier(tmp_path):
    from reports.charts.roofline import roofline_chart, roofline_layout

    analysis = load(SAMPLE).analysis
    hierarchy = copy.deepcopy(analysis.kernels[0].hierarchy)
    l1 = hierarchy["levels"][0]
    l1["useful_arithmetic_intensity"] = l1["arithmetic_intensity"] = 2e7  # like one GEMM's L1 point in a folder
    analysis = dataclasses.replace(analysis, kernels=[dataclasses.replace(analysis.kernels[0], hierarchy=hierarchy)])
    layout = roofline_layout(analysis, [])
    assert layout["x_hi"] < 1e5 and layout["off"] == [("K1", "L1", 2e7)]
    svg = roofline_chart(analysis, [], tmp_path / "r")[1].read_text()
    assert "at the edge, off the axis: K1 L1 2e+07 FLOP/B" in svg
    md = render_markdown(ReportInput(analysis), ReportMeta(source="run"), {"roofline": Path("r.png")})
    assert "Beyond the axis, drawn at its edge" in md and "K1 L1 at 2e+07 FLOP/B" in md


def _make_examples():
    import importlib.util

    path = ROOT / "tools" / "make_examples.py"
    spec = importlib.util.spec_from_file_location("make_examples", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_readme_example_report_and_quoted_output_do_not_drift(tmp_path):
    """docs/examples/report/ and the README's quoted sample output are tools/make_examples.py's
    output on the committed sample: regenerated here and compared (charts: that they exist and
    the markdown links them; the versions of the tools that drew the report are left out)."""
    make = _make_examples()
    root = ROOT
    make.build(tmp_path / "report.md")
    mine = (root / make.EXAMPLE).read_text()
    fresh = (tmp_path / "report.md").read_text()
    drop = lambda md: [l for l in md.splitlines() if "(this report)" not in l]  # noqa: E731,E741
    assert drop(mine) == drop(fresh), "docs/examples/report/ drifted: run python tools/make_examples.py"
    assert sorted(linked_images(mine)) == [
        "report_roofline.png",
        "report_stalls.png",
        "report_timeline.png",
        "report_waits.png",
    ]
    for link in linked_images(mine):
        assert (root / make.EXAMPLE.parent / link).exists() and (root / make.EXAMPLE.parent / link).with_suffix(
            ".svg"
        ).exists()
    assert make.readme_text() == (root / "README.md").read_text(), "README drifted: run python tools/make_examples.py"
    assert make.analyze_text() == (root / make.ANALYZE).read_text(), "docs/examples/analyze.txt drifted"
    assert "461x from the floor" in make.readme_block() and "x read" in make.bench_block()
    assert len((root / "README.md").read_text().splitlines()) <= 150  # the README stays a tour; docs/ has the rest


def test_useful_work_of_a_two_kernel_step_goes_to_the_kernel_doing_the_mma():
    split, combine = load(RUNS / "h200-triton_mla_fast-128k-p64").analysis.kernels
    assert split.hierarchy["useful_flops"] == pytest.approx(20.54e9, rel=1e-3)  # the floor's, one layer per launch
    assert "useful_flops" not in combine.hierarchy  # no MMA: its FLOPs stay ncu's
    dram = split.hierarchy["levels"][-1]
    assert (dram["roof"], dram["executed_roof"]) == ("memory", "compute")


def test_a_plain_fast_call_under_both_tools_reports_launch_bound(tmp_path):
    """The H200 run (`roofline profile --kernel triton_mla_fast --ctx 32k --page-size 64`, both tools,
    2026-12-01): two launches per step whose kernels take 0.033 ms while the host takes 0.12 ms. The
    report says launch-bound in its headline and its timeline, with the host and GPU-busy numbers."""
    out = tmp_path / "report.md"
    assert report(RUNS / "h200-triton_mla_fast-both-32k-p64", "-o", out).exit_code == 0
    md = out.read_text()
    assert "**launch-bound**: the GPU ran kernels only 24% of the profiled range (nsys)." in md.splitlines()[2]
    assert "| host time (the NVTX step range) | 0.1208 |" in md
    assert "Verdict: **launch-bound**: the GPU ran kernels only 24% of the profiled range; it waits for the host." in md
    run = load(RUNS / "h200-triton_mla_fast-both-32k-p64")
    assert run.manifest.format == "roofline-run/2" and len(read_timing_samples(run)) == 30


def read_timing_samples(run):
    from profiler.timing import read_timing

    return read_timing(run.source).samples_ms


def test_a_report_is_never_written_into_a_run_directory(tmp_path):
    import shutil

    from roofline.cli import main as cli_main

    run = tmp_path / "run"
    shutil.copytree(SAMPLE_RUN, run)
    before = sorted(p.name for p in run.iterdir())
    for out in (run, run / "sub" / "report.md"):
        r = CliRunner().invoke(cli_main, ["report", str(run), "-o", str(out)])
        assert r.exit_code == 2 and f"inside the run directory {run}" in r.output and "Traceback" not in r.output
    assert sorted(p.name for p in run.iterdir()) == before


def test_timeline_chart_skips_a_step_without_kernels(tmp_path):
    """A step that launched nothing has no kernel times (NaN in the typed steps table): the chart
    leaves it out and counts only the steps that ran kernels."""
    import pandas as pd

    from reports.charts.timeline import timeline_chart

    timeline = load(SAMPLE).timeline
    n = len(timeline.steps)
    end = int(timeline.steps["range_end_ns"].max())
    empty = pd.DataFrame([{"step": n, "kernels": 0, "range_start_ns": end + 1000, "range_end_ns": end + 2000}])
    steps = pd.concat([timeline.steps, empty], ignore_index=True)
    assert steps["first_kernel_start_ns"].isna().iloc[-1]
    svg = timeline_chart(dataclasses.replace(timeline, steps=steps), tmp_path / "t")[1].read_text()
    assert f"({n} steps)" in svg and f"({n + 1} steps)" not in svg


def test_waits_chart_is_the_same_bytes_on_every_run(tmp_path):
    """The waits chart draws outside the charts' rc context: its SVG ids must still not be random."""
    from reports.charts.waits import waits_chart

    analysis = load(SAMPLE).analysis
    a, b = (waits_chart(analysis, tmp_path / name / "w") for name in ("a", "b"))
    assert [f.suffix for f in a] == [".png", ".svg"]
    assert [f.read_bytes() for f in a] == [f.read_bytes() for f in b]
