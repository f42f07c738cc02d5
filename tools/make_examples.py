"""Regenerate, from the committed H200 sample alone (no GPU), the README's example report
(docs/examples/report/) and the README's quoted `roofline analyze` output and the numbers around it; and the
README's bench table and serving table from the committed bench runs (docs/results/h200-peers/bench.json,
docs/results/h200-serving/bench.json).

    python tools/make_examples.py           # rewrite docs/examples/report/ and the README's block
    python tools/make_examples.py --check   # exit 1, naming what drifted, instead of writing

tests/reports/test_report.py builds both into a temporary folder and fails when the committed ones drift.
"""

from __future__ import annotations

import argparse
import textwrap
from pathlib import Path

from click.testing import CliRunner

from reports.markdown import ReportInput, write_report
from reports.numbers import ms, ratio
from reports.serving import render_serving_markdown
from roofline.analysis.floor import workload_floor
from roofline.analysis.projection import project
from roofline.api import load
from roofline.catalogue.gpus import get_gpu, match_gpu
from roofline.cli import main
from roofline.pipelines.benching import read_bench
from roofline.pipelines.reporting import build_meta

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = Path("roofline/data/samples/h200-triton_mla-128k")  # relative: the same text on every machine
EXAMPLE = Path("docs/examples/report/report.md")
ANALYZE = Path("docs/examples/analyze.txt")  # the whole `roofline analyze` output the README quotes in part
PEERS = Path("docs/results/h200-peers/bench.json")  # one `roofline bench` run on the H200
README = Path("README.md")
BEGIN = "<!-- made by tools/make_examples.py: edit the template there, then run it -->"
END = "<!-- end of tools/make_examples.py's block -->"
BENCH_BEGIN = "<!-- made by tools/make_examples.py: the bench table -->"
BENCH_END = "<!-- end of tools/make_examples.py's bench table -->"
BENCH_ROWS = ("read", "flashmla", "triton_mla_fast_graph", "triton_mla")
# the serving rows: `roofline bench --serving` on the H200 (tests/fixtures/capture/serving_bench_h200.sh)
SERVING_BENCH = Path("docs/results/h200-serving/bench.json")
# the same rows by `--method layered` (another layer's GEMM between steps), from the same call, when committed
SERVING_LAYERED = Path("docs/results/h200-serving/layered/bench.json")
SERVING_BEGIN = "<!-- made by tools/make_examples.py: the serving table -->"
SERVING_END = "<!-- end of tools/make_examples.py's serving table -->"
LAYERS = 61  # the seed model's layers
SEED_STEP_MS = 714.0  # the verify step the seed's team measured at 128k on the RTX PRO 6000
CUT = "  [...]"  # where the README's excerpt of `roofline analyze` leaves lines out
TARGET = "rtx-pro-6000"  # the GPU the seed's team ran on
TARGET_NAME = "RTX PRO 6000"

README_BLOCK = """`tools/quickstart.sh` on the H200 made the bundled sample (both tools, {passes} passes per launch, {wall_s} s); `roofline analyze` reads it anywhere (to its step line, cuts marked `[...]`: [all of it]({analyze_file})):

```
$ roofline analyze            # {sample}
{analyze}```

The seed's {seed_gap} (714 ms per verify step against {seed_floor} ms to read its {layers} layers' KV cache once on the {target_name}) is this {gap} (the same kernel, one layer, against the H200's floor), and neither is page_size=1 gathers nor bandwidth: {grid} programs (one per head) on {sms} SMs, each walking the whole 128k prefix serially at ~{per_program:.1f} GB/s. Projected onto the GPU the seed ran on (`roofline analyze --gpu {target}`, modelled: latency-bound, so only the SM clock helps): {projected} ms per layer, x {layers} layers = {per_step} ms per verify step, against the 714 ms the seed's team saw at 128k. `--gpu` also prints the kernel model and why it differs (it streams each program at one SM's share of DRAM bandwidth; this one drew less).
"""  # noqa: E501 - each paragraph one line here, wrapped at README_WIDTH by readme_block
README_WIDTH = 118


def analyze_text(root: Path = ROOT) -> str:
    """`roofline analyze` of the sample, as a user sees it (stdout)."""
    r = CliRunner().invoke(main, ["analyze", str(root / SAMPLE)])
    if r.exit_code != 0:
        raise SystemExit(f"roofline analyze {SAMPLE} failed: {r.output}")
    return r.stdout


def analyze_excerpt(text: str) -> str:
    """The README's part of `roofline analyze`: the floors, the kernel table, the verdict's lines that
    decide it, and the step (the rest is in ANALYZE)."""
    lines, out, keep_bullet = text.splitlines(), [], False
    verdict_bullets = ("small grid", "busiest unit", "top warp stall", "try:")
    section = "head"
    for line in lines:
        cut_before = len(out)
        if section == "head":
            out.append(line)
            if line.startswith("---"):
                section = "table"
        elif section == "table":
            if not line.strip():
                section = "verdict"
            out.append(line)
        elif section == "verdict":
            if not line.strip():
                section = "step"
            elif line.endswith(")") and ": " in line and not line.startswith(" "):
                out.append(line)
            elif line.startswith("  - "):
                keep_bullet = any(w in line for w in verdict_bullets)
                if keep_bullet:
                    out.append(line)
            elif line.startswith("    ") and keep_bullet:
                out.append(line)
        elif line.startswith("step:"):
            out += [line]
            break
        if len(out) == cut_before and line.strip() and (not out or out[-1] != CUT):
            out.append(CUT)  # a line left out: said where, once for each run of them
    return "\n".join(out) + "\n"


def bench_block(root: Path = ROOT) -> str:
    """The README's bench table: the 128k rows of the committed one-run H200 bench."""
    r = CliRunner().invoke(main, ["bench", "--from", str(root / PEERS)])
    if r.exit_code != 0:
        raise SystemExit(f"roofline bench --from {PEERS} failed: {r.output}")
    lines = r.stdout.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("kernel "))
    rows = [
        line
        for line in lines[header + 2 :]
        if line.split()[:2] and line.split()[0] in BENCH_ROWS and line.split()[1] == "128k"
    ]
    return (
        f"One `roofline bench` run on the H200 (`roofline bench --from {PEERS.as_posix()}` prints it all,\n"
        "8k to 1m; page 64, chain mask: the shape FlashMLA runs; CUDA-graph replays over rotated inputs):\n\n"
        "```\n" + "\n".join(lines[:3] + [lines[header]] + rows) + "\n```\n"
    )


def serving_block(root: Path = ROOT) -> str:
    """The README's serving table: the serving rows from the committed `roofline bench --serving` run, each kernel
    beside a bare read of the batch's bytes and FlashMLA in the same run, and with the same call's `--method
    layered` run, its ratios too; until the first run is committed, where it will come from."""
    path = root / SERVING_BENCH
    if not path.exists():
        return (
            f"Not measured yet by `roofline bench --serving`: `bash tests/fixtures/capture/serving_bench_h200.sh` on\n"
            f"the H200 writes the bench.json this table is made from ({SERVING_BENCH.as_posix()}). Until then,\n"
            "the rows as the batch schedule's own benchmark measured them: "
            "[docs/results/h200-serving/README.md](docs/results/h200-serving/README.md).\n"
        )
    bench = read_bench(path)
    meta = bench.meta
    layered = root / SERVING_LAYERED
    if not layered.exists():
        return (
            f"One `roofline bench --serving` run on the {meta['device']} (`roofline bench --from {SERVING_BENCH.as_posix()}`\n"
            "prints it all, with each timing's SM clock and power; page 64, chain mask, rotated inputs, steps back to back):\n\n"
            + render_serving_markdown(bench.table)
        )
    return (
        f"`roofline bench --serving` on the {meta['device']}, then `--method layered` in the same call (another layer's "
        "GEMM between steps,\nits time taken out); page 64, chain mask, rotated inputs; "
        f"`roofline bench --from {SERVING_BENCH.parent.as_posix()}/[layered/]bench.json`:\n\n"
        + render_serving_markdown(bench.table, read_bench(layered).table)
    )


def readme_block(root: Path = ROOT) -> str:
    run = load(root / SAMPLE)
    k = run.analysis.kernels[0]
    ncu = next(r for r in run.manifest.reports if r.tool == "ncu")
    projected = project(run.analysis.kernels, match_gpu(run.analysis.gpu.name), get_gpu(TARGET), run.workload)[
        "projected_step_ms"
    ]
    seed_floor = workload_floor(run.workload, get_gpu(TARGET), LAYERS).floor_ms
    text = README_BLOCK.format(
        seed_gap=ratio(SEED_STEP_MS / seed_floor),
        seed_floor=ms(seed_floor),
        target_name=TARGET_NAME,
        gap=ratio(run.step.gap),
        passes=ncu.passes,
        wall_s=run.manifest.wall_s,
        sample=SAMPLE.as_posix(),
        analyze=analyze_excerpt(analyze_text(root)),
        analyze_file=ANALYZE.as_posix(),
        grid=f"{k.grid_size:.0f}",
        sms=f"{run.analysis.gpu.sm_count:.0f}",
        per_program=run.analysis.floor.kv_bytes / (k.duration_ms * 1e-3) / 1e9,
        target=TARGET,
        projected=ms(projected),
        layers=LAYERS,
        per_step=ms(projected * LAYERS),
    )
    prose, code = text.split("```\n", 1)[0], text.split("```\n", 1)[1]
    code, after = code.rsplit("```\n", 1)
    return wrap(prose) + "```\n" + code + "```\n" + wrap(after)


def wrap(prose: str) -> str:
    """Each paragraph of `prose` wrapped at README_WIDTH; the blank lines around and between them kept."""
    body = prose.strip("\n")
    lead, trail = prose[: len(prose) - len(prose.lstrip("\n"))], prose[len(prose.rstrip("\n")) :]
    fill = [textwrap.fill(p, README_WIDTH, break_on_hyphens=False, break_long_words=False) for p in body.split("\n\n")]
    return lead + "\n\n".join(fill) + trail


def readme_text(root: Path = ROOT) -> str:
    """The README with its generated block replaced."""
    text = (root / README).read_text()
    if text.count(BEGIN) != 1 or text.count(END) != 1:
        raise SystemExit(f"{README}: expected one '{BEGIN}' and one '{END}' line around the generated block")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    text = head + BEGIN + "\n" + readme_block(root) + END + tail
    if text.count(BENCH_BEGIN) == 1 and text.count(BENCH_END) == 1:
        head, rest = text.split(BENCH_BEGIN, 1)
        _, tail = rest.split(BENCH_END, 1)
        text = head + BENCH_BEGIN + "\n" + bench_block(root) + BENCH_END + tail
    if text.count(SERVING_BEGIN) == 1 and text.count(SERVING_END) == 1:
        head, rest = text.split(SERVING_BEGIN, 1)
        _, tail = rest.split(SERVING_END, 1)
        text = head + SERVING_BEGIN + "\n" + serving_block(root) + SERVING_END + tail
    return text


def build(out_md: Path, root: Path = ROOT) -> list[Path]:
    """The example report of the sample, written at out_md (charts beside it); its text names the
    committed paths, wherever it is written."""
    run = load(root / SAMPLE)
    meta = build_meta(run, EXAMPLE, SAMPLE)
    return write_report(ReportInput(run.analysis, run.timeline), meta, out_md, force=True)


def main_(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare, write nothing; exit 1 on drift")
    args = parser.parse_args(argv)
    readme = readme_text()
    if args.check:
        import tempfile

        with tempfile.TemporaryDirectory() as tmp:
            build(Path(tmp) / "report.md")
            drift = (
                [EXAMPLE.as_posix()] if (Path(tmp) / "report.md").read_text() != (ROOT / EXAMPLE).read_text() else []
            )
        drift += [README.as_posix()] if readme != (ROOT / README).read_text() else []
        drift += [ANALYZE.as_posix()] if analyze_text() != (ROOT / ANALYZE).read_text() else []
        print(f"drifted: {', '.join(drift)} (run python tools/make_examples.py)" if drift else "up to date")
        return 1 if drift else 0
    files = build(ROOT / EXAMPLE)
    (ROOT / README).write_text(readme)
    (ROOT / ANALYZE).write_text(analyze_text())
    print(f"wrote {len(files)} files under {EXAMPLE.parent} and the block in {README}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main_())
