"""What the samples read on the web, as ``report`` and ``compare`` show it (``logs/web_reads``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ._output import render

WEB_COLUMNS = (
    "level",
    "samples",
    "recorded",
    "requests",
    "hosts",
    "refused",
    "blocked",
    "read nothing",
)
REPLAY_COLUMNS = ("level", "samples", "requests", "own", "pooled", "not recorded", "coverage")
SHOWN_SAMPLES = 10
"""Samples that read nothing a terminal table's note names (the JSON has them all)."""


def web_table(web: Mapping[str, Any], fmt: str) -> str:
    """A report group's ``web`` block: a row per level, then who read nothing.

    Its one line is among the group's flags, under the level table above it: not again here.
    """
    rows = [{**level, "read nothing": level["read_nothing"]} for level in web["levels"]]
    idle = [f"{s['task_id']} (epoch {s['epoch']})" for s in web["samples"] if s["read_nothing"]]
    note = []
    if idle:
        more = f" and {len(idle) - SHOWN_SAMPLES} more" if len(idle) > SHOWN_SAMPLES else ""
        note.append("read nothing: " + ", ".join(idle[:SHOWN_SAMPLES]) + more)
    table = render(
        rows,
        WEB_COLUMNS,
        fmt,
        title="What the samples requested on the web (the run's egress proxy)",
        note="\n".join(note),
        keep=("requests", "hosts", "read nothing"),
    )
    return table if not web.get("replay") else table + "\n" + replay_table(web["replay"], fmt)


def replay_table(replay: Mapping[str, Any], fmt: str) -> str:
    """A replayed group's coverage: a row per level, then its one line."""
    rows = [
        {
            **level,
            "not recorded": level["not_recorded"],
            "coverage": "—" if level["coverage"] is None else f"{level['coverage']:.0%}",
        }
        for level in replay["levels"]
    ]
    return render(
        rows,
        REPLAY_COLUMNS,
        fmt,
        title="What the replay served: own recording, the pool, or refused as not recorded",
        note=f"ⓘ {replay['note']}",
        keep=("requests", "coverage"),
    )


def host_lines(differing: Sequence[Mapping[str, Any]] | None) -> list[str]:
    """``compare``'s line for the questions whose sides read from different hosts."""
    if not differing:
        return []
    shown = [
        f"{d['task_id'][:8]} (A only: {', '.join(d['a_only']) or '-'}; "
        f"B only: {', '.join(d['b_only']) or '-'})"
        for d in differing[:SHOWN_SAMPLES]
    ]
    more = f" and {len(differing) - SHOWN_SAMPLES} more" if len(differing) > SHOWN_SAMPLES else ""
    return [
        f"⚠ the sides read from different hosts for {len(differing)} question(s): "
        + "; ".join(shown)
        + more
    ]
