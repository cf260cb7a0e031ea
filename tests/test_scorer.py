from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from inspect_ai import Task
from inspect_ai.agent import react
from inspect_ai.dataset import Sample
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageTool,
    ChatMessageUser,
    ModelOutput,
)
from inspect_ai.scorer import CORRECT, INCORRECT, NOANSWER, SampleScore, Score, Target
from inspect_ai.solver import TaskState
from inspect_ai.tool import ToolCall

from inspect_gaia import gaia_scorer
from inspect_gaia.scoring.scorer import final_answer
from support.scripted_model import Entry
from tests.helpers import Play, eval_task


def _score(completion: str, target: str) -> Score:
    state = TaskState(
        model="scripted/x",  # type: ignore[arg-type]
        sample_id="s1",
        epoch=1,
        input="q",
        messages=[ChatMessageAssistant(content=completion)],
        output=ModelOutput.from_content("scripted/x", completion),
        metadata={"level": 1},
    )
    result = asyncio.run(gaia_scorer()(state, Target(target)))
    assert isinstance(result, Score)
    return result


def test_gaia_scorer_scores_the_completion() -> None:
    right = _score("12,500", "12500")
    assert right.value == CORRECT and right.answer == "12,500"
    assert "as a number" in (right.explanation or "")
    wrong = _score("The answer is 12500", "12500")
    assert wrong.value == INCORRECT and wrong.answer == "The answer is 12500"


def test_gaia_scorer_does_not_grade_the_test_split() -> None:
    result = _score("astrolabe", "?")
    assert result.value == NOANSWER
    assert result.answer == "astrolabe"
    assert "private" in (result.explanation or "")


def test_metrics_overall_and_per_level() -> None:
    from inspect_ai.util import registry_info

    metrics = registry_info(gaia_scorer()).metadata["metrics"]
    values = [(1, CORRECT), (1, CORRECT), (2, INCORRECT), (2, CORRECT), (3, INCORRECT)]
    scores = [
        SampleScore(score=Score(value=v), sample_id=str(i), sample_metadata={"level": level})
        for i, (level, v) in enumerate(values)
    ]
    results: dict[str, float] = {}
    for metric in metrics:
        value = metric(scores)
        if isinstance(value, dict):
            results.update({str(k): float(v) for k, v in value.items()})
        else:
            results[registry_info(metric).name.split("/")[-1]] = float(value)
    assert results["level1_accuracy"] == 1.0
    assert results["level2_accuracy"] == 0.5
    assert results["level3_accuracy"] == 0.0
    assert pytest.approx(results["level2_stderr"]) == 0.5
    assert results["accuracy"] == pytest.approx(3 / 5)
    assert results["stderr"] > 0


def _state(
    *messages: ChatMessage, sample_id: str = "0c5b0e3e-task", file_name: str = ""
) -> TaskState:
    return TaskState(
        model="scripted/x",  # type: ignore[arg-type]
        sample_id=sample_id,
        epoch=1,
        input="q",
        messages=list(messages),
        metadata={"level": 1, "file_name": file_name},
    )


def _bash(command: str, text: str = "") -> ChatMessageAssistant:
    return ChatMessageAssistant(
        content=text, tool_calls=[ToolCall(id="1", function="bash", arguments={"command": command})]
    )


SUBMIT_CALL = ChatMessageAssistant(
    content="", tool_calls=[ToolCall(id="1", function="submit", arguments={"answer": "42"})]
)


@pytest.mark.parametrize(
    ("messages", "answer", "source"),
    [
        (
            [SUBMIT_CALL, ChatMessageTool(content="42", function="submit", tool_call_id="1")],
            "42",
            "submit",
        ),
        (
            [ChatMessageAssistant(content="Thinking.\nFINAL ANSWER: Harbour Mill")],
            "Harbour Mill",
            "final_answer_marker",
        ),
        ([ChatMessageAssistant(content="final answer:  7\n(more)")], "7", "final_answer_marker"),
        (
            [ChatMessageAssistant(content="FINAL ANSWER: a"), ChatMessageAssistant(content="")],
            "a",
            "final_answer_marker",
        ),
        ([ChatMessageAssistant(content="just 12")], "just 12", "last_message"),
        # the text beside a tool call says what the model does next: no answer
        (
            [ChatMessageAssistant(content="It is 12."), _bash("echo 12", "I'll check it.")],
            "It is 12.",
            "last_message",
        ),
        ([_bash("ls", "I'll look around.")], "", "none"),
        (
            [_bash("echo done", "FINAL ANSWER: 12")],
            "12",
            "final_answer_marker",
        ),
        ([ChatMessageUser(content="q")], "", "none"),
    ],
)
def test_final_answer(messages: list[ChatMessage], answer: str, source: str) -> None:
    assert final_answer(_state(*messages)) == (answer, source)


def test_scorer_records_where_the_answer_came_from() -> None:
    state = _state(ChatMessageAssistant(content="FINAL ANSWER: 12,500"))
    score = asyncio.run(gaia_scorer()(state, Target("12500")))
    assert score is not None
    assert (score.value, score.answer) == (CORRECT, "12,500")
    assert score.metadata == {"answer_source": "final_answer_marker"}


def test_contamination_is_recorded_and_does_not_change_the_score() -> None:
    url = "https://huggingface.co/datasets/gaia-benchmark/GAIA/resolve/main/2023/validation/metadata.jsonl"
    state = _state(
        ChatMessageAssistant(
            content="",
            tool_calls=[ToolCall(id="1", function="bash", arguments={"command": f"curl {url}"})],
        ),
        ChatMessageAssistant(content="FINAL ANSWER: 3"),
    )
    score = asyncio.run(gaia_scorer()(state, Target("3")))
    assert score is not None and score.value == CORRECT  # a warning, not a penalty
    assert score.metadata is not None
    assert score.metadata["contamination"] == [
        {
            "kind": "answer_source",
            "tool": "bash",
            "message": 0,
            "where": "call",
            "url": url,
            "source": "GAIA on Hugging Face",
        }
    ]
    clean = asyncio.run(
        gaia_scorer()(_state(ChatMessageAssistant(content="FINAL ANSWER: 3")), Target("3"))
    )
    assert clean is not None and clean.metadata == {"answer_source": "final_answer_marker"}


def test_a_missing_blocklist_is_one_line() -> None:
    from inspect_gaia.errors import GaiaParameterError

    with pytest.raises(GaiaParameterError, match="blocklist /no/such is not a file"):
        gaia_scorer(blocklist="/no/such")


def test_reacts_submission_is_scored_when_the_model_writes_beside_its_call(
    scripted: Play, tmp_path: Path
) -> None:
    """inspect's ``react`` drops its submit call from the messages and appends the answer to the
    text the model wrote beside it: the scorer reads the submission from the transcript."""
    scripted([Entry("lagoon", [{"submit": "Quillfeather Lagoon"}])])  # with prose, by default
    task = Task(
        dataset=[
            Sample(input="Which lagoon?", target="Quillfeather Lagoon", metadata={"level": 1})
        ],
        solver=react(),
        scorer=gaia_scorer(),
    )
    (sample,) = eval_task(task, tmp_path).samples or []
    assert not any(isinstance(m, ChatMessageTool) for m in sample.messages), "react dropped it"
    assert sample.output.completion.startswith("Thought: I have the answer")
    score = (sample.scores or {})["gaia_scorer"]
    assert (score.value, score.answer) == (CORRECT, "Quillfeather Lagoon")
    assert (score.metadata or {})["answer_source"] == "submit"
