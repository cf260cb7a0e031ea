"""Other agents on GAIA (``-T agent=``): Claude Code, Codex CLI, Gemini CLI, mini-swe-agent.

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
Gemini CLI's ``google_web_search`` and ``web_fetch`` (excluded in the image's system settings;
inspect_swe's Gemini CLI grants the bridge's search unless told ``web_search=False``), and the
bridge's own grants (hosted search, code execution, remote MCP) stay withheld as inspect defaults
them. An agent's only way to the web is its shell, inside the sandbox, behind the run's network
and, with ``-T block_answer_sources=true``, its proxy: flagged like any other tool's reads. The
agents inspect_swe runs with the bridge's search always granted (``UNSEALABLE``) are refused.

mini-swe-agent runs on a GAIA configuration of its own (``mini_config``), not its SWE-bench one.
Each CLI is told a model name (``identity``): the run records it when it is not the model's own.
Two costs of inspect_swe and inspect on every sample are cut (``_compat``): Codex's models catalog
is never fetched from GitHub at run time (``codex_catalog_offline``), and the bridge looks for
the agent's requests as often as the sandbox allows, not every 2 s (``bridge_polling``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._compat import active_model, bridge_polling, codex_catalog_offline, codex_slug
from ..defaults import DEFAULT_AGENT, DEFAULT_COMMAND_TIMEOUT
from ..errors import GaiaParameterError
from ..image_layout import MINI_CONFIG
from .mini_config import mini_config

if TYPE_CHECKING:
    from inspect_ai.agent import Agent
    from inspect_ai.model import Model
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


TIMED_SHELLS = ("claude_code", "mini_swe_agent")
"""The agents whose shell takes ``-T command_timeout`` (Claude Code's ``BASH_*_TIMEOUT_MS``,
mini-swe-agent's GAIA configuration); Codex and Gemini CLI time each call themselves."""


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
            fix="drop -T command_timeout, or run the default agent or agent="
            + " or agent=".join(TIMED_SHELLS),
        )


INSPECT_SWE = "0.2.72"
"""The inspect_swe whose agents' bridges were read for ``UNSEALABLE`` (the ``[agents]`` pin)."""
UNSEALABLE = {
    name: f"inspect_swe {INSPECT_SWE} runs it with the bridge's web_search=True: the model "
    "provider's own search, which neither the sandbox's network nor the run's proxy sees"
    for name in ("opencode", "kimi_code", "antigravity")
}
"""Agents inspect_swe offers that GAIA refuses (``check_sealable``), and why."""


def check_sealable(agent: object) -> None:
    """Refuse, in one line before any sandbox, an agent whose web search cannot be switched off.

    Raises:
        GaiaParameterError: ``agent`` is one of ``UNSEALABLE``.
    """
    if isinstance(agent, str) and agent in UNSEALABLE:
        raise GaiaParameterError(
            f"-T agent={agent} cannot be sealed: {UNSEALABLE[agent]}",
            fix="use claude_code, codex_cli, gemini_cli or mini_swe_agent",
        )


CLAUDE_IDENTITY = "claude-sonnet-4-5"
"""The model Claude Code is told it runs on when the run's model is not a Claude: 2.1.332 refuses
any other model id (``unrecognized_model``) before its first request. The identity only chooses
Claude Code's self-description; every request still goes through the bridge to ``--model``."""
GEMINI_IDENTITY = "gemini-2.5-pro"
"""The model Gemini CLI is told it runs on (``--model``) when the run's model is not a Gemini:
inspect_swe's default, which also keeps Gemini CLI's router off; it chooses the CLI's prompt and
settings only, every request goes through the bridge to ``--model``."""


def identity(name: str, model: Model) -> str | None:
    """The model name agent ``name`` is told it runs on, when that is not ``model``'s own.

    Claude Code: ``CLAUDE_IDENTITY`` unless the model is a Claude; Gemini CLI: ``GEMINI_IDENTITY``
    unless it is a Gemini; Codex CLI: the slug inspect_swe aligns Codex's prompt and tools to
    (``_compat.codex_slug``: the model's name when Codex knows it); mini-swe-agent is told no
    name (litellm calls the bridge's endpoint ``openai/inspect``). ``None``: the model's own name,
    or none at all.
    """
    served = model.name
    told = {
        "claude_code": None if served.startswith("claude-") else CLAUDE_IDENTITY,
        "gemini_cli": None if served.startswith("gemini-") else GEMINI_IDENTITY,
        "codex_cli": codex_slug(model) if name == "codex_cli" else None,
    }.get(name)
    return None if told == served else told


def run_identity(name: str) -> str | None:
    """``identity`` for the run's model, as the task is created (``None`` outside an eval)."""
    model = active_model()
    return None if model is None or name == DEFAULT_AGENT else identity(name, model)


def swe_agent(name: str, *, command_timeout: int, model: Model) -> Agent:
    """inspect_swe's agent ``name`` with GAIA's answer rules, the image's CLI, no hosted tools.

    Args:
        name: The agent (one of ``image_layout.AGENT_CLIS``).
        command_timeout: Seconds one shell command may run, where the agent lets it be set.
        model: The run's model (``get_model()``): what the CLI is told it runs on follows it.
    """
    told = identity(name, model)
    bridge_polling()  # every turn: the host sees the agent's request within 0.2 s, not 2 s
    if name == "claude_code":
        from inspect_swe import claude_code

        timeout_ms = str(command_timeout * 1000)
        return claude_code(
            system_prompt=ANSWER_RULES,
            disallowed_tools=["WebSearch", "WebFetch"],
            version="sandbox",
            model_config=told,
            # its Bash tool's timeout: the default and the most the model may ask for
            env={"BASH_DEFAULT_TIMEOUT_MS": timeout_ms, "BASH_MAX_TIMEOUT_MS": timeout_ms},
        )
    if name == "codex_cli":
        from inspect_swe import codex_cli

        codex_catalog_offline()
        return codex_cli(
            system_prompt=ANSWER_RULES,
            web_search="disabled",
            version="sandbox",
            model_config=told or model.name,
        )
    if name == "gemini_cli":
        from inspect_swe import gemini_cli

        from ..images.agents import GEMINI_CLI_VERSION

        return gemini_cli(
            system_prompt=ANSWER_RULES,
            # the bridge withholds the Gemini API's search; its own web tools are excluded by
            # the image's system settings (images/agents.GEMINI_SYSTEM_SETTINGS)
            web_search=False,
            # the version the image holds: inspect_swe uses it as it finds it ("sandbox" would
            # ask GitHub for the latest release first)
            version=GEMINI_CLI_VERSION,
            gemini_model=told or model.name,
            # one Node.js process, not a second one started with a larger heap
            env={"GEMINI_CLI_NO_RELAUNCH": "true"},
        )
    if name == "mini_swe_agent":
        from inspect_swe import mini_swe_agent

        return mini_swe_agent(
            version="sandbox",
            # GAIA's configuration (agents/mini_config), written into the sandbox per sample;
            # litellm's name for the bridge's OpenAI chat-completions endpoint, whatever the
            # eval's provider (inspect_swe names it after the provider: `openai-api/inspect`
            # is no provider litellm knows)
            # and no price for that name: mini stops on an unknown cost unless told not to
            env={
                "MSWEA_MINI_CONFIG_PATH": MINI_CONFIG,
                "MSWEA_MODEL_NAME": "openai/inspect",
                "MSWEA_COST_TRACKING": "ignore_errors",
            },
        )
    raise ValueError(f"no such agent: {name}")


def swe_agent_solver(name: str, *, command_timeout: int) -> Solver:
    """The agent as the task's solver: a sandbox that did not start ends the sample first."""
    from inspect_ai.agent import as_solver
    from inspect_ai.model import get_model
    from inspect_ai.solver import Generate, TaskState, chain, solver
    from inspect_ai.util import sandbox

    from ..sandboxes.faults import require_started

    @solver(name=f"gaia_{name}")
    def run_agent() -> Solver:
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            if name == "mini_swe_agent":
                await sandbox().write_file(MINI_CONFIG, mini_config(command_timeout))
            # built per sample: the served model is known only once the eval runs
            agent = swe_agent(name, command_timeout=command_timeout, model=get_model())
            return await as_solver(agent)(state, generate)

        return solve

    return chain(require_started(), run_agent())
