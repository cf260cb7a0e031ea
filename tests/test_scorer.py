from __future__ import annotations

import asyncio

import pytest
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
from inspect_gaia.scorer import contamination, final_answer


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


def _bash(command: str) -> ChatMessageAssistant:
    return ChatMessageAssistant(
        content="", tool_calls=[ToolCall(id="1", function="bash", arguments={"command": command})]
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


def test_contamination_warning() -> None:
    state = _state(
        ChatMessageAssistant(
            content="",
            tool_calls=[
                ToolCall(
                    id="1",
                    function="bash",
                    arguments={
                        "command": "curl https://huggingface.co/datasets/gaia-benchmark/GAIA/resolve/main/2023/validation/metadata.jsonl"
                    },
                ),
                ToolCall(id="2", function="bash", arguments={"command": "grep -r S /data"}),
            ],
        ),
        ChatMessageAssistant(content="FINAL ANSWER: 3"),
    )
    score = asyncio.run(gaia_scorer()(state, Target("3")))
    assert score is not None and score.value == CORRECT  # a warning, not a penalty
    assert score.metadata is not None
    assert score.metadata["contamination"] == ["gaia-benchmark", "datasets/gaia", "metadata.jsonl"]
    clean = asyncio.run(
        gaia_scorer()(_state(ChatMessageAssistant(content="FINAL ANSWER: 3")), Target("3"))
    )
    assert clean is not None and clean.metadata == {"answer_source": "final_answer_marker"}


def test_contamination_flags_the_task_id() -> None:
    call = ToolCall(
        id="1", function="bash", arguments={"command": "find / -name '*0C5B0E3E-TASK*'"}
    )
    assert contamination(_state(ChatMessageAssistant(content="", tool_calls=[call]))) == [
        "0c5b0e3e-task"
    ]
    submit = ToolCall(id="2", function="submit", arguments={"answer": "metadata.parquet"})
    assert contamination(_state(ChatMessageAssistant(content="", tool_calls=[submit]))) == []


def test_reading_the_own_attachment_is_not_contamination() -> None:
    """Issue #10 finding 8: attachments are named after the task id, so every read was flagged."""
    task_id = "9410e454-b071-52ff-ac24-dce9845bebd0"
    own = f"{task_id}.csv"
    read = _bash(
        f"python3 -c \"print(open('/shared_files/{own}').read())\"; wc -l /shared_files/{own}"
    )
    assert contamination(_state(read, sample_id=task_id, file_name=own)) == []
    # the task id anywhere else is still flagged, beside the attachment read or not
    search = _bash(f"wc -l /shared_files/{own}; curl 'https://example.org/?q={task_id}'")
    assert contamination(_state(search, sample_id=task_id, file_name=own)) == [task_id]
    # and so are the dataset's metadata files, even next to the own attachment
    peek = _bash(f"ls /shared_files/{own} /shared_files/metadata.parquet")
    assert contamination(_state(peek, sample_id=task_id, file_name=own)) == ["metadata.parquet"]
