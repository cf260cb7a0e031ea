"""The per-sample sandbox spec: Docker from the repository's ``compose.yaml``, or Kubernetes.

``compose.yaml`` (and ``values.yaml`` for inspect-k8s-sandbox) are read as written, then the task's
image, network setting and resource limits are applied to a copy: in memory for Docker, as a file
under the cache directory for Kubernetes (its provider takes a path; what goes into it, for either
kind of cluster, is ``k8s``'s). The Docker providers themselves are in ``docker``; this module
only names them.

**Capabilities.** A sandbox keeps only ``CAPABILITIES``: what root needs to install and own files
(apt drops to its ``_apt`` user: SETUID, SETGID; dpkg, tar and ``chown`` on an attachment: CHOWN,
FOWNER, FSETID, DAC_OVERRIDE; ``kill`` of another user's process: KILL). Dropped from Docker's
defaults: NET_RAW above all, since a run's sandboxes share an internal network with its egress
proxy (traffic between containers stays on there, or they could not reach the proxy) and a raw
socket forged ARP replies that silently cut another sample's requests to the proxy, or put the
forger in their middle (``tests/test_docker_isolation.py``); and MKNOD, SETPCAP, SETFCAP,
SYS_CHROOT, NET_BIND_SERVICE and AUDIT_WRITE, which nothing a GAIA agent does needs. ``ping``
keeps working without NET_RAW (Docker opens ICMP datagram sockets to every group:
``net.ipv4.ping_group_range``), and so does binding a port below 1024
(``net.ipv4.ip_unprivileged_port_start`` is 0 in a container). The other fix, a network per
sandbox with the proxy on each, was not taken: a network per sample is what gaia-docker avoids
(inspect's compose sandbox makes one: ~3 s per sample, and Docker's address pools run out near 30
samples at once), and the proxy, joined to every network, would still be every sandbox's
neighbour. Kubernetes gets the same list (values.yaml); inspect's compose sandbox and any
``--sandbox X`` that takes compose files read it from compose.yaml. Not a pooling setting: the
config each log records carries it, and what an honest agent can do is unchanged
(docs/sandboxes.md, "Capabilities").
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml
from inspect_ai.util import SandboxEnvironmentSpec, parse_compose_yaml

from ..defaults import PROVIDERS, SandboxKind
from ..egress.spec import EGRESS_KEY, EgressSpec
from ..options import DEFAULT_IMAGE, DEFAULT_NETWORK, SandboxLimits
from ..questions.hub import cache_dir
from .docker.config import GaiaComposeConfig, gaia_config
from .k8s import k8s_values, operator_values, write_values

PACKAGE_DIR = Path(__file__).resolve().parent.parent
COMPOSE_FILE = PACKAGE_DIR / "compose.yaml"
"""The compose file shipped in the package (a link to the repository root's in a checkout)."""
VALUES_FILE = PACKAGE_DIR / "values.yaml"

MIN_CPUS = 0.01
"""Docker's smallest CPU limit (below it the kernel refuses the CFS quota and no sample starts)."""
MIN_MEMORY = 6 * 2**20
"""Docker's smallest memory limit ("Minimum memory limit allowed is 6MB")."""
MIN_PIDS = 16
"""Ours: below it the sandbox's own shell and tools cannot run."""
MAX_PIDS = 4_194_304
"""Linux's most (``PID_MAX_LIMIT``): the kernel refuses a larger ``pids.max``."""
MAX_SIZE = 2**63 - 1
"""Docker reads sizes as signed 64-bit byte counts."""

CAPABILITIES: tuple[str, ...] = (
    "CHOWN",
    "DAC_OVERRIDE",
    "FOWNER",
    "FSETID",
    "KILL",
    "SETGID",
    "SETUID",
)
"""The only Linux capabilities a sandbox keeps: compose.yaml's ``cap_add`` after
``cap_drop: [ALL]``, values.yaml's ``securityContext.capabilities`` (the module docstring argues
the list)."""
CAPABILITY_BITS: dict[str, int] = {
    "CHOWN": 0,
    "DAC_OVERRIDE": 1,
    "DAC_READ_SEARCH": 2,
    "FOWNER": 3,
    "FSETID": 4,
    "KILL": 5,
    "SETGID": 6,
    "SETUID": 7,
    "SETPCAP": 8,
    "LINUX_IMMUTABLE": 9,
    "NET_BIND_SERVICE": 10,
    "NET_BROADCAST": 11,
    "NET_ADMIN": 12,
    "NET_RAW": 13,
    "IPC_LOCK": 14,
    "IPC_OWNER": 15,
    "SYS_MODULE": 16,
    "SYS_RAWIO": 17,
    "SYS_CHROOT": 18,
    "SYS_PTRACE": 19,
    "SYS_PACCT": 20,
    "SYS_ADMIN": 21,
    "SYS_BOOT": 22,
    "SYS_NICE": 23,
    "SYS_RESOURCE": 24,
    "SYS_TIME": 25,
    "SYS_TTY_CONFIG": 26,
    "MKNOD": 27,
    "LEASE": 28,
    "AUDIT_WRITE": 29,
    "AUDIT_CONTROL": 30,
    "SETFCAP": 31,
    "MAC_OVERRIDE": 32,
    "MAC_ADMIN": 33,
    "SYSLOG": 34,
    "WAKE_ALARM": 35,
    "BLOCK_SUSPEND": 36,
    "AUDIT_READ": 37,
    "PERFMON": 38,
    "BPF": 39,
    "CHECKPOINT_RESTORE": 40,
}
"""Linux's capability numbers (``linux/capability.h``): a ``CapEff`` mask read back as names."""


def capability_mask(names: tuple[str, ...] | list[str]) -> int:
    """The ``CapEff`` bit mask of capability ``names``."""
    return sum(1 << CAPABILITY_BITS[name] for name in names)


def capability_names(mask: int) -> list[str]:
    """The names of the capabilities a ``CapEff`` mask holds (``CAP_<n>`` for one Linux added)."""
    known = {bit: name for name, bit in CAPABILITY_BITS.items()}
    return [known.get(bit, f"CAP_{bit}") for bit in range(64) if mask >> bit & 1]


_SIZE = re.compile(r"(\d+(?:\.\d+)?) ?([kmgt]?)b?", re.IGNORECASE)
_UNITS = {"": 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}


def size_bytes(size: object) -> int | None:
    """``512m``, ``4g``, ``1.5t``, ``2gb``, ``1024`` (bytes) -> bytes; ``None`` if not a size.

    Only the spellings every consumer reads alike are sizes (docker-py has no ``t``, docker
    compose no ``1e3``): a number, one optional unit of ``k``, ``m``, ``g``, ``t`` (powers of 1024)
    and an optional ``b``. What reaches Docker is ``docker_size``'s spelling, never the user's.
    """
    if isinstance(size, bool) or not isinstance(size, (str, int)):
        return None
    match = _SIZE.fullmatch(str(size).strip())
    if match is None:
        return None
    value = int(float(match[1]) * _UNITS[match[2].lower()])
    return value if value > 0 else None


def docker_size(size: int) -> str:
    """A byte count as docker-py and docker compose both read it: the largest exact unit."""
    for suffix in ("g", "m", "k"):
        if size % _UNITS[suffix] == 0:
            return f"{size // _UNITS[suffix]}{suffix}"
    return str(size)


def gaia_compose(
    image: str = DEFAULT_IMAGE,
    network: bool = DEFAULT_NETWORK,
    limits: SandboxLimits | None = None,
    egress: EgressSpec | None = None,
) -> GaiaComposeConfig:
    """``compose.yaml`` with its ``default`` service's image, network and limits set as asked.

    Every value is validated into a ``GaiaComposeConfig``, the model both Docker providers read
    back from a log (``docker/config``). ``egress`` asks gaia-docker to reach the network only
    through the run's egress proxy (``sandboxes/docker/egress.py``), under ``EGRESS_KEY``.
    """
    limits = limits or SandboxLimits()
    config = parse_compose_yaml(str(COMPOSE_FILE), multiple_services=False)
    return gaia_config(
        config,
        "default",
        image=image,
        cpus=limits.effective_cpus(),
        mem_limit=limits.memory,
        # no swap beyond the memory limit
        memswap_limit=limits.memory,
        pids_limit=limits.pids,
        storage_opt=None if limits.disk is None else {"size": limits.disk},
        **({} if network else {"network_mode": "none"}),
        **({} if egress is None else {EGRESS_KEY: egress.as_json()}),
    )


def gaia_k8s_values(
    image: str = DEFAULT_IMAGE,
    network: bool = DEFAULT_NETWORK,
    limits: SandboxLimits | None = None,
) -> Path:
    """Write ``values.yaml`` for inspect-k8s-sandbox with the task's settings; returns its path.

    For the kind of cluster the operator's values file says (``k8s``).

    Raises:
        GaiaParameterError: The operator's values conflict with the task's settings.
    """
    limits = limits or SandboxLimits()
    values = k8s_values(
        yaml.safe_load(VALUES_FILE.read_text()),
        image=image,
        network=network,
        cpus=limits.cpus,
        memory_bytes=size_bytes(limits.memory),
        disk_bytes=size_bytes(limits.disk),
        operator=operator_values(),
    )
    return write_values(values, cache_dir() / "k8s")


def gaia_sandbox(
    image: str = DEFAULT_IMAGE,
    network: bool = DEFAULT_NETWORK,
    limits: SandboxLimits | None = None,
    kind: SandboxKind = "docker",
    egress: EgressSpec | None = None,
) -> SandboxEnvironmentSpec:
    """Sandbox spec for GAIA samples.

    Args:
        image: Image of the ``default`` service (an image present locally is never pulled).
        network: ``False`` gives the container no network at all.
        limits: CPU, memory, process and disk limits (defaults: 2 CPUs, 4g, 1024 processes).
        kind: ``docker`` (compose.yaml, started through the Docker API: ``gaia-docker``),
            ``compose`` (compose.yaml, started by inspect's ``docker compose`` sandbox) or ``k8s``
            (values.yaml, needs inspect-k8s-sandbox).
        egress: The run's egress proxy, its rules, bodies or replay (gaia-docker only).
    """
    if kind == "k8s":
        import k8s_sandbox  # noqa: F401 -- registers the "k8s" sandbox with inspect

        return SandboxEnvironmentSpec("k8s", str(gaia_k8s_values(image, network, limits)))
    return SandboxEnvironmentSpec(PROVIDERS[kind], gaia_compose(image, network, limits, egress))
