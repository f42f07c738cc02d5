"""Reading a report in parallel parts, and ahead of need, gives exactly the serial read."""

import shutil

import ncu_report
import pandas as pd
import pytest

from profiler import child, ncu_reader
from profiler.files import plain_file
from profiler.ncu_source import read_pc_samples
from profiler.ncu_tidy import raw_metrics
from profiler.readers import read_launches
from tests.paths import FIXTURES, RUNS, SAMPLE_V1

REPORT = RUNS / "h200-triton_mla_fast-ring-128k-p64" / "profile.ncu-rep"  # 6 launches, 2 kernels, PC samples
TINY10 = FIXTURES / "bench" / "tiny10_full.ncu-rep.gz"  # 10 launches of one kernel, --set full


def test_parts_merge_to_the_serial_read():
    metrics = tuple(raw_metrics())
    serial = ncu_reader._read_rows(ncu_report, REPORT, metrics)
    parts = ncu_reader._PartsRead(REPORT, None, metrics)
    assert len(parts.parts) >= 1
    rows, units, rules, _, pm = parts.result(60, REPORT)
    assert rows == serial[0] and units == serial[1] and rules == serial[2] and pm == serial[4]
    three = [ncu_reader._read_rows(ncu_report, REPORT, metrics, (k, 3)) for k in range(3)]
    assert sorted(r["launch"] for p in three for r in p[0]) == list(range(6))


@pytest.mark.parametrize("report", [REPORT, TINY10])
def test_pc_samples_read_with_the_launches_are_the_ones_a_read_of_their_own_gives(report, monkeypatch):
    """Issue 30: the PC samples come from the launch readers' children as they decode each launch (each launch
    decoded once), and are the rows of each kernel's first 4 launches, as the serial read of their own."""
    alone = read_pc_samples(report)
    table = read_launches(report)
    assert table.pc_samples is not None and table.pc_note is None
    pd.testing.assert_frame_equal(table.pc_samples.frame, alone.frame)
    assert table.pc_samples.functions == alone.functions
    assert table.pc_samples.frame.groupby("kernel")["launch"].nunique().max() <= 4
    with plain_file(report) as plain:
        for n in (1, 2):  # one child reading both, or two launch readers and a PC child: as many cores decide
            monkeypatch.setattr(ncu_reader, "read_parts", lambda most, n=n: n)
            read = ncu_reader._PartsRead(plain, None, tuple(raw_metrics()), True)
            assert len(read.parts) == n and (read.pcs is None) == (n == 1)
            _, _, _, (rows, functions, error), pm = read.result(60, report)
            assert error is None and functions == alone.functions
            pd.testing.assert_frame_equal(pd.DataFrame(rows, columns=alone.frame.columns), alone.frame)
            if table.pm_samples is not None:  # --set full holds PM sampling: the same rows, however many readers
                pd.testing.assert_frame_equal(pd.DataFrame(pm, columns=table.pm_samples.columns), table.pm_samples)


def test_a_prefetched_read_is_the_same_table_and_a_changed_file_is_read_again(tmp_path):
    rep = tmp_path / "profile.ncu-rep"
    shutil.copy(REPORT, rep)
    plain = read_launches(rep)
    ncu_reader.prefetch_capture(rep)
    assert ncu_reader._PREFETCHED
    prefetched = read_launches(rep)
    pd.testing.assert_frame_equal(prefetched.frame, plain.frame)
    assert prefetched.rules == plain.rules and prefetched.source == plain.source
    assert not ncu_reader._PREFETCHED  # taken
    ncu_reader.prefetch_capture(rep)
    shutil.copy(SAMPLE_V1 / "profile.ncu-rep", rep)  # changed after the prefetch started
    again = read_launches(rep)
    assert set(again.frame["kernel"]) == {"_verify_extend_kernel"} and not ncu_reader._PREFETCHED


@pytest.mark.parametrize("cores, parts", [(1, 1), (2, 1), (3, 2), (16, 4)])
def test_one_core_is_left_to_the_analysis(cores, parts, monkeypatch):
    """On 2 cores one child reads the launches and their PC samples: two readers and a PC child beside the
    analysis's own imports cost more CPU there and finish no sooner (docs/results/reader-speed.md)."""
    monkeypatch.setattr(child.os, "sched_getaffinity", lambda pid: set(range(cores)))
    assert child.read_parts(ncu_reader.READ_PARTS) == parts
