"""Tables for the terminal, Markdown and CSV from lists of rows; JSON as one document per call."""

from __future__ import annotations

import csv
import io
import json
import math
import re
import textwrap
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

import click
from rich.cells import cell_len
from rich.console import Console
from rich.table import Table
from rich.text import Text

from ._sanitise import csv_cell, json_text, markdown_cell, markdown_text, printable

_F = TypeVar("_F", bound=Callable[..., Any])
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


max_read_option = click.option(
    "--max-read-gb",
    type=click.FloatRange(min=0, min_open=True),
    help="What all the files read may unpack to, in GiB (default 16): past it the command stops "
    "with one line, its memory bounded however large the folder.",
)


def prices_option(help: str) -> Callable[[_F], _F]:
    """``--model-cost-config FILE``: prices in inspect's format, read with ``stats.read_prices``."""
    return click.option(
        "--model-cost-config",
        "prices_file",
        type=click.Path(exists=True, dir_okay=False),
        help=help,
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
    width: int | None = None,
    keep: Sequence[str] = (),
    asked: Sequence[str] = (),
    score: Sequence[str] = (),
) -> str:
    """Render ``rows`` (dicts keyed by ``columns``) as a terminal table, Markdown or CSV.

    Args:
        rows: The rows; a missing key is an empty cell.
        columns: The keys to show, in order; they are the header too.
        fmt: ``table``, ``markdown`` or ``csv`` (``json`` gives the rows as one JSON list).
        title: Shown above a terminal or Markdown table.
        note: Shown under a terminal or Markdown table.
        empty: Shown instead of a terminal or Markdown table without rows.
        width: A terminal table's width; the terminal's own when ``None``.
        keep: Columns a narrow terminal drops late (verdicts, cost): see ``fit_columns``.
        asked: Columns the user asked for by a flag (``--judge``): dropped after ``keep``.
        score: The score itself (the official ``pass@1``): dropped after ``asked``.
    """
    if fmt == "json":
        return dump_json([{c: row.get(c) for c in columns} for row in rows])
    if fmt == "csv":
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(columns)
        writer.writerows(
            [[csv_cell(_cell(row.get(c), precise=True)) for c in columns] for row in rows]
        )
        return out.getvalue()
    if fmt == "markdown":  # what a log holds is shown, never rendered (``_sanitise``)
        heading = f"### {markdown_text(title, one_line=True)}\n\n" if title else ""
        if not rows and empty:
            return heading + markdown_text(empty) + "\n"
        lines = [
            "| " + " | ".join(map(markdown_cell, columns)) + " |",
            "|" + "|".join(" --- " for _ in columns) + "|",
        ]
        lines += [
            "| " + " | ".join(markdown_cell(_cell(row.get(c))) for c in columns) + " |"
            for row in rows
        ]
        return heading + "\n".join(lines) + "\n" + (f"\n{markdown_text(note)}\n" if note else "")
    # The terminal's width: rich asks the standard streams, then $COLUMNS (80 when none is a
    # terminal). Text columns wrap, and columns that still do not fit are left out (all-zero ones
    # first, ``keep`` last), with a note: never a row wider than the screen.
    console = Console(file=io.StringIO(), force_terminal=False, width=width)
    title, note, empty = printable(title), printable(note), printable(empty)
    if not rows and empty:
        console.print((f"{title}: " if title else "") + empty, markup=False, highlight=False)
    else:
        cells = [[printable(_cell(row.get(c))) for c in columns] for row in rows]
        widths = fit_columns(columns, cells, console.width, keep, asked, score)
        shown = [i for i, w in enumerate(widths) if w is not None]
        hidden = [i for i, w in enumerate(widths) if w is None]
        if hidden:
            empty_ones = [columns[i] for i in hidden if _empty(row[i] for row in cells)]
            others = [columns[i] for i in hidden if columns[i] not in empty_ones]
            listed = ", ".join(others) + ("; " if others and empty_ones else "")
            listed += f"all 0 or —: {', '.join(empty_ones)}" if empty_ones else ""
            note = (note + "\n" if note else "") + (
                f"hidden at this width: {listed} — widen the terminal or use --format markdown"
            )
        # Text, not str: a cell such as "gpt-4o [max_attempts=2]" is not rich markup.
        table = Table(title=Text(title) if title else None, caption=Text(note) if note else None)
        for i in shown:
            header = columns[i]
            if cell_len(header) > (widths[i] or 0):
                header = " ".join(_header_words(header))
            table.add_column(Text(header), width=widths[i], overflow="fold")
        for row_cells in cells:
            table.add_row(*[Text(row_cells[i]) for i in shown])
        console.print(table)
    out_file = console.file
    assert isinstance(out_file, io.StringIO)
    return out_file.getvalue()


_FOLD_WORDS_OVER = 16
"""A word longer than this (a model name, a path) may be split over lines to fit."""

_WORD = re.compile(r"\[[^\s\[\]]+, [^\s\[\]]+\]|\S+")
"""A word of a cell: an interval ``[-0.56, +0.56]`` is one, never split over two lines."""
_NOTHING = re.compile(rf"\$?0(\.0+)?|{MISSING}|")
"""A cell that says nothing: zero, or no value."""


def _empty(cells: Iterable[str]) -> bool:
    return all(_NOTHING.fullmatch(cell.strip()) for cell in cells)


def terminal_width(width: int | None = None) -> int:
    """``width``, else the terminal's as rich finds it (the streams, ``$COLUMNS``, else 80)."""
    return Console(file=io.StringIO(), force_terminal=False, width=width).width


def wrap(lines: Iterable[str], width: int | None = None) -> str:
    """Note lines wrapped at spaces to the terminal's width (``width``), continued indented.

    The terminal would otherwise break them mid-word (``1 rig|ht``).
    """
    columns = terminal_width(width)
    return "".join(
        textwrap.fill(
            line,
            columns,
            subsequent_indent="  ",
            break_long_words=False,
            break_on_hyphens=False,
        )
        + "\n"
        for line in lines
    )


def _header_words(header: str) -> list[str]:
    """Where a header may wrap: at spaces and after a slash (``tokens/`` ``question``)."""
    return header.replace("/", "/ ").split() or [""]


def fit_columns(
    columns: Sequence[str],
    cells: Sequence[Sequence[str]],
    width: int,
    keep: Sequence[str] = (),
    asked: Sequence[str] = (),
    score: Sequence[str] = (),
) -> list[int | None]:
    """Each column's width in a table at most ``width`` wide; ``None`` for a column left out.

    Cells wrap at spaces, and only words longer than 16 characters are split, so a number, an
    interval or a short id is never cut; headers wrap at spaces and slashes; room left over is
    shared among the wrapped columns (an id does not take it all from the answers). Columns that
    still do not fit are dropped: first those whose every cell is 0 or empty (a reasoning-token
    count of a model without reasoning), then the others from the right (callers put the most
    important first), then ``keep`` (verdicts, cost) from the right, then ``asked`` (what the user
    asked for by a flag: the judge's columns) from the right, then ``score`` (what the table is
    the score of: a judge beside no official score would read as the score); the first column
    never.
    """
    natural, floor = [], []
    for index, header in enumerate(columns):
        values = [row[index] for row in cells]
        widest = max((cell_len(v) for v in values), default=0)
        word = max((cell_len(w) for v in values for w in _WORD.findall(v)), default=0)
        header_word = max(cell_len(w) for w in _header_words(header))
        natural.append(max(widest, cell_len(header), 1))
        floor.append(max(min(word, _FOLD_WORDS_OVER), header_word, 1))

    def total(widths: Sequence[int]) -> int:  # each cell is padded by one space a side, plus rules
        return sum(widths) + 3 * len(widths) + 1

    if total(natural) <= width:
        return list(natural)
    right_to_left = range(len(columns) - 1, 0, -1)
    scores = [i for i in right_to_left if columns[i] in score]
    final = [i for i in right_to_left if columns[i] in asked and i not in scores]
    last = [i for i in right_to_left if columns[i] in keep and i not in (*final, *scores)]
    tiers = (*last, *final, *scores)
    empty = [i for i in right_to_left if i not in tiers and _empty(row[i] for row in cells)]
    rest = [i for i in right_to_left if i not in (*tiers, *empty)]
    shown = list(range(len(columns)))
    for index in [*empty, *rest, *tiers]:
        if total([floor[i] for i in shown]) <= width:
            break
        shown.remove(index)
    widths = {i: floor[i] for i in shown}
    spare = width - total(list(widths.values()))
    while spare > 0:  # a character at a time to each column still wrapped, left to right
        growing = [i for i in shown if widths[i] < natural[i]]
        for index in growing[:spare]:
            widths[index] += 1
        spare -= len(growing[:spare])
        if not growing:
            break
    return [widths.get(i) for i in range(len(columns))]


def echo_skipped(skipped: Iterable[Any], notes: Iterable[str] = ()) -> None:
    """One stderr line per file of a folder that was not read, then the readers' notes.

    ``skipped <path>: <reason>``; each of ``notes`` (a sample read without its transcript) as it is.
    """
    for file in skipped:
        click.echo(printable(f"skipped {file.path}: {file.reason}", one_line=True), err=True)
    for line in notes:
        click.echo(printable(line, one_line=True), err=True)


def dump_json(document: Any) -> str:
    """One JSON document, with NaN written as null (JSON has no NaN), and no raw control codes."""
    return json_text(json.dumps(_no_nan(document), indent=2, ensure_ascii=False, allow_nan=False))


def _no_nan(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _no_nan(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_no_nan(item) for item in value]
    return value
