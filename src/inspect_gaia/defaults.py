"""The record's vocabulary: what a run's settings and findings are called, and their defaults.

The task and its builders run with these names (the agent ``agents/basic``, the sandbox spec
``sandboxes/spec``, the detection ``answer_sources/detect``), the parser (``_params``) fills them
in, the record (``record``) writes them, and the readers (``logs/``) judge a log by them without
loading any of those: so they live here, below all of them, and importing this loads nothing.
"""

import re
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
"""The name of the official scorer's verdicts in a log's ``Sample.scores``
(``scoring/scorer.gaia_scorer``): the readers and the judge scorer read them by it."""
DEFAULT_TOOLS = ("bash", SUBMIT_TOOL)
"""The tools a default run offers, in the order the agent gets them."""

AgentName = Literal["basic", "claude_code", "codex_cli", "gemini_cli", "mini_swe_agent"]
AGENTS: tuple[AgentName, ...] = get_args(AgentName)
"""``-T agent`` values: ``basic`` is the default agent (``agents/basic.gaia_agent``); the others are
agent CLIs (``agents/swe``)."""
DEFAULT_AGENT: AgentName = "basic"

SandboxKind = Literal["docker", "compose", "k8s"]
"""``-T sandbox``: what a sample's sandbox is made of."""
SANDBOX_KINDS: tuple[SandboxKind, ...] = get_args(SandboxKind)
DEFAULT_SANDBOX: SandboxKind = "docker"
"""This package's ``gaia-docker`` provider on compose.yaml."""
PROVIDER = "gaia-docker"
"""One container per sample, through the Docker Engine API (the default, ``-T sandbox=docker``)."""
COMPOSE_PROVIDER = "gaia-compose"
"""inspect's ``docker compose`` sandbox behind the start guard (``-T sandbox=compose``)."""
PROVIDERS: dict[str, str] = {"docker": PROVIDER, "compose": COMPOSE_PROVIDER, "k8s": "k8s"}
"""The inspect sandbox provider each ``-T sandbox=`` kind runs on (a log names the provider)."""
WRITTEN_VALUES = re.compile(r"values-[0-9a-f]{16}\.yaml")
"""The name of a values file the task wrote for a cluster (``sandboxes/k8s.write_values``): a
log's sandbox config tells it apart from one a user passed."""

FLAG_KINDS = ("answer_source", "question_with_answer", "dataset_reference", "refused", "unscanned")
"""What the detection flags in a transcript (``Score.metadata["contamination"]``)."""
READ_KINDS = frozenset(FLAG_KINDS) - {"refused", "unscanned"}
"""Kinds that say the sample saw (or asked for, unrefused) an answer source."""
OMITTED = "omitted"
"""The kind of the entry that counts a kind's flags beyond the detection's most (``of``,
``where``, ``count``)."""
