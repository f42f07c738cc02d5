"""triton_mla_fast's launch configuration, in plain Python (no torch, no triton): a frozen
`FastConfig`, where its values come from (kernels.plan's per-architecture configs, the GPU's tuned
entries in kernels/data/tuned.json, the Gluon path's own), and the checks that no path owns.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields

from kernels.launch_spec import ARCHS
from kernels.plan import FAST_DEFAULTS, GLUON_CONFIG
from kernels.plan import fast_launch_config as arch_fast_config
from kernels.tuned import tuned_config

FAST_PATHS = ("portable", "hopper", "gluon")  # the `path` a caller asks for (kernels.plan.code_path picks)
# The GPU whose tuned entries (kernels/data/tuned.json) an architecture uses when the running GPU
# has none of its own. Only Hopper has measured entries; nothing Hopper-tuned reaches sm_100/sm_120.
TUNED_REFERENCE = {"sm_90": "NVIDIA H200"}


@dataclass(frozen=True)
class FastConfig:
    """One launch's parameters (kernels.plan.FAST_DEFAULTS explains them), plus the ring schedule's
    removal experiments (benchmarks/ring_cuts.py): wrong results on purpose, off by default."""

    block_m: int
    block_n: int
    num_warps: int
    num_stages: int
    programs_per_sm: float
    tail_m: int
    partials: str  # "fp32" | "input"
    evict_first: bool
    seesaw: bool
    ring: bool
    async_gather: bool
    no_mma: bool = False
    no_softmax: bool = False
    no_gather: bool = False

    @property
    def cuts(self) -> bool:
        """Whether any removal experiment is on."""
        return self.no_mma or self.no_softmax or self.no_gather

    def to_dict(self) -> dict:
        return asdict(self)


CONFIG_KEYS = tuple(f.name for f in fields(FastConfig))


def fast_launch_config(arch: str, heads: int, page_size: int, device_name: str | None = None) -> dict:
    """triton_mla_fast's launch parameters on `arch` (kernels.plan.FAST_DEFAULTS keys): the running
    GPU's tuned entry, else its architecture's reference GPU's, over kernels.plan's arch config."""
    tuned = tuned_config("triton_mla_fast", device_name, heads, page_size) if device_name else {}
    if not tuned and arch in TUNED_REFERENCE:
        tuned = tuned_config("triton_mla_fast", TUNED_REFERENCE[arch], heads, page_size)
    return {**arch_fast_config(arch, heads, page_size), **tuned}


# The config each architecture gets at 8 heads, page size 1 (for tables and tests).
FAST_ARCH_CONFIGS = {arch: fast_launch_config(arch, 8, 1) for arch in ARCHS}


def resolve_config(path: str, arch: str, heads: int, page_size: int, device_name: str | None,
                   launch: dict) -> FastConfig:
    """The config `path` runs with: `launch` over the path's base (the Triton paths: the
    architecture's and the GPU's tuned config; Gluon: GLUON_CONFIG) over FAST_DEFAULTS. Flags that
    belong to a schedule the caller turned off are turned off with it, unless asked for."""
    unknown = set(launch) - set(CONFIG_KEYS)
    if unknown:
        raise TypeError(f"triton_mla_fast: unknown launch parameters {sorted(unknown)}")
    if path not in FAST_PATHS:
        raise ValueError(f"triton_mla_fast: unknown path {path!r}; known: {', '.join(FAST_PATHS)}")
    base = GLUON_CONFIG if path == "gluon" else fast_launch_config(arch, heads, page_size, device_name)
    cfg = {**FAST_DEFAULTS, **base, **launch}
    if path == "gluon" and not cfg["seesaw"]:  # GLUON_CONFIG's tail and ring are the seesaw schedule's
        cfg.update({k: off for k, off in (("tail_m", 0), ("ring", False)) if k not in launch})
    if not cfg["ring"] and "async_gather" not in launch:  # GLUON_CONFIG's async_gather is the ring's
        cfg["async_gather"] = False
    config = FastConfig(**cfg)
    check_flags(path, config)
    return config


def check_flags(path: str, cfg: FastConfig) -> None:
    """The flags that say which path or schedule they belong to."""
    if cfg.partials not in ("fp32", "input"):
        raise ValueError(f"triton_mla_fast: partials must be 'fp32' or 'input', got {cfg.partials!r}")
    if cfg.seesaw and path != "gluon":
        raise ValueError("seesaw is a schedule of the gluon path")
    if cfg.ring and not (path == "gluon" and cfg.seesaw):
        raise ValueError("ring is a variant of the gluon path's seesaw schedule")
    if cfg.async_gather and not cfg.ring:
        raise ValueError("async_gather is an option of the ring schedule (ring=True)")
