"""GAIA scoring: the inspect_ai scorer around the official GAIA rules.

The rules themselves are in ``official`` (a port of the leaderboard's scorer, kept diffable
against upstream). Here: which answer is scored (``final_answer``), what the transcript says about
how the sample ended (``how_it_ended``), what it looked up (``answer_sources.detect``),
and the metrics, overall and per GAIA level.
"""

from __future__ import annotations

from inspect_ai.model import ChatMessageAssistant, ChatMessageTool, ContentText
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

from .._compat import sample_active
from ..agents.basic import FINAL_ANSWER
from ..answer_sources.detect import MAX_ATTACHMENT, contamination
from ..answer_sources.sources import load_answer_sources
from ..defaults import SUBMIT_TOOL
from ..sandboxes.faults import not_started
from .official import question_scorer

__all__ = ["contamination", "final_answer", "gaia_scorer", "question_scorer", "submitted"]

TEST_SPLIT_ANSWER = "?"
"""What GAIA's test split holds in ``Final answer``: the real answers are private."""


def final_answer(state: TaskState) -> tuple[str, str]:
    """The answer to score, and where it came from.

    ``submit``: the agent's last submission, in the messages (the default agent keeps its
    ``submit`` calls there) or else in the sample's transcript (``submitted``: inspect's ``react``
    drops its submit call from the messages and appends the answer to whatever text the model
    wrote beside the call, so the last message is no longer the answer). Without one (the agent
    stopped talking, or a limit ended the sample): the last assistant message with text, from
    after its ``FINAL ANSWER:`` marker when it has one (the GAIA paper's convention, beside a tool
    call too: an agent CLI may end on a command; ``final_answer_marker``), else the last message
    with text and no tool call, whole (``last_message``): the text beside a call ("I'll run a
    command to check") says what the model does next, and is no answer. ``none`` when the agent
    said nothing else.
    """
    submissions = [
        m for m in state.messages if isinstance(m, ChatMessageTool) and m.function == SUBMIT_TOOL
    ]
    if submissions:
        return submissions[-1].text, "submit"
    submission = submitted()
    if submission is not None:
        return submission, "submit"
    said = [m for m in state.messages if isinstance(m, ChatMessageAssistant) and m.text.strip()]
    marked = FINAL_ANSWER.split(said[-1].text.strip()) if said else []
    if len(marked) > 1:
        after = [line.strip() for line in marked[-1].strip().splitlines() if line.strip()]
        return (after[0] if after else ""), "final_answer_marker"
    # the text beside a tool call is the model saying what it does next, not an answer
    last = next((m.text.strip() for m in reversed(said) if not m.tool_calls), "")
    return last, ("last_message" if last else "none")


def submitted() -> str | None:
    """The result of the sample's last ``submit`` call that succeeded, from its transcript.

    inspect records every tool call as a ``ToolEvent``, whatever the agent later does with its
    messages; ``react`` (with ``AgentSubmit``'s default ``keep_in_messages=False``) removes the
    call and its result from them. A call that errored is not a submission (as ``react`` reads
    it), nor is a tool an agent CLI called through inspect's bridge (``metadata["bridge"]``).
    ``None``: no submission.
    """
    from inspect_ai.event import ToolEvent
    from inspect_ai.log import transcript

    for event in reversed(transcript().events):
        if (
            isinstance(event, ToolEvent)
            and event.function == SUBMIT_TOOL
            and event.error is None
            and not event.failed
            and "bridge" not in (event.metadata or {})
        ):
            return _result_text(event.result)
    return None


def _result_text(result: object) -> str:
    """A tool's result as text: a string as it is, content parts joined by their text."""
    if isinstance(result, str):
        return result
    if isinstance(result, ContentText):
        return result.text
    if isinstance(result, list):
        return "".join(part.text for part in result if isinstance(part, ContentText))
    return str(result)


def how_it_ended() -> dict[str, str]:
    """``error`` and/or ``limit`` when the sample did not end on its own (from its transcript).

    Such a sample is still scored on ``final_answer``: an errored one is wrong unless it had
    submitted a right answer; a limit-hit one can also be right on its last ``FINAL ANSWER:``.
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
def gaia_scorer(blocklist: str | None = None) -> Scorer:
    """Score the agent's final answer with the official GAIA rules (``question_scorer``).

    The answer is the submission, or else the last assistant message (after ``FINAL ANSWER:``
    when present): see ``final_answer``; ``Score.metadata["answer_source"]`` says which.
    Metrics: accuracy and stderr overall and per GAIA level. On the test split, whose answers are
    private, the answer is recorded with ``NOANSWER`` and not graded.

    ``Score.metadata["contamination"]`` lists the evidence that the sample looked its answer up
    (``answer_sources.detect``), never changing the score.

    Args:
        blocklist: A file of answer-source URL rules that extends the package's list.
    """
    sources = load_answer_sources(blocklist)

    async def score(state: TaskState, target: Target) -> Score:
        answer, source = final_answer(state)
        metadata: dict[str, object] = {"answer_source": source}
        graded = target.text != TEST_SPLIT_ANSWER
        flags = contamination(
            state, target.text, sources, graded=graded, attachment=own_attachment()
        )
        if flags:
            metadata["contamination"] = flags
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


def own_attachment() -> bytes | None:
    """The running sample's attachment as the host has it (the dataset's file), if it has one.

    The detection compares what a read of the attachment returned with this, not with what the
    sandbox holds now (the agent may have written over it). ``None`` when unknown.
    """
    active = sample_active()
    files = (active.sample.files or {}) if active is not None else {}
    for path in files.values():
        try:
            with open(path, "rb") as file:
                return file.read(MAX_ATTACHMENT)
        except (OSError, TypeError, ValueError):
            return None
    return None
