"""Reading a report in parallel parts, and ahead of need, gives exactly the serial read."""

import shutil

import ncu_report
import pandas as pd

from profiler import ncu_reader
from profiler.ncu_tidy import raw_metrics
from profiler.readers import read_launches
from tests.paths import RUNS, SAMPLE_V1

REPORT = RUNS / "h200-triton_mla_fast-128k-p64" / "profile.ncu-rep"  # 6 launches, 2 kernels


def test_parts_merge_to_the_serial_read():
    metrics = tuple(raw_metrics())
    serial = ncu_reader._read_rows(ncu_report, REPORT, metrics)
    parts = ncu_reader._PartsRead(REPORT, None, metrics)
    assert len(parts.parts) >= 1
    rows, units, rules = parts.result(60, REPORT)
    assert rows == serial[0] and units == serial[1] and rules == serial[2]
    three = [ncu_reader._read_rows(ncu_report, REPORT, metrics, (k, 3)) for k in range(3)]
    assert sorted(r["launch"] for p in three for r in p[0]) == list(range(6))


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
