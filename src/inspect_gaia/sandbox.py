"""The per-sample sandbox spec: Docker from the repository's ``compose.yaml``, or Kubernetes.

``compose.yaml`` (and ``values.yaml`` for inspect-k8s-sandbox) are read as written, then the task's
image, network setting and resource limits are applied to a copy: in memory for Docker, as a file
under the cache directory for Kubernetes (its provider takes a path). The Docker providers
themselves are in ``_docker``; this module only names them.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args

import yaml
from inspect_ai.util import ComposeConfig, SandboxEnvironmentSpec, parse_compose_yaml

from ._docker import COMPOSE_PROVIDER, EGRESS_KEY, PROVIDER
from .hub import cache_dir

PACKAGE_DIR = Path(__file__).resolve().parent
COMPOSE_FILE = PACKAGE_DIR / "compose.yaml"
"""The compose file shipped in the package (a link to the repository root's in a checkout)."""
VALUES_FILE = PACKAGE_DIR / "values.yaml"

SandboxKind = Literal["docker", "compose", "k8s"]
SANDBOX_KINDS: tuple[str, ...] = get_args(SandboxKind)
PROVIDERS: dict[str, str] = {"docker": PROVIDER, "compose": COMPOSE_PROVIDER, "k8s": "k8s"}
"""The inspect sandbox provider each ``-T sandbox=`` kind runs on."""

DEFAULT_IMAGE = "python:3.11"
DEFAULT_NETWORK = True
DEFAULT_CPUS = 2.0
DEFAULT_MEMORY = "4g"
DEFAULT_PIDS = 1024
"""Per-sandbox limits: a runaway command (fork bomb, memory hog) fails only its own sample."""


@dataclass(frozen=True)
class SandboxLimits:
    """CPU, memory, process and disk limits of one sandbox; ``None`` lifts a limit.

    Values are validated where task parameters are parsed (``_params``).
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


def size_bytes(size: object) -> int | None:
    """``512m``, ``4g``, ``1024k``, ``2gb`` or a byte count -> bytes; ``None`` if not a size."""
    if isinstance(size, bool):
        return None
    text = str(size).strip().lower().removesuffix("b")
    units = {"k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}
    try:
        value = float(text[:-1]) * units[text[-1]] if text and text[-1] in units else float(text)
    except ValueError:
        return None
    return int(value) if value > 0 else None


def gaia_compose(
    image: str = DEFAULT_IMAGE,
    network: bool = DEFAULT_NETWORK,
    limits: SandboxLimits | None = None,
    egress: Mapping[str, Any] | None = None,
) -> ComposeConfig:
    """``compose.yaml`` with its ``default`` service's image, network and limits set as asked.

    ``egress`` (answer-source rules) asks gaia-docker to reach the network only through the run's
    egress proxy (``_docker/egress.py``), as the service extension ``EGRESS_KEY``.
    """
    limits = limits or SandboxLimits()
    config = parse_compose_yaml(str(COMPOSE_FILE), multiple_services=False)
    service = config.services["default"]
    update: dict[str, Any] = {
        "image": image,
        "cpus": limits.effective_cpus(),
        "mem_limit": limits.memory,
        "pids_limit": limits.pids,
    }
    if limits.memory is not None:
        update["memswap_limit"] = limits.memory  # no swap beyond the memory limit
    if limits.disk is not None:
        update["storage_opt"] = {"size": limits.disk}
    if not network:
        update["network_mode"] = "none"
    if egress is not None:
        update[EGRESS_KEY] = dict(egress)
    return config.model_copy(update={"services": {"default": service.model_copy(update=update)}})


def gaia_k8s_values(
    image: str = DEFAULT_IMAGE,
    network: bool = DEFAULT_NETWORK,
    limits: SandboxLimits | None = None,
) -> Path:
    """Write ``values.yaml`` for inspect-k8s-sandbox with the task's settings; returns its path."""
    limits = limits or SandboxLimits()
    values = yaml.safe_load(VALUES_FILE.read_text())
    service = values["services"]["default"]
    service["image"] = image
    resource_limits: dict[str, str] = {}
    if limits.cpus is not None:
        resource_limits["cpu"] = f"{float(limits.cpus):g}"
    if limits.memory is not None:
        resource_limits["memory"] = f"{size_bytes(limits.memory)}"
    service["resources"] = {"limits": resource_limits, "requests": dict(resource_limits)}
    values["allowEntities"] = ["world"] if network else []
    text = yaml.safe_dump(values, sort_keys=False)
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    path = cache_dir() / "k8s" / f"values-{digest}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.is_file():
        path.write_text(text)
    return path


def gaia_sandbox(
    image: str = DEFAULT_IMAGE,
    network: bool = DEFAULT_NETWORK,
    limits: SandboxLimits | None = None,
    kind: SandboxKind = "docker",
    egress: Mapping[str, Any] | None = None,
) -> SandboxEnvironmentSpec:
    """Sandbox spec for GAIA samples.

    Args:
        image: Image of the ``default`` service (an image present locally is never pulled).
        network: ``False`` gives the container no network at all.
        limits: CPU, memory, process and disk limits (defaults: 2 CPUs, 4g, 1024 processes).
        kind: ``docker`` (compose.yaml, started through the Docker API: ``gaia-docker``),
            ``compose`` (compose.yaml, started by inspect's ``docker compose`` sandbox) or ``k8s``
            (values.yaml, needs inspect-k8s-sandbox).
        egress: Answer-source rules the sandbox's traffic is filtered by (gaia-docker only).
    """
    if kind == "k8s":
        import k8s_sandbox  # noqa: F401 -- registers the "k8s" sandbox with inspect

        return SandboxEnvironmentSpec("k8s", str(gaia_k8s_values(image, network, limits)))
    return SandboxEnvironmentSpec(PROVIDERS[kind], gaia_compose(image, network, limits, egress))
