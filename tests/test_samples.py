"""One sample of a log as the readers' record: its trace cut, part by part and in all."""

from __future__ import annotations

from inspect_ai.log import EvalSample
from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageTool
from inspect_ai.tool import ToolCall

from inspect_gaia.logs.samples import TRACE_PART, TRACE_TOTAL, _trace


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


def test_a_trace_is_cut_in_all_and_says_how_many_parts_it_left_out() -> None:
    outputs: list[ChatMessage] = [
        ChatMessageTool(content=f"{n} " * 1000, function="bash", tool_call_id="c")
        for n in range(200)
    ]
    trace = _trace(EvalSample(id="t", epoch=1, input="q", target="a", messages=outputs))
    assert TRACE_TOTAL - 2500 < len(trace) <= TRACE_TOTAL + 100
    kept = trace.count("[bash output]")
    assert 0 < kept < 200 and trace.startswith("[bash output] 0 0 ")
    assert trace.endswith(f"[… {200 - kept} more part(s) of the trace left out]")
