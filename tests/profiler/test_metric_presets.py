"""Metric presets: cost measured on the H200, names checked against every chip's list, and the
`verdict` preset's metrics alone giving the same bound and cause as everything, on real captures."""

from __future__ import annotations

import dataclasses
import json
import lzma
import re
from functools import cache
from pathlib import Path

import pytest
from click.testing import CliRunner

from kernels.hardware import chip_of
from profiler.metrics import (
    CHIP_LACKS,
    CHIP_NAMES,
    CHIPS,
    DEFAULT_PRESET,
    PRESETS,
    STALL_REASONS,
    UnknownChip,
    UnknownPreset,
    pcsamp_metric,
    resolve,
    resolve_preset,
    stall_metric,
)
from profiler.ncu import ncu_command
from profiler.ncu_reader import ID_COLUMNS, read_ncu_report
from profiler.ncu_tidy import tidy_launches
from profiler.readers import plain_file, read_launches
from roofline.analysis.summary import summarize
from roofline.cli import main
from tests.fixtures.capture import metric_candidates
from tests.paths import FIXTURES, ROOT

PASSES = FIXTURES / "passes"


@cache
def chip_names(chip: str) -> frozenset[str]:
    """Every metric name of `ncu --query-metrics --chip C --query-metrics-mode all` (first column)."""
    with lzma.open(FIXTURES / "chips" / f"{chip}.all.txt.xz", "rt") as f:
        return frozenset(
            line.split()[0] for line in f if line[:1].strip() and not line.startswith(("-", "Metric", "Chip"))
        )


@cache
def h200_verdict_report() -> frozenset[str]:
    """Metric names in the real report of the verdict preset's list (H200)."""
    with plain_file(PASSES / "nosol_k_small_pc.ncu-rep.gz") as p:
        return frozenset(read_ncu_report(p).frame.columns)


def passes(log: Path) -> int:
    return int(re.search(r"- (\d+) pass", log.read_text()).group(1))


def exists_on(metric: str, chip: str) -> bool:
    """Counters are in the chip's list. Launch and device attributes and PC sampling are not listed by
    --query-metrics: attributes are checked in the H200 report of the preset, and a sampled stall
    reason by the chip's stall counter of the same reason (smsp__warps_issue_stalled_R)."""
    if metric.startswith(("launch__", "device__", "gpu__time_duration")):
        return metric in h200_verdict_report()
    if metric.startswith("smsp__pcsamp_"):
        if metric == "smsp__pcsamp_sample_count":
            return True
        reason = next(r for r in STALL_REASONS if pcsamp_metric(r) == metric)
        return f"smsp__warps_issue_stalled_{reason}.sum" in chip_names(chip)
    return metric in chip_names(chip)


@pytest.mark.parametrize("chip", CHIPS)
@pytest.mark.parametrize("preset", list(PRESETS))
def test_every_resolved_name_exists_on_its_chip(chip, preset):
    p = resolve(preset, chip)
    missing = [m for m in p.metrics if not exists_on(m, chip)]
    assert missing == []


def test_renames_point_at_names_the_chip_has_and_away_from_ones_it_lacks():
    for chip, names in CHIP_NAMES.items():
        for hopper, own in names.items():
            assert hopper in chip_names("gh100") and hopper not in chip_names(chip) and own in chip_names(chip)
    for chip, lacks in CHIP_LACKS.items():
        assert not any(m in chip_names(chip) for m in lacks if not m.startswith("smsp__pcsamp_"))
    gb202 = resolve("roofline", "gb202").metrics
    assert "sm__ops_path_tensor_op_hmma_src_bf16_dst_fp32_sparsity_off.sum.peak_sustained" in gb202
    assert pcsamp_metric("gmma") not in gb202 and pcsamp_metric("gmma") in resolve("verdict", "gh100").metrics


def test_presets_are_the_measured_lists_and_verdict_fits_five_passes():
    assert set(PRESETS["verdict"].metrics) == set(metric_candidates.NOSOL4["v4"])
    assert set(PRESETS["roofline"].metrics) == set(metric_candidates.NOSOL4["r4"])
    # The search record builds on the presets' lists, so check the presets against the real captures
    # too: every metric a preset asks for is in the H200 report made with its list (the pass counts
    # below are that capture's), so a metric added since would be caught here.
    for preset, capture in (("verdict", "nosol4_v4"), ("roofline", "nosol4_r4")):
        with plain_file(PASSES / f"{capture}.ncu-rep.gz") as p:
            captured = set(read_ncu_report(p).frame.columns)
        assert set(PRESETS[preset].metrics) <= captured, preset
    assert passes(PASSES / "nosol4_v4.log") == PRESETS["verdict"].passes_h200 <= 5
    assert passes(PASSES / "nosol4_r4.log") == PRESETS["roofline"].passes_h200 <= 6
    # with the source counters (`profile --source`): one pass more: 6 / 7 (docs/results/h200-preset-passes.md)
    assert passes(PASSES / "nosol4_v4_src.log") == 6 and passes(PASSES / "nosol4_r4_src.log") == 7
    # what each addition costs: the SMs' busy cycles nothing, the L2 hit rate one pass in verdict, none in roofline
    assert passes(PASSES / "nosol4_v4_imb.log") == passes(PASSES / "nosol_k_small_pc.log") == 4
    assert passes(PASSES / "nosol4_v4_imb_l2.log") == 5
    assert passes(PASSES / "nosol4_r4_imb_l2.log") == passes(PASSES / "nosol_r_small_pc_counts.log") == 6
    # ncu's own SM% and Memory% are what does not fit: 9 and 6 passes, with the SpeedOfLight section 10
    assert passes(PASSES / "nosol_launch_sm.log") == 9 and passes(PASSES / "nosol_launch_mem.log") == 6
    assert passes(PASSES / "sol_only.log") == 10
    assert DEFAULT_PRESET == "roofline" and PRESETS["verdict"].passes_h200 <= 5 < PRESETS["roofline"].passes_h200


def _reports():
    files = (
        sorted(FIXTURES.glob("full/*.ncu-rep.gz"))
        + sorted(FIXTURES.glob("corpus/*.ncu-rep.gz"))
        + sorted(FIXTURES.glob("probes/*.ncu-rep"))
        + sorted(FIXTURES.glob("runs/*/profile.ncu-rep"))
        + [FIXTURES / "triton_mla_8k_full.ncu-rep", ROOT / "roofline/data/samples/h200-triton_mla-128k/profile.ncu-rep"]
    )
    return [pytest.param(f, id=f"{f.parent.name}/{f.name}") for f in files]


@pytest.mark.parametrize("report", _reports())
def test_verdict_preset_alone_gives_the_same_bound_and_cause(report):
    """Drop every column but the verdict preset's from a richer capture: same bound, cause and roof.
    Captures without PC sampling (the probes and runs, made with the earlier 17-pass list) keep their
    counter stall ratios, which the analysis reads as well."""
    with plain_file(report) as p:
        raw = read_ncu_report(p)
    sampled = any(c.startswith("smsp__pcsamp_warps") for c in raw.frame.columns)
    keep = set(PRESETS["verdict"].metrics) | (set() if sampled else {stall_metric(r) for r in STALL_REASONS})
    small = dataclasses.replace(
        raw, frame=raw.frame[[c for c in raw.frame.columns if c in ID_COLUMNS or c in keep]].copy(), rules={}
    )
    everything = summarize(tidy_launches(raw)).kernels
    verdict = summarize(tidy_launches(small), preset="verdict").kernels
    assert [(k.bound, k.cause, k.roof) for k in verdict] == [(k.bound, k.cause, k.roof) for k in everything]
    for k in verdict:
        assert k.ncu_rule is None and k.ncu_rule_note == "ncu rule not collected (preset verdict)"
        assert any("largest of the 8 throughput breakdown units" in e for e in k.evidence)


def test_a_real_verdict_preset_report_reads_like_the_full_one():
    """triton_mla 8k under the verdict preset (4 passes) vs under --set full: same verdict, theoretical
    occupancy derived from the launch limits, stalls from PC samples close to the counter ratios."""
    fast = summarize(read_launches(PASSES / "nosol_k_small_pc.ncu-rep.gz"), preset="verdict").kernels[0]
    full = summarize(read_launches(FIXTURES / "triton_mla_8k_full.ncu-rep")).kernels[0]
    assert (fast.bound, fast.cause, fast.roof) == (full.bound, full.cause, full.roof) == ("latency", "small grid", None)
    assert fast.theoretical_occupancy_pct == full.theoretical_occupancy_pct == 12.5
    assert [s["reason"] for s in fast.top_stalls] == [s["reason"] for s in full.top_stalls]
    assert fast.top_stalls[0]["cycles_per_issue"] == pytest.approx(full.top_stalls[0]["cycles_per_issue"], rel=0.1)
    assert any("PC-sampled" in e for e in fast.evidence)
    assert full.ncu_rule is not None and full.ncu_rule_note is None  # the rule is compared when present


def test_derived_theoretical_occupancy_matches_ncus_on_every_full_capture():
    for f in sorted(FIXTURES.glob("full/*.ncu-rep.gz")) + sorted(FIXTURES.glob("corpus/*.ncu-rep.gz")):
        with plain_file(f) as p:
            raw = read_ncu_report(p)
        ncu_own = raw.frame["sm__maximum_warps_per_active_cycle_pct"].astype(float)
        derived = tidy_launches(
            dataclasses.replace(raw, frame=raw.frame.drop(columns=["sm__maximum_warps_per_active_cycle_pct"]))
        )
        assert list(derived.frame["theoretical_occupancy_pct"]) == pytest.approx(list(ncu_own)), f.name


def test_roofline_preset_report_feeds_the_hierarchy():
    k = summarize(read_launches(PASSES / "nosol_r_small_pc_counts.ncu-rep.gz"), preset="roofline").kernels[0]
    levels = {lv["level"]: lv for lv in k.hierarchy["levels"]}
    assert set(levels) == {"L1", "L2", "DRAM"} and all(lv["peak_gbps"] for lv in levels.values())


def test_gb202_names_are_read(tmp_path):
    """A report using gb202's DRAM names gets DRAM bytes (stand-in: the H200 report with the columns
    renamed as gb202 names them, profiler/metrics.py CHIP_NAMES)."""
    raw = read_ncu_report(FIXTURES / "triton_mla_8k_full.ncu-rep")
    renamed = dataclasses.replace(
        raw,
        frame=raw.frame.rename(
            columns={
                "dram__bytes_read.sum": "dram__bytes_op_read.sum",
                "dram__bytes_write.sum": "dram__bytes_op_write.sum",
            }
        ),
        units={CHIP_NAMES["gb202"].get(k, k): v for k, v in raw.units.items()},
    )
    a, b = tidy_launches(raw).frame, tidy_launches(renamed).frame
    assert b["dram_bytes_read"].iloc[0] == a["dram_bytes_read"].iloc[0] > 0


def test_device_names_map_to_chips():
    assert chip_of("NVIDIA H200") == chip_of("NVIDIA H100 80GB HBM3") == "gh100"
    assert chip_of("NVIDIA B200") == chip_of("NVIDIA GB200") == "gb100"
    assert chip_of("NVIDIA RTX PRO 6000 Blackwell Workstation Edition") == chip_of("NVIDIA GeForce RTX 5090") == "gb202"
    assert chip_of("NVIDIA A100-SXM4-80GB") is None
    p = resolve_preset("verdict", device_name="NVIDIA RTX PRO 6000 Blackwell Server Edition")
    assert (p.name, p.chip, p.note) == ("verdict", "gb202", None) and pcsamp_metric("gmma") not in p.metrics
    p = resolve_preset("verdict", device_name="NVIDIA A100")
    assert p.chip == "gh100" and "has no ncu chip in kernels/data/hardware.json" in p.note
    with pytest.raises(UnknownChip, match="known: gh100, gb100, gb202"):
        resolve("verdict", "gx100")
    with pytest.raises(UnknownPreset, match="known: verdict, roofline, full"):
        resolve("fast", "gh100")


def test_a_preset_is_resolved_once_and_travels_to_ncu():
    p = resolve_preset(None, device_name="NVIDIA GeForce RTX 5090", source=True)  # as `profile --source` does
    assert (p.name, p.chip) == (DEFAULT_PRESET, "gb202") and p.metrics == p.ncu.metrics
    assert resolve("roofline", "gb202").metrics != resolve("roofline", "gh100").metrics
    assert p.metrics == resolve("roofline", "gb202").metrics + ("inst_executed",)  # gb202's names + source counters
    cmd = ncu_command("ncu", ["app"], "out/profile", preset=p)
    assert cmd[cmd.index("--metrics") + 1] == ",".join(p.metrics) and "--import-source" in cmd
    assert resolve_preset("verdict", "gh100", device_name="NVIDIA GeForce RTX 5090").chip == "gh100"  # --chip wins
    assert resolve_preset(device_name=None).note == "no GPU name from nvidia-smi: using gh100 metric names"
    with pytest.raises(UnknownPreset):  # the name is checked first, before the chip
        resolve_preset("fast", "gx100")
    with pytest.raises(UnknownChip, match="unknown chip 'gx100'"):
        resolve_preset("verdict", "gx100")


def test_metrics_command():
    runner = CliRunner()
    out = runner.invoke(main, ["metrics", "--chip", "gb202", "--preset", "verdict", "--format", "json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert data["chip"] == "gb202" and data["preset"] == "verdict"
    assert data["metrics"] and all(exists_on(m, "gb202") for m in data["metrics"])
    for args, known in ((["--chip", "gx1"], "gh100, gb100, gb202"), (["--preset", "nope"], "verdict, roofline, full")):
        bad = runner.invoke(main, ["metrics", *args])
        assert bad.exit_code != 0 and known in bad.output and len(bad.output.strip().splitlines()) == 1
