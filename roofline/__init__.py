"""How far an attention kernel is from what the GPU allows, and why.

    import roofline
    run = roofline.load(path)      # a run directory, a report, or a folder of reports
    run.kernels                    # pandas: one row per kernel, with bound, cause, roof, advice

The API lives in roofline/api.py; it is imported on first use so that `import roofline` stays light.
"""

_API = ("load", "profile", "compare", "report", "Run", "sample_run", "make_workload", "IncompleteRun")


def __getattr__(name: str):
    if name in _API:
        from roofline import api

        return getattr(api, name)
    raise AttributeError(f"module 'roofline' has no attribute {name!r}")


__all__ = list(_API)
