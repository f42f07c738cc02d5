"""ncu's PM sampling from one decoded launch: its throughput and warp-state series over the launch's lifetime
(no pandas here: the launch readers' children call it as they decode each launch; profiler/readers.py
`read_pm_samples` reads a report's alone).

The PmSampling sections (preset `pm-sampling`) store each series as an instanced metric whose correlation ids
are GPU timestamps (ns), one instance per sample interval (`profiler__pmsampler_interval_time`, 1.5 us on the
H200); a timestamp marks where its interval starts. The counters are collected in several replay passes of the
launch ("pass groups"), each with its own `profiler__timestamp_workload_start_<k>` / `_end_<k>`: a series is
timed from the start of the pass that holds its samples and trimmed to that pass's kernel window, so every
series shares one axis, the time from the launch's start. Where no pass window falls inside a series' samples
the window is the sampler's: time from its first sample, nothing trimmed (`window_us` is None).

The series kept, by short field name: the throughputs (% of peak), "SMs active %" (the SMs' mean active
cycles over the interval's cycles at the GPU's max clock: the share of SMs busy where each is busy or idle
for the whole interval, lower where the clock ran below its max) and "stall <reason>" (warps in that state per
SM sub-partition, on average over the interval, at the same clock).
"""

from __future__ import annotations

import statistics

PM_INTERVAL = "profiler__pmsampler_interval_time"
MAX_CLOCK_KHZ = "device__attribute_max_gpu_frequency_khz"
WINDOW_START = "profiler__timestamp_workload_start_"
WINDOW_END = "profiler__timestamp_workload_end_"
TRIAGE = ".TriageCompute."  # a throughput series: "<unit>.TriageCompute.<metric>"
STALL_PREFIX = "pmsampling:smsp__warps_issue_stalled_"

THROUGHPUT = {  # the metric after "<unit>.TriageCompute." -> its field
    "dramc__throughput.avg.pct_of_peak_sustained_elapsed": "dram %",
    "lts__throughput.avg.pct_of_peak_sustained_elapsed": "L2 %",
    "l1tex__throughput.avg.pct_of_peak_sustained_elapsed": "L1/shared %",
    "sm__pipe_tensor_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed": "tensor pipe %",
    "sm__inst_executed_realtime.avg.pct_of_peak_sustained_elapsed": "issue %",
}
SM_CYCLES = "sm__cycles_active.avg"
SMS_ACTIVE = "SMs active %"
THROUGHPUT_FIELDS = (*THROUGHPUT.values(), SMS_ACTIVE)
STALL = "stall "  # a warp-state field: "stall long_scoreboard"
COLUMNS = ("launch", "kernel", "series", "group", "time_us", "value", "interval_us", "window_us")


def has_pm_sampling(action) -> bool:
    """True when the launch holds PM sampling data (its sampler interval)."""
    metric = action.metric_by_name(PM_INTERVAL)
    return metric is not None and metric.num_instances() > 0


def _field(name: str) -> tuple[str, str] | None:
    """(field, group) of a kept series, or None."""
    if name.startswith(STALL_PREFIX) and name.endswith(".avg"):
        return STALL + name[len(STALL_PREFIX) : -len(".avg")], "warp state"
    if TRIAGE in name:
        metric = name.split(TRIAGE, 1)[1]
        if metric == SM_CYCLES:
            return SMS_ACTIVE, "throughput"
        if metric in THROUGHPUT:
            return THROUGHPUT[metric], "throughput"
    return None


def _stamp(action, name: str) -> int | None:
    metric = action.metric_by_name(name)
    if metric is None or metric.num_instances() < 1:
        return None
    return int(metric.correlation_ids().as_uint64(0))


def _windows(action) -> dict[int, tuple[int, int]]:
    """Pass group -> (start, end) of the kernel in that pass (GPU ns), for each pass the report times."""
    out = {}
    for k in range(64):
        start, end = _stamp(action, f"{WINDOW_START}{k}"), _stamp(action, f"{WINDOW_END}{k}")
        if start is None or end is None:
            break
        if end > start:
            out[k] = (start, end)
    return out


def _intervals(action) -> dict[int, float]:
    """Pass group -> its sample interval (ns)."""
    metric = action.metric_by_name(PM_INTERVAL)
    ids = metric.correlation_ids()
    return {int(ids.as_uint64(i)): metric.as_double(i) for i in range(metric.num_instances())}


def _samples(metric, name: str) -> list[tuple[int, float]]:
    """(timestamp, value) of each sample, in time order; the unstamped instance (id 0) left out. A ValueError
    names the series where its timestamps go back."""
    ids = metric.correlation_ids()
    got = [(int(ids.as_uint64(i)), metric.as_double(i)) for i in range(metric.num_instances())]
    got = [(t, v) for t, v in got if t > 0]
    if any(b[0] <= a[0] for a, b in zip(got, got[1:])):
        raise ValueError(f"PM sampling series {name}: its timestamps do not increase")
    return got


def _window_of(samples, windows) -> tuple[int | None, tuple[int, int] | None]:
    """The pass whose kernel window starts inside the samples' span, and that window."""
    first, last = samples[0][0], samples[-1][0]
    for k, (start, end) in windows.items():
        if first <= start <= last:
            return k, (start, end)
    return None, None


def pm_rows(action, launch: int) -> list[dict]:
    """The launch's kept PM sampling series as rows (COLUMNS); [] when the launch has none. A ValueError says
    what is odd about them (the reader names the file and launch)."""
    if not has_pm_sampling(action):
        return []
    windows, intervals = _windows(action), _intervals(action)
    clock = action.metric_by_name(MAX_CLOCK_KHZ)
    cycles_per_ns = float(clock.value()) / 1e6 if clock is not None and clock.value() else None
    kernel, rows = action.name(), []
    for name in action.metric_names():
        kept = _field(name)
        if kept is None:
            continue
        field, group = kept
        samples = _samples(action.metric_by_name(name), name)
        if len(samples) < 2:
            continue
        k, window = _window_of(samples, windows)
        spacing = statistics.median(b[0] - a[0] for a, b in zip(samples, samples[1:]))
        interval = intervals.get(k, spacing) if k is not None else spacing
        if field == SMS_ACTIVE or group == "warp state":
            if cycles_per_ns is None:
                continue  # no clock: these stay cycles, not shown
            per = cycles_per_ns * interval / (100.0 if field == SMS_ACTIVE else 1.0)
        else:
            per = 1.0
        origin = window[0] if window else samples[0][0]
        for t, v in samples:
            if window and not (window[0] - interval < t < window[1]):
                continue  # an interval outside the kernel's window
            rows.append(
                {
                    "launch": launch,
                    "kernel": kernel,
                    "series": field,
                    "group": group,
                    "time_us": (t - origin) / 1e3,
                    "value": v / per,
                    "interval_us": interval / 1e3,
                    "window_us": (window[1] - window[0]) / 1e3 if window else None,
                }
            )
    return rows
