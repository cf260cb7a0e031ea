"""The compose config a GAIA sandbox spec carries, written to logs and read back from them.

inspect's ``ComposeConfig`` refuses any service field its model does not name, and it names no
``storage_opt`` (``-T disk=``). A field slipped in without validation is written to the log but
refused when the log is read, so ``inspect view``, ``eval-retry`` and ``report`` all fail on it.
``GaiaComposeConfig`` is inspect's model with the fields it lacks declared, validated when made,
and read back by both providers' ``config_deserialize`` (inspect tries its own model first, then
asks the provider), so a log keeps every sandbox setting and ``eval-retry`` reapplies it.

Reading a log back asks inspect's registry for the provider a config names. Where the registry
has none, inspect loads every installed package's entry point, and ours imports the task, the
agents and the scorers (nearly a hundred modules) only to read back a config. So the readers
first make both names known, while they read (``known_to_inspect``), with a provider that reads
configs and does nothing else. Argued against the alternative, an entry point that registers only
the providers: inspect finds ``inspect_gaia/gaia`` through the same entry point, so it must register
the task, and a provider module that stood alone would still load the whole provider (docker-py,
its channel, spares and proxy) for a reader that needs one pydantic model.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from inspect_ai.util import ComposeConfig, ComposeService, SandboxEnvironment, sandboxenv
from pydantic import BaseModel, Field, SerializerFunctionWrapHandler, model_serializer

from ..._compat import forget_sandbox, sandbox_registered
from ...defaults import COMPOSE_PROVIDER, PROVIDER


class GaiaComposeService(ComposeService):
    """inspect's compose service, plus the compose fields GAIA sets that inspect's lacks."""

    storage_opt: dict[str, str] | None = Field(default=None)
    """Storage driver options; ``size`` is the writable layer's limit (``-T disk=``)."""

    @model_serializer(mode="wrap")
    def _as_inspect_when_unset(self, handler: SerializerFunctionWrapHandler) -> Any:
        """The added fields, when unset, are not written.

        So a run without them logs what it did before, and its config equals (and hashes as)
        the ``ComposeConfig`` inspect reads such a log back as.
        """
        data = handler(self)
        if isinstance(data, dict) and self.storage_opt is None:
            data.pop("storage_opt", None)
        return data


class GaiaComposeConfig(ComposeConfig):
    """inspect's compose config whose services are ``GaiaComposeService``s."""

    services: dict[str, GaiaComposeService]  # type: ignore[assignment]
    """Service definitions, keyed by service name."""


def gaia_config(config: ComposeConfig, service: str, **fields: Any) -> GaiaComposeConfig:
    """``config`` with ``fields`` set on ``service``, every value validated (none slipped in).

    A field set to ``None`` is dropped, as if the compose file did not name it.
    """
    raw = config.model_dump(by_alias=True, exclude_none=True)
    raw["services"][service] = {
        k: v for k, v in {**raw["services"][service], **fields}.items() if v is not None
    }
    return GaiaComposeConfig.model_validate(raw)


def deserialize(config: dict[str, Any]) -> GaiaComposeConfig:
    """A config as a log holds it (the providers' ``config_deserialize``)."""
    return GaiaComposeConfig.model_validate(config)


class _ReadsConfigs(SandboxEnvironment):
    """A provider known to inspect only so that a log's config reads back (``known_to_inspect``).

    Its configs are what both real providers' are; it starts nothing (and is never asked to: the
    real provider replaces it before any task runs).
    """

    @classmethod
    def is_docker_compatible(cls) -> bool:
        """As both real providers: configs are compose files."""
        return True

    @classmethod
    def config_deserialize(cls, config: dict[str, Any]) -> BaseModel:
        """A config as a log holds it (the real providers' own reading)."""
        return deserialize(config)


@contextmanager
def known_to_inspect() -> Iterator[None]:
    """While a log is read, a config reader under each provider name inspect does not know yet.

    Only while: the readers' providers start nothing, so none may stay where a run could find it.
    """
    added: list[tuple[str, type[SandboxEnvironment]]] = []
    for name in (PROVIDER, COMPOSE_PROVIDER):
        if not sandbox_registered(name):
            reader = type(f"ReadsConfigs_{name}", (_ReadsConfigs,), {"__module__": __name__})
            added.append((name, sandboxenv(name=name)(reader)))  # as inspect_gaia/<name>
    try:
        yield
    finally:
        for name, reader in added:
            forget_sandbox(name, reader)
