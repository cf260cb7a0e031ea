"""The tests' scripted model talks like real models: each behaviour through inspect's own provider.

Every case is asked through inspect's ``openai-api`` provider (the HTTP path a vLLM or OpenAI
endpoint takes), whole and streamed (``-M stream=true``), so that what the suite's agents meet is
what inspect makes of it.
"""

from __future__ import annotations

import http.client
import json
import os
from typing import Any
from urllib.parse import urlsplit

import anyio
import pytest
from inspect_ai.model import (
    ChatMessage,
    ChatMessageTool,
    ChatMessageUser,
    ContentReasoning,
    ContentText,
    GenerateConfig,
    ModelOutput,
    get_model,
)
from inspect_ai.tool import ToolInfo, ToolParam, ToolParams

from support.scripted_model import PROSE, USAGE, Entry
from tests.helpers import Play

MODEL = "openai-api/scripted/double"
BASH = ToolInfo(
    name="bash",
    description="Run a shell command.",
    parameters=ToolParams(properties={"cmd": ToolParam(type="string")}, required=["cmd"]),
)
SUBMIT = ToolInfo(
    name="submit",
    description="Submit an answer.",
    parameters=ToolParams(properties={"answer": ToolParam(type="string")}, required=["answer"]),
)


@pytest.fixture(params=[False, True], ids=["whole", "streamed"])
def stream(request: pytest.FixtureRequest) -> bool:
    """Each behaviour whole, and streamed (inspect's ``-M stream=true``)."""
    return bool(request.param)


def ask(stream: bool, messages: list[ChatMessage] | str) -> ModelOutput:
    """One generate through inspect's ``openai-api`` provider, with the bash and submit tools."""
    model = get_model(MODEL, stream=stream, config=GenerateConfig(max_retries=3))
    history: list[ChatMessage] = (
        [ChatMessageUser(content=messages)] if isinstance(messages, str) else messages
    )

    async def generate() -> ModelOutput:
        return await model.generate(history, tools=[BASH, SUBMIT])

    return anyio.run(generate)


def calls(output: ModelOutput) -> list[tuple[str, dict[str, Any]]]:
    return [(c.function, c.arguments) for c in output.message.tool_calls or []]


def test_prose_beside_every_tool_call_is_the_default(scripted: Play, stream: bool) -> None:
    model = scripted([Entry("lagoon", [{"submit": "Quillfeather Lagoon"}])])
    output = ask(stream, "Which lagoon?")
    assert output.message.text == PROSE["submit"]
    assert calls(output) == [("submit", {"answer": "Quillfeather Lagoon"})]
    assert model.requests[-1].get("stream", False) is stream


def test_a_quiet_model_is_asked_for_by_name(scripted: Play, stream: bool) -> None:
    scripted([Entry("lagoon", [{"bash": "ls"}])], prose=False)
    output = ask(stream, "Which lagoon?")
    assert output.message.text == "" and calls(output) == [("bash", {"cmd": "ls"})]
    # per entry, and per step, a text of one's own
    scripted([Entry("lagoon", [{"bash": "ls"}, {"bash": "pwd", "prose": "Where am I?"}])])
    first = ask(stream, "Which lagoon?")
    history: list[ChatMessage] = [ChatMessageUser(content="Which lagoon?"), first.message]
    history.append(ChatMessageTool(content="a\n", tool_call_id=_call_id(first), function="bash"))
    assert ask(stream, history).message.text == "Where am I?"


def _call_id(output: ModelOutput) -> str:
    (call,) = output.message.tool_calls or []
    return call.id


def test_several_tool_calls_in_one_turn(scripted: Play, stream: bool) -> None:
    scripted([Entry("two", [{"calls": [{"bash": "ls /"}, {"bash": "ls /tmp"}, {"submit": "7"}]}])])
    output = ask(stream, "do two things")
    assert calls(output) == [
        ("bash", {"cmd": "ls /"}),
        ("bash", {"cmd": "ls /tmp"}),
        ("submit", {"answer": "7"}),
    ]
    assert len({c.id for c in output.message.tool_calls or []}) == 3
    assert output.message.text == PROSE["submit"]


def test_arguments_that_are_not_json_reach_inspect_as_a_parse_error(
    scripted: Play, stream: bool
) -> None:
    scripted([Entry("broken", [{"bash": "ls", "raw": '{"cmd": "ls'}])])
    (call,) = ask(stream, "broken arguments").message.tool_calls or []
    assert call.function == "bash" and call.parse_error is not None
    assert "Unterminated string" in call.parse_error


def test_a_turn_without_a_tool_call_mid_task(scripted: Play, stream: bool) -> None:
    scripted([Entry("steps", [{"bash": "ls"}, {"say": "Let me think."}, {"submit": "3"}])])
    first = ask(stream, "in steps")
    history: list[ChatMessage] = [ChatMessageUser(content="in steps"), first.message]
    history.append(ChatMessageTool(content="x\n", tool_call_id=_call_id(first), function="bash"))
    second = ask(stream, history)
    assert second.message.text == "Let me think." and not second.message.tool_calls
    assert second.stop_reason == "stop"
    history += [second.message, ChatMessageUser(content="Please proceed.")]
    assert calls(ask(stream, history)) == [("submit", {"answer": "3"})]


def test_a_refusal_and_a_content_filter(scripted: Play, stream: bool) -> None:
    scripted(
        [
            Entry("refuse", [{"refuse": "I can't help with that."}]),
            Entry("filter", [{"refuse": True}]),
        ]
    )
    refused = ask(stream, "please refuse")
    (part,) = [c for c in refused.message.content if isinstance(c, ContentText)]
    assert part.refusal and part.text == "I can't help with that."
    filtered = ask(stream, "please filter")
    assert filtered.stop_reason == "content_filter" and filtered.message.text == ""


def test_reasoning_content_is_read_as_reasoning(scripted: Play, stream: bool) -> None:
    scripted([Entry("think", [{"submit": "9", "reasoning": "Three squared."}])])
    output = ask(stream, "think first")
    reasoning = [c for c in output.message.content if isinstance(c, ContentReasoning)]
    assert [r.reasoning for r in reasoning] == ["Three squared."]
    assert calls(output) == [("submit", {"answer": "9"})]


def test_usage_present_or_absent(scripted: Play, stream: bool) -> None:
    scripted(
        [
            Entry("with usage", [{"say": "yes"}]),
            Entry("without usage", [{"say": "no", "usage": False}]),
        ]
    )
    counted = ask(stream, "with usage")
    assert counted.usage is not None and counted.usage.total_tokens == USAGE["total_tokens"]
    assert ask(stream, "without usage").usage is None


@pytest.mark.parametrize(
    ("stream", "errors"),
    [(False, [429]), (True, [429]), (False, [503, 500]), (True, [503, 500]), (False, ["drop"])],
    ids=["429-whole", "429-streamed", "5xx-whole", "5xx-streamed", "drop-whole"],
)
def test_failures_before_the_answer_are_retried(
    scripted: Play, stream: bool, errors: list[Any]
) -> None:
    """A 429 (with ``Retry-After``), 5xx, a connection dropped mid-reply: retried, then answered.

    The streamed drop, which inspect retries after its own backoff, is the slow test below.
    """
    model = scripted([Entry("flaky", [{"say": "answered", "errors": errors, "retry_after": 0}])])
    assert ask(stream, "a flaky endpoint").completion == "answered"
    assert len(model.requests) == len(errors) + 1


@pytest.mark.slow
def test_a_stream_dropped_midway_is_retried(scripted: Play) -> None:
    """inspect retries a stream cut after its first chunks with its own backoff (seconds)."""
    model = scripted([Entry("flaky", [{"say": "answered", "errors": ["drop"]}])])
    assert ask(True, "a flaky stream").completion == "answered"
    assert len(model.requests) == 2


def _raw(url: str, body: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
    """A request as any client sends it: status, headers, the body as it came."""
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=30)
    try:
        connection.request("POST", f"{parts.path}/chat/completions", json.dumps(body))
        response = connection.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        connection.close()


def test_a_429_carries_retry_after_and_a_stream_comes_in_pieces(scripted: Play) -> None:
    url = os.environ["SCRIPTED_BASE_URL"]
    question = {"role": "user", "content": "slow down"}
    scripted([Entry("slow down", [{"bash": "ls -la /", "errors": [429], "retry_after": 7}])])
    tools = [
        {
            "type": "function",
            "function": {"name": "bash", "parameters": BASH.parameters.model_dump()},
        }
    ]
    status, headers, _ = _raw(url, {"messages": [question], "tools": tools})
    assert status == 429 and headers["Retry-After"] == "7"
    body = {
        "messages": [question],
        "tools": tools,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    status, headers, data = _raw(url, body)
    assert status == 200 and headers["Transfer-Encoding"] == "chunked"
    events = [line.removeprefix("data: ") for line in data.decode().split("\n\n") if line]
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    fragments = [
        call["function"].get("arguments", "")
        for c in chunks
        for choice in c["choices"]
        for call in choice["delta"].get("tool_calls", [])
    ]
    assert len(fragments) > 2, "the arguments come in fragments, as a real server streams them"
    assert json.loads("".join(fragments)) == {"cmd": "ls -la /"}
    assert chunks[-1]["usage"] == USAGE and chunks[-1]["choices"] == []
    assert sum(1 for c in chunks for ch in c["choices"] if ch["delta"].get("content")) > 3
