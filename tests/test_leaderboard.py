"""Leaderboard JSONL predictions: read, and refused in one line when malformed; and written.

Writing: ``run_problems``, ``answer_problems`` and ``submission_file`` on runs read from logs written
here, without the command (``test_cli_submission`` runs it).
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from inspect_gaia.errors import GaiaError
from inspect_gaia.logs.leaderboard import (
    answer_problems,
    read_leaderboard,
    run_problems,
    submission_file,
)
from inspect_gaia.logs.read import read_inspect_log
from inspect_gaia.logs.results import RunResults
from tests.helpers import invoke, write_log


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


# -- writing one -----------------------------------------------------------------------------------

TEST_SAMPLES = [
    {"id": "t1", "level": 1, "target": "?", "answer": "4", "value": "N"},
    {"id": "t2", "level": 2, "target": "?", "answer": "", "value": "N", "error": "boom"},
    {"id": "t3", "level": 3, "target": "?", "answer": "Zoë", "value": "N"},
]


def run(path: Path, samples: list[dict[str, Any]] = TEST_SAMPLES, **params: object) -> RunResults:
    return read_inspect_log(write_log(path, samples, params={"split": "test", **params}))


def test_a_test_split_run_has_no_problem_and_makes_the_file(tmp_path: Path) -> None:
    runs = [run(tmp_path / "a.eval")]
    ids = ["t3", "t1", "t2"]
    assert run_problems(runs) == [] and answer_problems(runs, ids) == []
    written = submission_file(runs, ids)
    lines = [json.loads(line) for line in written.text.splitlines()]
    assert written.text.endswith("}\n") and written.answers == 3
    assert [line["task_id"] for line in lines] == ids  # in the split's order
    assert (lines[0]["model_answer"], lines[2]["model_answer"]) == ("Zoë", "")
    assert set(lines[0]) == {"task_id", "model_answer", "reasoning_trace"}
    assert "Zoë" in written.text  # not escaped
    assert written.failed == ["t2"]


def test_what_the_runs_themselves_are(tmp_path: Path) -> None:
    validation = run(tmp_path / "v.eval", split="validation")
    [problem] = run_problems([validation])
    assert problem.kind == "validation_split"
    assert str(problem) == (
        "these are validation-split logs; the leaderboard ranks test-split submissions "
        "(pass --allow-validation to write them anyway)"
    )
    assert run_problems([validation], allow_validation=True) == []
    mixed = run_problems([run(tmp_path / "t.eval"), validation])
    assert [p.kind for p in mixed] == ["mixed_splits"]
    assert str(mixed[0]) == "the logs mix splits (test, validation); give logs of one split"
    epochs = replace(run(tmp_path / "e.eval"), epochs=2)
    assert [str(p) for p in run_problems([epochs])] == [
        f"{epochs.source} (2 epochs): the leaderboard takes one answer per question — submit a "
        "single-epoch run"
    ]


def test_oracle_retries_are_a_problem_unless_allowed(tmp_path: Path) -> None:
    oracle = run(tmp_path / "o.eval", split="validation", max_attempts=2)
    problems = run_problems([oracle])
    assert [p.kind for p in problems] == ["validation_split", "oracle_retries"]  # first first
    assert str(problems[1]).startswith(f"{oracle.source} ran with max_attempts > 1: ")
    assert str(problems[1]).endswith("(pass --allow-oracle-retries to write them)")
    allowed = run_problems([oracle], allow_validation=True, allow_oracle_retries=True)
    assert allowed == []


def test_each_question_answered_once_every_one_and_no_other(tmp_path: Path) -> None:
    first = run(tmp_path / "1.eval", TEST_SAMPLES[:2])
    second = run(tmp_path / "2.eval", TEST_SAMPLES[1:])
    [twice] = answer_problems([first, second])
    assert twice.kind == "duplicates"
    assert str(twice) == (
        "1 task id(s) answered in more than one log: t2 — give each question's log once (a run "
        "and its eval-retry: the retry's log alone)"
    )
    assert answer_problems([first]) == []  # without the split's ids, only answers given twice
    problems = answer_problems([first], ["t1", "t3", "t4", "t5", "t6"])
    assert [p.kind for p in problems] == ["missing", "unknown"]
    assert str(problems[0]) == (
        "4 task id(s) of the test split missing: t3, t4, t5 and 1 more — give the logs that "
        "answer them too (every level's), or run them"
    )
    assert str(problems[1]).startswith("1 task id(s) not in the test split: t2 — ")
