"""``report --breakdown``: where each group fails, as tables (the JSON always carries it)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..logs.breakdown import UNKNOWN
from ._output import MISSING, render

BREAKDOWN_COLUMNS = ("dimension", "category", "questions", "samples", "correct", "accuracy")
NEAR_MISS_COLUMNS = ("task_id", "level", "epoch", "rule", "answer", "target")
DIMENSIONS = {"attachment": "attachment", "steps": "annotator steps", "tools": "annotator tools"}


def breakdown_rows(group: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A group's breakdown as rows: one per dimension and category."""
    return [
        {"dimension": DIMENSIONS[dimension], **row}
        for dimension, rows in (group.get("breakdown") or {}).items()
        for row in rows
    ]


def csv_rows(document: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every group's breakdown rows, each led by the group's label (``--format csv``)."""
    return [
        {"group": group["group"], **row}
        for group in document["groups"]
        for row in breakdown_rows(group)
    ]


def _shown(row: Mapping[str, Any]) -> dict[str, Any]:
    accuracy = row["accuracy"]
    return {**row, "accuracy": MISSING if accuracy is None else f"{accuracy:.4f}"}


def failures_text(document: Mapping[str, Any], fmt: str) -> str:
    """The breakdown and near-miss tables of every graded group."""
    parts = []
    for group in document["groups"]:
        if "breakdown" not in group:
            continue
        rows = [_shown(row) for row in breakdown_rows(group)]
        # the footnote explains `unknown` only where the table has it
        unknown = any(row["category"] == UNKNOWN for row in rows)
        parts.append(
            render(
                rows,
                BREAKDOWN_COLUMNS,
                fmt,
                title=f"Where it fails: {group['group']}",
                note=f"{UNKNOWN}: the log records no attachment name or annotator metadata"
                if unknown
                else "",
            )
        )
        misses = group["near_misses"]
        counts = ", ".join(f"{row['level']}: {row['near_misses']}" for row in misses["levels"])
        parts.append(
            render(
                misses["items"],
                NEAR_MISS_COLUMNS,
                fmt,
                title=f"Near misses: {group['group']}",
                note=f"near misses per level: {counts} — wrong answers a looser normalisation "
                "would accept; the score is unchanged",
                empty="no near miss",
            )
        )
    return "\n".join(parts)
