"""The task's parameters: every ``-T`` value parsed and validated once, into frozen records.

``inspect eval -T x=...`` hands the task YAML-parsed values (``-T level=1,2`` arrives as the string
``"1,2"``, ``-T level=[1,2]`` as a list, a one-element list as a bare value), so each parser accepts
every spelling a user may type and returns one canonical type. An invalid value raises a
``GaiaParameterError`` whose one line says what is valid, before any sandbox starts. What they are
parsed into, one record per builder, is ``options``.
"""

from __future__ import annotations

import importlib.util
import os

from ._values import (
    MCP_SHORTCUTS,
    flag,
    limits,
    parse_ids,
    parse_levels,
    parse_mcp_servers,
    positive_int,
)
from .agents.swe import check_agent_options, check_sealable
from .answer_sources.sources import load_answer_sources
from .defaults import AGENTS, DEFAULT_AGENT, SANDBOX_KINDS
from .egress.replay_source import checked
from .egress.web_archive import ArchiveError
from .errors import GaiaParameterError, few, one_of
from .imageref import check_reference
from .options import (
    AgentOptions,
    AnswerSourceOptions,
    DatasetOptions,
    GaiaParams,
    SandboxOptions,
)
from .questions.dataset import SPLITS
from .questions.hub import HUBS
from .questions.questionset import parse_question_set

_MCP_EXTRA = "install it with `pip install 'inspect-gaia[mcp]'`"


def parse_params(
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
    web_record: object,
    web_replay: object,
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
    check_sealable(agent)  # before "agent must be one of": it says why it is not one
    if not isinstance(image, str) or not image.strip():
        raise GaiaParameterError("image must name a Docker image", got=image)
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
            raise GaiaParameterError(f"{name} must be a non-empty string", got=text)
    dataset = DatasetOptions(
        levels=parse_levels(level),
        split=one_of("split", split, SPLITS),
        hub=one_of("hub", hub, HUBS),
        dataset_path=dataset_path,  # type: ignore[arg-type]
        revision=revision,  # type: ignore[arg-type]
        ids=parse_ids(ids),
        multimodal=flag("multimodal", multimodal),
        question_set=parse_question_set(exclude, answers, named=question_set),
    )
    params = GaiaParams(
        dataset=dataset,
        sandbox=SandboxOptions(
            image=image,
            network=flag("network", network),
            limits=limits(cpus, memory, pids, disk),
            kind=one_of("sandbox", sandbox, SANDBOX_KINDS),
        ),
        agent=AgentOptions(
            command_timeout=positive_int("command_timeout", command_timeout),
            max_attempts=positive_int("max_attempts", max_attempts),
            python=flag("python", python),
            web_search=flag("web_search", web_search),
            view_file=flag("view_file", view_file) or dataset.multimodal,
            mcp_servers=parse_mcp_servers(mcp_servers),
            browser=flag("browser", browser),
            web_reader=flag("web_reader", web_reader),
            name=one_of("agent", agent, AGENTS),
        ),
        sources=AnswerSourceOptions(
            blocklist=blocklist,  # type: ignore[arg-type]
            block_answer_sources=flag("block_answer_sources", block_answer_sources),
            web_record=_web_record(web_record),
            web_bodies=web_record == "bodies",
            web_replay=_web_replay(web_replay),
            answer_sources=load_answer_sources(blocklist),  # type: ignore[arg-type]
        ),
    )
    _check_combinations(params)
    return params


def _web_record(value: object) -> bool:
    """``-T web_record``: ``true``, ``false`` or ``bodies`` (recording, with the bodies)."""
    if value == "bodies":
        return True
    if not isinstance(value, bool):
        raise GaiaParameterError("web_record must be true, false or bodies", got=value)
    return value


def _web_replay(value: object) -> str | None:
    """``-T web_replay=ARCHIVE``: an archive (``web_record=bodies``, ``web merge``) or a HAR.

    Checked whole now, as data (``egress/web_archive.py``, ``egress/har_read.py``).
    """
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise GaiaParameterError("web_replay must name an archive file", got=value)
    path = os.path.abspath(os.path.expanduser(value))
    if os.path.isdir(path):  # the folder the archive was written to: name what is in it
        archives = sorted(name for name in os.listdir(path) if name.endswith((".tar", ".har")))
        named = [f"-T web_replay={os.path.join(value, name)}" for name in archives]
        raise GaiaParameterError(
            f"-T web_replay={value} is a folder"
            + (f" holding {len(archives)} archive(s)" if archives else ", with no .tar in it"),
            fix=f"give one of them: {few(named)}"
            if archives
            else "give the .tar a -T web_record=bodies run wrote beside its log, or a .har",
        )
    try:
        checked(path)
    except ArchiveError as ex:
        raise GaiaParameterError(
            f"-T web_replay={value}: {ex}",
            fix="give the .tar a -T web_record=bodies run wrote beside its log, or a .har",
        ) from None
    return path


def _check_combinations(params: GaiaParams) -> None:
    dataset, sandbox, agent, sources = params.dataset, params.sandbox, params.agent, params.sources
    if dataset.split == "test" and agent.max_attempts > 1:
        raise GaiaParameterError(
            f"max_attempts={agent.max_attempts} needs answers to check each attempt against, "
            "and the test split's are private",
            fix="use max_attempts=1 on split=test",
        )
    named = dataset.question_set.named
    if named is not None and named.split != dataset.split:
        raise GaiaParameterError(
            f"question_set={named.name} is a set of the {named.split} split",
            fix=f"drop it, or run split={named.split}",
        )
    if dataset.split == "test" and dataset.question_set.answers:
        raise GaiaParameterError(
            "answers corrects answers, and the test split's are private",
            fix="drop -T answers on split=test",
        )
    if not sandbox.network and agent.mcp_servers:
        raise GaiaParameterError(
            "mcp_servers run on the host and reach the internet whatever -T network= says",
            fix="drop mcp_servers, or run with network=true",
        )
    if not sandbox.network and agent.web_search:
        raise GaiaParameterError(
            "web_search reaches the internet through the model provider whatever -T network= says",
            fix="drop web_search, or run with network=true",
        )
    if agent.mcp_servers:
        if importlib.util.find_spec("mcp") is None:
            raise GaiaParameterError(
                "mcp_servers needs the MCP client package `mcp`", fix=_MCP_EXTRA
            )
        if (
            MCP_SHORTCUTS["fetch"] in agent.mcp_servers
            and importlib.util.find_spec("mcp_server_fetch") is None
        ):
            raise GaiaParameterError("mcp_servers=fetch needs `mcp-server-fetch`", fix=_MCP_EXTRA)
    _check_web_tools(sandbox, agent)
    check_agent_options(agent, dataset.multimodal)
    if agent.name != DEFAULT_AGENT and not _importable("inspect_swe"):
        raise GaiaParameterError(
            f"-T agent={agent.name} needs inspect_swe, the [agents] extra",
            fix='install it with `pip install ".[agents]"` in your inspect-gaia clone',
        )
    if sandbox.kind == "k8s" and importlib.util.find_spec("k8s_sandbox") is None:
        raise GaiaParameterError(
            "sandbox=k8s needs inspect-k8s-sandbox",
            fix="install it with `pip install 'inspect-gaia[k8s]'`",
        )
    if sources.proxied:
        _check_blocking(sandbox, agent, sources)


def _importable(module: str) -> bool:
    """Whether ``module`` is installed (a finder that refuses it counts as not)."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def _check_web_tools(sandbox: SandboxOptions, agent: AgentOptions) -> None:
    """The in-sandbox browser and reader: a network to use, one ``fetch``.

    No MCP client is needed on the host: they are reached through a relay in the sandbox.
    """
    for name, asked in (("browser", agent.browser), ("web_reader", agent.web_reader)):
        if not asked:
            continue
        if not sandbox.network:
            raise GaiaParameterError(
                f"{name} reaches the web through the sandbox's network, which "
                "network=false turns off",
                fix=f"drop {name}, or run with network=true",
            )
    if agent.web_reader and MCP_SHORTCUTS["fetch"] in agent.mcp_servers:
        raise GaiaParameterError(
            "web_reader and mcp_servers=fetch both offer a tool named fetch (in the "
            "sandbox and on the host)",
            fix="keep one of them",
        )


def _check_blocking(
    sandbox: SandboxOptions, agent: AgentOptions, sources: AnswerSourceOptions
) -> None:
    """A run behind its egress proxy has no route around it."""
    name = "block_answer_sources" if sources.block_answer_sources else "web_record"
    if sources.web_replay is not None:
        name = "web_replay"
        if sources.block_answer_sources or sources.web_record:
            raise GaiaParameterError(
                "web_replay serves only the recorded web: it neither refuses answer sources "
                "nor records bodies",
                fix="drop block_answer_sources and web_record, or drop web_replay",
            )
    refusals = [
        (
            not sandbox.network,
            f"{name} needs network=true: with network=false a sandbox reaches nothing at all",
            f"drop {name}",
        ),
        (
            sandbox.kind == "compose",
            f"{name} starts an egress proxy that only the default sandbox (gaia-docker) runs",
            f"drop sandbox=compose, or drop {name}",
        ),
        (
            sandbox.kind == "k8s",
            f"{name} is not built for Kubernetes",
            "restrict egress with values.yaml's allowDomains instead (see docs/answer-sources.md)",
        ),
        (
            bool(agent.mcp_servers),
            f"mcp_servers run on the host, outside the egress proxy of {name}",
            f"drop mcp_servers, or drop {name}",
        ),
        (
            agent.web_search,
            f"web_search runs at the model provider, outside the egress proxy of {name}",
            f"drop web_search, or drop {name}",
        ),
    ]
    for refused, problem, fix in refusals:
        if refused:
            raise GaiaParameterError(problem, fix)
