"""Leaderboard JSONL predictions: read, and refused in one line when malformed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import invoke

from inspect_gaia.errors import GaiaError
from inspect_gaia.leaderboard import read_leaderboard


def write_jsonl(path: Path, *lines: object) -> Path:
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines))
    return path


def test_read_predictions(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "p.jsonl",
        {"task_id": "a", "model_answer": "12", "reasoning_trace": "added"},
        "",
        {"task_id": "b", "model_answer": None},
        {"task_id": "c", "model_answer": 7},
    )
    samples = read_leaderboard(path)
    assert [(s.task_id, s.answer, s.level, s.target) for s in samples] == [
        ("a", "12", 0, ""),
        ("b", None, 0, ""),
        ("c", "7", 0, ""),
    ]
    assert samples[0].trace == "added"


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (['{"task_id": "a", "model_answer"'], "p.jsonl, line 1: not JSON"),
        (
            [{"task_id": "a", "model_answer": "1"}, {"model_answer": "2"}],
            "p.jsonl, line 2: no task_id — each line of a leaderboard file is",
        ),
        ([{"task_id": "a"}], "p.jsonl, line 1: no model_answer"),
        (["[1, 2]"], "p.jsonl, line 1: no task_id and no model_answer"),
        (
            [
                {"task_id": "a", "model_answer": "1"},
                {"task_id": "b", "model_answer": "1"},
                {"task_id": "a", "model_answer": "2"},
            ],
            "p.jsonl: task id a is on lines 1 and 3 — keep one answer per question",
        ),
        ([""], "p.jsonl holds no predictions"),
    ],
)
def test_malformed_files_are_refused_in_one_line(
    tmp_path: Path, lines: list[object], message: str
) -> None:
    path = write_jsonl(tmp_path / "p.jsonl", *lines)
    with pytest.raises(GaiaError) as raised:
        read_leaderboard(path)
    assert message in str(raised.value) and "\n" not in str(raised.value)
    code, _, err = invoke("compare", str(path), str(path))
    assert code == 1 and err.count("\n") == 1 and message in err
