"""Where each sample's time went, from the events of an inspect_gaia log.

Per sample: its container start (from the sample's init event to its first sandbox event), the
file copies, inspect's checks as root before the sample starts, the commands, the model calls and
the rest (tools, events, scoring, the log); medians over the log's samples.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path


def breakdown(out: Path) -> Iterator[str]:
    """Markdown: where each sample's time went, from the events of the inspect_gaia logs in ``out``.

    A run split over processes has a log per shard in a folder of ``out``: their samples pool.
    """
    from inspect_ai.log import read_eval_log

    samples = [
        sample
        for path in sorted(out.rglob("*.eval"))
        for sample in read_eval_log(str(path)).samples or []
    ]
    parts: dict[str, list[float]] = {}
    counts: dict[str, list[int]] = {}
    for sample in samples:
        events = sample.events
        init = next(e for e in events if e.event == "sample_init")
        started = datetime.fromisoformat(str(sample.started_at))
        end = datetime.fromisoformat(str(sample.completed_at))
        spans = dict.fromkeys(SPANS, 0.0)
        n = dict.fromkeys(COUNTED, 0)
        first = next((e for e in events if e.event == "sandbox"), None)
        if first is not None:
            spans[SPANS[0]] = (first.timestamp - init.timestamp).total_seconds()
        for e in events:
            what = _span(e, started)
            if what is not None:
                spans[what] += _took(e)
                n[what] += 1
        total = (end - init.timestamp).total_seconds()
        spans["the rest (tools, events, scoring, log)"] = total - sum(spans.values())
        spans["sample, all"] = total
        for key, value in spans.items():
            parts.setdefault(key, []).append(value)
        for key, seen in n.items():
            counts.setdefault(key, []).append(seen)
    yield ""
    yield "| per sample (median) | seconds | count | each, ms |"
    yield "| --- | --- | --- | --- |"
    for key, values in parts.items():
        seconds = statistics.median(values)
        if key in counts:
            many = statistics.median(counts[key])
            each = 1000 * statistics.median(
                v / max(c, 1) for v, c in zip(values, counts[key], strict=True)
            )
            yield f"| {key} | {seconds:.3f} | {many:g} | {each:.1f} |"
        else:
            yield f"| {key} | {seconds:.3f} | | |"


SPANS = ("container start", "file copies", "inspect's checks (as root)", "commands", "model calls")
COUNTED = SPANS[1:]


def _span(event: object, started: datetime) -> str | None:
    """Which counted span an event is (sandbox operations before the sample started are init)."""
    kind, action = getattr(event, "event", ""), getattr(event, "action", "")
    if kind == "model":
        return "model calls"
    if kind == "sandbox" and action == "write_file":
        return "file copies"
    if kind == "sandbox" and action == "exec":
        before = getattr(event, "timestamp", started) < started
        return "inspect's checks (as root)" if before else "commands"
    return None


def _took(event: object) -> float:
    completed = getattr(event, "completed", None)
    timestamp = getattr(event, "timestamp", None)
    if completed is None or timestamp is None:
        return 0.0
    return float((completed - timestamp).total_seconds())
