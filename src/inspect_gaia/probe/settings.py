"""What the run's own sandbox settings allow, read on the host before any sandbox starts.

The routes in the sandbox (``inside.py``) see what a sandbox really got; these checks read what
the task asked for: the compose service gaia-docker and inspect's compose sandbox start, or the
values inspect-k8s-sandbox's chart renders, merged with the operator's file (``k8s``). On a cluster
they are what the probe can say before its pods run, and without one (as in this repository's
tests) all it can: what a sandbox would be allowed under the chart's network policy. Each result is
a route of the ``settings`` family, judged here, and added to every sample's routes.

``CHECKS`` is the list: **a check is one entry there**, a function of the service (or the values)
that returns its outcome and what it found.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from ..sandboxes.spec import CAPABILITIES
from .outcomes import RouteOutcome

Found = tuple[str, str]
"""An outcome and one line of what was found."""
_UNCONFINED = (
    "seccomp=unconfined",
    "seccomp:unconfined",
    "apparmor=unconfined",
    "apparmor:unconfined",
)


@dataclass(frozen=True)
class Check:
    """One check of the sandbox's settings: its name, and its reading of Docker's and k8s'."""

    name: str
    docker: Callable[[Mapping[str, Any]], Found]
    k8s: Callable[[Mapping[str, Any]], Found]


def _capabilities(service: Mapping[str, Any]) -> Found:
    if service.get("privileged"):
        return "open", "privileged: every capability and device"
    added = [c.upper().removeprefix("CAP_") for c in service.get("cap_add") or []]
    dropped = [c.upper() for c in service.get("cap_drop") or []]
    if "ALL" not in dropped:
        return "open", f"cap_drop is {dropped or 'empty'}: Docker's defaults, NET_RAW among them"
    extra = sorted(set(added) - set(CAPABILITIES))
    if extra:
        return "open", f"cap_add beyond the task's: {', '.join(extra)}"
    return "empty", f"cap_drop ALL, cap_add {', '.join(added)}"


def _k8s_capabilities(values: Mapping[str, Any]) -> Found:
    context = _default(values).get("securityContext") or {}
    if context.get("privileged"):
        return "open", "securityContext.privileged: every capability and device"
    capabilities = context.get("capabilities") or {}
    return _capabilities({"cap_add": capabilities.get("add"), "cap_drop": capabilities.get("drop")})


def _mounts(service: Mapping[str, Any]) -> Found:
    volumes = [
        str(v if not isinstance(v, Mapping) else v.get("source", v))
        for v in service.get("volumes") or []
    ]
    if volumes:
        return (
            "reached",
            f"volumes: {', '.join(volumes)[:200]} (the routes in the sandbox read them)",
        )
    return "empty", "no volume"


def _k8s_mounts(values: Mapping[str, Any]) -> Found:
    service = _default(values)
    volumes = [*(service.get("volumes") or []), *(service.get("volumeMounts") or [])]
    if volumes:
        return "reached", f"volumes: {str(volumes)[:200]} (not read without a cluster)"
    return "empty", "no volume"


def _network(service: Mapping[str, Any]) -> Found:
    mode = service.get("network_mode")
    if mode == "host":
        return "open", "network_mode: host: the host's own network and services"
    if mode == "none":
        return "empty", "network_mode: none"
    return "reached", "the run's network (the routes in the sandbox say what it reaches)"


def _k8s_network(values: Mapping[str, Any]) -> Found:
    if not (values.get("networkPolicy") or {}).get("enabled", True):
        return "open", "networkPolicy disabled: egress is whatever the cluster allows (no proxy)"
    entities = list(values.get("allowEntities") or [])
    if "world" in entities or "all" in entities:
        return (
            "open",
            f"allowEntities {entities}: every listed answer source is reachable (no proxy)",
        )
    allowed = [*(values.get("allowDomains") or []), *(values.get("allowCIDR") or [])]
    if entities or allowed:
        return "reached", f"allowed: {', '.join(map(str, [*entities, *allowed]))[:200]}"
    return "empty", "the chart's policy: its own pod and DNS only"


def _host(service: Mapping[str, Any]) -> Found:
    shared = [k for k in ("pid", "ipc", "userns_mode", "cgroup") if service.get(k) == "host"]
    unconfined = [o for o in service.get("security_opt") or [] if str(o) in _UNCONFINED]
    devices = list(service.get("devices") or [])
    if shared or unconfined or devices:
        return "open", f"shares {shared}, {unconfined}, devices {devices}"
    return "empty", "nothing of the host's shared"


def _k8s_host(values: Mapping[str, Any]) -> Found:
    runtime = _default(values).get("runtimeClassName", "gvisor")
    context = _default(values).get("securityContext") or {}
    if values.get("automountServiceAccountToken"):
        return "open", "automountServiceAccountToken: a cluster credential in every sandbox"
    if context.get("allowPrivilegeEscalation") is True or context.get("runAsUser") == 0:
        return "reached", f"runtime {runtime}; root with privilege escalation"
    return "empty", f"runtime {runtime}"


def _host_tools(tools: Mapping[str, Any]) -> Found:
    outside = [name for name in ("web_search", "mcp_servers") if tools.get(name)]
    if outside:
        return "open", f"{', '.join(outside)} run on the host, beside any sandbox and its proxy"
    return "empty", "every tool runs in the sandbox"


CHECKS: tuple[Check, ...] = (
    Check("settings.capabilities", _capabilities, _k8s_capabilities),
    Check("settings.mounts", _mounts, _k8s_mounts),
    Check("settings.network", _network, _k8s_network),
    Check("settings.host", _host, _k8s_host),
)
"""Every check of the sandbox's settings, in the order they are reported."""


def settings_routes(
    kind: str, config: object, tools: Mapping[str, Any], operator: Mapping[str, Any] | None = None
) -> list[RouteOutcome]:
    """The checks' outcomes for a sandbox spec's config (a compose config, or a values file).

    Args:
        kind: ``docker``, ``compose`` or ``k8s`` (``-T sandbox``).
        config: The spec's config: a ``ComposeConfig``, or the path of the values file written.
        tools: The opt-in tools that run on the host (``web_search``, ``mcp_servers``).
        operator: The operator's values (``INSPECT_SANDBOX_VALUES``), merged over the task's as
            the chart merges them.
    """
    if kind == "k8s":
        values = _merged(yaml.safe_load(Path(str(config)).read_text()), operator or {})
        found = [(check.name, check.k8s(values)) for check in CHECKS]
    else:
        service = config.services["default"].model_dump(exclude_none=True)  # type: ignore[attr-defined]
        found = [(check.name, check.docker(service)) for check in CHECKS]
    found.append(("settings.host_tools", _host_tools(tools)))
    return [RouteOutcome(name, "settings", outcome, what) for name, (outcome, what) in found]


def _default(values: Mapping[str, Any]) -> Mapping[str, Any]:
    return (values.get("services") or {}).get("default") or {}


def _merged(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """Helm's merge of values files: maps merged key by key, anything else replaced."""
    merged = dict(base)
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = _merged(merged[key], value)
        else:
            merged[key] = value
    return merged
