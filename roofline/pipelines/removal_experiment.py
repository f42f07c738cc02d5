"""Where each verify kernel's time goes: the kernel as shipped against itself with one part of its work
compiled out (its NO_MMA, NO_SOFTMAX, NO_GATHER switches; the results are wrong on purpose, the loads
stay), each timed as one CUDA-graph replay of the whole step (split + combine). Needs a CUDA GPU (sm_90
for ring, seesaw and hopper).

    roofline removal [--kernel ring,seesaw,stagger,hopper,portable,triton_mla,...]
        [--ctx 128k] [--heads 8,64] [--page-size 64,1] [--mask tree|chain] [--method graph|rotated] [--out DIR]
    roofline removal --for triton_mla_fast --spec RUN/spec.json --method rotated --file RUN/removal.json
        # what `roofline profile --why` runs: the workload is the run's, read from its spec.json

`--for KERNEL` (a registered kernel) times the one subject its default plan launches at the run's workload, exactly
as profiled (subject_for: the ring kernel at 8 heads, page 64; the staggered schedule at whole 64-row blocks,
a ragged batch's too; none where the plan's schedule has no switches, said in one line naming the workload, exit
3) and `--file` writes its document there. `--method rotated` times each variant by the bench's method (CUDA-graph
replays over rotated input sets, no L2 flush: profiler/bench.py rotated_samples_ms, the median of its samples);
`graph` (the default, as the committed experiments were timed) one input set.

or from Python, `run_experiment(kernels, ctx_lens, heads, page_sizes, mask, out)`: the documents, each
written to OUT/<kernel>.json when `out` is given.

Kernels: ring (`_gluon_ring_kernel`, path gluon, ring=True: where there is a tail warpgroup, 8 heads x 9
tokens = 64 + 8 rows, and where the rows are whole 64-row blocks, 64 heads), seesaw (`_gluon_seesaw_kernel`,
path gluon, ring=False), stagger (its staggered schedule, the default at whole 64-row blocks, pages of 64+),
hopper and portable (the Triton split kernels, path="hopper"/"portable"; hopper needs whole pages per tile) and
triton_mla (`_verify_extend_kernel`). A kernel is timed at each workload whose plan launches it; the others are named
and skipped. Each is timed with its own tree mask (FlashMLA's chain, the others' tree) unless --mask names one.

Two kernels have no code to cut, so they get `full` and `read` alone (evidence, see roofline/analysis/removal.py):
flashmla (FlashMLA's split kernel `flash_fwd_splitkv_mla_kernel`, where its extension is built: page 64,
chain mask; else one line says why it is skipped) and gemm (the corpus capture's cuBLAS GEMM,
tests/fixtures/h200/corpus/gemm.ncu-rep.gz: torch.matmul, bf16, 8192^3, one operand set as the other
kernels; `read` = a bare read of A and B, the output's write not in it; --ctx/--heads/--page-size do
not apply to it). The GEMM's file is named after the kernel cuBLAS launched here (torch.profiler), which
matches the corpus capture only when it is the same kernel.

Variants: full (as shipped), no-mma (every MMA), no-softmax (the online softmax: P = the raw scores, O
not rescaled), no-gather (the gathered tiles' copies; where a kernel gathers besides its whole-tile
loads), loads-only (no MMA and no softmax), each where the kernel has the switches; and per workload a
bare read of the same KV bytes (profiler.bench.read_kv, as bench's read row), timed the same way. --out DIR: one
roofline-removal/1 file per kernel, `<kernel as ncu names it>.json` (`roofline analyze RUN --removal FILE`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import torch
import torch.profiler

from kernels.fast.paths import HOPPER, PORTABLE, RING, SEESAW, plan_fast
from kernels.fast.run import triton_mla_fast
from kernels.flashmla import flashmla, unavailable, unsupported
from kernels.inputs import build_inputs
from kernels.launch_spec import device_facts
from kernels.spec import VerifyWorkload
from kernels.stream import stream_read
from kernels.triton_mla import triton_mla
from profiler.bench import graph_replay_ms, read_kv, rotated_input_sets, rotated_samples_ms
from roofline.analysis.removal import FORMAT, FULL, LOADS_ONLY, READ
from roofline.pipelines.request import DEFAULT_TIMING_SAMPLES
from roofline.pipelines.why import NO_SUBJECT

VARIANTS = {
    FULL: {},
    "no-mma": dict(no_mma=True),
    "no-softmax": dict(no_softmax=True),
    "no-gather": dict(no_gather=True),
    LOADS_ONLY: dict(no_mma=True, no_softmax=True),
}
MADE_BY = "roofline removal"
DEFAULT_WORKLOAD = VerifyWorkload()  # the fields a grid point does not set (batch, q_len, seed)
METHOD = "CUDA-graph replays of the whole step, medians (read: a bare stream_read of the same KV bytes)"
METHODS = {
    "graph": METHOD,
    "rotated": (
        "the bench's method: CUDA-graph replays of the whole step over rotated input sets, no L2 flush, the median "
        "of {samples} samples each (read: a bare stream_read of the same KV bytes, timed the same way)"
    ),
}
ROTATED_SAMPLES = DEFAULT_TIMING_SAMPLES  # as the timing pass


@dataclass(frozen=True)
class Subject:
    """One kernel to cut: its registered launcher, how it is asked for, the cuts it has."""

    kernel: str  # as ncu names it
    registered: str
    cuts: tuple[str, ...]
    launch: dict = field(default_factory=dict)  # triton_mla_fast's path and schedule
    tree_mask: str = "tree"  # the mask it is timed with (FlashMLA runs the chain mask only)

    def skip_reason(self, w: VerifyWorkload, device_name: str, sm_count: int, arch: str) -> str | None:
        """Why this kernel does not run at `w` (its plan launches another kernel, or none), else None."""
        if self.registered == "flashmla":
            return unsupported(w)
        if self.registered != "triton_mla_fast":
            return None
        try:
            plan = plan_fast(w, arch, sm_count, device_name, **self.launch)
        except ValueError as exc:
            return str(exc)
        return None if plan.split.name == self.kernel else f"the plan launches {plan.split.name}"

    def step(self, inp, cut: dict):
        """The whole step with `cut` on, as a callable for graph_replay_ms."""
        call = self.call(cut)
        return lambda: call(inp)

    def call(self, cut: dict):
        """The whole step with `cut` on, as a function of the inputs (rotated_samples_ms's)."""
        if self.registered == "triton_mla":
            return lambda inp: triton_mla(inp, **cut)
        if self.registered == "flashmla":
            return lambda inp: flashmla(inp)
        return lambda inp: triton_mla_fast(inp, **self.launch, **cut)


SUBJECTS = {
    # stagger=False in ring and seesaw: at whole 64-row blocks, page 64+, the default is the subject `stagger`
    "ring": Subject(RING.kernel, "triton_mla_fast", RING.cuts, dict(path="gluon", ring=True, stagger=False)),
    "seesaw": Subject(SEESAW.kernel, "triton_mla_fast", SEESAW.cuts, dict(path="gluon", ring=False, stagger=False)),
    "stagger": Subject(SEESAW.kernel, "triton_mla_fast", SEESAW.cuts, dict(path="gluon", stagger=True)),
    "hopper": Subject(HOPPER.kernel, "triton_mla_fast", HOPPER.cuts, dict(path="hopper")),
    "portable": Subject(PORTABLE.kernel, "triton_mla_fast", PORTABLE.cuts, dict(path="portable")),
    "triton_mla": Subject("_verify_extend_kernel", "triton_mla", ("no_mma", "no_softmax")),
    "flashmla": Subject("flash_fwd_splitkv_mla_kernel", "flashmla", (), tree_mask="chain"),
}


@dataclass(frozen=True)
class Gemm:
    """The corpus capture's cuBLAS GEMM (tests/fixtures/capture/corpus_ops.py gemm): a @ b, bf16."""

    m: int = 8192
    n: int = 8192
    k: int = 8192
    kernel: str = "nvjet_sm90_tst_320x128_64x3_1x2_h_bz_coopB_NNT"  # as ncu named it in the corpus capture
    registered: str = "torch.matmul"
    method: str = (
        "CUDA-graph replays of one torch.matmul (cuBLAS) on one operand set, medians (read: a bare "
        "stream_read of A and B, one buffer; the output's write is not in it)"
    )

    def workload(self) -> dict:
        return dict(op="gemm", m=self.m, n=self.n, k=self.k, dtype="bf16")


GEMM = Gemm()
KNOWN = (*SUBJECTS, "gemm")  # as roofline/pipelines/why.py EXPERIMENT_KERNELS names them for the CLI
REGISTERED = tuple(dict.fromkeys(s.registered for s in SUBJECTS.values()))  # the kernels `--for` takes


def subject_for(
    registered: str, w: VerifyWorkload, device_name: str, sm_count: int, arch: str
) -> tuple[str | None, str]:
    """(the SUBJECTS name that times what `registered`'s default plan launches at `w`, or None; why not).
    For triton_mla_fast the subject's own launch must give the default plan itself (the ring at 8 heads; the
    staggered seesaw at whole 64-row blocks, page 64, a ragged batch's batch schedule too)."""
    if registered not in REGISTERED:
        return None, (
            f"{registered} has no removal switches: the experiment compiles parts of a kernel's source out "
            "(NO_MMA, NO_SOFTMAX, NO_GATHER), which only triton_mla and triton_mla_fast have"
        )
    if registered == "triton_mla_fast":
        default = plan_fast(w, arch, sm_count, device_name)
        for name, s in SUBJECTS.items():
            if s.registered != registered or s.kernel != default.split.name:
                continue
            try:
                if plan_fast(w, arch, sm_count, device_name, **s.launch) == default:
                    return name, ""
            except ValueError:
                continue
        return None, f"its plan here launches {default.split.name} with a schedule that has no removal switches"
    name = next(n for n, s in SUBJECTS.items() if s.registered == registered)
    why = SUBJECTS[name].skip_reason(w, device_name, sm_count, arch)
    return (None, why) if why else (name, "")


def variants(subject: Subject) -> dict[str, dict]:
    """The variants whose switches the kernel has."""
    return {name: cut for name, cut in VARIANTS.items() if set(cut) <= set(subject.cuts)}


def _print(line: str) -> None:
    print(line, flush=True)


class NoGpu(RuntimeError):
    """No CUDA GPU to time the kernels on."""


def runnable(names: list[str]) -> tuple[list[str], list[str]]:
    """The --kernel names that can run here, and one line for each that cannot (FlashMLA not built)."""
    kept, skipped = [], []
    for name in names:
        reason = unavailable() if name == "flashmla" else None
        if reason:
            skipped.append(f"flashmla skipped: {reason}")
        else:
            kept.append(name)
    return kept, skipped


def subjects(names: list[str], mask: str | None) -> dict[str, Subject]:
    """The verify kernels `names`, each with its own tree mask or `mask` (--mask)."""
    return {n: replace(SUBJECTS[n], tree_mask=mask) if mask else SUBJECTS[n] for n in names}


def _rotated_ms(call, sets: list, samples: int = ROTATED_SAMPLES) -> float:
    """The median ms of one step over rotated input sets (the bench's method)."""
    got = sorted(rotated_samples_ms(call, sets, samples).samples_ms)
    return got[len(got) // 2] if len(got) % 2 else (got[len(got) // 2 - 1] + got[len(got) // 2]) / 2


def measure(
    subjects: dict[str, Subject],
    ctx_lens: Sequence[int],
    heads: Sequence[int],
    page_sizes: Sequence[int],
    say: Callable[[str], None] = _print,
    method: str = "graph",
    base: VerifyWorkload = DEFAULT_WORKLOAD,
) -> dict[str, list[dict]]:
    """{--kernel name: rows} of the verify kernels `subjects` at every ctx_len x page_size x heads (the rest of
    each workload `base`'s: batch, q_len, seed), saying each row as it is timed; `method` "graph" (one input
    set) or "rotated" (the bench's method)."""
    device_name, sm_count, arch = device_facts(torch.device("cuda"))
    names = list(subjects)
    rows: dict[str, list[dict]] = {k: [] for k in names}
    masks = list(dict.fromkeys(subjects[k].tree_mask for k in names))
    for ctx_len in ctx_lens:
        for page_size in page_sizes:
            read_ms = None
            for n_heads in heads:
                point = dict(ctx_len=ctx_len, heads=n_heads, page_size=page_size)
                for mask in masks:
                    w = replace(base, ctx_len=ctx_len, heads=n_heads, page_size=page_size, tree_mask=mask)
                    timed = []
                    for name in (n for n in names if subjects[n].tree_mask == mask):
                        reason = subjects[name].skip_reason(w, device_name, sm_count, arch)
                        if reason:
                            say(f"{ctx_len:>8} h{n_heads:<3} p{page_size:<4} {name:10} skipped: {reason}")
                        else:
                            timed.append(name)
                    if not timed:  # no inputs built where nothing runs
                        continue
                    sets = rotated_input_sets(w) if method == "rotated" else [build_inputs(w, device="cuda")]
                    inp = sets[0]
                    if read_ms is None:  # the KV bytes depend on neither heads nor mask (one latent cache)
                        read_ms = (
                            _rotated_ms(read_kv, sets)
                            if method == "rotated"
                            else graph_replay_ms(lambda inp=inp: read_kv(inp))
                        )
                    for name in timed:
                        subject = subjects[name]
                        for variant, cut in variants(subject).items():
                            if method == "rotated":
                                ms = _rotated_ms(subject.call(cut), sets)
                            else:
                                ms = graph_replay_ms(subject.step(inp, cut))
                            rows[name].append(dict(point, variant=variant, graph_ms=ms))
                            say(f"{ctx_len:>8} h{n_heads:<3} p{page_size:<4} {name:10} {variant:11} {ms:.4f} ms")
                        rows[name].append(dict(point, variant=READ, graph_ms=read_ms))
                    del inp, sets
                    torch.cuda.empty_cache()
    return rows


def launched_kernel(fn) -> str | None:
    """The longest GPU kernel one call of `fn` launches, by torch.profiler (None where it sees none)."""
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    kernels = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    return max(kernels, key=lambda e: e.time_range.elapsed_us()).name if kernels else None


def ncu_name(launched: str, expected: str) -> str:
    """The kernel's name as ncu's report names it: `expected` where the profiler's (perhaps demangled, with
    its template and parameters) name holds it, else the function's own name cut from it."""
    if expected in launched:
        return expected
    return launched.split("(")[0].split("<")[0].removeprefix("void ").strip()


def measure_gemm(g: Gemm, say: Callable[[str], None] = _print) -> tuple[str, str, list[dict]]:
    """(the kernel cuBLAS launched, the method, rows `full` and `read`) of the corpus GEMM, saying them."""
    gen = torch.Generator(device="cuda").manual_seed(0)
    ab = torch.randn(g.m * g.k + g.k * g.n, device="cuda", generator=gen).to(torch.bfloat16)  # A and B, one buffer
    a, b = ab[: g.m * g.k].view(g.m, g.k), ab[g.m * g.k :].view(g.k, g.n)

    def step():
        return a @ b  # as corpus_ops.py calls it

    method = g.method
    try:
        launched = launched_kernel(step)
    except RuntimeError as exc:  # CUPTI busy or absent
        launched, why = None, f"torch.profiler failed: {str(exc).splitlines()[0] if str(exc) else exc!r}"
    else:
        why = "torch.profiler saw no kernel"
    kernel = ncu_name(launched, g.kernel) if launched else None
    if kernel is None:
        say(f"gemm: {why}; the file takes the corpus capture's kernel name, unchecked")
        kernel, method = g.kernel, f"{method}; the kernel's name not checked here ({why})"
    elif kernel != g.kernel:
        say(
            f"gemm: cuBLAS launched {kernel} here, {g.kernel} in the corpus capture: "
            "the file is named after this one and matches only a capture of it"
        )
    rows = [
        dict(variant=FULL, graph_ms=graph_replay_ms(step)),
        dict(variant=READ, graph_ms=graph_replay_ms(lambda: stream_read(ab))),
    ]
    for r in rows:
        say(f"gemm {g.m}x{g.n}x{g.k} bf16 {r['variant']:11} {r['graph_ms']:.4f} ms")
    return kernel, method, rows


def document(kernel: str, registered: str, method: str, workload: dict, rows: list[dict], device: str, made_by: str):
    """A roofline-removal/1 document (roofline/analysis/removal.py reads it)."""
    return dict(
        format=FORMAT,
        kernel=kernel,
        registered=registered,
        device=device,
        method=method,
        made_by=made_by,
        workload=workload,
        rows=rows,
    )


def removal_doc(
    subject: Subject,
    rows: list[dict],
    device: str,
    made_by: str,
    method: str = "graph",
    base: VerifyWorkload = DEFAULT_WORKLOAD,
) -> dict:
    """One kernel's document: its verify workload's common fields (`base`'s), rows per (ctx_len, heads, page_size)."""
    w = replace(base, tree_mask=subject.tree_mask)
    how = METHODS[method].format(samples=ROTATED_SAMPLES)
    method = how if subject.cuts else f"{how}; nothing of its code can be compiled out: full and read only"
    workload = dict(batch=w.batch, q_len=w.q_len, tree_mask=w.tree_mask)
    if w.ctx_lens:  # a ragged batch: its rows time this batch alone
        workload["ctx_lens"] = list(w.ctx_lens)
    return document(subject.kernel, subject.registered, method, workload, rows, device, made_by)


def gemm_doc(g: Gemm, kernel: str, method: str, rows: list[dict], device: str, made_by: str) -> dict:
    """The GEMM's document: an op's workload, rows of variants alone."""
    return document(kernel, g.registered, method, g.workload(), rows, device, made_by)


def table(docs: list[dict]) -> str:
    """Kernel x workload, ms per variant (- where it has none; the GEMM has no ctx_len, heads, page)."""
    cols = [*VARIANTS, READ]
    width = max([22, *(len(d["kernel"]) for d in docs)])
    head = f"{'kernel':{width}} {'ctx_len':>8} {'heads':>5} {'page':>4} "
    lines = [head + " ".join(f"{c:>10}" for c in cols)]
    for doc in docs:
        points: dict[tuple, dict[str, float]] = {}
        for r in doc["rows"]:
            key = tuple(r.get(k, "-") for k in ("ctx_len", "heads", "page_size"))
            points.setdefault(key, {})[r["variant"]] = r["graph_ms"]
        for (ctx_len, heads, page_size), ms in points.items():
            cells = " ".join(f"{ms[c]:>10.4f}" if c in ms else f"{'-':>10}" for c in cols)
            lines.append(f"{doc['kernel']:{width}} {ctx_len:>8} {heads:>5} {page_size:>4} {cells}")
    return "\n".join(lines)


def run_experiment(
    kernels: Sequence[str] = KNOWN,
    ctx_lens: Sequence[int] = (131072,),
    heads: Sequence[int] = (8, 64),
    page_sizes: Sequence[int] = (64, 1),
    mask: str | None = None,
    out: Path | None = None,
    made_by: str = MADE_BY,
    say: Callable[[str], None] = _print,
    method: str = "graph",
    base: VerifyWorkload = DEFAULT_WORKLOAD,
) -> list[dict]:
    """The removal experiment of `kernels` (names in KNOWN) on this GPU: one roofline-removal/1 document per
    kernel that ran (roofline/analysis/removal.py reads them), each written to `out`/<kernel>.json when `out`
    is given. `mask`: every verify kernel's tree mask (default: each one's own). `made_by`: the command the
    documents record. Says each row as it is timed, and why a kernel is skipped. NoGpu without CUDA."""
    if not torch.cuda.is_available():
        raise NoGpu("roofline removal needs a CUDA GPU (sm_90 for ring, seesaw and hopper); torch sees none")
    names, skipped = runnable(list(kernels))
    for line in skipped:
        say(line)
    device = torch.cuda.get_device_name()
    verify = subjects([n for n in names if n in SUBJECTS], mask)
    rows = measure(verify, ctx_lens, heads, page_sizes, say, method, base) if verify else {}
    docs = [removal_doc(verify[n], r, device, made_by, method, base) for n, r in rows.items() if r]
    if "gemm" in names:
        docs.append(gemm_doc(GEMM, *measure_gemm(GEMM, say), device, made_by))
    if out:  # the format `roofline analyze --removal FILE` reads (roofline/analysis/removal.py)
        out.mkdir(parents=True, exist_ok=True)
        for doc in docs:
            path = out / f"{doc['kernel']}.json"
            path.write_text(json.dumps(doc, indent=1) + "\n")
            say(f"wrote {path}")
    return docs


def run_for(
    registered: str, w: VerifyWorkload, file: Path, method: str, made_by: str, say: Callable[[str], None] = _print
) -> int:
    """`--for`: the experiment of the subject the registered kernel's plan launches at the workload `w` (a run's,
    from its spec.json), its document written to `file`; NO_SUBJECT with the reason, naming `w`, where there is
    none (a kernel or schedule without switches, or no GPU to plan on)."""
    try:
        facts = _facts(registered, w)
    except NoGpu as exc:  # the plan, and so the subject, depends on the GPU
        say(f"no experiment for {registered} at {w.describe()}: {exc}")
        return NO_SUBJECT
    name, why = subject_for(registered, w, *facts)
    if name is None:
        say(f"no experiment for {registered} at {w.describe()}: {why}")
        return NO_SUBJECT
    args = ([w.ctx_len], [w.heads], [w.page_size], w.tree_mask, None, made_by, say, method, w)
    docs = run_experiment([name], *args)
    if not docs:
        say(f"{name} was not timed at {w.describe()}")
        return NO_SUBJECT
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(json.dumps(docs[0], indent=1) + "\n")
    say(f"wrote {file}: {docs[0]['kernel']}")
    print(table(docs))
    return 0


def _facts(registered: str, w: VerifyWorkload) -> tuple[str, int, str]:
    """The GPU's (name, SMs, arch) where the plan needs them; none where the answer does not depend on the GPU.
    NoGpu without CUDA."""
    if registered not in REGISTERED:
        return "", 0, ""
    if not torch.cuda.is_available():
        raise NoGpu("roofline removal needs a CUDA GPU (sm_90 for ring, seesaw and hopper); torch sees none")
    return device_facts(torch.device("cuda"))
