"""Transcripts for the detection's tests: an invented question, tool calls and what they returned."""

from __future__ import annotations

from typing import Any

from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageTool
from inspect_ai.solver import TaskState
from inspect_ai.tool import ToolCall

from inspect_gaia.answer_sources.detect import contamination
from inspect_gaia.answer_sources.sources import load_answer_sources
from inspect_gaia.egress.urlrules import REFUSAL, match_url
from inspect_gaia.questions.dataset import DEFAULT_INPUT_PROMPT

TASK_ID = "0c5b0e3e-5e8f-4f5b-9a47-6f1e4c2b7d10"
QUESTION = (
    "The lighthouse keeper of the invented island of Varrowmere logged the number of passing "
    "herring boats each dawn during March 1911. How many boats did he log on the 14th?"
)
ANSWER = "37"
SOURCES = load_answer_sources()


def prompt(question: str = QUESTION, file: str = "") -> str:
    """The sample's input, as the task writes it."""
    return DEFAULT_INPUT_PROMPT.format(file=file, question=question)


def transcript(
    *messages: ChatMessage, file_name: str = "", question: str = QUESTION, task_id: str = TASK_ID
) -> TaskState:
    """A sample's final state with these messages."""
    return TaskState(
        model="scripted/x",  # type: ignore[arg-type]
        sample_id=task_id,
        epoch=1,
        input=prompt(question),
        messages=list(messages),
        metadata={"level": 1, "file_name": file_name},
    )


def exchange(command: str, output: str, n: int = 1, tool: str = "bash") -> list[ChatMessage]:
    """A tool call and its result (``bash``'s ``command``, ``view_file``'s ``path``, else ``code``)."""
    key = {"bash": "command", "view_file": "path"}.get(tool, "code")
    return [
        ChatMessageAssistant(
            content="", tool_calls=[ToolCall(id=f"c{n}", function=tool, arguments={key: command})]
        ),
        ChatMessageTool(content=output, function=tool, tool_call_id=f"c{n}"),
    ]


def exchanges(*pairs: tuple[str, str]) -> list[ChatMessage]:
    """Bash calls and their results, one after the other."""
    return [m for n, (command, output) in enumerate(pairs, 1) for m in exchange(command, output, n)]


def detect(
    *messages: ChatMessage, attachment: bytes | None = None, **state: Any
) -> list[dict[str, Any]]:
    """The flags of a transcript of the invented question, graded against ``ANSWER``.

    ``attachment``: the attachment's bytes as the host knows them (``None``: unknown).
    """
    return contamination(transcript(*messages, **state), ANSWER, SOURCES, attachment=attachment)


def kinds(flags: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """``(kind, where)`` of each flag."""
    return [(f["kind"], f["where"]) for f in flags]


def refusal(url: str) -> str:
    """What the egress proxy answers a request to a listed ``url`` (``egress/addon.py``)."""
    rule = match_url(SOURCES.rules, url)
    assert rule is not None, url
    return REFUSAL.format(url=url, source=rule.source, rule=rule.pattern) + "\n"
