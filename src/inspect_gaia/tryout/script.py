"""The tryout's model: a script that answers the invented questions by running commands.

It is inspect's ``mockllm`` provider given a function (``custom_outputs``): no endpoint, no key,
no package beyond inspect_ai, nothing on the network. Each reply is read off the conversation it
is sent, as a model would: the question picks the steps (``STEPS``, by a phrase it holds), the
number of the agent's turns so far picks the step, an attachment's path is read from the prompt,
and the answer submitted is what the command printed in the sandbox. So a right answer needs the
sandbox, the attachment's copy and the command's output to work; the script itself never fails.

Every reply carries its token usage: without one, ``mockllm`` counts tokens with ``tiktoken``,
which downloads its encoding on first use (no network: a hang, then an error).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageTool,
    ChatMessageUser,
    GenerateConfig,
    Model,
    ModelOutput,
    ModelUsage,
    get_model,
)
from inspect_ai.tool import ToolChoice, ToolInfo

from ..defaults import SUBMIT_TOOL

MODEL = "mockllm/inspect-gaia-tryout-script"
"""The model a tryout's log names: inspect's mock provider, under a name that says what it is."""
_USAGE = ModelUsage(input_tokens=100, output_tokens=20, total_tokens=120)
_ATTACHMENT = re.compile(r"/shared_files/[\w.-]+\w")


@dataclass(frozen=True)
class Steps:
    """What the script does for a question holding ``phrase``: one command, then submit."""

    phrase: str
    command: str
    """The bash command; ``{file}`` is the attachment's path as the prompt gives it."""
    saying: str
    """The text beside the command's call, as models write beside their tool calls."""


STEPS = (
    Steps("keeper's log", "wc -l < {file}", "One entry per line: counting the file's lines."),
    Steps(
        "first lit",
        "tail -n +2 {file} | sort -t, -k2 -n | head -n 1 | cut -d, -f1",
        "Sorting the lighthouses by the year they were first lit.",
    ),
    Steps(
        "word game",
        "python3 -c \"print(sum(ord(c) - 96 for c in 'sandbox'))\"",
        "Adding up the letters' places in the alphabet.",
    ),
)


def script_model() -> Model:
    """The tryout's scripted model, as inspect runs any other."""
    return get_model(MODEL, custom_outputs=reply)


def reply(
    messages: list[ChatMessage], tools: list[ToolInfo], choice: ToolChoice, config: GenerateConfig
) -> ModelOutput:
    """The script's next turn in the conversation ``messages``: run the command, then submit."""
    prompt = next(m.text for m in messages if isinstance(m, ChatMessageUser))
    steps = next((s for s in STEPS if s.phrase in prompt), None)
    turns = sum(isinstance(m, ChatMessageAssistant) for m in messages)
    if steps is None:  # not a tryout question: say so, and stop
        return _output(ModelOutput.from_content(MODEL, "This script only knows the tryout."))
    if turns == 0:
        attachment = _ATTACHMENT.search(prompt)
        command = steps.command.format(file=attachment.group(0) if attachment else "")
        return _call(tools, "bash", command, steps.saying)
    results = [m for m in messages if isinstance(m, ChatMessageTool)]
    answer = results[-1].text.strip() if results else ""
    return _call(tools, SUBMIT_TOOL, answer, f"The command printed {answer!r}.")


def _call(tools: list[ToolInfo], name: str, value: str, saying: str) -> ModelOutput:
    """A call of tool ``name`` with ``value`` as its one argument, named as the tool names it."""
    info = next(tool for tool in tools if tool.name == name)
    (argument,) = info.parameters.required or list(info.parameters.properties)
    return _output(ModelOutput.for_tool_call(MODEL, name, {argument: value}, content=saying))


def _output(output: ModelOutput) -> ModelOutput:
    output.usage = _USAGE
    return output
