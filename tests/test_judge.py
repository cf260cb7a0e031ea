"""The judge: its prompt, how its reply is read, and the ``gaia_judge`` scorer on a real log.

The scorer runs through ``inspect score LOG --scorer inspect_gaia/gaia_judge`` (inspect finds it in
its registry by that name) with the scripted model on 127.0.0.1 as the judge.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log

from inspect_gaia import DEFAULT_INPUT_PROMPT
from inspect_gaia.errors import GaiaParameterError
from inspect_gaia.judge import (
    DEFAULT_PROMPT,
    DEFAULT_PROMPT_NAME,
    JUDGE_SCORER,
    load_prompt,
    read_grade,
)
from inspect_gaia.logs.read import read_inspect_log
from support.scripted_model import Entry, ScriptedModel
from tests.helpers import inspect_cli, write_log

JUDGE = "openai-api/scripted/judge"


@pytest.mark.parametrize(
    ("reply", "verdict"),
    [
        ("Same value. GRADE: C", True),
        ("Another entity.\nGRADE: I", False),
        ("GRADE: I was my first thought, but on reflection GRADE: C", True),  # the last one wins
        ("grade : c", True),  # as model_graded_qa reads it: any case, spaces around the colon
        ("Partly right. GRADE: P", None),  # not a grade this judge offers
        ("I believe it is right.", None),
        ("", None),
        ("My downgrade: C", None),  # not the GRADE token
    ],
)
def test_a_reply_is_read_as_model_graded_qa_reads_it(reply: str, verdict: bool | None) -> None:
    assert read_grade(reply) is verdict


def test_the_project_prompt_has_every_placeholder_and_asks_for_the_grade() -> None:
    prompt = load_prompt(None)
    assert prompt.name == DEFAULT_PROMPT_NAME and prompt.file is None
    assert prompt.template == DEFAULT_PROMPT and len(prompt.sha256) == 64
    text = prompt.render("How many?", "12,500", "12500 people")
    assert "How many?" in text and "12,500" in text and "12500 people" in text
    assert "{question}" not in text and "GRADE: C" in text and "GRADE: I" in text


def test_a_template_of_ones_own_is_named_hashed_and_filled_literally(tmp_path: Path) -> None:
    path = tmp_path / "webagents.txt"
    path.write_text('Q: {question}\nGold: {gold}\nAnswer: {answer}\n{"keep": "braces"} GRADE: C/I')
    prompt = load_prompt(str(path))
    assert (prompt.name, prompt.file) == ("webagents", str(path))
    assert prompt.sha256 != load_prompt(None).sha256
    # an answer that itself holds a placeholder is not filled again
    text = prompt.render("q?", "7", "{gold}")
    assert text.splitlines()[:3] == ["Q: q?", "Gold: 7", "Answer: {gold}"]
    assert '{"keep": "braces"}' in text


def test_a_template_without_gold_or_answer_is_refused_with_the_fix(tmp_path: Path) -> None:
    path = tmp_path / "bad.txt"
    path.write_text("Is {answer} right?")
    with pytest.raises(GaiaParameterError, match=r"no \{gold\} placeholder") as raised:
        load_prompt(str(path))
    assert "{question}, {gold} and {answer}" in str(raised.value)


def test_gaia_judge_scores_a_log_through_inspect_score(
    tmp_path: Path, scripted: object, scripted_server: ScriptedModel
) -> None:
    """``inspect score --scorer inspect_gaia/gaia_judge`` puts the verdicts beside the official ones.

    The judge sees the question without the task's instructions, the target and the answer the
    official scorer scored; a judge with no grade in its reply is ``N``, not a wrong answer.
    """
    assert callable(scripted)
    scripted(
        [
            Entry("12500 people", [{"say": "The same count. GRADE: C"}]),
            Entry("Oslo", [{"say": "I cannot tell."}]),
        ]
    )
    prompt = DEFAULT_INPUT_PROMPT.format(file="", question="How many visitors came in 1990?")
    samples = [
        {"id": "a", "level": 1, "target": "12,500", "answer": "12500 people", "value": "I"},
        {"id": "b", "level": 1, "target": "Bergen", "answer": "Oslo", "value": "I"},
    ]
    log = write_log(tmp_path / "run.eval", [{**s, "input": prompt} for s in samples])
    environment = {**os.environ, "INSPECT_GAIA_CACHE_DIR": str(tmp_path / "cache")}
    command = [inspect_cli(), "score", str(log), "--scorer", f"inspect_gaia/{JUDGE_SCORER}"]
    command += ["-S", f"model={JUDGE}", "--action", "append", "--overwrite", "--display", "none"]
    done = subprocess.run(command, env=environment, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    scored = read_eval_log(str(log))
    assert scored.samples is not None
    by_id = {s.id: s.scores or {} for s in scored.samples}
    assert by_id["a"]["gaia_scorer"].value == "I"  # the official verdict is kept as it was
    assert by_id["a"][JUDGE_SCORER].value == "C" and by_id["b"][JUDGE_SCORER].value == "N"
    metadata = by_id["a"][JUDGE_SCORER].metadata or {}
    assert metadata["judge_model"] == JUDGE
    assert metadata["prompt_sha256"] == load_prompt(None).sha256
    judged = next(r for r in scripted_server.requests if "12500 people" in str(r))
    asked = str(judged["messages"][0]["content"])
    assert "How many visitors came in 1990?" in asked and "Please answer" not in asked
    # read back as report reads it: the question and the judge's verdict travel with the sample
    run = read_inspect_log(log)
    (first,) = [s for s in run.samples if s.task_id == "a"]
    assert first.question == "How many visitors came in 1990?"
    assert first.judge is not None and first.judge["value"] == "C"
