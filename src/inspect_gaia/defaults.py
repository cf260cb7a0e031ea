"""The agent's defaults and the submit tool's name: a leaf the task and the log readers share.

The agent (``agent``) runs with them, the parser (``_params``) fills them in, the record
(``record``) writes them and the readers (``logs/comparability``, ``answer_sources/detect``) judge
a run against them, so they live here, below all of those, and importing them loads nothing.
"""

from typing import Literal, get_args

DEFAULT_COMMAND_TIMEOUT = 180
"""Seconds one bash (or python) command may run: inspect_evals' default (its ``code_timeout``).

evalscope 1.14.1's ``bash`` gives a command 60 s unless the model asks for more or the run sets
``agent_config.command_timeout`` (the README's EvalScope command sets 180).
"""
DEFAULT_MAX_ATTEMPTS = 1
"""Submissions allowed per sample: pass@1."""
DEFAULT_MESSAGE_LIMIT = 100
"""Messages per sample (``Task(message_limit=...)``, so ``--message-limit`` overrides it): the
design card's."""
SUBMIT_TOOL = "submit"
"""The name of the tool whose call is the agent's answer (the scorer and the detection read it)."""
OFFICIAL_SCORER = "gaia_scorer"
"""The name of the official scorer's verdicts in a log's ``Sample.scores`` (``scorer.gaia_scorer``):
the readers and the judge scorer read them by it."""
DEFAULT_TOOLS = ("bash", SUBMIT_TOOL)
"""The tools a default run offers, in the order the agent gets them."""

AgentName = Literal["basic", "claude_code", "codex_cli", "gemini_cli", "mini_swe_agent"]
AGENTS: tuple[AgentName, ...] = get_args(AgentName)
"""``-T agent`` values: ``basic`` is the default agent (``agent.gaia_agent``); the others are
agent CLIs (``swe_agents``)."""
DEFAULT_AGENT: AgentName = "basic"
