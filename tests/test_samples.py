"""One sample of a log as the readers' record: its trace cut, part by part."""

from __future__ import annotations

from inspect_ai.log import EvalSample
from inspect_ai.model import ChatMessageAssistant, ChatMessageTool
from inspect_ai.tool import ToolCall

from inspect_gaia.logs.samples import TRACE_PART, _trace


def test_each_part_of_a_trace_is_cut_an_assistant_s_text_too() -> None:
    sample = EvalSample(
        id="t1",
        epoch=1,
        input="q",
        target="a",
        messages=[
            ChatMessageAssistant(
                content="think " * 200_000,
                tool_calls=[ToolCall(id="c", function="bash", arguments={"command": "x" * 10**6})],
            ),
            ChatMessageTool(content="out " * 200_000, function="bash", tool_call_id="c"),
        ],
    )
    lines = _trace(sample).split("\n")
    assert len(lines) == 3 and all(len(line) <= TRACE_PART + 20 for line in lines)
    assert lines[0].startswith("think think") and lines[1].startswith('[bash] {"command": "xxx')
