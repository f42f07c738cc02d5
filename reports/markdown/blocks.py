"""The markdown building blocks every section uses: numbers with a dash for a missing value, table cells,
code spans, escaped prose, tables, folded blocks and figures."""

from __future__ import annotations

from pathlib import Path

from reports import numbers
from reports.numbers import pct  # noqa: F401 - the sections' percentage, from the one home of number formatting


def fmt(value, spec: str, suffix: str = "", missing: str = "–") -> str:
    """reports.numbers.fmt with the markdown report's dash for a missing value (the suffix third, as the
    sections pass it)."""
    return numbers.fmt(value, spec, missing, suffix)


def cell(text: str) -> str:
    """Text safe inside a table cell: pipes escaped, no line breaks."""
    return str(text).replace("|", "\\|").replace("\n", " ")


def code(text: str) -> str:
    text = str(text).replace("`", "'")
    return f"`{cell(text)}`"


def plain(text: str) -> str:
    """Tool text shown as prose: markdown and HTML specials escaped."""
    out = str(text)
    for ch in "\\`*_[]<>|#":
        out = out.replace(ch, "\\" + ch)
    return out


def prose(text: str) -> str:
    """Tool or analysis text as prose: `quoted` commands become code spans, the rest is escaped."""
    parts = str(text).split("`")
    if len(parts) % 2 == 0:  # an unpaired backtick: nothing is code
        return plain(text)
    return "".join(code(p) if i % 2 else plain(p) for i, p in enumerate(parts))


def table(header: list[str], rows: list[list[str]], align: str = "") -> list[str]:
    align = align or "l" * len(header)
    marks = {"l": "---", "r": "---:", "c": ":---:"}
    return ["| " + " | ".join(header) + " |", "| " + " | ".join(marks[a] for a in align) + " |"] + [
        "| " + " | ".join(cell(c) for c in r) + " |" for r in rows
    ]


def details(summary: str, body: list[str]) -> list[str]:
    """A folded block; blank lines around the body so GitHub renders the markdown inside it."""
    return [f"<details><summary>{summary}</summary>", "", *body, "", "</details>", ""]


def figure(png: Path, alt: str, name: str, caption: str) -> list[str]:
    """A chart: its PNG, then `name`, a link to its SVG and the caption."""
    png = Path(png).as_posix()
    return [f"![{alt}]({png})", "", f"{name} ([SVG]({Path(png).with_suffix('.svg').as_posix()})){caption}", ""]
