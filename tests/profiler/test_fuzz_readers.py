"""Fuzz the readers with damaged real captures: only a clean one-line ReportError naming the file,
never another exception type, never a hang.

Inputs are the committed H200 captures (tests/fixtures/README.md): the ncu CSV of the bundled
sample and a live run's stdout, the sample's .ncu-rep, a gzip-compressed `--set full` report and an
nsys sqlite export, each cut short, bit-flipped or (CSV) with lines dropped, shuffled, duplicated
and cells replaced. No example has a time limit (deadline=None: how fast a loaded CI machine reads a
file is no behaviour of the reader); a hang is caught by the readers' own child timeout. The whole
file takes ~30 s.
"""

import gzip
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import roofline
from profiler.errors import ReportError
from profiler.launch_table import LaunchTable
from profiler.readers import read_launches
from tests.paths import FIXTURES, ROOT, SAMPLE_RUN

CSV_SOURCES = [FIXTURES / "csv" / "h200-triton_mla-128k.raw.csv", FIXTURES / "csv" / "fast8k_stdout_mixed.txt"]
BINARY_SOURCES = {  # name -> the bytes as a user would hand them over
    "profile.ncu-rep": (SAMPLE_RUN / "profile.ncu-rep").read_bytes(),
    "sdpa.ncu-rep.gz": (FIXTURES / "corpus" / "sdpa.ncu-rep.gz").read_bytes(),
    "triton_mla_8k.sqlite": (FIXTURES / "nsys" / "triton_mla_8k.sqlite").read_bytes(),
}
GARBAGE = st.sampled_from(
    [
        "",
        "n/a",
        "nan",
        "-",
        "1,2",
        "abc",
        "1e999",
        "-5",
        "0",
        '"',
        '""',
        "1.2.3",
        "\x00",
        "9" * 40,
        "(256, 1, 1)",
        "==PROF== x",
    ]
)
FUZZ = settings(
    max_examples=100,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def check_clean(path: Path, load=read_launches) -> None:
    """`load(path)` gives a table (or a Run), or a one-line ReportError that names the file."""
    try:
        result = load(path)
    except ReportError as exc:
        msg = str(exc)
        assert msg.startswith(str(path)) and "\n" not in msg, msg
        return
    table = result.frame if isinstance(result, LaunchTable) else result.launches
    assert len(table) > 0


@st.composite
def mangled_csv(draw):
    lines = draw(st.sampled_from(CSV_SOURCES)).read_text().splitlines(keepends=True)
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["drop", "dup", "swap", "cell", "cut"]))
        if not lines:
            break
        i = draw(st.integers(0, len(lines) - 1))
        if op == "drop":
            del lines[i]
        elif op == "dup":
            lines.insert(draw(st.integers(0, len(lines))), lines[i])
        elif op == "swap":
            j = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
        elif op == "cell":
            cells = lines[i].rstrip("\n").split('","')
            k = draw(st.integers(0, len(cells) - 1))
            cells[k] = draw(GARBAGE)
            lines[i] = '","'.join(cells) + "\n"
        else:
            lines[i] = lines[i][: draw(st.integers(0, len(lines[i])))]
    return "".join(lines)


@FUZZ
@given(text=mangled_csv(), load_run=st.booleans())
def test_mangled_csv(tmp_path, text, load_run):
    path = tmp_path / "mangled.csv"
    path.write_text(text)
    check_clean(path, roofline.load if load_run else read_launches)


@st.composite
def damage(draw):
    """(file, inside the gzip?, cut at or None, bit flips): small to print when an example fails."""
    name = draw(st.sampled_from(sorted(BINARY_SOURCES)))
    inner = name.endswith(".gz") and draw(st.booleans())  # damage the report inside the gzip
    size = len(_plain(name, inner))
    rnd = draw(st.randoms(use_true_random=False))  # uniform over the file: hypothesis' integers favour 0
    if draw(st.booleans()):
        return name, inner, rnd.randrange(size), ()
    return name, inner, None, tuple((rnd.randrange(size), rnd.randrange(8)) for _ in range(rnd.randint(1, 32)))


def _plain(name: str, inner: bool) -> bytes:
    data = BINARY_SOURCES[name]
    return gzip.decompress(data) if inner else data


@FUZZ
@given(damaged=damage(), load_run=st.booleans())
def test_truncated_and_bit_flipped_reports(tmp_path, damaged, load_run):
    name, inner, cut, flips = damaged
    data = bytearray(_plain(name, inner))
    if cut is not None:
        data = data[:cut]
    for at, bit in flips:
        data[at] ^= 1 << bit
    path = tmp_path / (name.removesuffix(".gz") if inner else name)
    path.write_bytes(bytes(data))
    check_clean(path, roofline.load if load_run else read_launches)


def test_a_report_that_makes_ncu_report_abort(tmp_path):
    """Found by the fuzz test above: one byte of the sample report changed (offset 158, 10 -> 2)
    makes ncu_report (PyPI ncu-report 2026.3.1) abort the process in load_report ("Check failed:
    count >= 0"). The reader survives it (the report is read in a child process) with one line."""
    path = _aborting_report(tmp_path)
    for load in (read_launches, roofline.load):
        try:
            load(path)
        except ReportError as exc:
            msg = str(exc)
            assert msg.startswith(str(path)) and "\n" not in msg
            assert "crashed" in msg or "damaged" in msg
        else:  # a later ncu-report may read it: then it must still be a table
            pass


def _aborting_report(tmp_path: Path) -> Path:
    data = bytearray((SAMPLE_RUN / "profile.ncu-rep").read_bytes())
    assert data[158] == 10
    data[158] = 2
    path = tmp_path / "damaged.ncu-rep"
    path.write_bytes(bytes(data))
    return path


@pytest.mark.subprocess
def test_an_aborting_reader_child_prints_no_crash_dump(tmp_path):
    """The children that read a report disable the faulthandler they inherit (pytest's, or
    PYTHONFAULTHANDLER's), so the abort above is the parent's one line and no "Fatal Python error"
    frame dump on the terminal (faulthandler writes to a descriptor of its own)."""
    path = _aborting_report(tmp_path)
    code = (  # faulthandler on a copy of stderr, as pytest enables it: the children's dup2 misses it
        "import faulthandler, os, sys\nfaulthandler.enable(file=os.fdopen(os.dup(2), 'w'))\n"
        "from profiler.readers import read_launches\nfrom profiler.errors import ReportError\n"
        "try:\n    read_launches(sys.argv[1])\nexcept ReportError as exc:\n    print(exc)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0 and "crashed" in done.stdout, done.stdout + done.stderr
    assert "Fatal Python error" not in done.stderr and "Current thread" not in done.stderr, done.stderr
