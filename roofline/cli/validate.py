"""`roofline validate`: the probe kernels' verdicts checked against what their construction guarantees."""

from __future__ import annotations

import sys

import click

from kernels.errors import RooflineError
from reports.validation import render_validation
from roofline.analysis.probe_checks import EXPECTED
from roofline.cli.common import fail, folder_option, ncu_option, progress
from roofline.pipelines.probes import validate


@click.command("validate")
@folder_option("--out", "out_dir", "the folder of the probes' run directories", default="runs/validate")
@ncu_option
@click.option("--probe", "only", multiple=True, type=click.Choice(list(EXPECTED)), help="run only these probes")
@click.option("--preset", default=None, help="ncu metric preset (default: profile's)")
def validate_cmd(out_dir, ncu_path, only, preset) -> None:
    """Profile the probe kernels (known bounds), one run directory each, and check the verdicts against
    them (needs a GPU); exit 1 when one is called wrong."""
    try:
        v = validate(list(only), out_dir, ncu_path, preset, progress)
    except RooflineError as exc:
        raise fail(exc) from None
    except KeyboardInterrupt as exc:
        click.echo("Error: " + str(fail(exc).message).strip(), err=True)
        sys.exit(getattr(exc, "exit_code", 130))
    click.echo(render_validation(v))
    sys.exit(0 if v.ok else 1)
