"""`roofline validate`: the probe kernels' verdicts checked against what their construction guarantees."""

from __future__ import annotations

import dataclasses
import sys

import click

from kernels.errors import RooflineError
from profiler.proc import stop_signals_interrupt
from reports.validation import render_validation
from roofline.analysis.probe_checks import EXPECTED
from roofline.cli.common import echo_json, fail, format_option, ncu_option, out_option, progress
from roofline.pipelines.probes import validate


@click.command("validate")
@out_option("out_dir", "the folder of the probes' run directories", default="runs/validate", folder=True)
@ncu_option
@click.option("--probe", "only", multiple=True, type=click.Choice(list(EXPECTED)), help="run only these probes")
@click.option("--preset", default=None, help="ncu metric preset (default: profile's)")
@format_option()
def validate_cmd(out_dir, ncu_path, only, preset, fmt) -> None:
    """Profile the probe kernels (known bounds), one run directory each, and check the verdicts against
    them (needs a GPU); exit 1 when one is called wrong."""
    try:
        with stop_signals_interrupt():  # SIGTERM / SIGHUP as Ctrl-C: the probe's run kept marked failed
            v = validate(list(only), out_dir, ncu_path, preset, progress)
    except RooflineError as exc:
        raise fail(exc) from None
    except KeyboardInterrupt as exc:
        click.echo("Error: " + str(fail(exc).message).strip(), err=True)
        sys.exit(getattr(exc, "exit_code", 130))
    if fmt == "json":
        checks = [{**dataclasses.asdict(c), "ok": c.ok, "run": str(c.run) if c.run else None} for c in v.checks]
        echo_json({"ok": v.ok, "preset": v.preset, "chip": v.chip, "checks": checks})
    else:
        click.echo(render_validation(v))
    sys.exit(0 if v.ok else 1)
