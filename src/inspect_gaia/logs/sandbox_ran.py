"""The sandbox a run really used: inspect's ``--sandbox`` can replace the task's.

``inspect eval inspect_gaia/gaia --sandbox X`` (or ``eval(..., sandbox=X)``) starts every sample in
provider X instead of the task's (``gaia-docker``, ``gaia-compose`` or ``k8s``). inspect hands X
the task's compose config, with the task's image, limits and network applied, when X takes compose
files (``is_docker_compatible``) and finds no compose file of its own in the working directory;
otherwise X runs with that file, or with no config at all (inspect warns). The task's record,
written before the replacement, still names its own provider; the log's ``eval.sandbox`` says what
ran. It is read here, and decides (``provenance.comparable_settings``):

* the ``sandbox`` setting runs are pooled and labelled on is the provider that ran
  (``docker``, ``compose``, ``k8s`` for the task's own; ``X (inspect --sandbox)`` for another);
* a run whose egress proxy never started (``block_answer_sources`` under another provider: only
  ``gaia-docker`` runs it) is not counted as blocked, and says so;
* a run whose provider got another config than the task's says that the task's image, limits
  and network were not applied; so does one of the task's own provider given a config of the
  user's (``--sandbox k8s:allowlist.yaml``), told apart from the task's own by its form (a compose
  config built in memory; a values file named as ``sandboxes/k8s.write_values`` names them).

Decision: another package's provider is handed the task's compose config and recorded, never
refused: the task cannot see an eval-level ``--sandbox`` before its samples start, and a provider
that takes compose files runs GAIA's sandbox as written (what users reach past one machine for).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

from inspect_ai.log import EvalLog
from pydantic import BaseModel

from ..defaults import WRITTEN_VALUES

REPLACED = " (inspect --sandbox)"
"""How the ``sandbox`` setting marks a provider that replaced the task's."""


@dataclass(frozen=True)
class SandboxRan:
    """The provider the log's ``eval.sandbox`` names, and the config it got."""

    provider: str
    config_image: str | None
    """The ``default`` service's image of a compose config it got; ``None``: not a compose
    config (a file of its own, a values file, or none)."""
    config_file: str | None
    """The config file it got, when its config was a file."""


def read_sandbox(log: EvalLog) -> SandboxRan | None:
    """What ``eval.sandbox`` records; ``None`` when the log records no sandbox."""
    spec = log.eval.sandbox
    if spec is None:
        return None
    config: Any = spec.config
    if isinstance(config, BaseModel):
        config = config.model_dump()
    image = None
    if isinstance(config, Mapping):
        service = (config.get("services") or {}).get("default") or {}
        image = service.get("image") if isinstance(service, Mapping) else None
    return SandboxRan(
        provider=spec.type,
        config_image=str(image) if image is not None else None,
        config_file=config if isinstance(config, str) else None,
    )


def _own_config(ran: SandboxRan, kind: str) -> bool:
    """Whether the provider ran the config the task built (not one given with ``--sandbox``)."""
    if kind == "k8s":  # a values file the task wrote under its cache
        return ran.config_file is not None and bool(
            WRITTEN_VALUES.fullmatch(PurePath(ran.config_file).name)
        )
    return ran.config_file is None and ran.config_image is not None


def sandbox_setting(kind: str, own_provider: str, ran: SandboxRan | None) -> str:
    """The ``sandbox`` setting: the task's kind, or what replaced its provider or config."""
    if ran is None or (ran.provider == own_provider and _own_config(ran, kind)):
        return kind
    if ran.provider == own_provider:
        return f"{kind}:{ran.config_file or 'no config'}{REPLACED}"
    return ran.provider + REPLACED


def replacement_flags(
    ran: SandboxRan | None, kind: str, own_provider: str, image: str, blocked: bool
) -> list[str]:
    """Why a run in a replaced sandbox is not the task's sandbox; ``[]`` for the task's own.

    Args:
        ran: What the log's ``eval.sandbox`` records.
        kind: The task's ``-T sandbox``.
        own_provider: The provider the task asked for.
        image: The task's image reference.
        blocked: Whether the run asked for ``block_answer_sources``.
    """
    if ran is None or (ran.provider == own_provider and _own_config(ran, kind)):
        return []
    handed = ran.config_image == image
    got = "the task's compose config" if handed else (ran.config_file or "no config of the task")
    unapplied = "" if handed else ": the task's image, limits and network were not applied"
    what = "sandbox config" if ran.provider == own_provider else "sandbox"
    flags = [f"{what} replaced by inspect's --sandbox: {ran.provider} ran {got}{unapplied}"]
    if blocked:
        flags.append(
            f"block_answer_sources was asked, but {ran.provider} ran without the task's egress "
            "proxy: nothing was blocked"
        )
    return flags
