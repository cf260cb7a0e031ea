"""GAIA as an inspect_ai task: questions with attachments, a bash agent, the official scorer.

``inspect eval inspect_gaia/gaia -T level=1 --model <provider/model>``

Deviations from the harnesses it is compared with (also in the README):

* Agent: ``basic_agent`` with ``bash`` + ``submit`` (design card). inspect_evals uses ``react`` with
  bash, python and web search; evalscope uses its own ReAct loop with bash only.
* Sandbox: each sample gets only its own attachment, copied to ``/shared_files/<file_name>``.
  evalscope mounts the whole split directory (metadata with every answer included) read-only at
  ``/shared_files``; inspect_evals copies the first file whose name contains the task id.
* Answer: without a submission, the text after ``FINAL ANSWER:`` in the last message is scored;
  evalscope scores the whole last message.
* Limits: each sandbox gets 2 CPUs, 4g and 1024 processes by default (the others set none).
* Dataset: on ModelScope the revision is the mirror's ``master`` (it has no commit matching the
  Hugging Face pin).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
from collections.abc import Sequence
from typing import Any

from inspect_ai import Task, task
from inspect_ai.model import GenerateConfig

from .agent import (
    DEFAULT_COMMAND_TIMEOUT,
    DEFAULT_MAX_ATTEMPTS,
    gaia_agent,
    gaia_tools,
    parse_mcp_servers,
)
from .dataset import (
    DEFAULT_INPUT_PROMPT,
    Split,
    check_choice,
    gaia_dataset,
    parse_ids,
    parse_levels,
    resolved_revision,
)
from .errors import GaiaParameterError
from .sandbox import (
    DEFAULT_CPUS,
    DEFAULT_IMAGE,
    DEFAULT_MEMORY,
    DEFAULT_NETWORK,
    DEFAULT_PIDS,
    SANDBOX_KINDS,
    SandboxLimits,
    check_image,
    gaia_sandbox,
)
from .scorer import gaia_scorer

TASK_VERSION = "1.0.0"
"""Bumped when results stop being comparable with earlier versions (see the README changelog)."""

DEFAULT_LEVEL: tuple[int, ...] = (1, 2, 3)
DEFAULT_SPLIT: Split = "validation"
DEFAULT_HUB = "huggingface"
DEFAULT_MESSAGE_LIMIT = 100
DEFAULT_SANDBOX = "docker"


@task
def gaia(
    level: int | str | Sequence[int] = DEFAULT_LEVEL,
    split: Split = DEFAULT_SPLIT,
    hub: str = DEFAULT_HUB,
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
    cpus: float | None = DEFAULT_CPUS,
    memory: str | None = DEFAULT_MEMORY,
    pids: int | None = DEFAULT_PIDS,
    sandbox: str = DEFAULT_SANDBOX,
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
        max_attempts: Submissions allowed per sample. Default 1.
        python: Also offer inspect's ``python`` tool (runs in the sandbox). Default off.
        web_search: Also offer inspect's ``web_search`` tool (the model's native search where it
            has one). Default off.
        mcp_servers: Host-side stdio MCP servers whose tools to offer: ``fetch``
            (mcp-server-fetch) or a command line, one or a list. Needs ``inspect-gaia[mcp]``.
        cpus: CPU limit per sandbox (capped at the machine's CPUs). Default 2; ``null`` lifts it.
        memory: Memory limit per sandbox, no swap beyond it. Default ``4g``; ``null`` lifts it.
        pids: Process limit per sandbox. Default 1024; ``null`` lifts it.
        sandbox: ``docker`` (compose.yaml, each sample's container started through the Docker
            API: ``gaia-docker``), ``compose`` (compose.yaml through inspect's ``docker compose``
            sandbox, ~6x slower per sample) or ``k8s`` (values.yaml, needs ``inspect-gaia[k8s]``).
    """
    levels = parse_levels(level)
    parse_ids(ids)
    _check_positive_int("command_timeout", command_timeout)
    _check_positive_int("max_attempts", max_attempts)
    for name, flag in (("network", network), ("python", python), ("web_search", web_search)):
        if not isinstance(flag, bool):
            raise GaiaParameterError(f"{name} must be true or false — got {flag!r}")
    if not isinstance(image, str) or not image.strip():
        raise GaiaParameterError(f"image must name a Docker image — got {image!r}")
    check_choice("sandbox", sandbox, SANDBOX_KINDS)
    limits = SandboxLimits(cpus=cpus, memory=memory, pids=pids)
    tools = gaia_tools(command_timeout, python, web_search, mcp_servers)

    dataset = gaia_dataset(
        split=split,
        level=levels,
        ids=ids,
        hub=hub,
        revision=revision,
        dataset_path=dataset_path,
        input_prompt=DEFAULT_INPUT_PROMPT,
    )
    # Before any sandbox starts: an image that is neither here nor pullable fails in one line.
    checked_image_id = check_image(image) if sandbox in ("docker", "compose") else None
    sandbox_spec = gaia_sandbox(image=image, network=network, limits=limits, kind=sandbox)
    return Task(
        dataset=dataset,
        solver=gaia_agent(command_timeout=command_timeout, max_attempts=max_attempts, tools=tools),
        scorer=gaia_scorer(),
        # The test split's answers are private: record them, report no accuracy.
        metrics=[] if split == "test" else None,
        sandbox=sandbox_spec,
        message_limit=DEFAULT_MESSAGE_LIMIT,
        # A sample that errors (a dead container, a refused model call) is still scored, so
        # accuracy keeps every selected sample in its denominator; the log is marked as an
        # error and `inspect eval-retry` reruns just those samples.
        score_on_error=True,
        # basic_agent answers a refusal with "please proceed" and asks again, up to the message
        # limit; a content_filter stop ends the sample at once instead (an error: scored, shown
        # in the log, rerun by eval-retry).
        config=GenerateConfig(fail_on_refusal=True),
        version=TASK_VERSION,
        metadata={
            "gaia": provenance(
                split=split,
                levels=levels,
                hub=hub,
                revision=revision,
                dataset_path=dataset_path,
                image=image,
                image_id=checked_image_id,
                network=network,
                limits=limits,
                sandbox=sandbox,
                sandbox_provider=sandbox_spec.type,
                command_timeout=command_timeout,
                max_attempts=max_attempts,
                tools=["bash", "submit"]
                + (["python"] if python else [])
                + (["web_search"] if web_search else [])
                + [f"mcp:{' '.join(c)}" for c in parse_mcp_servers(mcp_servers)],
            )
        },
    )


def _check_positive_int(name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise GaiaParameterError(f"{name} must be a whole number ≥ 1 — got {value!r}")


def provenance(
    *,
    split: str,
    levels: Sequence[int],
    hub: str,
    revision: str | None,
    dataset_path: str | None,
    image: str,
    image_id: str | None,
    network: bool,
    limits: SandboxLimits,
    sandbox: str,
    sandbox_provider: str,
    command_timeout: int,
    max_attempts: int,
    tools: list[str],
) -> dict[str, Any]:
    """What produced a run, for the log header (``inspect view`` shows it under the task)."""
    return {
        "split": split,
        "levels": list(levels),
        "hub": "local" if dataset_path else hub,
        "revision": resolved_revision(hub, revision, dataset_path),
        "dataset_path": dataset_path,
        "prompt_template_sha256": hashlib.sha256(DEFAULT_INPUT_PROMPT.encode()).hexdigest(),
        "tools": tools,
        "limits": {
            "message_limit": DEFAULT_MESSAGE_LIMIT,
            "command_timeout": command_timeout,
            "max_attempts": max_attempts,
            "cpus": limits.effective_cpus(),
            "memory": limits.memory,
            "pids": limits.pids,
        },
        "sandbox": sandbox,
        "sandbox_provider": sandbox_provider,
        "image": image,
        "image_id": image_id,
        "network": network,
        "inspect_ai_version": _version("inspect_ai"),
        "inspect_gaia_version": _version("inspect-gaia"),
    }


def _version(package: str) -> str | None:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None


@task
def gaia_level1(**kwargs: Any) -> Task:
    """GAIA level 1 questions (parameters as for ``gaia``)."""
    return gaia(level=1, **kwargs)


@task
def gaia_level2(**kwargs: Any) -> Task:
    """GAIA level 2 questions (parameters as for ``gaia``)."""
    return gaia(level=2, **kwargs)


@task
def gaia_level3(**kwargs: Any) -> Task:
    """GAIA level 3 questions (parameters as for ``gaia``)."""
    return gaia(level=3, **kwargs)
