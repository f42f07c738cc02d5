"""One spelling of microseconds, µs, in every output: the text of analyze and model, the markdown report."""

import re

from click.testing import CliRunner

from roofline.cli import main
from tests.paths import SAMPLE_RUN

US = re.compile(r"\d us\b")


def test_text_and_markdown_spell_microseconds_one_way(tmp_path):
    outputs = [
        CliRunner().invoke(main, ["analyze", str(SAMPLE_RUN)]).output,
        CliRunner().invoke(main, ["model", "--kernel", "triton_mla", "--ctx", "128k"]).output,
    ]
    assert CliRunner().invoke(main, ["report", str(SAMPLE_RUN), "-o", str(tmp_path / "r.md")]).exit_code == 0
    outputs.append((tmp_path / "r.md").read_text())
    for out in outputs:
        assert "µs" in out and not US.search(out), US.findall(out)
