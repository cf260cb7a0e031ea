"""What the task hands the Docker provider about its egress: one typed record, one key.

The parser decides a run's egress (``options.AnswerSourceOptions.egress``): the answer-source
rules the proxy refuses, whether it keeps the bodies, or the archive it replays. That decision
crosses from the task to the provider inside the sandbox spec, as inspect carries every sandbox
setting: in the compose service, under the extension ``EGRESS_KEY``, which the log also records.
``EgressSpec.as_json`` is the one writer (``sandboxes/spec.py``) and ``EgressSpec.of`` the one
reader (``sandboxes/docker/egress.py``); the JSON is what runs have always written.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

EGRESS_KEY = "x-inspect-gaia-egress"
"""The compose service extension that carries a run's ``EgressSpec`` (``as_json``)."""


@dataclass(frozen=True)
class EgressSpec:
    """A run's egress proxy: what it refuses, whether it keeps bodies, or what it replays."""

    rules: tuple[tuple[str, str], ...] = ()
    """The answer-source rules refused, ``(pattern, source)``: none for a recording run."""
    bodies: bool = False
    """``-T web_record=bodies``: the response bodies kept, in an archive beside the log."""
    replay: str | None = None
    """``-T web_replay``: the archive (absolute path) served in place of the live web."""

    def as_json(self) -> dict[str, Any]:
        """The extension's value: ``{"rules": [[pattern, source], ...]}`` and the switches set."""
        data: dict[str, Any] = {"rules": [list(rule) for rule in self.rules]}
        if self.bodies:
            data["bodies"] = True
        if self.replay is not None:
            data["replay"] = self.replay
        return data

    @classmethod
    def of(cls, service: Mapping[str, Any]) -> EgressSpec | None:
        """The spec a compose service carries, or ``None``: its sandboxes have no proxy."""
        data = service.get(EGRESS_KEY)
        if not isinstance(data, Mapping):
            return None
        replay = data.get("replay")
        return cls(
            rules=tuple((str(rule[0]), str(rule[1])) for rule in data.get("rules") or ()),
            bodies=data.get("bodies") is True,
            replay=str(replay) if replay is not None else None,
        )
