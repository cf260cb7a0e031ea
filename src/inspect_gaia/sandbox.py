"""The per-sample sandbox: Docker from the repository's ``compose.yaml``, or Kubernetes.

``compose.yaml`` (and ``values.yaml`` for inspect-k8s-sandbox) are read as written, then the task's
image, network setting and resource limits are applied to a copy: in memory for Docker, as a file
under the cache directory for Kubernetes (its provider takes a path).
"""

from __future__ import annotations

import functools
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args

import yaml
from inspect_ai.util import ComposeConfig, SandboxEnvironmentSpec
from inspect_ai.util._sandbox.compose import parse_compose_yaml

from .docker_sandbox import PROVIDER
from .errors import GaiaParameterError, image_unavailable
from .hub import cache_dir

PACKAGE_DIR = Path(__file__).resolve().parent
COMPOSE_FILE = PACKAGE_DIR / "compose.yaml"
"""The compose file shipped in the package (a link to the repository root's in a checkout)."""
VALUES_FILE = PACKAGE_DIR / "values.yaml"

SandboxKind = Literal["docker", "compose", "k8s"]
SANDBOX_KINDS: tuple[str, ...] = get_args(SandboxKind)

DEFAULT_IMAGE = "python:3.11"
DEFAULT_NETWORK = True
DEFAULT_CPUS = 2.0
DEFAULT_MEMORY = "4g"
DEFAULT_PIDS = 1024
"""Per-sandbox limits: a runaway command (fork bomb, memory hog) fails only its own sample."""


@dataclass(frozen=True)
class SandboxLimits:
    """CPU, memory and process limits of one sandbox; ``None`` lifts a limit."""

    cpus: float | None = DEFAULT_CPUS
    memory: str | None = DEFAULT_MEMORY
    pids: int | None = DEFAULT_PIDS

    def __post_init__(self) -> None:
        """Reject values Docker would refuse only once a sample starts."""
        if self.cpus is not None and (isinstance(self.cpus, bool) or float(self.cpus) <= 0):
            raise GaiaParameterError(f"cpus must be a positive number — got {self.cpus!r}")
        if self.memory is not None and _memory_bytes(self.memory) is None:
            raise GaiaParameterError(
                f"memory must be a size such as 512m or 4g — got {self.memory!r}"
            )
        if self.pids is not None and (isinstance(self.pids, bool) or int(self.pids) < 16):
            raise GaiaParameterError(f"pids must be 16 or more — got {self.pids!r}")

    def effective_cpus(self) -> float | None:
        """The CPU limit, capped at this machine's CPUs (Docker refuses more)."""
        if self.cpus is None:
            return None
        return min(float(self.cpus), float(os.cpu_count() or 1))


def _memory_bytes(size: str) -> int | None:
    text = str(size).strip().lower().removesuffix("b")
    units = {"k": 2**10, "m": 2**20, "g": 2**30}
    try:
        if text and text[-1] in units:
            return int(float(text[:-1]) * units[text[-1]])
        return int(text)
    except ValueError:
        return None


@functools.lru_cache(maxsize=64)
def check_image(image: str) -> str | None:
    """The local image's id; ``None`` when Docker cannot be asked or the registry will serve it.

    Raises:
        GaiaError: Docker answers, the image is not there, and its registry cannot provide it
            (e.g. no registry reachable) — every sample would fail to start.
    """
    import docker
    from docker.errors import ImageNotFound

    try:
        client = docker.from_env(timeout=10)
        client.ping()
    except Exception:  # no engine: inspect's own Docker check reports that, with its fix
        return None
    try:
        return str(client.images.get(image).id)
    except ImageNotFound:
        pass
    except Exception:
        return None
    try:
        client.images.get_registry_data(image)
        return None  # pullable: inspect pulls it before the first sample
    except Exception as ex:
        raise image_unavailable(image, str(ex).splitlines()[0][:200]) from ex


def gaia_compose(
    image: str = DEFAULT_IMAGE,
    network: bool = DEFAULT_NETWORK,
    limits: SandboxLimits | None = None,
) -> ComposeConfig:
    """``compose.yaml`` with its ``default`` service's image, network and limits set as asked."""
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
    if not network:
        update["network_mode"] = "none"
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
        resource_limits["memory"] = f"{_memory_bytes(limits.memory)}"
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
    kind: str = "docker",
) -> SandboxEnvironmentSpec:
    """Sandbox spec for GAIA samples.

    Args:
        image: Image of the ``default`` service (an image present locally is never pulled).
        network: ``False`` gives the container no network at all.
        limits: CPU, memory and process limits (defaults: 2 CPUs, 4g, 1024 processes).
        kind: ``docker`` (compose.yaml, started through the Docker API: ``gaia-docker``),
            ``compose`` (compose.yaml, started by inspect's ``docker compose`` sandbox) or ``k8s``
            (values.yaml, needs inspect-k8s-sandbox).
    """
    if kind == "docker":
        return SandboxEnvironmentSpec(PROVIDER, gaia_compose(image, network, limits))
    if kind == "compose":
        return SandboxEnvironmentSpec("docker", gaia_compose(image, network, limits))
    if kind == "k8s":
        try:
            import k8s_sandbox  # noqa: F401 -- registers the "k8s" sandbox with inspect
        except ImportError as ex:
            raise GaiaParameterError(
                "sandbox=k8s needs inspect-k8s-sandbox — install it with "
                "`pip install 'inspect-gaia[k8s]'`"
            ) from ex
        return SandboxEnvironmentSpec("k8s", str(gaia_k8s_values(image, network, limits)))
    raise GaiaParameterError(f"sandbox must be one of {', '.join(SANDBOX_KINDS)} — got {kind!r}")
