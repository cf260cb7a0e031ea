"""The GAIA agent: inspect_ai's ``basic_agent`` with ``bash`` and ``submit``, plus opt-in tools.

Opt-in tools: inspect's ``python`` (runs in the sandbox), inspect's ``web_search`` (the model
provider's native search where it has one), MCP servers run on the host over stdio: ``fetch``
(``mcp-server-fetch``, the example evalscope's GAIA docs use) or any command line, and MCP servers
run in the sandbox (``web``): a browser and the same ``fetch``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, cast

from inspect_ai.log import transcript
from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageUser
from inspect_ai.solver import Generate, Solver, TaskState, basic_agent, solver, system_message
from inspect_ai.tool import Tool, bash
from inspect_ai.tool import python as python_tool
from inspect_ai.tool import web_search as web_search_tool

from .._compat import DEFAULT_SYSTEM_MESSAGE, guard_task_state
from ..defaults import DEFAULT_AGENT, DEFAULT_COMMAND_TIMEOUT, DEFAULT_MAX_ATTEMPTS, SUBMIT_TOOL
from ..options import AgentOptions
from ..questions.media import view_file as view_file_tool
from ..sandboxes.faults import ending_on_sandbox_loss, require_started
from .swe import swe_agent_solver


def gaia_tools(options: AgentOptions) -> list[Tool]:
    """The tools offered besides ``submit``: ``bash`` always, the others when asked for.

    The tools that run in the sandbox end the sample when it is lost (``ending_on_sandbox_loss``).
    Their names, in the same order, are ``options.tools``.
    """
    timeout = options.command_timeout
    tools: list[Any] = [ending_on_sandbox_loss(bash(timeout=timeout))]
    if options.python:
        tools.append(ending_on_sandbox_loss(python_tool(timeout=timeout)))
    if options.web_search:
        tools.append(web_search_tool())
    if options.view_file:
        tools.append(ending_on_sandbox_loss(view_file_tool()))
    if options.mcp_servers:  # the MCP client is an optional extra, imported only when used
        from inspect_ai.tool import mcp_server_stdio, mcp_tools

        tools += [
            mcp_tools(mcp_server_stdio(command=command[0], args=list(command[1:])))
            for command in options.mcp_servers
        ]
    if options.browser:
        from ..web.browser import browser_tools

        tools += [ending_on_sandbox_loss(t) for t in browser_tools()]
    if options.web_reader:
        from ..web.reader import reader_tools

        tools += [ending_on_sandbox_loss(t) for t in reader_tools()]
    # basic_agent hands the list to use_tools, which also takes MCP tool sources.
    return cast(list[Tool], tools)


DEFAULT_MAX_IDLE_TURNS = 3
"""Consecutive model turns with neither a tool call nor any text that end a sample."""

FINAL_ANSWER = re.compile(r"FINAL ANSWER\s*:", re.IGNORECASE)
"""The GAIA prompt's answer marker: the scorer reads the answer after it, and a plain-text reply
that has it ends the sample (``_answered_in_text``)."""


def _answered_in_text(messages: Sequence[ChatMessage]) -> bool:
    """Whether the latest assistant turn is a final answer in plain text (no tool call).

    basic_agent answers such a turn with "please proceed" and asks again, up to the message
    limit: a model that will not call ``submit`` repeats itself 50 times, at the cost of the whole
    conversation each time, for the answer the scorer already reads from the first reply.
    """
    last = next((m for m in reversed(messages) if isinstance(m, ChatMessageAssistant)), None)
    return last is not None and not last.tool_calls and bool(FINAL_ANSWER.search(last.text))


def _idle_turns(messages: Sequence[ChatMessage]) -> int:
    """How many of the latest assistant turns were empty (no tool call, no text), in a row."""
    count = 0
    for message in reversed(messages):
        if not isinstance(message, ChatMessageAssistant):
            continue
        if message.tool_calls or message.text.strip():
            break
        count += 1
    return count


class _IdleGuardedState(TaskState):
    """A TaskState that also reports completion on a plain-text final answer, or when idle.

    basic_agent answers a turn without a tool call with "please proceed" and asks again until the
    message limit; its loop runs ``while not state.completed``, so this is where such a loop can
    end (the state is re-classed by ``_compat.guard_task_state``, which records that reliance):
    after a reply with ``FINAL ANSWER:`` and no tool call, or ``max_idle_turns`` empty turns.
    """

    max_idle_turns: int = DEFAULT_MAX_IDLE_TURNS

    @property
    def completed(self) -> bool:
        if super().completed:
            return True
        idle = _idle_turns(self.messages)
        if _answered_in_text(self.messages):
            reason = "a final answer in plain text (FINAL ANSWER:, no tool call)"
        elif idle >= self.max_idle_turns:
            reason = f"{idle} model turns in a row with no tool call and no text"
        else:
            return False
        # basic_agent appended its "please proceed" before reading this: never sent, so dropped
        if self.messages and isinstance(self.messages[-1], ChatMessageUser):
            self.messages.pop()
        transcript().info(f"GAIA agent stopped: {reason}", source="inspect_gaia")
        self.completed = True
        return True

    @completed.setter
    def completed(self, completed: bool) -> None:
        TaskState.completed.fset(self, completed)  # type: ignore[attr-defined]


@solver
def idle_guard(max_idle_turns: int = DEFAULT_MAX_IDLE_TURNS) -> Solver:
    """End the agent loop on a plain-text final answer, or after ``max_idle_turns`` empty turns.

    Either way the transcript says why (``GAIA agent stopped: ...``).
    """

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        guarded = guard_task_state(state, _IdleGuardedState)
        guarded.max_idle_turns = max_idle_turns
        return guarded

    return solve


def gaia_agent(
    *,
    command_timeout: int = DEFAULT_COMMAND_TIMEOUT,
    max_attempts: int = DEFAULT_MAX_ATTEMPTS,
    python: bool = False,
    web_search: bool = False,
    view_file: bool = False,
    mcp_servers: Sequence[Sequence[str]] = (),
    browser: bool = False,
    web_reader: bool = False,
) -> Solver:
    """``basic_agent`` with ``bash`` (and any opt-in tools) and its ``submit`` tool.

    The message limit is the Task's (so ``--message-limit`` overrides it). A sample that hits a
    limit is scored on its submission, or else on its last model output. A reply with ``FINAL
    ANSWER:`` and no tool call ends the sample, as three empty replies in a row do (``idle_guard``).
    A sample whose sandbox did not start ends before the first model call (``require_started``).

    Args:
        command_timeout: Seconds one bash (or python) command may run.
        max_attempts: Submissions allowed per sample; above 1 the agent is told when one is wrong.
        python: Also offer inspect's ``python`` tool (runs in the sandbox).
        web_search: Also offer inspect's ``web_search`` tool.
        view_file: Also offer ``view_file`` (see a sandbox file as an image, audio, video or PDF).
        mcp_servers: Command lines of host-side stdio MCP servers whose tools to offer.
        browser: Also offer the browser's tools (``web.browser``), run in the sandbox.
        web_reader: Also offer ``fetch`` (``web.reader``), run in the sandbox.
    """
    return build_agent(
        AgentOptions(
            command_timeout=command_timeout,
            max_attempts=max_attempts,
            python=python,
            web_search=web_search,
            view_file=view_file,
            mcp_servers=tuple(tuple(command) for command in mcp_servers),
            browser=browser,
            web_reader=web_reader,
        )
    )


def build_agent(options: AgentOptions) -> Solver:
    """``gaia_agent`` for a parsed record (``task.gaia_task`` hands it ``params.agent``).

    With ``-T agent`` naming another agent, that agent's CLI in the sandbox (``swe``).
    """
    if options.name != DEFAULT_AGENT:
        return swe_agent_solver(options.name, command_timeout=options.command_timeout)
    return basic_agent(
        init=[
            system_message(DEFAULT_SYSTEM_MESSAGE, submit=SUBMIT_TOOL),
            require_started(),
            idle_guard(),
        ],
        tools=gaia_tools(options),
        max_attempts=options.max_attempts,
    )
