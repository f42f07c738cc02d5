"""The work behind each API call and command: capture a run, load one, bench, model, report, sweep,
calibrate, validate, check the machine. Each module runs one job over the layers below it (reports,
analysis, catalogue, profiler, kernels); nothing here parses options or prints."""
