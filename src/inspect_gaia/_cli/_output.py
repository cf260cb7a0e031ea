"""Tables for the terminal, Markdown and CSV from lists of rows; JSON as one document per call."""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Sequence
from typing import Any, Literal

import click
from rich.console import Console
from rich.table import Table
from rich.text import Text

Format = Literal["table", "markdown", "csv", "json"]
FORMATS: tuple[str, ...] = ("table", "markdown", "csv", "json")
MISSING = "—"
"""How a missing value (no answers on the test split, no price) shows in a human table."""

format_option = click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    default="table",
    show_default=True,
    help="Terminal table, Markdown, CSV (one table) or JSON (one document).",
)


def _cell(value: Any, precise: bool = False) -> str:
    if isinstance(value, float):
        if math.isnan(value):
            return ""
        return format(value, ".10g") if precise else f"{value:.4f}"
    if isinstance(value, (list, tuple)):
        return "; ".join(str(v) for v in value)
    return "" if value is None else str(value)


def render(
    rows: Sequence[dict[str, Any]],
    columns: Sequence[str],
    fmt: str,
    title: str = "",
    note: str = "",
    empty: str = "",
) -> str:
    """Render ``rows`` (dicts keyed by ``columns``) as a terminal table, Markdown or CSV.

    Args:
        rows: The rows; a missing key is an empty cell.
        columns: The keys to show, in order; they are the header too.
        fmt: ``table``, ``markdown`` or ``csv`` (``json`` gives the rows as one JSON list).
        title: Shown above a terminal or Markdown table.
        note: Shown under a terminal or Markdown table.
        empty: Shown instead of a terminal or Markdown table without rows.
    """
    if fmt == "json":
        return dump_json([{c: row.get(c) for c in columns} for row in rows])
    if fmt == "csv":
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(columns)
        writer.writerows([[_cell(row.get(c), precise=True) for c in columns] for row in rows])
        return out.getvalue()
    if fmt == "markdown":
        heading = f"### {title}\n\n" if title else ""
        if not rows and empty:
            return heading + empty + "\n"
        lines = ["| " + " | ".join(columns) + " |", "|" + "|".join(" --- " for _ in columns) + "|"]
        lines += [
            "| " + " | ".join(_cell(row.get(c)).replace("|", "\\|") for c in columns) + " |"
            for row in rows
        ]
        return heading + "\n".join(lines) + "\n" + (f"\n{note}\n" if note else "")
    console = Console(file=io.StringIO(), width=160, force_terminal=False)
    if not rows and empty:
        console.print((f"{title}: " if title else "") + empty, markup=False, highlight=False)
    else:
        # Text, not str: a cell such as "gpt-4o [max_attempts=2]" is not rich markup.
        table = Table(title=Text(title) if title else None, caption=Text(note) if note else None)
        for column in columns:
            table.add_column(Text(column))
        for row in rows:
            table.add_row(*[Text(_cell(row.get(c))) for c in columns])
        console.print(table)
    out_file = console.file
    assert isinstance(out_file, io.StringIO)
    return out_file.getvalue()


def dump_json(document: Any) -> str:
    """One JSON document, with NaN written as null (JSON has no NaN)."""
    return json.dumps(_no_nan(document), indent=2, ensure_ascii=False, allow_nan=False)


def _no_nan(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _no_nan(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_no_nan(item) for item in value]
    return value
