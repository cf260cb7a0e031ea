"""The compose config a GAIA sandbox spec carries, written to logs and read back from them.

inspect's ``ComposeConfig`` refuses any service field its model does not name, and it names no
``storage_opt`` (``-T disk=``). A field slipped in without validation is written to the log but
refused when the log is read, so ``inspect view``, ``eval-retry`` and ``report`` all fail on it.
``GaiaComposeConfig`` is inspect's model with the fields it lacks declared, validated when made,
and read back by both providers' ``config_deserialize`` (inspect tries its own model first, then
asks the provider), so a log keeps every sandbox setting and ``eval-retry`` reapplies it.
"""

from __future__ import annotations

from typing import Any

from inspect_ai.util import ComposeConfig, ComposeService
from pydantic import Field, SerializerFunctionWrapHandler, model_serializer


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
