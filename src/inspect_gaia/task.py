"""GAIA as an inspect_ai task: questions with attachments, a bash agent, the official scorer.

``inspect eval inspect_gaia/gaia -T level=1 --model <provider/model>``

The task reads top-down as the design card: ``gaia`` parses its parameters once
(``_params.parse_params``, into one record per builder: ``options``), then ``gaia_task`` hands
each builder its record: the questions (``questions/``), the sandbox (``sandboxes/spec``), the
agent (``agents/``) and the scorer (``scoring/``), and writes the run's typed record (``record``)
into the log. Where the default run differs from inspect_evals' and EvalScope's GAIA is listed
once, in the README's "Deviations" section.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from inspect_ai import Task, task
from inspect_ai.dataset import Dataset
from inspect_ai.model import GenerateConfig
from inspect_ai.util import SandboxEnvironmentSpec

from ._compat import creating_only_gaia_tasks
from ._param_names import check_unknown
from ._params import parse_params
from .agents.basic import build_agent
from .agents.mini_config import configuration
from .agents.sizing import check_memory_at_start
from .agents.swe import run_identity
from .defaults import (
    DEFAULT_AGENT,
    DEFAULT_COMMAND_TIMEOUT,
    DEFAULT_MAX_ATTEMPTS,
    DEFAULT_MESSAGE_LIMIT,
    DEFAULT_SANDBOX,
    AgentName,
    SandboxKind,
)
from .errors import GaiaParameterError, refusals_to_stderr
from .image_layout import AGENTS_LAYER, WEB_LAYER
from .logs.provenance import METADATA_KEY, GaiaProvenance
from .model_check import check_model
from .next_steps import after_test_run
from .options import (
    DEFAULT_CPUS,
    DEFAULT_IMAGE,
    DEFAULT_LEVEL,
    DEFAULT_MEMORY,
    DEFAULT_NETWORK,
    DEFAULT_PIDS,
    DatasetOptions,
    GaiaParams,
)
from .questions.dataset import (
    DEFAULT_INPUT_PROMPT,
    DEFAULT_SPLIT,
    Split,
    gaia_dataset,
    split_levels,
)
from .questions.hub import DEFAULT_HUB, Hub
from .questions.questionset import QuestionSetRecord, apply_question_set
from .questions.shown import question_first
from .record import provenance_of
from .sandboxes.docker.engine import image_identity, require_layer
from .sandboxes.k8s import k8s_image_identity
from .sandboxes.spec import gaia_sandbox
from .scoring.scorer import gaia_scorer

TASK_VERSION = "1.0.0"
"""Bumped when results stop being comparable with earlier versions (see the README changelog)."""


@task
def gaia(
    level: int | str | Sequence[int] = DEFAULT_LEVEL,
    split: Split = DEFAULT_SPLIT,
    hub: Hub = DEFAULT_HUB,
    dataset_path: str | None = None,
    revision: str | None = None,
    ids: str | Sequence[str] | None = None,
    command_timeout: int = DEFAULT_COMMAND_TIMEOUT,
    image: str = DEFAULT_IMAGE,
    network: bool = DEFAULT_NETWORK,
    max_attempts: int = DEFAULT_MAX_ATTEMPTS,
    python: bool = False,
    web_search: bool = False,
    mcp_servers: str | Sequence[str] | None = None,
    browser: bool = False,
    web_reader: bool = False,
    cpus: float | None = DEFAULT_CPUS,
    memory: str | None = DEFAULT_MEMORY,
    pids: int | None = DEFAULT_PIDS,
    disk: str | None = None,
    sandbox: SandboxKind = DEFAULT_SANDBOX,
    multimodal: bool = False,
    view_file: bool = False,
    exclude: str | Sequence[str] | None = None,
    answers: str | None = None,
    question_set: str | None = None,
    blocklist: str | None = None,
    block_answer_sources: bool = False,
    web_record: bool | Literal["bodies"] = False,
    web_replay: str | None = None,
    agent: AgentName = DEFAULT_AGENT,
    **unknown: Any,
) -> Task:
    """GAIA: General AI Assistants, answered by a bash agent in a Docker sandbox.

    Each question is asked with the prompt inspect_evals and evalscope use (so numbers compare); a
    question with an attachment names it at ``/shared_files/<file_name>``, where only that file is
    copied into the sample's own sandbox. Answers are scored with the official GAIA rules; the test
    split's answers are private, so there answers are recorded and not graded.

    Args:
        level: GAIA level(s): 1, 2, 3, or a list such as ``[1,2]`` or ``1,2``. Default: all three.
        split: ``validation`` (165 questions with answers) or ``test`` (301, answers private).
        hub: Where to download GAIA: ``huggingface`` (gated: accept the terms and set HF_TOKEN) or
            ``modelscope`` (no token).
        dataset_path: A local GAIA snapshot (the folder holding ``2023/``); no hub is contacted.
        revision: Dataset revision. Default: the pinned Hugging Face commit 682dd723 (the parquet
            layout inspect_evals pins), or ``master`` on ModelScope.
        ids: GAIA task id(s) to run (one, ``a,b``, or a list). Default: all.
        command_timeout: Seconds one bash (or python) command may run. Default 180.
        image: Sandbox image. Default ``python:3.11`` (as evalscope); a local image is never pulled.
        network: Network access in the sandbox. Default on; ``false`` gives no network at all.
        max_attempts: Submissions allowed per sample; above 1 the agent is told when a submission
            is wrong (an oracle: not pass@1, and refused on the test split). Default 1.
        python: Also offer inspect's ``python`` tool (runs in the sandbox). Default off.
        web_search: Also offer inspect's ``web_search`` tool (the model's native search where it
            has one). Default off; refused with ``network=false``.
        mcp_servers: Host-side stdio MCP servers whose tools to offer: ``fetch``
            (mcp-server-fetch) or a command line, one or a list; each command must be on PATH
            (or a path to an executable). Needs ``inspect-gaia[mcp]``; refused with
            ``network=false`` (they run on the host, with its network).
        browser: Offer a headless browser (Chromium driven by Playwright MCP) that runs in the
            sample's sandbox, behind its network and proxy: navigate, click, type, read pages,
            screenshots, downloads into the sandbox. Default off; needs an image that has it
            (``inspect-gaia image build --browser``); nothing to install on the host.
        web_reader: Offer ``fetch`` (mcp-server-fetch: a URL as Markdown) run in the sample's
            sandbox, behind its network and proxy. Default off; same image as ``browser``.
        cpus: CPU limit per sandbox, from 0.01 (capped at the machine's CPUs). Default 2;
            ``null`` lifts it.
        memory: Memory limit per sandbox, no swap beyond it: a size from ``6m`` (Docker's
            minimum), with ``k``, ``m``, ``g`` or ``t``. Default ``4g``; ``null`` lifts it.
        pids: Process limit per sandbox, 16 to 4194304. Default 1024; ``null`` lifts it.
        disk: Disk limit per sandbox (its writable layer), e.g. ``10g``. Default none; only some
            Docker storage drivers can enforce it, and the run refuses to start where not.
        sandbox: ``docker`` (compose.yaml, each sample's container started through the Docker
            API: ``gaia-docker``), ``compose`` (compose.yaml through inspect's ``docker compose``
            sandbox, about 4x the time per sample: docs/benchmarks.md) or ``k8s`` (values.yaml,
            needs ``inspect-gaia[k8s]``).
        multimodal: Send image, audio, video and PDF attachments to the model as native content
            in the first user message (and offer ``view_file``). Default off: a run with it is
            not comparable with evalscope's or inspect_evals'.
        view_file: Offer the ``view_file`` tool (see a sandbox file as an image, audio, video or
            PDF) without sending attachments natively. Default off.
        exclude: Task ids to leave out: ``a,b``, a list, or a file with one id per line (e.g. a
            re-annotation's defective questions). Recorded and flagged as a question set.
        answers: A file of corrected answers (JSON ``{task_id: answer}`` or JSON lines), scored
            instead of the dataset's. Recorded and flagged as a question set.
        question_set: A named question set (``text-103``: the 103 text-only validation questions
            WebThinker and MiroThinker report on), or a set file; recorded with its source and
            hash, and flagged by name.
        blocklist: A file of URL rules (``HOST[/PATH]``, one a line, or the format of the
            package's ``answer_sources.yaml``) that extends the list of known answer sources a
            sample is flagged for reading (``Score.metadata["contamination"]``).
        block_answer_sources: Sandboxes reach the network only through an egress proxy of the
            run that refuses the known answer sources (and ``blocklist``'s). Default off; needs
            the default sandbox, network=true and the proxy image (``inspect-gaia image build
            --egress-proxy``); refused with mcp_servers and web_search (they bypass it), not
            with browser and web_reader (they run in the sandbox, behind the proxy).
        web_record: Sandboxes reach the network only through the run's egress proxy, which
            refuses no answer source (the network policy still holds: only ports 80 and 443, no
            host, loopback or private address) and records every request into its sample, as a
            ``block_answer_sources`` run does too. Default off; same needs as
            ``block_answer_sources``. ``bodies``: the response bodies too, in an archive
            beside the log (docs/web-record.md).
        web_replay: An archive ``web_record=bodies`` wrote: the run's proxy serves only its
            recorded responses (matched by method and normalised URL), and refuses every other
            request with ``not in the recorded web``; never the live web. Recorded in the log,
            flagged by ``report``, never pooled with a live run (docs/web-record.md).
        agent: ``basic`` (the default agent: bash and submit), or another agent run in the
            sample's sandbox with its model calls bridged to ``--model``: ``claude_code``,
            ``codex_cli``, ``gemini_cli`` or ``mini_swe_agent`` (inspect_swe; needs
            ``inspect-gaia[agents]`` and an image with its CLI: ``inspect-gaia image build
            --agents``); inspect_swe's ``opencode``, ``kimi_code`` and ``antigravity`` are refused
            (their bridge always grants the provider's web search). docs/agents.md.
        **unknown: Names ``gaia`` does not take: a typo of one of its own, an inspect option,
            or any name when gaia is the run's only task, is refused; any other is ignored with
            a warning (``_param_names``).
    """
    refusals_to_stderr()
    check_unknown(unknown, parameter_names(), "gaia", alone=creating_only_gaia_tasks())
    params = parse_params(
        level=level,
        split=split,
        hub=hub,
        dataset_path=dataset_path,
        revision=revision,
        ids=ids,
        command_timeout=command_timeout,
        image=image,
        network=network,
        max_attempts=max_attempts,
        python=python,
        web_search=web_search,
        mcp_servers=mcp_servers,
        browser=browser,
        web_reader=web_reader,
        cpus=cpus,
        memory=memory,
        pids=pids,
        disk=disk,
        sandbox=sandbox,
        multimodal=multimodal,
        view_file=view_file,
        exclude=exclude,
        answers=answers,
        question_set=question_set,
        blocklist=blocklist,
        block_answer_sources=block_answer_sources,
        web_record=web_record,
        web_replay=web_replay,
        agent=agent,
    )
    return gaia_task(params)


def params_of(params: Mapping[str, Any], task_name: str, own: Sequence[str] = ()) -> GaiaParams:
    """``gaia``'s parameters among ``params`` parsed, for another task that takes them all.

    Names neither ``gaia``'s nor the other task's ``own`` are refused or warned about as ``gaia``
    does; an unset one takes ``gaia``'s default.
    """
    refusals_to_stderr()
    known = parameter_names()
    unknown = {name: value for name, value in params.items() if name not in known}
    check_unknown(unknown, (*known, *own), task_name, alone=creating_only_gaia_tasks())
    defaults = {
        name: parameter.default
        for name, parameter in inspect.signature(gaia).parameters.items()
        if name in known
    }
    return parse_params(**(defaults | {k: v for k, v in params.items() if k in known}))


def parameter_names() -> tuple[str, ...]:
    """``gaia``'s parameters, in order (not its ``**unknown``)."""
    return tuple(
        name
        for name, parameter in inspect.signature(gaia).parameters.items()
        if parameter.kind is not parameter.VAR_KEYWORD
    )


def gaia_questions(options: DatasetOptions) -> tuple[Dataset, QuestionSetRecord | None]:
    """The questions ``options`` select, and the record of their question set (``-T exclude``...).

    Raises:
        GaiaParameterError: An id of ``-T exclude``/``-T answers`` is not in the split, or no
            question is left.
        GaiaDatasetError: The snapshot cannot be read.
    """
    dataset = gaia_dataset(
        split=options.split,
        levels=options.levels,
        ids=options.ids,
        hub=options.hub,
        revision=options.revision,
        dataset_path=options.dataset_path,
        input_prompt=DEFAULT_INPUT_PROMPT,
        multimodal=options.multimodal,
    )
    if options.question_set.empty:
        return dataset, None
    levels = split_levels(Path(str(dataset.location)), options.split)
    return apply_question_set(dataset, options.question_set, options.split, levels)


@dataclass(frozen=True)
class TaskParts:
    """What a task of these parameters asks about and runs in, and the record it writes."""

    dataset: Dataset
    sandbox: SandboxEnvironmentSpec
    provenance: GaiaProvenance


def gaia_parts(params: GaiaParams, *, probe: bool = False) -> TaskParts:
    """The questions, the sandbox and the record for parsed parameters (images checked first).

    ``probe``: for ``inspect_gaia/gaia_probe``, recorded as such (``probe/task.py``).
    """
    box, agent = params.sandbox, params.agent
    # the image holds the tools asked for (a cluster's image is its own: not checked here)
    web_tools = [tool for tool in WEB_LAYER.tools if getattr(agent, tool)]
    web_versions = (
        require_layer(box.image, WEB_LAYER, web_tools) if web_tools and box.kind != "k8s" else None
    )
    agent_versions = (
        require_layer(box.image, AGENTS_LAYER, [agent.name])
        if agent.name != DEFAULT_AGENT and box.kind != "k8s"
        else None
    )
    agent_version = None if agent_versions is None else agent_versions.get(agent.name)
    if agent.name != DEFAULT_AGENT:
        check_memory_at_start()  # warns as the run starts when its sandboxes will not fit
    dataset, question_set = gaia_questions(params.dataset)
    sandbox = gaia_sandbox(
        box.image, box.network, box.limits, box.kind, egress=params.sources.egress
    )
    # The engine's id and digest of the image, recorded when the engine has it; the provider
    # checks the image (and pulls or refuses) before any sample. A cluster pulls its own.
    image_id, image_digest = (
        image_identity(box.image) if box.kind != "k8s" else k8s_image_identity(box.image)
    )
    provenance = provenance_of(
        params,
        prompt=DEFAULT_INPUT_PROMPT,
        image_id=image_id,
        image_digest=image_digest,
        sandbox_provider=sandbox.type,
        question_set=question_set,
        web_versions=web_versions,
        agent_version=agent_version,
        probe=probe,
        agent_identity=run_identity(agent.name),
        agent_configuration=configuration(agent.name),
    )
    return TaskParts(dataset, sandbox, provenance)


def gaia_task(params: GaiaParams) -> Task:
    """The Task for parsed parameters: each builder gets its record (``options``)."""
    parts = gaia_parts(params)
    check_model()  # last of the checks: what the user set is refused first
    if params.dataset.split == "test":
        after_test_run()  # the run ends saying how to make the leaderboard file
    return Task(
        dataset=parts.dataset,
        # the question first in inspect view's list; the model still asked the prompt, whatever
        # --solver replaces the agent (questions/shown.py)
        setup=question_first(parts.dataset),
        sandbox=parts.sandbox,
        solver=build_agent(params.agent),
        scorer=gaia_scorer(blocklist=params.sources.blocklist),
        # The test split's answers are private: record them, report no accuracy.
        metrics=[] if params.dataset.split == "test" else None,
        message_limit=DEFAULT_MESSAGE_LIMIT,
        # A sample that errors (a dead container, a refused model call, a sandbox that did not
        # start) is still scored, so accuracy keeps every selected sample in its denominator; the
        # log is marked as an error and `inspect eval-retry` reruns just those samples.
        score_on_error=True,
        # basic_agent answers a refusal with "please proceed" and asks again, up to the message
        # limit; a content_filter stop ends the sample at once instead (an error: scored, shown
        # in the log, rerun by eval-retry).
        config=GenerateConfig(fail_on_refusal=True),
        version=TASK_VERSION,
        metadata={METADATA_KEY: parts.provenance.as_metadata()},
    )


@task
def gaia_level1(**kwargs: Any) -> Task:
    """GAIA level 1 questions (parameters as for ``gaia``)."""
    return _at_level(1, kwargs)


@task
def gaia_level2(**kwargs: Any) -> Task:
    """GAIA level 2 questions (parameters as for ``gaia``)."""
    return _at_level(2, kwargs)


@task
def gaia_level3(**kwargs: Any) -> Task:
    """GAIA level 3 questions (parameters as for ``gaia``)."""
    return _at_level(3, kwargs)


def _at_level(level: int, kwargs: dict[str, Any]) -> Task:
    if "level" in kwargs:  # else a TypeError: gaia() got multiple values for 'level'
        raise GaiaParameterError(
            f"gaia_level{level} asks level {level} only",
            fix=f"for -T level={kwargs['level']}, run inspect_gaia/gaia",
        )
    return gaia(level=level, **kwargs)
