"""The guide's dialect table is what the commands take: each option it lists is in the --help of every
command it names, and no other command's --help has it (a new option joins the table, or the test fails)."""

import re
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from roofline.cli import COMMANDS, main

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guide.md"


CHECKED = ("--gpu", "--devices", "--ncu", "--out", "--format", "--force")  # one row each, wherever it is


def table() -> dict[str, set[str]]:
    """option -> the commands the table names for it (`every command`: all of them)."""
    text = GUIDE.read_text().split("### One dialect", 1)[1]
    rows = [line for line in text.splitlines() if line.startswith("| ") and "---" not in line][1:]
    out = {}
    for row in rows:
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", row)[1:-1]]
        found = re.match(r"`(-o/)?(--[a-z-]+)[ `]", cells[1])
        if found is None or found.group(2) not in CHECKED:  # the workload and capture rows: their own tests
            continue
        option = found.group(2)
        where = re.sub(r"\([^)]*\)", "", cells[2])
        out[option] = set(COMMANDS) if where.strip() == "every command" else {w.strip() for w in where.split(",")}
    return out


def options(command: str) -> set[str]:
    cmd = main.get_command(click.Context(main), command)
    return {o for p in cmd.params if not getattr(p, "hidden", False) for o in getattr(p, "opts", [])}


def test_the_table_names_the_options_it_should():
    assert set(table()) == set(CHECKED)


@pytest.mark.parametrize("option", ["--gpu", "--devices", "--ncu", "--out", "--format", "--force"])
def test_each_option_is_where_the_table_says_and_nowhere_else(option):
    where = table()[option]
    have = {c for c in COMMANDS if option in options(c)}
    assert have == where, f"{option}: --help has it in {sorted(have)}, the table says {sorted(where)}"


def test_help_shows_what_the_table_says():
    r = CliRunner().invoke(main, ["analyze", "--help"])
    assert "-o, --out PATH" in r.output and "--force" in r.output
