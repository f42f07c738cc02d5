"""What one decoded launch (an ncu_report action) says besides its metric names: a metric's value, the
launch's NVTX ranges, its rule results; no pandas (the launch readers' children call these)."""

from __future__ import annotations


def metric_value(metric):
    """A metric's value in its base unit, or None when ncu has none (`n/a`)."""
    if hasattr(metric, "has_value") and not metric.has_value():
        return None
    value = metric.value()
    if isinstance(value, bytes):
        value = value.decode(errors="replace")
    return value


def nvtx_text(action) -> str:
    """The launch's NVTX push/pop ranges joined by "/"; "" when it has none or they cannot be read."""
    try:
        state = action.nvtx_state()
        if state is None:
            return ""
        names = []
        for domain_id in state.domains():
            for rng in state.domain_by_id(domain_id).push_pop_ranges():
                names.append(rng)
        return "/".join(names)
    except Exception:
        return ""


def rule_results(action) -> list[dict]:
    """ncu's rule results of the launch as dicts; [] when it has none or they cannot be read."""
    try:
        return list(action.rule_results_as_dicts())
    except Exception:
        return []
