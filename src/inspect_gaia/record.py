"""The record a run writes: its ``gaia`` provenance, made once from the parsed parameters.

The record's types and how it is read back live with the readers (``logs/provenance``); what
*writes* it lives here, in the task's wing, because it reads the parsed parameters. So the readers
import only the record's types and the leaves (``defaults``), never the parser, the agent or the
sandbox's builders: the one bridge between the wings is the record itself.

``default_settings`` is a default run's record, as the settings runs are pooled on: ``report`` and
``submission`` label a run by what differs from it, and take it as an argument from the command
line.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import os
from typing import Any

from .defaults import DEFAULT_AGENT, DEFAULT_MESSAGE_LIMIT, PROVIDERS
from .egress.replay_source import checked
from .logs.comparability import INSPECT_LIMITS
from .logs.provenance import (
    SCHEMA_VERSION,
    AgentRecord,
    AnswerSourcesRecord,
    GaiaProvenance,
    ProvenanceLimits,
    WebReplayRecord,
    WebToolsRecord,
)
from .options import GaiaParams
from .questions.dataset import DEFAULT_INPUT_PROMPT
from .questions.questionset import QuestionSetRecord


def provenance_of(
    params: GaiaParams,
    *,
    prompt: str,
    image_id: str | None,
    sandbox_provider: str,
    question_set: QuestionSetRecord | None = None,
    image_digest: str | None = None,
    web_versions: dict[str, str] | None = None,
    agent_version: str | None = None,
    probe: bool = False,
    agent_identity: str | None = None,
    agent_configuration: str | None = None,
) -> GaiaProvenance:
    """The record of a run with ``params``, for the log header.

    Args:
        params: The parsed parameters.
        prompt: The prompt template (recorded as its hash).
        image_id: The sandbox image's id, when an engine answered.
        image_digest: Its registry digest, when known (``engine.image_identity``).
        sandbox_provider: The sandbox provider's registered name.
        question_set: What ``apply_question_set`` made of ``params.dataset.question_set``.
        web_versions: The browser's and reader's versions, from the image's labels.
        agent_version: ``-T agent``'s CLI version, from the image's labels.
        probe: A probe of the sandbox (``inspect_gaia/gaia_probe``), not an answering run.
        agent_identity: The model name ``-T agent``'s CLI is told, when not the model's own
            (``agents/swe.identity``).
        agent_configuration: The configuration given the agent in place of its own
            (``agents/mini_config.configuration``).
    """
    dataset, sandbox, agent, sources = params.dataset, params.sandbox, params.agent, params.sources
    if (question_set is None) != dataset.question_set.empty:
        raise ValueError("record the question set that apply_question_set applied")
    return GaiaProvenance(
        schema_version=SCHEMA_VERSION,
        split=dataset.split,
        levels=dataset.levels,
        hub="local" if dataset.dataset_path else dataset.hub,
        revision=dataset.revision_read,
        dataset_path=dataset.dataset_path,
        prompt_template_sha256=hashlib.sha256(prompt.encode()).hexdigest(),
        tools=tuple(agent.tools),
        multimodal=dataset.multimodal,
        view_file=agent.view_file,
        limits=ProvenanceLimits(
            message_limit=DEFAULT_MESSAGE_LIMIT,
            command_timeout=agent.command_timeout,
            max_attempts=agent.max_attempts,
            cpus=sandbox.limits.effective_cpus(),
            memory=sandbox.limits.memory,
            pids=sandbox.limits.pids,
            disk=sandbox.limits.disk,
        ),
        sandbox=sandbox.kind,
        sandbox_provider=sandbox_provider,
        image=sandbox.image,
        image_id=image_id,
        image_digest=image_digest,
        network=sandbox.network,
        inspect_ai_version=_version("inspect_ai"),
        inspect_gaia_version=_version("inspect-gaia"),
        question_set=question_set,
        answer_sources=AnswerSourcesRecord(
            list_sha256=sources.answer_sources.sha256,
            blocklist=sources.blocklist,
            blocked=sources.block_answer_sources,
        ),
        final_answer_ends=True,
        web_tools=WebToolsRecord(
            browser=agent.browser, web_reader=agent.web_reader, versions=web_versions
        )
        if agent.browser or agent.web_reader
        else None,
        web_record=params.sources.proxied or None,
        agent=None
        if agent.name == DEFAULT_AGENT
        else AgentRecord(
            name=agent.name,
            cli_version=agent_version,
            inspect_swe_version=_version("inspect_swe"),
            identity=agent_identity,
            configuration=agent_configuration,
        ),
        web_replay=None if sources.web_replay is None else _replayed(sources.web_replay),
        probe=probe or None,
    )


def _replayed(path: str) -> WebReplayRecord:
    """What a replay's record says of its archive (checked once, before: ``_params``)."""
    archive = checked(path)
    return WebReplayRecord(
        archive=os.path.basename(path),
        sha256=archive.sha256,
        format="har" if archive.kind == "har" else "archive",
        blocked_answer_sources=archive.blocked,
    )


@functools.cache
def default_settings() -> dict[str, Any]:
    """The task's defaults among ``comparable_settings`` (a report labels a group off these).

    Model and task version are not defaults of the task: a label names them whenever they differ.
    """
    default = provenance_of(
        GaiaParams(),
        prompt=DEFAULT_INPUT_PROMPT,
        image_id=None,
        sandbox_provider=PROVIDERS["docker"],
    )
    config = {name: None for name in INSPECT_LIMITS} | {"message_limit": DEFAULT_MESSAGE_LIMIT}
    settings = default.comparable_settings(model="", task_version="", epochs=1, run_config=config)
    return {k: v for k, v in settings.items() if k not in ("model", "task_version")}


def _version(package: str) -> str | None:
    if package == "inspect_ai":
        # the module attribute, not importlib.metadata: parsing inspect_ai's long METADATA costs
        # ~0.2 s inside a starting eval
        import inspect_ai

        return str(inspect_ai.__version__)
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None
