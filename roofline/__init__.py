"""How far an attention kernel is from what the GPU allows, and why.

    import roofline
    run = roofline.load(path)      # a run directory, a report, or a folder of reports
    run.kernels                    # pandas: one row per kernel, with bound, cause, roof, advice
    roofline.__version__

    try: ...
    except roofline.ReportError:   # every error roofline raises on purpose derives from one of these

The API lives in roofline/api.py; it is imported on first use so that `import roofline` stays light.
"""

_API = ("load", "profile", "compare", "report", "Run", "sample_run", "make_workload", "IncompleteRun", "ProfileRequest")
# The error types, where they live: RooflineError is the root of every error roofline raises on
# purpose; BadInput (exit 2, as is ReportError: a file that cannot be read), CaptureFailed (a capture
# that failed after it started, kept at kept_at), Interrupted (Ctrl-C, SIGTERM or SIGHUP during a
# capture; a KeyboardInterrupt); ProfilerError roots the tools' failures; OutputExists (and its
# ReportExists) an output refused without force.
_ERRORS = {
    "RooflineError": "kernels.errors",
    "BadInput": "kernels.errors",
    "CaptureFailed": "kernels.errors",
    "ProfilerError": "profiler.errors",
    "ReportError": "profiler.errors",
    "ToolNotFound": "profiler.errors",
    "CounterPermission": "profiler.errors",
    "NoKernelsProfiled": "profiler.errors",
    "ApplicationFailed": "profiler.errors",
    "ToolTimeout": "profiler.errors",
    "ImporterFailed": "profiler.errors",
    "Interrupted": "profiler.errors",
    "RunDirError": "profiler.rundir",
    "WorkloadError": "kernels.spec",
    "CompareError": "roofline.analysis.comparison",
    "MeasuredFileError": "roofline.catalogue.gpus",
    "UnknownGpu": "roofline.catalogue.gpus",
    "SweepError": "roofline.pipelines.sweep_dir",
    "OutputExists": "profiler.staging",
    "ReportExists": "reports.markdown",
    "RemovalError": "roofline.analysis.removal",
    "ChartError": "reports.charts.common",
    "CalibrationError": "roofline.catalogue.calibration",
    "UnknownKernel": "kernels.registry",
    "UnknownPreset": "profiler.metrics",
    "UnknownChip": "profiler.metrics",
    "CompileError": "kernels.xcompile",
    "DeviceError": "kernels.device",
    "NoLocalGpu": "kernels.hardware",
}


def _version() -> str:
    """The installed distribution's version (pyproject.toml's), "0+unknown" for a checkout never installed."""
    from importlib import metadata  # lazy: `import roofline` stays light

    try:
        return metadata.version("roofline")
    except metadata.PackageNotFoundError:
        return "0+unknown"


def __getattr__(name: str):
    if name == "__version__":
        return _version()
    if name in _API:
        from roofline import api  # lazy: pandas and the analysis load on first use

        return getattr(api, name)
    if name in _ERRORS:
        import importlib  # lazy, as above

        return getattr(importlib.import_module(_ERRORS[name]), name)
    raise AttributeError(f"module 'roofline' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), "__version__", *_API, *_ERRORS])


__all__ = ["__version__", *_API, *_ERRORS]
