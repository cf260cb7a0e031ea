"""A probe run in ``report``: one table of routes by outcome, and the line (``logs/probe.py``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..probe.outcomes import OUTCOMES
from ._output import render

COLUMNS = ("route", "family", *OUTCOMES)
CSV_COLUMNS = ("group", *COLUMNS)
KEEP = ("route", "leaked", "open")
"""Columns a narrow terminal drops last: the route and its breaches."""


def is_probe_group(group: Mapping[str, Any]) -> bool:
    """Whether a report group is a probe run (it has a ``probe`` block, and no score)."""
    return bool(group.get("probe"))


def probe_text(group: Mapping[str, Any], fmt: str) -> str:
    """A probe group as a table of routes by outcome, its line under it."""
    probe = group["probe"]
    title = (
        f"GAIA probe: {group['group']} — {group['split']}, {probe['samples']} sample(s) probed, "
        f"{len(group['logs'])} log{'s' * (len(group['logs']) != 1)}"
    )
    rows = [
        {k: str(v) if v else ("" if k in OUTCOMES else v) for k, v in row.items()}
        for row in probe["routes"]
    ]
    mark = "✔" if not probe["breached"] else "✘"
    return render(rows, COLUMNS, fmt, title=title, note=f"{mark} {probe['line']}", keep=KEEP)


def probe_csv_rows(document: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every probe group's routes, one CSV row each (``CSV_COLUMNS``)."""
    return [
        {"group": group["group"], **row}
        for group in document["groups"]
        if is_probe_group(group)
        for row in group["probe"]["routes"]
    ]
