"""`calibrate`: this GPU's ceilings, measured (DRAM copy and read, L2-resident read, bf16 matmul, the read
at five sizes fitted to fixed + bytes / rate), optionally saved where `roofline gpus` reads them first."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

from profiler.staging import OutputExists, identity
from roofline.catalogue.calibration import Calibration, CalibrationError
from roofline.catalogue.gpus import match_gpu, save_measured, user_measured_dir


def calibrate(
    save: bool = True,
    progress: Callable[[str], None] | None = None,
    out: Path | None = None,
    force: bool = False,
) -> Calibration:
    """Measure the local GPU's ceilings (needs CUDA); with `save`, write them to user_measured_dir() (or to
    `out`, which must not exist unless `force`). The file is written beside and renamed into place
    (profiler/staging.py): one that another command wrote or changed while this one measured is refused
    unless `force`."""
    import torch  # lazy: the package reads captures without torch

    from profiler.bench import measure_ceilings  # lazy: imports torch
    from profiler.read_sizes import read_times  # lazy: imports torch
    from roofline.analysis.scaling import read_fit  # lazy: pandas

    say = progress or (lambda msg: None)
    if not torch.cuda.is_available():
        raise CalibrationError("roofline calibrate needs a CUDA GPU (torch sees none)")
    folder = user_measured_dir()
    seen = {p: identity(p) for p in folder.glob("*.json")} if folder.is_dir() else {}  # before measuring
    if out is not None and out.exists() and not force:
        raise OutputExists(f"{out}: already exists; pass --force to replace it, or choose another -o")
    say("measuring: 4 GiB copy and read, 16 MiB L2-resident re-read, 8192^3 bf16 matmul")
    c = measure_ceilings()
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d")
    say("measuring: stream_read at 75 MB to 1.2 GB for the at-size floor (time = fixed + bytes / rate)")
    fit = read_fit(
        read_times(), f"stream_read at 5 sizes on this {c.device}, {stamp} (CUDA-graph replays, do_bench medians)"
    )
    result = Calibration(
        **dataclasses.asdict(c),
        read_fit=fit,
        source=f"roofline calibrate on this {c.device}, {stamp} (do_bench medians; "
        "copy counts bytes read + written; L2 read timed back to back without a flush)",
    )
    if not save:
        return result
    gpu = match_gpu(c.device)
    if gpu is None and out is None:
        raise CalibrationError(f"{c.device!r} is not in the catalogue: nothing to save it under")
    path = out if out is not None else folder / f"{gpu.short_name}.json"
    try:
        path = save_measured(path, result.to_dict(), seen=seen.get(path), force=force)
    except OSError as exc:
        raise CalibrationError(f"cannot save the measured ceilings: {exc}") from exc
    say(f"saved {path} (`roofline gpus` reads it before the packaged numbers)")
    return dataclasses.replace(result, saved_to=path)
