"""Sample rows the log-reading tests write logs of (``write_log``), shared by several test modules."""

from __future__ import annotations

from typing import Any

RUN_SAMPLES: list[dict[str, Any]] = [
    {"id": "a", "level": 1, "target": "1", "answer": "1", "value": "C"},
    {"id": "b", "level": 1, "target": "2", "answer": "3", "value": "I"},
    {"id": "c", "level": 2, "target": "x", "answer": "x", "value": "C"},
    {"id": "d", "level": 2, "target": "y", "answer": "", "value": "I", "error": "boom"},
    {"id": "e", "level": 3, "target": "z", "answer": "", "value": "I", "limit": "message"},
]
"""Five samples over three levels: right, wrong, errored and limit-hit."""

TWO_SAMPLES: list[dict[str, Any]] = [
    {"id": "a", "level": 1, "target": "1", "answer": "1", "value": "C"},
    {"id": "b", "level": 2, "target": "2", "answer": "3", "value": "I"},
]
"""One right sample on level 1, one wrong on level 2."""
