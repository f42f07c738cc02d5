"""The `roofline` command group. Each command lives in a module of its own and is imported only when it
runs (click's lazy group), so `roofline model` never loads pandas nor `roofline kernels` the profiler.
Run through roofline/entry.py, which first checks that `kernels` and `profiler` are this project's."""

from __future__ import annotations

import importlib

import click

from roofline.cli.exit_codes import EXIT_CODES

# command -> ("module:attribute", what `roofline --help` says of it: the start of the command's docstring,
# so that --help imports no command module; tests/cli/test_cli.py holds the two together)
COMMANDS = {
    "analyze": ("roofline.cli.run:analyze_cmd", "Re-read a run directory, a report or a folder of reports"),
    "bench": ("roofline.cli.bench:bench_cmd", "Time every kernel x ctx x page size x heads on this GPU"),
    "calibrate": ("roofline.cli.gpu:calibrate_cmd", "Measure this GPU's ceilings"),
    "check": ("roofline.cli.kernels:check_cmd", "Run a kernel and torch_ref on the same random inputs"),
    "compare": ("roofline.cli.compare:compare_cmd", "Compare two runs (run directories or reports)"),
    "compile": ("roofline.cli.kernels:compile_cmd", "Compile a kernel's launches for an architecture without a GPU"),
    "doctor": ("roofline.cli.doctor:doctor_cmd", "Can this machine profile?"),
    "gate": ("roofline.cli.experiments:gate_cmd", "How often compare's gate fails A/A and catches a known slowdown"),
    "gpus": ("roofline.cli.gpu:gpus_cmd", "The GPU catalogue"),
    "kernels": ("roofline.cli.kernels:kernels_cmd", "List the kernels in the registry"),
    "metrics": ("roofline.cli.metrics:metrics_cmd", "The ncu metrics a preset collects on a chip"),
    "model": ("roofline.cli.model:model_cmd", "The floor the hardware allows for a verify workload"),
    "profile": ("roofline.cli.run:profile_cmd", "Run a kernel under Nsight Compute and/or Nsight Systems"),
    "removal": ("roofline.cli.experiments:removal_cmd", "Time each verify kernel with parts of its work compiled out"),
    "report": ("roofline.cli.report:report_cmd", "Write a GitHub-flavoured markdown report"),
    "sweep": ("roofline.cli.sweep:sweep_cmd", "Profile every kernel x ctx x page size x heads x q_len point"),
    "validate": ("roofline.cli.validate:validate_cmd", "Profile the probe kernels (known bounds)"),
}


class LazyGroup(click.Group):
    """A group whose commands are imported by name on first use; --help lists them from their summaries."""

    def __init__(self, *args, lazy_commands: dict[str, tuple[str, str]], **kwargs):
        super().__init__(*args, **kwargs)
        self.lazy_commands = lazy_commands

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(self.lazy_commands)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.lazy_commands:
            return None  # click says "No such command"
        module, attr = self.lazy_commands[cmd_name][0].split(":")
        command = getattr(importlib.import_module(module), attr)
        command.epilog = command.epilog or EXIT_CODES  # the one table, at the end of every command's --help
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, self.lazy_commands[name][1]) for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup, lazy_commands=COMMANDS, epilog=EXIT_CODES)
@click.version_option(package_name="roofline")
def main() -> None:
    """How far an attention kernel is from what the GPU allows, and why.

    One option name a concept in every command: --gpu NAME (a GPU model or ncu chip), --devices 0,1
    (this host's GPUs), -o/--out PATH, --format, --force."""
