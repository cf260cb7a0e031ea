"""After a test-split run, the submission command is printed; other runs and tasks get nothing."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from inspect_ai.hooks import TaskEnd
from inspect_ai.log import read_eval_log

from inspect_gaia.next_steps import NextSteps, next_step
from tests.helpers import write_log

TEST_SAMPLE = [{"id": "t1", "level": 1, "target": "?", "answer": "x", "value": "N"}]


def test_a_test_split_run_is_told_to_make_its_submission(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_log(tmp_path / "logs" / "test.eval", TEST_SAMPLE, params={"split": "test"})
    log = read_eval_log(str(path))
    data = TaskEnd(eval_set_id=None, run_id="r", eval_id="e", log=log)
    asyncio.run(NextSteps().on_task_end(data))
    assert capsys.readouterr().out == (
        "GAIA test split: answers recorded, not graded (the answers are private) — next: "
        f"inspect-gaia submission {tmp_path / 'logs'}/ -o submission.jsonl\n"
    )


def test_a_validation_run_or_another_tasks_log_gets_nothing(tmp_path: Path) -> None:
    validation = write_log(tmp_path / "v.eval", TEST_SAMPLE)
    other = write_log(tmp_path / "o.eval", TEST_SAMPLE, metadata={}, task="other")
    assert next_step(read_eval_log(str(validation))) is None
    assert next_step(read_eval_log(str(other))) is None
