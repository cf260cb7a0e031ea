"""compose.yaml's ``default`` service, translated into Docker API container arguments.

Pure functions: no engine is contacted here. Each compose field gaia-docker applies is listed once,
in ``_FIELDS``, with where it goes (the container or its host config) and how its value translates;
any other field is refused with a one-line error, never ignored, so a compose file that asks for
something this provider would not do cannot silently run without it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal, NamedTuple

from inspect_ai.util import ComposeConfig, SandboxEnvironmentConfigType, parse_compose_yaml

from ...defaults import PROVIDER
from ...errors import GaiaError


class _Field(NamedTuple):
    part: Literal["container", "host"]
    argument: str
    convert: Callable[[Any], Any] | None = None


def _environment(value: Any) -> Any:
    if isinstance(value, Mapping):
        return [f"{k}={v}" if v is not None else k for k, v in value.items()]
    return value


def _storage_opt(value: Any) -> dict[str, str]:
    return {str(k): str(v) for k, v in dict(value).items()}


_FIELDS: dict[str, _Field] = {
    "image": _Field("container", "image"),
    "command": _Field("container", "command"),
    "entrypoint": _Field("container", "entrypoint"),
    "environment": _Field("container", "environment", _environment),
    "user": _Field("container", "user"),
    "hostname": _Field("container", "hostname"),
    "working_dir": _Field("container", "working_dir"),
    "init": _Field("host", "init"),
    "read_only": _Field("host", "read_only"),
    "cap_add": _Field("host", "cap_add"),
    "cap_drop": _Field("host", "cap_drop"),
    "security_opt": _Field("host", "security_opt"),
    "pids_limit": _Field("host", "pids_limit", int),
    "mem_limit": _Field("host", "mem_limit"),
    "memswap_limit": _Field("host", "memswap_limit"),
    "shm_size": _Field("host", "shm_size"),
    "cpus": _Field("host", "nano_cpus", lambda cpus: int(float(cpus) * 1e9)),
    "storage_opt": _Field("host", "storage_opt", _storage_opt),
    # network_mode is read by create_kwargs itself: `none`, or the run's network.
    "network_mode": _Field("host", "network_mode"),
}

SUPPORTED_FIELDS = frozenset(_FIELDS)
"""compose.yaml service fields this provider applies; any other field is refused, not ignored."""

LIMIT_FLAGS: dict[str, str] = {
    "cpus": "cpus",
    "mem_limit": "memory",
    "memswap_limit": "memory",
    "pids_limit": "pids",
    "storage_opt": "disk",
}
"""The service fields that carry the task's limits, and the ``-T`` parameter each comes from."""


def service_config(config: SandboxEnvironmentConfigType | None) -> dict[str, Any]:
    """The ``default`` service of a compose config (a ComposeConfig or a file path).

    Raises:
        GaiaError: No config, other services, fields this provider does not apply, or no image.
    """
    if config is None:
        raise GaiaError(
            f"the {PROVIDER} sandbox needs a compose config",
            fix="run it through the gaia task, or give the sandbox a compose file",
        )
    if isinstance(config, str):
        config = parse_compose_yaml(config, multiple_services=True)
    if not isinstance(config, ComposeConfig):
        raise GaiaError(f"the {PROVIDER} sandbox takes a compose file", got=type(config))
    if set(config.services) != {"default"}:
        raise GaiaError(
            f"the {PROVIDER} sandbox runs one service named `default`",
            fix=f"this compose file has {', '.join(sorted(config.services))}; use "
            "`-T sandbox=compose` for several services",
        )
    service = config.services["default"].model_dump(exclude_none=True, by_alias=True)
    unsupported = sorted(k for k in service if k not in SUPPORTED_FIELDS and not k.startswith("x-"))
    if unsupported:
        raise GaiaError(
            f"compose.yaml field(s) {', '.join(unsupported)} are not applied by the "
            f"{PROVIDER} sandbox",
            fix="remove them, or use `-T sandbox=compose` (inspect's compose sandbox)",
        )
    if "image" not in service:
        raise GaiaError("compose.yaml's `default` service names no image")
    mode = service.get("network_mode")
    if mode not in (None, "none", "bridge"):
        raise GaiaError(
            f"network_mode {mode!r} is not applied by the {PROVIDER} sandbox (only `none`)",
            fix="use `-T sandbox=compose`",
        )
    return service


def create_kwargs(service: Mapping[str, Any], network: str | None) -> dict[str, Any]:
    """``APIClient.create_container`` arguments (with a ``host_config`` dict) for a service.

    Args:
        service: A service as ``service_config`` returns it.
        network: The run's network, used unless the service has ``network_mode: none``.
    """
    container: dict[str, Any] = {}
    host: dict[str, Any] = {}
    for name, value in service.items():
        field = _FIELDS.get(name)
        if field is None or value is None:
            continue
        (container if field.part == "container" else host)[field.argument] = (
            field.convert(value) if field.convert else value
        )
    host["network_mode"] = "none" if service.get("network_mode") == "none" else network
    if host["network_mode"] is None:
        del host["network_mode"]
    return {**container, "host_config": host}


def limits_host_config(service: Mapping[str, Any]) -> dict[str, Any]:
    """The host-config arguments of a service's limits alone (for a probe container)."""
    limits = {k: v for k, v in service.items() if k in LIMIT_FLAGS}
    return dict(create_kwargs(limits, network=None)["host_config"])


def limit_flags(service: Mapping[str, Any], *, disk: bool) -> str:
    """The service's limits as the ``-T`` values they come from (``-T cpus=2 -T memory=4g``)."""
    values = {
        flag: service[field]["size"] if field == "storage_opt" else service[field]
        for field, flag in LIMIT_FLAGS.items()
        if service.get(field) is not None and (disk or field != "storage_opt")
    }
    return " ".join(f"-T {flag}={value}" for flag, value in values.items())


def network_wanted(service: Mapping[str, Any]) -> bool:
    """Whether the service's container joins the run's network (``network_mode`` is not none)."""
    return service.get("network_mode") != "none"
