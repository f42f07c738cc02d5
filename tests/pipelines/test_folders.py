"""Folders and pairs that belong together. A folder never merges GPUs (a public A100 report
beside an H200 one is refused, naming each GPU's files); an nsys export is adopted as the timeline only when
it is the ncu reports' program, saying what it matched on; each file of a folder is its own step; kernel
names are short and readable, the full name kept once; the headline ranks only kernels with data."""

import shutil

import pandas as pd
import pytest

import roofline
from profiler.errors import ReportError
from profiler.launch_table import LaunchTable
from profiler.ncu_reader import read_ncu_report
from profiler.ncu_tidy import tidy_launches
from roofline.analysis.summary import TIMELINE_ONLY, summarize
from tests.paths import FIXTURES, PROBES, RUNS

A100 = FIXTURES.parent / "public" / "a100_cutlass_b2b.ncu-rep.gz"  # NVIDIA A100 80GB PCIe, NVIDIA/cutlass fork
GATHER = FIXTURES / "foreign" / "gather.ncu-rep.gz"
BOTH = RUNS / "h200-triton_mla_fast-both-32k-p64"  # profile.ncu-rep and the same run's profile.sqlite
UNRELATED_NSYS = FIXTURES / "nsys" / "triton_mla_8k.sqlite"  # another program's timeline


def _folder(tmp_path, *files):
    for f in files:
        shutil.copy(f, tmp_path / f.name)
    return tmp_path


def test_a_folder_of_two_gpus_is_refused_naming_each_gpus_files(tmp_path):
    with pytest.raises(ReportError) as err:
        roofline.load(_folder(tmp_path, A100, GATHER))
    said = str(err.value)
    assert "captures from 2 GPUs" in said and "roofline never merges GPUs" in said
    assert "NVIDIA A100 80GB PCIe: a100_cutlass_b2b.ncu-rep.gz" in said and "NVIDIA H200: gather.ncu-rep.gz" in said


def test_the_public_a100_report_reads_as_its_own_gpu():
    run = roofline.load(A100)
    assert run.analysis.gpu.name == "NVIDIA A100 80GB PCIe" and run.analysis.gpu.sm_count == 108
    (k,) = run.analysis.kernels
    assert (k.kernel, k.bound, k.cause) == ("Kernel", "latency", "small grid")


def test_an_unrelated_nsys_export_is_not_adopted_as_the_timeline(tmp_path):
    run = roofline.load(_folder(tmp_path, GATHER, UNRELATED_NSYS))
    assert run.timeline is None
    note = next(n for n in run.analysis.notes if n.startswith("triton_mla_8k.sqlite: left out"))
    assert "not the ncu reports' program: vectorized_gather_kernel (never launched)" in note
    md = tmp_path / "out" / "report.md"
    roofline.report(run, md)
    assert "## Timeline" not in md.read_text()  # analyze and report: the same run, the same answer


def test_the_runs_own_nsys_export_is_adopted_saying_what_it_matched_on(tmp_path):
    run = roofline.load(_folder(tmp_path, BOTH / "profile.ncu-rep", BOTH / "profile.sqlite"))
    assert run.timeline is not None
    note = next(n for n in run.analysis.notes if n.startswith("profile.sqlite: the timeline"))
    assert "matched on the GPU (NVIDIA H200) and every kernel the reports profiled launched with the same" in note


def test_each_file_of_a_folder_is_its_own_step(tmp_path):
    run = roofline.load(_folder(tmp_path, GATHER, FIXTURES / "corpus" / "add.ncu-rep.gz"))
    assert [round(k.share_of_step, 6) for k in run.analysis.kernels] == [1.0, 1.0]


def test_a_csv_names_the_kernel_as_its_report_does_and_keeps_the_full_name_once(tmp_path):
    (k,) = roofline.load(FIXTURES / "foreign" / "gather.raw.csv").analysis.kernels
    assert k.kernel == "vectorized_gather_kernel" and k.label == "vectorized_gather_kernel"
    assert k.mangled_name.startswith("void vectorized_gather_kernel<16, long>(char *")
    run = roofline.load(FIXTURES / "foreign" / "gather.raw.csv")
    md = tmp_path / "report.md"
    roofline.report(run, md)
    text = md.read_text()
    assert "### K1 `vectorized_gather_kernel`" in text and text.count("void vectorized_gather_kernel<16") == 1


def test_one_files_kernels_of_one_name_are_told_apart_by_what_differs():
    both = [tidy_launches(read_ncu_report(PROBES / f"{p}.ncu-rep")).frame for p in ("l2_reread", "small_grid")]
    one_file = pd.concat(both, ignore_index=True).assign(source="probes.ncu-rep")
    labels = [k.label for k in summarize(LaunchTable(one_file, source="probes.ncu-rep")).kernels]
    assert len(set(labels)) == 2 and all("[grid " in lab and "probes.ncu-rep" not in lab for lab in labels)


def test_the_headline_ranks_kernels_with_data_and_names_those_without(tmp_path):
    # the public SGLang report's case (an H800 capture whose flash_fwd_kernel holds no values): the ring run's
    # split kernel with its values gone, as ncu leaves a launch it could not measure
    table = roofline.load(RUNS / "h200-triton_mla_fast-ring-128k-p64").launch_table
    frame = table.frame.copy()
    numbers = [c for c in frame.columns if c not in ("launch", "kernel", "mangled_name", "device", "source")]
    frame.loc[frame["kernel"] == "_gluon_ring_kernel", numbers] = float("nan")
    analysis = summarize(LaunchTable(frame, source=table.source))
    ring = next(k for k in analysis.kernels if k.kernel == "_gluon_ring_kernel")
    assert ring.share_of_step is None and ring.duration_ms is None  # not "0.0% of the step"
    from reports.markdown import ReportInput, render_markdown
    from reports.meta import ReportMeta

    md = render_markdown(ReportInput(analysis), ReportMeta(source="ring", source_kind="report"), {})
    head = md.splitlines()[2]
    assert "most time in `_combine_kernel`" in head and "among the kernels with data" in head
    assert "no values in the capture for `_gluon_ring_kernel`" in head


def test_an_nsys_only_source_speaks_nsys_words(tmp_path):
    run = roofline.load(UNRELATED_NSYS)
    (k,) = run.analysis.kernels
    assert k.evidence == [TIMELINE_ONLY] and k.ncu_rule_note is None
    md = tmp_path / "report.md"
    roofline.report(run, md)
    text = md.read_text()
    assert "triton\\_mla\\_8k.sqlite is an Nsight Systems timeline: it records each launch's time" in text
    assert "ncu does not record" not in text and "SpeedOfLight" not in text and "missing metric" not in text
