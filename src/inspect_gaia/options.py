"""The parsed parameters, grouped by the builder that reads them: one record per builder.

``_params.parse_params`` fills these from ``gaia()``'s raw ``-T`` values (validated, canonical
types); ``task.gaia_task`` hands each builder its own record: the questions (``DatasetOptions``),
the sandbox (``SandboxOptions``), the agent and its tools (``AgentOptions``, read by
``agent.build_agent``) and the known answer sources (``AnswerSourceOptions``). Every default is the
task's (``gaia()``'s signature), so ``GaiaParams()`` is a default run's parameters: the record
(``record.default_settings``) builds one without loading the parser.

A new tool toggle is one field of ``AgentOptions`` (and its name in ``AgentOptions.tools``); the
recipe in docs/architecture.md names the other places.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields

from .answer_sources.sources import AnswerSources, load_answer_sources
from .defaults import (
    DEFAULT_AGENT,
    DEFAULT_COMMAND_TIMEOUT,
    DEFAULT_MAX_ATTEMPTS,
    DEFAULT_SANDBOX,
    DEFAULT_TOOLS,
    AgentName,
    SandboxKind,
)
from .egress.spec import EgressSpec
from .questions.dataset import DEFAULT_SPLIT, LEVELS, Split
from .questions.hub import DEFAULT_HUB, Hub, resolved_revision
from .questions.questionset import QuestionSet
from .web import BROWSER_TOOLS, READER_TOOLS

DEFAULT_LEVEL: tuple[int, ...] = LEVELS
DEFAULT_IMAGE = "python:3.11"
DEFAULT_NETWORK = True
DEFAULT_CPUS = 2.0
DEFAULT_MEMORY = "4g"
DEFAULT_PIDS = 1024
"""Per-sandbox limits: a runaway command (fork bomb, memory hog) fails only its own sample."""


@dataclass(frozen=True)
class SandboxLimits:
    """CPU, memory, process and disk limits of one sandbox; ``None`` lifts a limit.

    Values are validated where task parameters are parsed (``_params``), against what Docker
    accepts; sizes are held as ``docker_size`` spells them.
    """

    cpus: float | None = DEFAULT_CPUS
    memory: str | None = DEFAULT_MEMORY
    pids: int | None = DEFAULT_PIDS
    disk: str | None = None
    """Writable-layer size (Docker ``storage_opt: size``); only some storage drivers enforce it."""

    def effective_cpus(self) -> float | None:
        """The CPU limit, capped at this machine's CPUs (Docker refuses more)."""
        if self.cpus is None:
            return None
        return min(float(self.cpus), float(os.cpu_count() or 1))


@dataclass(frozen=True)
class DatasetOptions:
    """Which questions, from where, and how they are asked (``task.gaia_questions``)."""

    levels: tuple[int, ...] = DEFAULT_LEVEL
    split: Split = DEFAULT_SPLIT
    hub: Hub = DEFAULT_HUB
    dataset_path: str | None = None
    revision: str | None = None
    ids: tuple[str, ...] | None = None
    multimodal: bool = False
    question_set: QuestionSet = field(default_factory=QuestionSet)
    """``-T question_set``, ``-T exclude`` and ``-T answers``: questions left out or corrected."""

    @property
    def revision_read(self) -> str:
        """The revision a run reads: as asked, else ``local`` for a local copy, else the pin."""
        return resolved_revision(self.hub, self.revision, self.dataset_path)


@dataclass(frozen=True)
class SandboxOptions:
    """Each sample's sandbox (``sandbox.gaia_sandbox``'s arguments)."""

    image: str = DEFAULT_IMAGE
    network: bool = DEFAULT_NETWORK
    limits: SandboxLimits = field(default_factory=SandboxLimits)
    kind: SandboxKind = DEFAULT_SANDBOX
    """``-T sandbox``: ``docker``, ``compose`` or ``k8s``."""


_TOOL = {"tool": True}
"""A field of ``AgentOptions`` that offers the default agent a tool (``tool_options``)."""


@dataclass(frozen=True)
class AgentOptions:
    """The agent's limits and the tools it is offered (``agent.build_agent``, ``gaia_tools``)."""

    command_timeout: int = DEFAULT_COMMAND_TIMEOUT
    max_attempts: int = DEFAULT_MAX_ATTEMPTS
    python: bool = field(default=False, metadata=_TOOL)
    web_search: bool = field(default=False, metadata=_TOOL)
    view_file: bool = field(default=False, metadata=_TOOL)
    """Whether the agent gets ``view_file``: ``-T view_file``, or implied by ``-T multimodal``."""
    mcp_servers: tuple[tuple[str, ...], ...] = field(default=(), metadata=_TOOL)
    browser: bool = field(default=False, metadata=_TOOL)
    web_reader: bool = field(default=False, metadata=_TOOL)
    name: AgentName = DEFAULT_AGENT
    """``-T agent``: ``basic`` (these tools), or an agent CLI with its own (``agents/swe``)."""

    @classmethod
    def tool_options(cls) -> tuple[str, ...]:
        """The default agent's opt-in tools (``-T`` names), refused beside another agent."""
        return tuple(f.name for f in fields(cls) if f.metadata.get("tool"))

    @property
    def tools(self) -> list[str]:
        """The names of the tools offered, in the order the agent gets them (``gaia_tools``)."""
        if self.name != DEFAULT_AGENT:
            return [f"agent:{self.name}"]
        return (
            list(DEFAULT_TOOLS)
            + (["python"] if self.python else [])
            + (["web_search"] if self.web_search else [])
            + (["view_file"] if self.view_file else [])
            + [f"mcp:{' '.join(command)}" for command in self.mcp_servers]
            + (list(BROWSER_TOOLS) if self.browser else [])
            + (list(READER_TOOLS) if self.web_reader else [])
        )


@dataclass(frozen=True)
class AnswerSourceOptions:
    """The known answer sources a sample is flagged for reading, and whether they are blocked."""

    blocklist: str | None = None
    block_answer_sources: bool = False
    web_record: bool = False
    """``-T web_record``: the sandboxes behind the run's proxy, refusing nothing, recorded."""
    web_bodies: bool = False
    """``-T web_record=bodies``: the response bodies kept too, in an archive beside the log."""
    web_replay: str | None = None
    """``-T web_replay``: the archive (its absolute path) whose recorded web the proxy serves."""
    answer_sources: AnswerSources = field(
        default_factory=load_answer_sources, compare=False, repr=False
    )
    """The known answer sources (the package's list, plus ``blocklist``), read once."""

    @property
    def proxied(self) -> bool:
        """Whether the sandboxes reach the web through the run's proxy, which records it."""
        return self.block_answer_sources or self.web_record or self.web_replay is not None

    @property
    def egress(self) -> EgressSpec | None:
        """The run's proxy when it has one (refusing nothing when it records), else ``None``."""
        if not self.proxied:
            return None
        if self.web_replay is not None:
            return EgressSpec(replay=self.web_replay)
        rules = self.answer_sources.pairs if self.block_answer_sources else ()
        return EgressSpec(rules=rules, bodies=self.web_bodies)


@dataclass(frozen=True)
class GaiaParams:
    """Every task parameter, parsed and validated (see ``gaia``'s docstring for their meaning)."""

    dataset: DatasetOptions = field(default_factory=DatasetOptions)
    sandbox: SandboxOptions = field(default_factory=SandboxOptions)
    agent: AgentOptions = field(default_factory=AgentOptions)
    sources: AnswerSourceOptions = field(default_factory=AnswerSourceOptions)
