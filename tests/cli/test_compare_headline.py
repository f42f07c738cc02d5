"""compare's headline step line calls a change against the runs' step-to-step spread, which is no test: it
says so, and points at the timing line where the runs carry timing samples that are tested."""

from click.testing import CliRunner

from roofline.cli import main
from tests.paths import RUNS


def step_line(base: str, head: str) -> str:
    r = CliRunner().invoke(main, ["compare", str(RUNS / base), str(RUNS / head)])
    return next(line for line in r.output.splitlines() if line.startswith("step: "))


def test_a_change_past_the_spread_says_no_test_was_run():
    line = step_line("h200-flashmla-chain-128k-p64", "h200-triton_mla_fast-chain-128k-p64")
    assert line.endswith("1.41x faster (-28.9%, more than the steps' spread of 1.83%; no test on these times)")
    assert "beyond noise" not in line


def test_with_timing_samples_the_headline_points_at_their_test():
    line = step_line("h200-triton_mla_fast-h64-128k-p64-source", "h200-triton_mla_fast-h64-ring-128k-p64-source")
    assert line.endswith("no test on these times; the timing line below tests the step)")


def test_a_change_inside_the_spread_is_said_as_that():
    line = step_line("h200-triton_mla_fast-ring-128k-p64", "h200-triton_mla_fast-ring-128k-p64-source")
    assert line.endswith("(+0.8%, within the steps' spread of 4.35%)")
