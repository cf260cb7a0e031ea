"""The task's parameters: every ``-T`` value parsed and validated once, into one frozen object.

``inspect eval -T x=...`` hands the task YAML-parsed values (``-T level=1,2`` arrives as the string
``"1,2"``, ``-T level=[1,2]`` as a list, a one-element list as a bare value), so each parser accepts
every spelling a user may type and returns one canonical type. An invalid value raises a
``GaiaParameterError`` whose one line says what is valid, before any sandbox starts.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field
from typing import Any

from ._values import (
    MCP_SHORTCUTS,
    flag,
    limits,
    parse_ids,
    parse_levels,
    parse_mcp_servers,
    positive_int,
)
from .agent import DEFAULT_COMMAND_TIMEOUT, DEFAULT_MAX_ATTEMPTS, SUBMIT_TOOL
from .answer_sources.sources import AnswerSources, load_answer_sources
from .dataset import DEFAULT_SPLIT, LEVELS, SPLITS, Split
from .errors import GaiaParameterError, one_of
from .hub import DEFAULT_HUB, HUBS, Hub, resolved_revision
from .imageref import check_reference
from .questionset import QuestionSet, parse_question_set
from .sandbox import (
    DEFAULT_IMAGE,
    DEFAULT_NETWORK,
    DEFAULT_SANDBOX,
    SANDBOX_KINDS,
    SandboxKind,
    SandboxLimits,
)
from .swe_agents import AGENTS, DEFAULT_AGENT, AgentName, check_agent_options
from .web import BROWSER_TOOLS, READER_TOOLS

DEFAULT_LEVEL: tuple[int, ...] = LEVELS
_MCP_EXTRA = "install it with `pip install 'inspect-gaia[mcp]'`"


@dataclass(frozen=True)
class GaiaParams:
    """Every task parameter, parsed and validated (see ``gaia``'s docstring for their meaning)."""

    levels: tuple[int, ...] = DEFAULT_LEVEL
    split: Split = DEFAULT_SPLIT
    hub: Hub = DEFAULT_HUB
    dataset_path: str | None = None
    revision: str | None = None
    ids: tuple[str, ...] | None = None
    command_timeout: int = DEFAULT_COMMAND_TIMEOUT
    image: str = DEFAULT_IMAGE
    network: bool = DEFAULT_NETWORK
    max_attempts: int = DEFAULT_MAX_ATTEMPTS
    python: bool = False
    web_search: bool = False
    mcp_servers: tuple[tuple[str, ...], ...] = ()
    browser: bool = False
    web_reader: bool = False
    limits: SandboxLimits = field(default_factory=SandboxLimits)
    sandbox: SandboxKind = DEFAULT_SANDBOX
    multimodal: bool = False
    view_file: bool = False
    question_set: QuestionSet = field(default_factory=QuestionSet)
    """``-T question_set``, ``-T exclude`` and ``-T answers``: questions left out or corrected."""
    blocklist: str | None = None
    block_answer_sources: bool = False
    agent: AgentName = DEFAULT_AGENT
    answer_sources: AnswerSources = field(
        default_factory=load_answer_sources, compare=False, repr=False
    )
    """The known answer sources (the package's list, plus ``blocklist``), read once."""

    @classmethod
    def parse(
        cls,
        *,
        level: object,
        split: object,
        hub: object,
        dataset_path: object,
        revision: object,
        ids: object,
        command_timeout: object,
        image: object,
        network: object,
        max_attempts: object,
        python: object,
        web_search: object,
        mcp_servers: object,
        browser: object,
        web_reader: object,
        cpus: object,
        memory: object,
        pids: object,
        disk: object,
        sandbox: object,
        multimodal: object,
        view_file: object,
        exclude: object,
        answers: object,
        question_set: object,
        blocklist: object,
        block_answer_sources: object,
        agent: object,
    ) -> GaiaParams:
        """Parse and validate raw ``-T`` values: ``gaia()``'s arguments, passed on one by one.

        No argument has a default: the defaults are ``gaia()``'s, so one that ``gaia()`` forgets
        to pass on is a type error, never a silent default (tests/test_params.py holds the two
        signatures together).

        Raises:
            GaiaParameterError: A value is invalid, or two values cannot go together; the one
                line says what is valid.
        """
        if not isinstance(image, str) or not image.strip():
            raise GaiaParameterError(f"image must name a Docker image — got {image!r}")
        if (why := check_reference(image)) is not None:
            raise GaiaParameterError(
                f"-T image={image} is not an image reference: {why}",
                fix="give name[:tag], or name@sha256:<64 hex digits> to pin it",
            )
        for name, text in (
            ("dataset_path", dataset_path),
            ("revision", revision),
            ("blocklist", blocklist),
        ):
            if text is not None and (not isinstance(text, str) or not text.strip()):
                raise GaiaParameterError(f"{name} must be a non-empty string — got {text!r}")
        params = cls(
            levels=parse_levels(level),
            split=one_of("split", split, SPLITS),
            hub=one_of("hub", hub, HUBS),
            dataset_path=dataset_path,  # type: ignore[arg-type]
            revision=revision,  # type: ignore[arg-type]
            ids=parse_ids(ids),
            command_timeout=positive_int("command_timeout", command_timeout),
            image=image,
            network=flag("network", network),
            max_attempts=positive_int("max_attempts", max_attempts),
            python=flag("python", python),
            web_search=flag("web_search", web_search),
            mcp_servers=parse_mcp_servers(mcp_servers),
            browser=flag("browser", browser),
            web_reader=flag("web_reader", web_reader),
            limits=limits(cpus, memory, pids, disk),
            sandbox=one_of("sandbox", sandbox, SANDBOX_KINDS),
            multimodal=flag("multimodal", multimodal),
            view_file=flag("view_file", view_file),
            question_set=parse_question_set(exclude, answers, named=question_set),
            blocklist=blocklist,  # type: ignore[arg-type]
            block_answer_sources=flag("block_answer_sources", block_answer_sources),
            agent=one_of("agent", agent, AGENTS),
            answer_sources=load_answer_sources(blocklist),  # type: ignore[arg-type]
        )
        params._check_combinations()
        return params

    def _check_combinations(self) -> None:
        if self.split == "test" and self.max_attempts > 1:
            raise GaiaParameterError(
                f"max_attempts={self.max_attempts} needs answers to check each attempt against, "
                "and the test split's are private",
                fix="use max_attempts=1 on split=test",
            )
        named = self.question_set.named
        if named is not None and named.split != self.split:
            raise GaiaParameterError(
                f"question_set={named.name} is a set of the {named.split} split",
                fix=f"drop it, or run split={named.split}",
            )
        if self.split == "test" and self.question_set.answers:
            raise GaiaParameterError(
                "answers corrects answers, and the test split's are private",
                fix="drop -T answers on split=test",
            )
        if not self.network and self.mcp_servers:
            raise GaiaParameterError(
                "mcp_servers run on the host and reach the internet whatever -T network= says",
                fix="drop mcp_servers, or run with network=true",
            )
        if not self.network and self.web_search:
            raise GaiaParameterError(
                "web_search reaches the internet through the model provider whatever "
                "-T network= says",
                fix="drop web_search, or run with network=true",
            )
        if self.mcp_servers:
            if importlib.util.find_spec("mcp") is None:
                raise GaiaParameterError(
                    "mcp_servers needs the MCP client package `mcp`", fix=_MCP_EXTRA
                )
            if (
                MCP_SHORTCUTS["fetch"] in self.mcp_servers
                and importlib.util.find_spec("mcp_server_fetch") is None
            ):
                raise GaiaParameterError(
                    "mcp_servers=fetch needs `mcp-server-fetch`", fix=_MCP_EXTRA
                )
        self._check_web_tools()
        check_agent_options(self)
        if self.sandbox == "k8s" and importlib.util.find_spec("k8s_sandbox") is None:
            raise GaiaParameterError(
                "sandbox=k8s needs inspect-k8s-sandbox",
                fix="install it with `pip install 'inspect-gaia[k8s]'`",
            )
        if self.block_answer_sources:
            self._check_blocking()

    def _check_web_tools(self) -> None:
        """The in-sandbox browser and reader: a network to use, one ``fetch``.

        No MCP client is needed on the host: they are reached through a relay in the sandbox.
        """
        for name, asked in (("browser", self.browser), ("web_reader", self.web_reader)):
            if not asked:
                continue
            if not self.network:
                raise GaiaParameterError(
                    f"{name} reaches the web through the sandbox's network, which "
                    "network=false turns off",
                    fix=f"drop {name}, or run with network=true",
                )
        if self.web_reader and MCP_SHORTCUTS["fetch"] in self.mcp_servers:
            raise GaiaParameterError(
                "web_reader and mcp_servers=fetch both offer a tool named fetch (in the "
                "sandbox and on the host)",
                fix="keep one of them",
            )

    def _check_blocking(self) -> None:
        """A run that blocks answer sources has no route around its egress proxy."""
        refusals = [
            (
                not self.network,
                "block_answer_sources needs network=true: with network=false a sandbox reaches "
                "nothing at all",
                "drop block_answer_sources",
            ),
            (
                self.sandbox == "compose",
                "block_answer_sources starts an egress proxy that only the default sandbox "
                "(gaia-docker) runs",
                "drop sandbox=compose, or drop block_answer_sources",
            ),
            (
                self.sandbox == "k8s",
                "block_answer_sources is not built for Kubernetes",
                "restrict egress with values.yaml's allowDomains instead (see "
                "docs/answer-sources.md)",
            ),
            (
                bool(self.mcp_servers),
                "mcp_servers run on the host, outside the egress proxy of block_answer_sources",
                "drop mcp_servers, or drop block_answer_sources",
            ),
            (
                self.web_search,
                "web_search runs at the model provider, outside the egress proxy of "
                "block_answer_sources",
                "drop web_search, or drop block_answer_sources",
            ),
        ]
        for refused, problem, fix in refusals:
            if refused:
                raise GaiaParameterError(problem, fix)

    @property
    def egress(self) -> dict[str, Any] | None:
        """The sandbox's egress rules when the run blocks answer sources, else ``None``."""
        if not self.block_answer_sources:
            return None
        return {"rules": self.answer_sources.as_json()["rules"]}

    @property
    def revision_read(self) -> str:
        """The revision a run reads: as asked, else ``local`` for a local copy, else the pin."""
        return resolved_revision(self.hub, self.revision, self.dataset_path)

    @property
    def offers_view_file(self) -> bool:
        """Whether the agent gets ``view_file``: asked for, or implied by ``multimodal``."""
        return self.view_file or self.multimodal

    @property
    def tools(self) -> list[str]:
        """The names of the tools offered, in the order the agent gets them."""
        if self.agent != DEFAULT_AGENT:
            return [f"agent:{self.agent}"]
        return (
            ["bash", SUBMIT_TOOL]
            + (["python"] if self.python else [])
            + (["web_search"] if self.web_search else [])
            + (["view_file"] if self.offers_view_file else [])
            + [f"mcp:{' '.join(command)}" for command in self.mcp_servers]
            + (list(BROWSER_TOOLS) if self.browser else [])
            + (list(READER_TOOLS) if self.web_reader else [])
        )
