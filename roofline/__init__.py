"""How far an attention kernel is from what the GPU allows, and why.

    import roofline
    run = roofline.load(path)      # a run directory, a report, or a folder of reports
    run.kernels                    # pandas: one row per kernel, with bound, cause, roof, advice

    try: ...
    except roofline.ReportError:   # every error roofline raises on purpose derives from one of these

The API lives in roofline/api.py; it is imported on first use so that `import roofline` stays light.
"""

_API = ("load", "profile", "compare", "report", "Run", "sample_run", "make_workload", "IncompleteRun")
# The error types, where they live: RooflineError is the root of every error roofline raises on
# purpose; BadInput (exit 2), CaptureFailed (a capture that failed after it started, kept at kept_at),
# Interrupted (Ctrl-C, SIGTERM or SIGHUP during a capture); ProfilerError roots the tools' failures.
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
}


def __getattr__(name: str):
    if name in _API:
        from roofline import api  # lazy: pandas and the analysis load on first use

        return getattr(api, name)
    if name in _ERRORS:
        import importlib  # lazy, as above

        return getattr(importlib.import_module(_ERRORS[name]), name)
    raise AttributeError(f"module 'roofline' has no attribute {name!r}")


__all__ = list(_API) + list(_ERRORS)
