"""timing.json format 3 (profiler/timing.py): each round's clocks and how its process began, read from a file the
H200 wrote; formats 2 and 1 still read, without clocks; a bad clock record is a one-line error."""

import json

import pytest

from profiler.clocks import UNRECORDED, ClockRecord, ClockSample
from profiler.rundir import RunDirError
from profiler.timing import TimingSamples, merge_rounds, parse_timing
from tests.paths import FIXTURES, ROOT, RUNS

REAL = FIXTURES / "timing" / "timing-v3-triton_mla_fast-32k-p64.json"


def real() -> dict:
    return json.loads(REAL.read_text())


def test_the_h200s_timing_json_holds_each_rounds_clocks():
    t = parse_timing(real(), str(REAL))
    assert (t.round_start, t.round_kind, len(t.rounds)) == ("fork", "process", 4)
    assert [c.source for c in t.clocks] == ["nvml"] * 4 and t.throttled_rounds() == []
    first = t.clocks[0]
    assert first.device == "NVIDIA H200" and first.start.sm_mhz == 1980 and first.end.mem_mhz == 3201
    again = parse_timing(json.loads(json.dumps(t.to_dict())))
    assert again == t and real()["throttled_rounds"] == []


def test_a_throttled_round_is_flagged_in_the_file():
    data = real()
    data["clocks"][2]["end"]["reasons"] = 0x4  # sw power cap
    t = parse_timing(data)
    assert t.throttled_rounds() == [(3, ["sw power cap at end"])]
    assert t.to_dict()["throttled_rounds"] == [{"round": 3, "why": ["sw power cap at end"]}]


def test_older_formats_read_without_clocks():
    v2 = ROOT / "docs/results/h200-aa-gate/runs/A0.timing.json"  # format 2, as the H200 wrote it
    t = parse_timing(json.loads(v2.read_text()), str(v2))
    assert t.round_start == "exec" and t.clocks == () and t.round_clocks() == [UNRECORDED] * 4
    assert t.to_dict()["clocks"] == [] and t.throttled_rounds() == []
    v1 = RUNS / "h200-triton_mla_fast-both-32k-p64" / "timing.json"  # format 1: one round
    assert parse_timing(json.loads(v1.read_text()), str(v1)).round_clocks() == [UNRECORDED]


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"clocks": [{"source": "nvml"}]}, "clocks must be a list of 4 records"),
        ({"round_start": "spawn"}, "round_start must be one of fork, exec"),
    ],
)
def test_a_bad_clock_field_is_one_line(change, said):
    with pytest.raises(RunDirError, match=f"^x/timing.json: {said}"):
        parse_timing(dict(real(), **change), "x/timing.json")
    data = real()
    data["clocks"][1]["start"]["power_w"] = -3
    with pytest.raises(RunDirError, match=r"^x/timing.json: clocks\[1\]\.start: power_w must be a number >= 0"):
        parse_timing(data, "x/timing.json")


def test_merged_rounds_keep_each_rounds_clocks_in_order():
    rec = ClockRecord("nvml", ClockSample(sm_mhz=1980), ClockSample(sm_mhz=1755))
    one = TimingSamples((0.07,), "rotated", 4, 8, kernel="k", clocks=(rec,))
    two = TimingSamples((0.08,), "rotated", 4, 8, kernel="k")  # a round that recorded none
    t = merge_rounds([one, two], "fork")
    assert t.clocks == (rec, UNRECORDED) and t.round_start == "fork"
    assert t.throttled_rounds() == [(1, ["SM clock fell 1980 -> 1755 MHz"])]
    assert merge_rounds([two, two]).clocks == ()
