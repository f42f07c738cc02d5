"""`roofline.profile` parses once: each report of a capture is read once, and the
run it returns, analysed from those reads, is the run `load` reads back from the folder.

ncu and nsys are the stand-ins of tests/api/test_failures.py: they print the real H200 logs and write the
real reports (the bundled 128k ncu capture; the 8k nsys timeline and its sqlite export).
"""

from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

import roofline
from profiler import ncu_reader, nsys_reader
from profiler.ncu_source import PcRead
from tests.paths import SAMPLE_RUN
from tests.stubs import (
    ncu_stub,
    nsys_stub,
)


def profile(tmp_path, tool, **kw):
    ncu = ncu_stub(tmp_path, log=SAMPLE_RUN / "profile.ncu.log", report=SAMPLE_RUN / "profile.ncu-rep")
    return roofline.profile("triton_mla", tool=tool, ncu=ncu, nsys=nsys_stub(tmp_path), out=tmp_path / "run", **kw)


@pytest.mark.parametrize("tool, ctx, iterations", [("both", "128k", 3), ("nsys", "8k", 20)])
def test_profile_returns_the_run_load_reads_back(tmp_path, tool, ctx, iterations):
    run = profile(tmp_path, tool, ctx=ctx, iterations=iterations)
    loaded = roofline.load(tmp_path / "run")
    assert run.source == tmp_path / "run"
    assert run.to_dict() == loaded.to_dict()
    pd.testing.assert_frame_equal(run.launches, loaded.launches)
    assert run.launch_table.source == loaded.launch_table.source == str(tmp_path / "run" / run.launches["source"][0])
    pd.testing.assert_frame_equal(run.timeline.launches, loaded.timeline.launches)
    if tool == "both":
        assert len(run.pc_samples) > 0
        pd.testing.assert_frame_equal(run.pc_samples, loaded.pc_samples)
    else:
        assert run.pc_samples is None and loaded.pc_samples is None


def test_each_report_is_read_once(tmp_path, monkeypatch):
    """The launches' read (ncu_report in child processes, the PC samples read as each launch is decoded) and
    the sqlite's read: once each per report, where the capture read the .ncu-rep three times and load() read
    all again (nor a child of its own for the PC samples)."""
    reads: Counter = Counter()

    def counted(what, real):
        def read(path, *args, **kw):
            reads[(what, Path(path).name)] += 1
            return real(path, *args, **kw)

        return read

    monkeypatch.setattr(ncu_reader, "_read_in_child", counted("launches", ncu_reader._read_in_child))
    monkeypatch.setattr(nsys_reader, "_read", counted("timeline", nsys_reader._read))
    monkeypatch.setattr(PcRead, "__init__", lambda *a, **kw: pytest.fail("the PC samples read alone"))
    run = profile(tmp_path, "both", ctx="128k")
    assert len(run.launches) == 3 and run.timeline is not None and run.pc_samples is not None
    assert dict(reads) == {("launches", "profile.ncu-rep"): 1, ("timeline", "profile.sqlite"): 1}
