"""Stand-ins for ncu and nsys, which cannot run on this CPU machine: each prints what the real tool printed
on the H200 (tests/fixtures/h200/logs, the bundled sample's log) and writes the real report captured with
it, so that capture, failure and sweep paths run end to end on real evidence. Helpers to inspect what a
failed capture kept."""

import json
from pathlib import Path

from tests.paths import APP_FAILED_LOG, FIXTURES, SAMPLE_RUN

LOGS = FIXTURES / "logs"
NSYS_DIR = FIXTURES / "nsys"


def stub(tmp_path, name, body):
    path = tmp_path / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return str(path)


def ncu_stub(tmp_path, log=None, text=None, report=None, code=0, name="ncu"):
    """Prints a real ncu log (or `text`), writes `report` where ncu writes its report, exits `code`."""
    out = f"cat '{log}'\n" if log else f"cat <<'EOF'\n{text}\nEOF\n"
    if report:
        out += f'while [ "$1" != "--export" ]; do shift; done\ncp \'{report}\' "$2.ncu-rep"\n'
    return stub(tmp_path, name, out + f"exit {code}\n")


def nsys_stub(
    tmp_path,
    log=NSYS_DIR / "triton_mla_8k.log",
    report=NSYS_DIR / "triton_mla_8k.nsys-rep",
    sqlite=NSYS_DIR / "triton_mla_8k.sqlite",
    code=0,
    qdstrm=False,
):
    """`nsys profile` prints a real nsys log and writes the real report; `nsys export` writes the
    sqlite the real nsys exported from it. `-o` names the output in both."""
    write = (f"cp '{report}' \"$out.nsys-rep\"\n" if report else "") + (': > "$out.qdstrm"\n' if qdstrm else "")
    return stub(
        tmp_path,
        "nsys",
        'if [ "$1" = "--version" ]; then echo "NVIDIA Nsight Systems version 2025.3.1.90-253135822234v0"; exit 0; fi\n'
        'cmd=$1; while [ "$1" != "-o" ]; do shift; done; out=$2\n'
        f'if [ "$cmd" = "export" ]; then cp \'{sqlite}\' "$out"; exit 0; fi\n'
        f"cat '{log}'\n{write}exit {code}\n",
    )


def kept_run(tmp_path, name="run"):
    (kept,) = tmp_path.glob(f"{name}.failed-*")
    manifest = json.loads((kept / "manifest.json").read_text())
    assert manifest["status"] == "failed" and manifest["error"]
    assert (kept / "spec.json").exists()
    return kept, manifest


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def hanging_tool(tmp_path, name="ncu"):
    """Prints the first lines real ncu printed, starts a child of its own, then hangs."""
    return stub(
        tmp_path,
        name,
        f"head -3 '{SAMPLE_RUN / 'profile.ncu.log'}'\n"
        f"sleep 300 & echo $! > '{tmp_path}/child.pid'\necho $$ > '{tmp_path}/tool.pid'\nsleep 300\n",
    )


def stand_in(tmp_path: Path, fail: str = "-p48.tmp-", interrupt: str | None = None) -> str:
    """An ncu stand-in: logs each call (with CUDA_VISIBLE_DEVICES) to calls.log, fails for points
    whose run folder matches `fail`, sends Ctrl-C (SIGINT) to its parent for `interrupt`."""
    stub = tmp_path / "ncu"
    calls = tmp_path / "calls.log"
    lines = ["#!/bin/sh", f'echo "gpu=${{CUDA_VISIBLE_DEVICES-none}} $*" >> "{calls}"']
    if interrupt:
        lines.append(f'case "$*" in *{interrupt}*) kill -INT $PPID; sleep 5; exit 130;; esac')
    if fail:
        lines.append(f"case \"$*\" in *{fail}*) cat '{APP_FAILED_LOG}'; exit 1;; esac")
    lines += [
        f"cat '{SAMPLE_RUN / 'profile.ncu.log'}'",
        'while [ "$1" != "--export" ]; do shift; done',
        f"cp '{SAMPLE_RUN / 'profile.ncu-rep'}' \"$2.ncu-rep\"",
    ]
    stub.write_text("\n".join(lines) + "\n")
    stub.chmod(0o755)
    return str(stub)


def calls(tmp_path: Path) -> list[str]:
    f = tmp_path / "calls.log"
    return [c for c in f.read_text().splitlines() if "--export" in c] if f.exists() else []  # not --version


def replaying_ncu(tmp_path, log=SAMPLE_RUN / "profile.ncu.log", report=SAMPLE_RUN / "profile.ncu-rep", exit_code=0):
    """An ncu stand-in that prints a real H200 log and writes the real report it came with."""
    stub = tmp_path / f"ncu-{exit_code}"
    copy = f"cp '{report}' \"$2.ncu-rep\"\n" if report else ""
    stub.write_text(f'#!/bin/sh\ncat \'{log}\'\nwhile [ "$1" != "--export" ]; do shift; done\n{copy}exit {exit_code}\n')
    stub.chmod(0o755)
    return str(stub)
