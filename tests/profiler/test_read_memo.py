"""A report read twice in one process is decoded once (profiler/ncu_reader.py keeps the last reads by the
file's content): the same table again, a copy the caller may change, and new bytes at the same path (even
with the old size and modification time) read anew."""

import collections
import os
import shutil

from profiler import ncu_reader
from profiler.ncu_reader import read_ncu_report
from tests.paths import FIXTURES, SAMPLE_RUN

OTHER = FIXTURES / "runs" / "h200-triton_mla_fast-128k-p64" / "profile.ncu-rep"


def counting(monkeypatch):
    """Count the reads that decode (children started); the process's earlier reads forgotten."""
    monkeypatch.setattr(ncu_reader, "_DONE", collections.OrderedDict())
    made = []
    real = ncu_reader._PartsRead

    def parts(*args, **kwargs):
        made.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(ncu_reader, "_PartsRead", parts)
    return made


def test_the_same_bytes_are_decoded_once_and_each_caller_gets_its_own_copy(tmp_path, monkeypatch):
    made = counting(monkeypatch)
    report = tmp_path / "a.ncu-rep"
    shutil.copy(SAMPLE_RUN / "profile.ncu-rep", report)
    first = read_ncu_report(report)
    first.frame["mine"] = 1
    first.units["mine"] = "x"
    again = read_ncu_report(shutil.copy(report, tmp_path / "b.ncu-rep"))  # a copy: the same content
    assert len(made) == 1 and "mine" not in again.frame and "mine" not in again.units
    assert again.frame.equals(read_ncu_report(report).frame)
    assert again.source.endswith("b.ncu-rep")  # named as asked, not as first read


def test_new_bytes_at_the_same_path_and_time_are_read_again(tmp_path, monkeypatch):
    made = counting(monkeypatch)
    report = tmp_path / "r.ncu-rep"
    shutil.copy(SAMPLE_RUN / "profile.ncu-rep", report)
    before = read_ncu_report(report)
    stat = report.stat()
    shutil.copy(OTHER, report)
    os.utime(report, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # the old modification time
    after = read_ncu_report(report)
    assert len(made) == 2 and set(after.frame["kernel"]) != set(before.frame["kernel"])
