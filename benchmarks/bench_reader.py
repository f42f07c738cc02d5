"""How long `roofline analyze` of an ncu report takes next to a bare ncu_report load-and-walk of the
same file, and how much memory each needs. Not a test: run it and quote it.

    python benchmarks/bench_reader.py [REPORT ...]     # default: the --set full fixtures

Each measurement is a fresh process (median of --repeat runs), timed from its start, so both sides
pay interpreter start-up and imports:
  bare     python -c: import ncu_report, load_report(), walk every range and launch (name, metric list)
  analyze  python -m roofline analyze REPORT (reads the report in forked children, every n-th launch
           each, started before pandas loads; only the metrics the analysis uses; then verdicts and text)
Peak RSS is each process's own (ru_maxrss), plus for analyze its reader child's. CPU seconds (user + system,
the reader children's included) say what each side costs where the machine is shared and wall times wander.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT = [
    ROOT / "tests/fixtures/h200/bench/tiny50_full.ncu-rep.gz",
    ROOT / "tests/fixtures/h200/bench/tiny10_full.ncu-rep.gz",
    ROOT / "tests/fixtures/h200/triton_mla_8k_full.ncu-rep",
]

BARE = """
import resource, sys, json, time
t = time.perf_counter()
import ncu_report
ctx = ncu_report.load_report(sys.argv[1])
n = 0
for r in range(ctx.num_ranges()):
    rng = ctx.range_by_idx(r)
    for a in range(rng.num_actions()):
        action = rng.action_by_idx(a)
        action.name(); action.metric_names()
        n += 1
me = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"launches": n, "rss": me.ru_maxrss, "cpu": me.ru_utime + me.ru_stime}))
"""

ANALYZE = """
import resource, sys, json, io, contextlib
from roofline.cli import main
out = io.StringIO()
with contextlib.redirect_stdout(out):
    try:
        main(["analyze", sys.argv[1]], standalone_mode=False)
    except SystemExit:
        pass
assert "kernel" in out.getvalue(), out.getvalue()[:300]
me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"rss": me.ru_maxrss, "child_rss": kids.ru_maxrss,
                  "cpu": me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime}))
"""


def measure(code: str, report: Path) -> tuple[float, dict]:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code, str(report)], capture_output=True, text=True, cwd=ROOT)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{report}: failed: {done.stderr.strip().splitlines()[-1:]}")
    return wall, json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("reports", nargs="*", type=Path, default=DEFAULT)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-reader-") as tmp:
        rows = []
        for report in args.reports:
            plain = report
            if report.suffix == ".gz":  # the bare side cannot read gzip: both read the same plain file
                plain = Path(tmp) / report.name.removesuffix(".gz")
                with gzip.open(report, "rb") as src, open(plain, "wb") as dst:
                    shutil.copyfileobj(src, dst)
            bare = [measure(BARE, plain) for _ in range(args.repeat)]
            analyze = [measure(ANALYZE, plain) for _ in range(args.repeat)]
            b_s, a_s = statistics.median(w for w, _ in bare), statistics.median(w for w, _ in analyze)
            b_cpu = statistics.median(m["cpu"] for _, m in bare)
            a_cpu = statistics.median(m["cpu"] for _, m in analyze)
            b_rss = max(m["rss"] for _, m in bare) / 1024
            a_rss = max(m["rss"] for _, m in analyze) / 1024
            a_child = max(m["child_rss"] for _, m in analyze) / 1024
            rows.append(
                (
                    report.name,
                    bare[0][1]["launches"],
                    plain.stat().st_size / 1e6,
                    b_s,
                    a_s,
                    a_s / b_s,
                    b_cpu,
                    a_cpu,
                    a_cpu / b_cpu,
                    b_rss,
                    a_rss,
                    a_child,
                    max(a_rss, a_child) / b_rss,
                )
            )
    head = (
        "report",
        "launches",
        "MB",
        "bare s",
        "analyze s",
        "ratio",
        "bare CPU s",
        "analyze CPU s",
        "CPU ratio",
        "bare RSS MB",
        "analyze RSS MB",
        "its reader RSS MB",
        "RSS ratio",
    )
    print(f"python {sys.version.split()[0]}, median of {args.repeat} fresh processes each")
    if os.environ.get("PYTHONDONTWRITEBYTECODE"):  # analyze then compiles the package's modules every run
        print("PYTHONDONTWRITEBYTECODE is set: analyze compiles its modules from source each run (unset it)")
    print("  ".join(f"{h:>{max(len(h), 8)}}" for h in head))
    for r in rows:
        cells = [
            r[0],
            str(r[1]),
            f"{r[2]:.1f}",
            f"{r[3]:.2f}",
            f"{r[4]:.2f}",
            f"{r[5]:.2f}x",
            f"{r[6]:.2f}",
            f"{r[7]:.2f}",
            f"{r[8]:.2f}x",
            f"{r[9]:.0f}",
            f"{r[10]:.0f}",
            f"{r[11]:.0f}",
            f"{r[12]:.2f}x",
        ]
        print("  ".join(f"{c:>{max(len(h), 8)}}" for c, h in zip(cells, head)))


if __name__ == "__main__":
    main()
