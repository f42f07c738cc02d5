"""The GPU's clocks on record (profiler/clocks.py) with a stand-in NVML: what a sample reads, when a stretch
counts as throttled, the record's JSON, and a machine without NVML (a record that says why, never a crash)."""

import sys
import types

import pytest

from profiler import clocks
from profiler.clocks import ClockError, ClockRecord, ClockSample, ClockSampler, parse_record, row_columns


def fake_nvml(sm=(1980,), reasons=(0,), power_ns=(0,), fail_init=False, no_violations=False):
    """A pynvml stand-in whose readings come from the given sequences, one value per sample (the last repeats)."""
    state = {"n": -1}

    def at(seq):
        return seq[min(state["n"], len(seq) - 1)]

    def clock(handle, kind):
        if kind == m.NVML_CLOCK_SM:
            state["n"] += 1  # each sample reads the SM clock first
            return at(sm)
        return 3201

    def violation(handle, policy):
        if no_violations:
            raise RuntimeError("NVMLError_NotSupported")
        return types.SimpleNamespace(violationTime=at(power_ns) if policy == m.NVML_PERF_POLICY_POWER else 0)

    def init():
        if fail_init:
            raise RuntimeError("NVML Shared Library Not Found")

    m = types.SimpleNamespace(
        NVML_CLOCK_SM=1,
        NVML_CLOCK_MEM=2,
        NVML_TEMPERATURE_GPU=0,
        NVML_PERF_POLICY_POWER=0,
        NVML_PERF_POLICY_THERMAL=1,
        nvmlInit=init,
        nvmlDeviceGetHandleByIndex=lambda i: ("handle", i),
        nvmlDeviceGetHandleByUUID=lambda u: ("handle", u),
        nvmlDeviceGetName=lambda h: b"NVIDIA H200",
        nvmlDeviceGetClockInfo=clock,
        nvmlDeviceGetMaxClockInfo=lambda h, kind: 1980,
        nvmlDeviceGetPowerUsage=lambda h: 187_500,
        nvmlDeviceGetTemperature=lambda h, kind: 41,
        nvmlDeviceGetCurrentClocksEventReasons=lambda h: at(reasons),
        nvmlDeviceGetViolationStatus=violation,
    )
    return m


def stretch(**kw) -> ClockRecord:
    sampler = ClockSampler(nvml=fake_nvml(**kw))
    return sampler.record(sampler.sample(), sampler.sample())


def test_a_sample_reads_every_clock():
    s = ClockSampler(nvml=fake_nvml()).sample()
    assert s == ClockSample(1980, 3201, 187.5, 41, 1980, 0, 0, 0)


def test_a_steady_stretch_is_not_throttled_and_idle_or_app_clocks_do_not_count():
    assert stretch().throttled == []
    assert stretch(reasons=(0x1, 0x2)).throttled == []  # gpu idle, applications clocks setting


def test_a_power_cap_a_violation_and_a_clock_drop_each_count():
    assert stretch(reasons=(0, 0x4)).throttled == ["sw power cap at end"]
    assert stretch(power_ns=(1_000_000, 4_500_000)).throttled == ["power limit held the clocks back 3.5 ms"]
    assert stretch(sm=(1980, 1755)).throttled == ["SM clock fell 1980 -> 1755 MHz"]
    assert stretch(sm=(1980, 1965)).throttled == []  # one 15 MHz step: within SM_DROP_PCT
    assert stretch(reasons=(0x41,)).throttled == ["hw thermal slowdown at start", "hw thermal slowdown at end"]


def test_a_value_the_gpu_does_not_report_is_left_out():
    s = ClockSampler(nvml=fake_nvml(no_violations=True)).sample()
    assert s.power_violation_ns is None and s.sm_mhz == 1980


def test_without_nvml_the_record_says_why_and_nothing_fails(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", None)  # import pynvml raises ImportError
    sampler = ClockSampler()
    assert sampler.sample() is None and sampler.sample() is None
    rec = sampler.record(None, None)
    assert (
        rec.source == "unavailable"
        and rec.why == "no NVML here: nvidia-ml-py (import pynvml) is not installed"
        and rec.throttled == []
    )
    assert rec.to_dict() == {"source": "unavailable", "why": rec.why}
    broken = ClockSampler(nvml=fake_nvml(fail_init=True))
    assert broken.sample() is None and "NVML Shared Library Not Found" in broken.record(None, None).why


def test_the_gpu_is_the_one_cuda_sees(monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3,1")
    sampler = ClockSampler(nvml=fake_nvml())
    sampler.sample()
    assert sampler._handle == ("handle", 3)
    by_uuid = ClockSampler("GPU-1234", nvml=fake_nvml())
    by_uuid.sample()
    assert by_uuid._handle == ("handle", "GPU-1234")


def test_a_record_reads_back_from_its_json_and_a_bad_one_is_one_line():
    rec = stretch(reasons=(0, 0x4))
    d = rec.to_dict()
    assert d["throttled"] == ["sw power cap at end"] and d["device"] == "NVIDIA H200"
    assert parse_record(d, "x") == rec
    assert parse_record({"source": "unavailable", "why": "no NVML"}, "x").why == "no NVML"
    with pytest.raises(ClockError, match=r"^x\.start: sm_mhz must be a number >= 0 or null"):
        parse_record(dict(d, start={"sm_mhz": "fast"}), "x")
    with pytest.raises(ClockError, match="source must be 'nvml' or 'unavailable'"):
        parse_record({"source": "smi"}, "x")
    with pytest.raises(ClockError, match="reasons must be an integer bit mask"):
        parse_record(dict(d, end={"reasons": 4.5}), "x")


def test_a_bench_rows_clock_columns():
    cols = row_columns(stretch(sm=(1980, 1755)))
    assert cols["sm_mhz_start"] == 1980 and cols["sm_mhz_end"] == 1755 and cols["power_w_end"] == 187.5
    assert cols["throttled"] == "SM clock fell 1980 -> 1755 MHz"
    assert set(row_columns(None)) == set(clocks.CLOCK_COLUMNS) and row_columns(None)["throttled"] == ""


def test_the_sampler_imports_pynvml_itself(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", fake_nvml(sm=(1755,)))
    sampler = ClockSampler()
    assert sampler.sample().sm_mhz == 1755 and sampler.record(None, sampler.sample()).device == "NVIDIA H200"
