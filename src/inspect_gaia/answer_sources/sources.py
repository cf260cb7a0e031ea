"""The list of known GAIA answer sources: the package's ``answer_sources.yaml`` plus a user's file.

Read once per task (``load_answer_sources``), it serves the scorer's detection (``detect``)
and, with ``-T block_answer_sources=true``, the run's egress proxy. Its SHA-256 (over the rules as
read, so a comment or a reordered file with the same rules keeps the hash) goes into the log's
provenance: a reader can tell which list a run was checked and blocked against.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from ..egress.urlrules import Rule, parse_rule
from ..errors import GaiaParameterError

PACKAGE_LIST = Path(__file__).resolve().parent / "answer_sources.yaml"
"""The maintained list shipped in the package."""


@dataclass(frozen=True)
class AnswerSources:
    """URL rules and bare mentions of known answer sources, with where they came from."""

    rules: tuple[Rule, ...]
    mentions: tuple[tuple[str, str], ...]
    """``(lower-cased string, source name)``: a dataset named in a tool call without a URL."""
    files: tuple[str, ...]

    @property
    def sha256(self) -> str:
        """The hash of the rules and mentions (not of the files' bytes)."""
        return hashlib.sha256(json.dumps(self.as_json(), sort_keys=True).encode()).hexdigest()

    @property
    def pairs(self) -> tuple[tuple[str, str], ...]:
        """The rules as ``(pattern, source)``, as the egress proxy reads them (``EgressSpec``)."""
        return tuple((r.pattern, r.source) for r in self.rules)

    def as_json(self) -> dict[str, Any]:
        """Rules and mentions as plain data."""
        return {
            "rules": [list(pair) for pair in self.pairs],
            "mentions": [list(m) for m in self.mentions],
        }


def load_answer_sources(blocklist: str | None = None) -> AnswerSources:
    """The package's list, extended by ``blocklist`` (a file) when given.

    Raises:
        GaiaParameterError: The file is missing, unreadable or holds an invalid rule.
    """
    rules: list[Rule] = []
    mentions: list[tuple[str, str]] = []
    files = [str(PACKAGE_LIST)]
    _read(PACKAGE_LIST, rules, mentions)
    if blocklist is not None:
        path = Path(blocklist).expanduser()
        if not path.is_file():
            raise GaiaParameterError(
                f"blocklist {blocklist} is not a file",
                fix="give a file of URL rules (one a line, e.g. "
                "huggingface.co/datasets/some/mirror), or omit blocklist",
            )
        files.append(str(path.resolve()))
        _read(path, rules, mentions)
    return AnswerSources(tuple(rules), tuple(dict.fromkeys(mentions)), tuple(files))


def _read(path: Path, rules: list[Rule], mentions: list[tuple[str, str]]) -> None:
    """Add a file's rules: the package's YAML format, or one ``HOST[/PATH]`` a line."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as ex:
        raise GaiaParameterError(f"cannot read blocklist {path}: {ex}") from ex
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError:
        data = None
    where = f"blocklist {path}"
    try:
        if isinstance(data, dict) and "sources" in data:
            for entry in _entries(data["sources"], path):
                name = str(entry.get("name") or path.name)
                rules += [parse_rule(str(url), name) for url in entry.get("urls") or []]
                mentions += [(str(m).lower(), name) for m in entry.get("mentions") or []]
        else:
            lines = [line.split("#", 1)[0].strip() for line in text.splitlines()]
            rules += [parse_rule(line, f"{path.name} (blocklist)") for line in lines if line]
    except ValueError as ex:
        raise GaiaParameterError(f"{where}: {ex}") from ex


def _entries(sources: object, path: Path) -> Sequence[dict[str, Any]]:
    if not isinstance(sources, list) or not all(isinstance(e, dict) for e in sources):
        raise GaiaParameterError(
            f"blocklist {path}: `sources` must be a list of entries with `name` and `urls`",
            fix="see answer_sources.yaml in the package, or write one rule a line",
        )
    return sources
