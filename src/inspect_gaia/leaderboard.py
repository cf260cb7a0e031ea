"""Predictions in the official GAIA leaderboard format, as one side of ``inspect-gaia compare``.

The format the leaderboard takes (and ``inspect-gaia submission`` writes): JSON lines, one per
question, ``{"task_id": ..., "model_answer": ..., "reasoning_trace": ...}`` (the trace optional).
Most agent repositories can write it, so any harness's run can be compared here; the file carries no
levels and no verdicts: both come from the answer key ``compare`` scores every side against.

A malformed file is refused with one line naming the line and what to fix: a line that is not a
JSON object, a line without ``task_id`` or ``model_answer``, or a task id given twice (which of the
two answers would count?). A ``null`` or empty answer is kept and scored wrong.
"""

from __future__ import annotations

import json
from pathlib import Path

from .errors import GaiaError
from .results import SampleResult

FIELDS = ("task_id", "model_answer")


def read_leaderboard(path: str | Path) -> list[SampleResult]:
    """Read a leaderboard JSONL file; its samples have no level (0) and no target (``""``).

    Raises:
        GaiaError: The file is unreadable or malformed; the message names the line.
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as ex:
        raise GaiaError(f"cannot read {path}: {ex}") from ex
    samples: list[SampleResult] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as ex:
            raise GaiaError(
                f"{path}, line {number}: not JSON ({ex.msg}) — a leaderboard file has one JSON "
                "object per line"
            ) from ex
        if not isinstance(record, dict) or any(key not in record for key in FIELDS):
            missing = [k for k in FIELDS if not isinstance(record, dict) or k not in record]
            raise GaiaError(
                f"{path}, line {number}: no {' and no '.join(missing)} — each line of a "
                'leaderboard file is {"task_id": …, "model_answer": …, "reasoning_trace": …}'
            )
        task_id = str(record["task_id"]).strip()
        if task_id in seen:
            raise GaiaError(
                f"{path}: task id {task_id} is on lines {seen[task_id]} and {number} — keep one "
                "answer per question"
            )
        seen[task_id] = number
        answer = record["model_answer"]
        samples.append(
            SampleResult(
                task_id=task_id,
                level=0,
                target="",
                answer=None if answer is None else str(answer),
                correct=False,
                trace=str(record.get("reasoning_trace") or ""),
            )
        )
    if not samples:
        raise GaiaError(f"{path} holds no predictions — give one JSON object per question")
    return samples
