"""The option blocks of the commands that profile or sweep, each declared once: the capture settings of a
ProfileRequest (profile, sweep; roofline/pipelines/request.py holds their defaults) and the grid of workloads
(sweep, bench: the workload's fields as comma lists). The one-workload block is roofline/cli/common.py's
`workload_options`."""

from __future__ import annotations

import click

from kernels.spec import TREE_MASKS, VerifyWorkload
from roofline.cli.common import chip_option, comma_list
from roofline.pipelines.request import (
    DEFAULT_ITERATIONS,
    DEFAULT_TIMEOUT_S,
    DEFAULT_TIMING_ROUNDS,
    DEFAULT_TIMING_SAMPLES,
    SETTINGS,
    TOOLS,
    ProfileRequest,
)

_W = VerifyWorkload()  # the workload's defaults, declared in kernels/spec.py


def _stacked(opts: list):
    """One decorator that applies `opts` in order, the first the topmost (as --help lists them)."""

    def decorate(f):
        for opt in reversed(opts):
            f = opt(f)
        return f

    return decorate


def _count(*names: str, least: int, default: int, help: str):
    """An option that counts something, at least `least`, its default shown."""
    return click.option(*names, type=click.IntRange(min=least), default=default, show_default=True, help=help)


# a command that sweeps over workloads: option -> its parameter name (comma lists; --lens repeatable)
GRID_OPTIONS = {
    "--ctx": "ctx_list",
    "--page-size": "page_sizes",
    "--heads": "heads_list",
    "--q-len": "q_lens",
    "--mask": "masks",
    "--lens": "lens_list",
    "--batch": "batch",
    "--seed": "seed",
}


def grid_options(ctx: str, heads: str):
    """The options of a command that sweeps over workloads (sweep, bench): the workload's fields as comma lists,
    `ctx` and `heads` their defaults; every point shares --batch and --seed; each --lens is a ragged batch."""
    opts = [
        click.option("--ctx", "ctx_list", default=ctx, show_default=True, help="context lengths, comma-separated"),
        click.option("--page-size", "page_sizes", default="1,64", show_default=True, help="comma-separated"),
        click.option("--heads", "heads_list", default=heads, show_default=True, help="comma-separated"),
        click.option(
            "--q-len", "q_lens", default=str(_W.q_len), show_default=True, help="draft tokens, comma-separated"
        ),
        click.option(
            "--mask",
            "masks",
            default=_W.tree_mask,
            show_default=True,
            help=f"tree masks, comma-separated ({', '.join(TREE_MASKS)})",
        ),
        click.option(
            "--batch",
            type=int,
            default=None,
            help="requests per step: equal ones at each --ctx, or the size of a --lens uniform: draw",
        ),
        click.option(
            "--lens",
            "lens_list",
            multiple=True,
            metavar="LENS",
            help="a ragged batch in place of --ctx (repeatable: a point each): 4k,128k,2k | uniform:1k-32k (with "
            "--batch, drawn with --seed) | mix:1x128k,15x2k | file:PATH",
        ),
        click.option(
            "--seed", type=int, default=_W.seed, show_default=True, help="the draw of a uniform:LOW-HIGH batch"
        ),
    ]
    return _stacked(opts)


def _mask(name: str) -> str:
    if name not in TREE_MASKS:
        raise ValueError(f"{name}: a mask is {' or '.join(TREE_MASKS)}")
    return name


def grid_lists(page_sizes: str, heads_list: str, q_lens: str, masks: str) -> dict:
    """The grid options' comma lists parsed (a bad item: a usage error naming its option)."""
    return dict(
        page_sizes=comma_list(page_sizes, int, "--page-size"),
        heads=comma_list(heads_list, int, "--heads"),
        q_lens=comma_list(q_lens, int, "--q-len"),
        masks=tuple(comma_list(masks, _mask, "--mask")),
    )


def capture_options(tool_default: str | None = None, tool_help: str | None = None):
    """The options of how a profile captures (profile and sweep: a ProfileRequest's settings, its defaults)."""
    what = "counters (ncu), timeline (nsys) or both"
    opts = [
        _count(
            "--iters", "iterations", least=1, default=DEFAULT_ITERATIONS, help="launches inside each profiled range"
        ),
        click.option(
            "--tool",
            type=click.Choice(TOOLS),
            default=tool_default,
            show_default=tool_default is not None,
            help=tool_help or f"{what} [default: both when both are found, else the one found]",
        ),
        click.option("--ncu", "ncu", default=None, help="path to ncu (else $NCU, PATH, usual folders)"),
        click.option("--nsys", "nsys", default=None, help="path to nsys (else $NSYS, PATH, usual folders)"),
        click.option(
            "--preset",
            default=None,
            help="ncu metric preset: roofline (default, 6 passes on the H200), "
            "verdict (4), full (--set full, 38); see `roofline metrics`",
        ),
        click.option(
            "--gpu",
            "chip",
            default=None,
            callback=chip_option,
            help="resolve the preset's metric names for this GPU model or ncu chip (h200, gb202; default: the local "
            "GPU's)",
        ),
        click.option(
            "--timeout",
            type=click.FloatRange(min=0, min_open=True),
            default=DEFAULT_TIMEOUT_S,
            show_default=True,
            help="seconds for each whole capture; past it the running tool's process group is ended",
        ),
        _count(
            "--timing-samples",
            least=0,
            default=DEFAULT_TIMING_SAMPLES,
            help="after the captures, time the step this many times with no profiler attached (timing.json, "
            "what `roofline compare` tests; rounded up to whole rounds); 0 skips it",
        ),
        _count(
            "--timing-rounds",
            least=1,
            default=DEFAULT_TIMING_ROUNDS,
            help="split the timing samples over this many child processes: compare's interval then holds what "
            "varies between runs (needs 3 a side; 1: within-run only)",
        ),
    ]
    return _stacked(opts)


def profile_request(kernel: str, workload: VerifyWorkload, options: dict) -> ProfileRequest:
    """The ProfileRequest the command's options describe (`options`: the settings by name, others ignored);
    a setting out of range is a usage error."""
    try:
        return ProfileRequest(kernel, workload, **{k: v for k, v in options.items() if k in SETTINGS})
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
