"""What every `roofline` command module shares: progress on stderr, a library error as one line with its
exit code (roofline/cli/exit_codes.py), strict JSON out, and the options and parsers several commands take,
one name a concept (the README's table; the old names stay as hidden aliases, `renamed`)."""

from __future__ import annotations

import functools
import importlib.util
from collections.abc import Callable
from typing import TypeVar

import click
from click.core import ParameterSource

from kernels.batches import make_workload as batch_workload
from kernels.errors import BadInput
from kernels.registry import UnknownKernel, check_workload, get_kernel
from kernels.spec import TREE_MASKS, VerifyWorkload, WorkloadError, parse_ctx_len
from profiler.checks import strict_json
from profiler.errors import ReportError
from profiler.metrics import CHIPS
from roofline.catalogue.gpus import GpuSpec, MeasuredFileError, UnknownGpu, get_gpu

T = TypeVar("T")


class BadInputExit(click.ClickException):
    """A BadInput as the CLI reports it: one line, exit 2 (a usage error, like click's own)."""

    exit_code = 2


def progress(msg: str) -> None:
    click.echo(msg, err=True)


def fail(exc: Exception) -> click.ClickException:
    """A library error as a one-line CLI error, the one place that maps the error kinds to exit codes
    (roofline/cli/exit_codes.py): BadInput and a file that cannot be read (ReportError: a report, a run directory, an
    incomplete capture) exit 2, the rest 1, with the tool's own lines and where a failed run was kept."""
    msg = str(exc) or getattr(exc, "reason", "")
    kept = getattr(exc, "kept_at", None)
    if kept is not None:
        msg += f"\nthe failed run is kept at {kept} (manifest.json says why; nothing captured was lost)"
    return BadInputExit(msg) if isinstance(exc, (BadInput, ReportError)) else click.ClickException(msg)


def echo_json(value) -> None:
    """Print `value` as strict JSON (null for NaN: profiler/checks.py strict_json)."""
    click.echo(strict_json(value))


def renamed(old: str, new: str, dest: str, **option):
    """Keep `old` working as a hidden alias of the option `new` (whose value goes to `dest`): --help shows
    only the new name; both at once is a usage error. `option`: the new option's type and callback, so the
    old spelling is checked the same way."""

    def decorate(f):
        alias = f"old_{dest}"

        @functools.wraps(f)
        def command(*args, **kwargs):
            value = kwargs.pop(alias, None)
            if value is not None:
                ctx = click.get_current_context()
                if ctx.get_parameter_source(dest) not in (ParameterSource.DEFAULT, ParameterSource.DEFAULT_MAP, None):
                    raise click.UsageError(f"{old} is the old name of {new}: give {new} alone")
                kwargs[dest] = ctx.params[dest] = value
            ctx = click.get_current_context(silent=True)
            if ctx is not None:
                ctx.params.pop(alias, None)
            return f(*args, **kwargs)

        return click.option(old, alias, hidden=True, default=None, **option)(command)

    return decorate


def out_option(dest: str, help: str, default: str | None = None, folder: bool = False):
    """-o/--out PATH: where a command writes (a folder for profile, sweep, bench, validate; a file for
    report, compare, calibrate)."""
    return click.option(
        "-o",
        "--out",
        dest,
        type=click.Path(file_okay=not folder),
        default=default,
        show_default=default is not None,
        help=help,
    )


force_option = click.option(
    "--force", is_flag=True, help="replace an output that exists (only once the new one is complete)"
)


def api():
    """roofline.api, imported on first use: it loads pandas, which `roofline kernels`, `model` and
    `--help` never need."""
    import roofline.api as module  # lazy: start-up time of the reading-free commands

    return module


# -- what several commands' options share


def comma_list(text: str, parse: Callable[[str], T], option: str) -> list[T]:
    """The one comma-list parser: `8k,32k` -> [8192, 32768]; a bad or empty item is a usage error naming
    the option."""
    items = [x.strip() for x in text.split(",")]
    if not any(items):
        raise click.BadParameter("is empty", param_hint=option)
    if "" in items:
        raise click.BadParameter(f"{text!r}: an empty item between commas", param_hint=option)
    try:
        return [parse(x) for x in items]
    except (ValueError, BadInput) as exc:
        raise click.BadParameter(f"{text!r}: {exc}", param_hint=option) from None


class CtxLen(click.ParamType):
    name = "ctx_len"

    def convert(self, value, param, ctx):
        if isinstance(value, int):
            return value
        try:
            return parse_ctx_len(value)
        except WorkloadError as exc:
            self.fail(str(exc), param, ctx)


WORKLOAD_OPTIONS = ("ctx_len", "batch", "lens", "heads", "q_len", "page_size", "tree_mask", "seed")
_W = VerifyWorkload()  # the workload's defaults, declared in kernels/spec.py


def workload_options(f):
    """The options every command that builds one workload shares (WORKLOAD_OPTIONS, make_workload's arguments)."""
    opts = [
        click.option(
            "--ctx",
            "ctx_len",
            type=CtxLen(),
            default="128k",
            show_default=True,
            help="prefix tokens already in the cache (128k, 131072, 1m)",
        ),
        click.option("--batch", type=int, default=None, help="requests in the step  [default: 1, or as --lens lists]"),
        click.option(
            "--lens",
            default=None,
            metavar="LENS",
            help="a ragged serving batch, one prefix per request (replaces --ctx): 4k,128k,2k | "
            "uniform:1k-32k (with --batch, drawn with --seed) | mix:1x128k,15x2k | file:PATH (a length a line)",
        ),
        click.option("--heads", type=int, default=_W.heads, show_default=True, help="attention heads per GPU"),
        click.option("--q-len", type=int, default=_W.q_len, show_default=True, help="draft tokens per request"),
        click.option("--page-size", type=int, default=_W.page_size, show_default=True),
        click.option("--mask", "tree_mask", type=click.Choice(TREE_MASKS), default=_W.tree_mask, show_default=True),
        click.option("--seed", type=int, default=_W.seed, show_default=True),
    ]
    for opt in reversed(opts):
        f = opt(f)
    return f


def format_option(*choices: str):
    """--format FMT, the first choice the default (text, json unless named)."""
    choices = choices or ("text", "json")
    return click.option("--format", "fmt", type=click.Choice(list(choices)), default=choices[0], show_default=True)


def folder_option(flag: str, dest: str, help: str, default: str | None = None):
    """An option naming a folder (a run directory, a sweep folder): a path that may not be a file."""
    return click.option(
        flag, dest, type=click.Path(file_okay=False), default=default, show_default=default is not None, help=help
    )


ncu_option = click.option("--ncu", "ncu_path", default=None, help="path to ncu (else $NCU, PATH, usual folders)")


def allow_incomplete_option(what: str):
    """--allow-incomplete: read a capture holding fewer launches than its run asked for; `what` says how."""
    return click.option("--allow-incomplete", is_flag=True, help=what)


removal_option = click.option(
    "--removal",
    type=click.Path(exists=True),
    default=None,
    help="a removal experiment of the same GPU and workload, or the folder of them that `roofline removal --out DIR` "
    "writes (a file per kernel): the part whose removal saves the most names the timed kernel's cause",
)


def useful_options(f):
    """--useful-flops / --useful-bytes: a foreign capture's useful work, so executed against useful is named."""
    f = click.option(
        "--useful-bytes",
        type=float,
        default=None,
        help="the bytes one step needs to move (e.g. 8.6e9): DRAM bytes moved against them",
    )(f)
    return click.option(
        "--useful-flops",
        type=float,
        default=None,
        help="the FLOPs one step of a capture without a workload needs (e.g. 8.6e9): executed FLOPs against "
        "them, and the padding they show",
    )(f)


def useful_work(flops: float | None, bytes_: float | None):
    """The UsefulWork the options give, or None when neither was given."""
    from roofline.analysis.useful import UsefulWork  # lazy: the CLI starts without the analysis

    return None if flops is None and bytes_ is None else UsefulWork(flops, bytes_)


def make_workload(lens: str | None = None, **kw) -> VerifyWorkload:
    """The workload the options describe; `lens` (--lens) makes it a ragged batch (kernels/batches.py), which
    replaces --ctx: both given is a usage error, not one of them dropped without a word."""
    ctx = click.get_current_context(silent=True)
    if lens is not None and ctx is not None and ctx.get_parameter_source("ctx_len") == ParameterSource.COMMANDLINE:
        raise click.UsageError("--ctx and --lens both given: --lens lists every request's prefix; give one")
    try:
        return batch_workload(lens=lens, **kw)
    except WorkloadError as exc:
        raise click.UsageError(str(exc)) from None


def kernel_name(name: str) -> str:
    """The registered name (aliases resolved); an unknown kernel is a usage error."""
    try:
        return get_kernel(name).name
    except UnknownKernel as exc:
        raise click.UsageError(str(exc)) from None


def kernel_workload(name: str, workload: VerifyWorkload) -> VerifyWorkload:
    """The workload, if the kernel can run it (the same check the kernel makes when it runs)."""
    try:
        check_workload(name, workload)
    except WorkloadError as exc:
        raise click.UsageError(str(exc)) from None
    return workload


def need_kernels(command: str) -> None:
    """A clear error when torch/triton are missing (the reading commands never need them): one line, exit 2,
    a command this environment cannot run as it stands."""
    missing = [m for m in ("torch", "triton") if importlib.util.find_spec(m) is None]
    if missing:
        raise BadInputExit(
            f"roofline {command} needs {' and '.join(missing)}: "
            "pip install 'roofline[kernels]' (on a CPU machine: pip install torch==2.13.0 first)"
        )


def gpu_by_name(name: str) -> GpuSpec:
    try:
        return get_gpu(name)
    except UnknownGpu as exc:
        raise click.UsageError(str(exc)) from None
    except MeasuredFileError as exc:
        raise BadInputExit(str(exc)) from None


def _bad_gpu(param, value: str, why: str) -> BadInputExit:
    """The one error of a bad GPU name, whichever command: one line naming the option as typed, exit 2."""
    return BadInputExit(f"{param.opts[0] if param is not None else '--gpu'} {value!r}: {why}")


def gpu_option(ctx, param, value):
    """The callback of every --gpu that names a catalogue GPU (model, compile, analyze): checked before any
    work; an unknown or empty name is one line naming the option (_bad_gpu), as on profile and metrics."""
    if value is None:
        return None
    try:
        get_gpu(value)
    except UnknownGpu as exc:
        known = str(exc).split("; ")[-1]
        raise _bad_gpu(
            param, value, f"unknown GPU; {known}" if value.strip() else f"needs a GPU name; {known}"
        ) from None
    except MeasuredFileError as exc:
        raise BadInputExit(str(exc)) from None
    return value


def chip_option(ctx, param, value):
    """The callback of --gpu on the commands that resolve ncu metric names (profile, metrics): an ncu chip
    (gh100, gb100, gb202) or a catalogue GPU (h200 -> gh100); returns the chip. A name of neither is the
    same one-line error as gpu_option's."""
    if value is None:
        return None
    if value.lower() in CHIPS:
        return value.lower()
    try:
        gpu = get_gpu(value)
    except UnknownGpu as exc:
        known = str(exc).split("; ")[-1]
        raise _bad_gpu(
            param, value, f"neither an ncu chip ({', '.join(CHIPS)}) nor a GPU of the catalogue; {known}"
        ) from None
    except MeasuredFileError as exc:
        raise BadInputExit(str(exc)) from None
    if not gpu.chip:
        raise _bad_gpu(
            param, value, f"{gpu.short_name} has no ncu chip in the hardware table; name one: {', '.join(CHIPS)}"
        )
    return gpu.chip
