"""GAIA scoring: the inspect_ai scorer around the official GAIA rules.

The rules themselves are in ``_official_scorer`` (a port of the leaderboard's scorer, kept diffable
against upstream). Here: which answer is scored (``final_answer``), what the transcript says about
how the sample ended and what it touched (``how_it_ended``, ``contamination``), and the metrics,
overall and per GAIA level.
"""

from __future__ import annotations

import re

from inspect_ai.model import ChatMessageAssistant, ChatMessageTool
from inspect_ai.scorer import (
    CORRECT,
    INCORRECT,
    NOANSWER,
    Score,
    Scorer,
    Target,
    accuracy,
    grouped,
    scorer,
    stderr,
)
from inspect_ai.solver import TaskState

from ._faults import not_started
from ._official_scorer import question_scorer

__all__ = ["final_answer", "gaia_scorer", "question_scorer"]

TEST_SPLIT_ANSWER = "?"
"""What GAIA's test split holds in ``Final answer``: the real answers are private."""


SUBMIT_TOOL = "submit"
_FINAL_ANSWER = re.compile(r"FINAL ANSWER\s*:", re.IGNORECASE)


def final_answer(state: TaskState) -> tuple[str, str]:
    """The answer to score, and where it came from.

    ``submit``: the agent's last submission. Without one (the agent stopped talking, or a limit
    ended the sample): the last assistant message with text, from after its last ``FINAL ANSWER:``
    marker when it has one (the GAIA paper's convention; ``final_answer_marker``), else whole
    (``last_message``). ``none`` when the agent never said anything.
    """
    submissions = [
        m for m in state.messages if isinstance(m, ChatMessageTool) and m.function == SUBMIT_TOOL
    ]
    if submissions:
        return submissions[-1].text, "submit"
    last = next(
        (
            m.text.strip()
            for m in reversed(state.messages)
            if isinstance(m, ChatMessageAssistant) and m.text.strip()
        ),
        "",
    )
    marked = _FINAL_ANSWER.split(last)
    if len(marked) > 1:
        after = [line.strip() for line in marked[-1].strip().splitlines() if line.strip()]
        return (after[0] if after else ""), "final_answer_marker"
    return last, ("last_message" if last else "none")


_CONTAMINATION = (
    "gaia-benchmark",
    "datasets/gaia",
    "metadata.jsonl",
    "metadata.parquet",
    "metadata.level",
    "huggingface.co/spaces/gaia",
)


def contamination(state: TaskState) -> list[str]:
    """What the agent's tool calls touched that hints at looking up the answer key.

    The dataset's name or repository, its metadata files, or this sample's task id in a command
    (a URL, a path, a search). Attachments are named ``<task id>.<ext>``, so the sample's own
    attachment name is taken out of a command before the task id is looked for: reading one's own
    file is the point, not a leak. A hit does not change the score: it is a warning for a human.
    """
    own_file = str((state.metadata or {}).get("file_name") or "").lower()
    task_id = str(state.sample_id).lower()
    seen: list[str] = []
    for message in state.messages:
        if not isinstance(message, ChatMessageAssistant):
            continue
        for call in message.tool_calls or []:
            if call.function == SUBMIT_TOOL:
                continue
            text = str(call.arguments).lower()
            seen += [n for n in _CONTAMINATION if n in text and n not in seen]
            if own_file:
                text = text.replace(own_file, "")
            if task_id and task_id in text and task_id not in seen:
                seen.append(task_id)
    return seen


def how_it_ended() -> dict[str, str]:
    """``error`` and/or ``limit`` when the sample did not end on its own (from its transcript).

    Such a sample is still scored, and counts as wrong unless it had submitted a right answer.
    """
    from inspect_ai.event import ErrorEvent, SampleLimitEvent
    from inspect_ai.log import transcript

    ended: dict[str, str] = {}
    for event in transcript().events:
        if isinstance(event, ErrorEvent):
            ended["error"] = event.error.message
        elif isinstance(event, SampleLimitEvent):
            ended["limit"] = event.type
    return ended


@scorer(
    metrics=[
        accuracy(),
        stderr(),
        grouped(accuracy(), "level", all=False, name_template="level{group_name}_accuracy"),
        grouped(stderr(), "level", all=False, name_template="level{group_name}_stderr"),
    ]
)
def gaia_scorer() -> Scorer:
    """Score the agent's final answer with the official GAIA rules (``question_scorer``).

    The answer is the submission, or else the last assistant message (after ``FINAL ANSWER:``
    when present): see ``final_answer``; ``Score.metadata["answer_source"]`` says which.
    Metrics: accuracy and stderr overall and per GAIA level. On the test split, whose answers are
    private, the answer is recorded with ``NOANSWER`` and not graded.
    """

    async def score(state: TaskState, target: Target) -> Score:
        answer, source = final_answer(state)
        metadata: dict[str, object] = {"answer_source": source}
        touched = contamination(state)
        if touched:
            metadata["contamination"] = touched
        metadata.update(how_it_ended())
        if not_started() is not None:
            metadata["sandbox"] = "not started"
        if target.text == TEST_SPLIT_ANSWER:
            return Score(
                value=NOANSWER,
                answer=answer,
                explanation="Not graded: GAIA's test-split answers are private "
                "(submit them to the GAIA leaderboard).",
                metadata=metadata,
            )
        correct, explanation = question_scorer(answer, target.text)
        return Score(
            value=CORRECT if correct else INCORRECT,
            answer=answer,
            explanation=explanation,
            metadata=metadata,
        )

    return score
