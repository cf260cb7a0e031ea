"""Other agents on GAIA (``-T agent=``): Claude Code, Codex CLI, mini-swe-agent, from inspect_swe.

Each runs inside the sample's own sandbox, as its vendor ships it: the CLI from the agents image
(``images/agents``; inspect_swe's ``version="sandbox"``, so nothing is downloaded when a sample
runs), its model calls carried by inspect's ``sandbox_agent_bridge`` to the run's ``--model``
(the bridge's proxy listens on the sandbox's localhost, which the egress proxy's ``NO_PROXY``
leaves direct; nothing of the model's traffic leaves the sandbox but through inspect).

What each gets is what the default agent gets: GAIA's prompt (the question, its answer rules and the
attachment's path, unchanged), the sample's limits (inspect's message, token and time limits apply
to the bridged conversation as to any other), the command timeout where the CLI has one, and the
same way to answer. The answer is ``FINAL ANSWER: <answer>`` in the agent's last message (the GAIA
paper's convention, which the scorer already reads: ``scoring/scorer.final_answer``), not a bridged
``submit`` tool: every CLI ends with a message of its own, while a bridged tool is an MCP server
each CLI would have to be configured for and might decline to call.

The vendors' server-side tools are off: Claude Code's ``WebSearch`` and ``WebFetch`` (the fetch
runs in the CLI but asks Anthropic's API about each domain first), Codex's hosted ``web_search``,
and the bridge's own grants (hosted search, code execution, remote MCP) stay withheld as inspect
defaults them. An agent's only way to the web is its shell, inside the sandbox, behind the run's
network and, with ``-T block_answer_sources=true``, its proxy: flagged like any other tool's reads.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..defaults import DEFAULT_AGENT, DEFAULT_COMMAND_TIMEOUT
from ..errors import GaiaParameterError

if TYPE_CHECKING:
    from inspect_ai.agent import Agent
    from inspect_ai.solver import Solver

    from ..options import AgentOptions

ANSWER_RULES = """\
You are answering a question from the GAIA benchmark. Use the shell in this machine to find the \
answer: run commands, read files, write and run scripts. A file the question names is at the path \
it gives.

When you have the answer, end your last message with a line of the form

FINAL ANSWER: <your answer>

following the answer rules of the task (a number, as few words as possible, or a comma separated \
list). That line is what is scored."""
"""Appended to each agent's own system prompt: how to answer so that the scorer reads it."""

MINI_EXIT = (
    "When you have the answer, write the FINAL ANSWER line in your message's text and, in the same "
    "message, issue the command `echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT` (alone) to finish."
)
"""mini-swe-agent ends on a command, not on a message without one (its own convention)."""


TIMED_SHELLS = ("claude_code",)
"""The agents whose shell takes ``-T command_timeout`` (Claude Code's ``BASH_*_TIMEOUT_MS``);
Codex times each call itself (``yield_time_ms``), mini-swe-agent from its own config."""


def check_agent_options(agent: AgentOptions, multimodal: bool) -> None:
    """Another agent brings its own tools: the default agent's options are refused with it.

    ``web_search`` is refused by name: it is the model provider's hosted search, which the other
    agents' vendors also offer and which never passes the sandbox's network or proxy.

    Raises:
        GaiaParameterError: An option of the default agent was given with another agent.
    """
    if agent.name == DEFAULT_AGENT:
        return
    asked = [name for name in agent.tool_options() if getattr(agent, name)]
    for name in ["multimodal"] if multimodal else asked:
        hosted = " (hosted search stays off for every agent)" if name == "web_search" else ""
        raise GaiaParameterError(
            f"-T {name} is a tool of the default agent; agent={agent.name} brings its own "
            f"(a shell in the sandbox){hosted}",
            fix=f"drop -T {name}, or drop -T agent",
        )
    if agent.max_attempts > 1:
        raise GaiaParameterError(
            f"max_attempts counts the default agent's submissions; agent={agent.name} answers "
            "once, in its last message",
            fix="drop -T max_attempts, or drop -T agent",
        )
    if agent.command_timeout != DEFAULT_COMMAND_TIMEOUT and agent.name not in TIMED_SHELLS:
        raise GaiaParameterError(
            f"-T command_timeout cannot be set for agent={agent.name}, whose shell times its "
            "commands itself (docs/agents.md)",
            fix="drop -T command_timeout, or run agent=claude_code or the default agent",
        )


CLAUDE_IDENTITY = "claude-sonnet-4-5"
"""The model Claude Code is told it runs on when the run's model is not a Claude: 2.1.332 refuses
any other model id (``unrecognized_model``) before its first request. The identity only chooses
Claude Code's self-description; every request still goes through the bridge to ``--model``."""


def claude_identity(served: str) -> str | None:
    """The identity to present for the served model's name: ``None`` keeps a Claude's own."""
    return None if served.startswith("claude-") else CLAUDE_IDENTITY


def swe_agent(name: str, *, command_timeout: int, served: str = "") -> Agent:
    """inspect_swe's agent ``name`` with GAIA's answer rules, the image's CLI, no hosted tools.

    Args:
        name: The agent (one of ``image_layout.AGENT_CLIS``).
        command_timeout: Seconds one shell command may run, where the agent lets it be set.
        served: The name of the model the run serves (``get_model().name``).
    """
    if name == "claude_code":
        from inspect_swe import claude_code

        timeout_ms = str(command_timeout * 1000)
        return claude_code(
            system_prompt=ANSWER_RULES,
            disallowed_tools=["WebSearch", "WebFetch"],
            version="sandbox",
            model_config=claude_identity(served),
            # its Bash tool's timeout: the default and the most the model may ask for
            env={"BASH_DEFAULT_TIMEOUT_MS": timeout_ms, "BASH_MAX_TIMEOUT_MS": timeout_ms},
        )
    if name == "codex_cli":
        from inspect_swe import codex_cli

        return codex_cli(system_prompt=ANSWER_RULES, web_search="disabled", version="sandbox")
    if name == "mini_swe_agent":
        from inspect_swe import mini_swe_agent

        return mini_swe_agent(
            system_prompt=f"{ANSWER_RULES}\n\n{MINI_EXIT}",
            version="sandbox",
            # litellm's name for the bridge's OpenAI chat-completions endpoint, whatever the
            # eval's provider (inspect_swe names it after the provider: `openai-api/inspect`
            # is no provider litellm knows)
            # and no price for that name: mini stops on an unknown cost unless told not to
            env={"MSWEA_MODEL_NAME": "openai/inspect", "MSWEA_COST_TRACKING": "ignore_errors"},
        )
    raise ValueError(f"no such agent: {name}")


def swe_agent_solver(name: str, *, command_timeout: int) -> Solver:
    """The agent as the task's solver: a sandbox that did not start ends the sample first."""
    from inspect_ai.agent import as_solver
    from inspect_ai.model import get_model
    from inspect_ai.solver import Generate, TaskState, chain, solver

    from ..sandboxes.faults import require_started

    @solver(name=f"gaia_{name}")
    def run_agent() -> Solver:
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            # built per sample: the served model is known only once the eval runs
            agent = swe_agent(name, command_timeout=command_timeout, served=get_model().name)
            return await as_solver(agent)(state, generate)

        return solve

    return chain(require_started(), run_agent())
