"""The ``gaia_judge`` scorer on a log, through ``inspect score --scorer inspect_gaia/gaia_judge``.

inspect finds the scorer in its registry by that name; the scripted model on 127.0.0.1 judges.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log

from inspect_gaia import DEFAULT_INPUT_PROMPT
from inspect_gaia.logs.read import read_inspect_log
from inspect_gaia.scoring.judge import JUDGE_SCORER, load_prompt
from support.scripted_model import Entry, ScriptedModel
from tests.helpers import inspect_cli, invoke, write_log

JUDGE = "openai-api/scripted/judge"


@pytest.mark.slow  # inspect score in a new process: tens of seconds
def test_gaia_judge_scores_a_log_through_inspect_score(
    tmp_path: Path,
    scripted: object,
    scripted_server: ScriptedModel,
    monkeypatch: pytest.MonkeyPatch,
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
    monkeypatch.setenv("INSPECT_GAIA_CACHE_DIR", str(tmp_path / "cache"))
    environment = dict(os.environ)
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
    # report --judge takes the log's verdict instead of calling; the `N` one is asked again
    scripted_server.requests.clear()
    monkeypatch.setenv("INSPECT_GAIA_CACHE_DIR", str(tmp_path / "empty-cache"))
    code, out, err = invoke("report", str(log), "--judge", JUDGE, "--format", "json")
    assert code == 0, err
    cost = json.loads(out)["judge"]["cost"]
    assert (cost["from_log"], cost["calls"]) == (1, 1)
    assert [r for r in scripted_server.requests if "12500 people" in str(r)] == []
