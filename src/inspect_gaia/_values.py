"""One ``-T`` value read: every spelling a user may type, one canonical type, or a one-line refusal.

``inspect eval -T x=...`` hands the task YAML-parsed values (``-T level=1,2`` arrives as the string
``"1,2"``, ``-T level=[1,2]`` as a list, a one-element list as a bare value). ``_params`` puts these
readers together into ``GaiaParams`` and checks the values against each other.
"""

from __future__ import annotations

import math
import shlex
import shutil
import sys
from collections.abc import Iterable, Sequence

from .errors import GaiaParameterError
from .options import SandboxLimits
from .questions.dataset import LEVELS, parse_level
from .sandboxes.spec import (
    MAX_PIDS,
    MAX_SIZE,
    MIN_CPUS,
    MIN_MEMORY,
    MIN_PIDS,
    docker_size,
    size_bytes,
)

MCP_SHORTCUTS: dict[str, tuple[str, ...]] = {
    "fetch": (sys.executable, "-m", "mcp_server_fetch"),
}
"""Names usable in ``mcp_servers`` instead of a command line."""


def parse_levels(level: object) -> tuple[int, ...]:
    """``1``, ``"1,2"``, ``"[1, 2]"``, ``[1, 2]`` or ``None`` (all) -> sorted levels."""
    if level is None:
        return LEVELS
    items: Iterable[object]
    if isinstance(level, str):
        items = [part for part in level.strip("[] ").split(",") if part.strip()]
    elif isinstance(level, (int, float)) and not isinstance(level, bool):
        items = [level]
    elif isinstance(level, Sequence):
        items = level
    else:
        items = [level]
    levels: set[int] = set()
    for item in items:
        value = parse_level(item)
        if value is None:
            raise GaiaParameterError(
                "level must be 1, 2 or 3, or a list of them such as 1,2", got=level
            )
        levels.add(value)
    if not levels:
        raise GaiaParameterError("level must name at least one of 1, 2, 3", got=level)
    return tuple(sorted(levels))


def parse_ids(ids: object) -> tuple[str, ...] | None:
    """One id, ``"a,b"`` or a list -> a tuple without duplicates; ``None`` selects all."""
    if ids is None:
        return None
    items = ids.split(",") if isinstance(ids, str) else [str(i) for i in as_list(ids)]
    cleaned = tuple(dict.fromkeys(item.strip() for item in items if item.strip()))
    if not cleaned:
        raise GaiaParameterError("ids is empty", fix="give one or more GAIA task ids, or omit it")
    return cleaned


def parse_mcp_servers(mcp_servers: object) -> tuple[tuple[str, ...], ...]:
    """``fetch`` or a command line, one or a list -> the command lines to start.

    Each command must exist now (on PATH, or as a path to an executable): one that does not
    would fail every sample with an error that does not name it.
    """
    if mcp_servers is None:
        return ()
    commands = []
    for item in [mcp_servers] if isinstance(mcp_servers, str) else as_list(mcp_servers):
        text = str(item).strip()
        if not text:
            raise GaiaParameterError(
                "mcp_servers has an empty entry", fix="give `fetch` or a command line"
            )
        try:
            command = MCP_SHORTCUTS.get(text) or tuple(shlex.split(text))
        except ValueError as ex:  # an unclosed quote
            raise GaiaParameterError(
                f"-T mcp_servers={text} is not a command line ({ex})", fix="close its quotes"
            ) from ex
        if not command or shutil.which(command[0]) is None:
            name = command[0] if command else text
            raise GaiaParameterError(
                f"-T mcp_servers={text}: no executable command {name!r} on PATH",
                fix="install it, give its full path, or drop it from mcp_servers",
            )
        commands.append(command)
    return tuple(commands)


def as_list(value: object) -> list[object]:
    """A value as a list: a string or a scalar is one item."""
    return list(value) if isinstance(value, Iterable) and not isinstance(value, str) else [value]


def positive_int(name: str, value: object) -> int:
    """A whole number ≥ 1, or a one-line refusal naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise GaiaParameterError(f"{name} must be a whole number ≥ 1", got=value)
    return value


def flag(name: str, value: object) -> bool:
    """``true`` or ``false``, or a one-line refusal naming ``name``."""
    if not isinstance(value, bool):
        raise GaiaParameterError(f"{name} must be true or false", got=value)
    return value


def limits(cpus: object, memory: object, pids: object, disk: object) -> SandboxLimits:
    """The limits, as Docker accepts them.

    A value Docker would refuse at every sample's start (``memory=1k``, ``cpus=0.001``, or
    ``memory=5000t`` as docker-py spells sizes) is refused here, before any sandbox starts.
    """
    if cpus is not None and (
        isinstance(cpus, bool)
        or not isinstance(cpus, (int, float))
        or not math.isfinite(cpus)
        or cpus < MIN_CPUS
    ):
        raise GaiaParameterError(
            f"-T cpus={cpus} is not a CPU limit Docker accepts",
            fix=f"give a number of CPUs from {MIN_CPUS} (Docker's minimum) up, such as 2 or 0.5, "
            "or null for none",
        )
    if pids is not None and (
        isinstance(pids, bool) or not isinstance(pids, int) or not MIN_PIDS <= pids <= MAX_PIDS
    ):
        raise GaiaParameterError(
            f"-T pids={pids} is not a process limit Linux accepts",
            fix=f"give a whole number from {MIN_PIDS} to {MAX_PIDS} (Linux's most), or null for "
            "none",
        )
    return SandboxLimits(
        cpus=None if cpus is None else float(cpus),
        memory=_size("memory", memory, MIN_MEMORY, "from 6m (Docker's minimum) "),
        pids=pids,
        disk=_size("disk", disk, 1, ""),
    )


def _size(name: str, size: object, least: int, from_text: str) -> str | None:
    """A size as Docker reads it (``docker_size``), or a one-line refusal naming the range."""
    if size is None:
        return None
    value = size_bytes(size)
    if value is None or not least <= value <= MAX_SIZE:
        raise GaiaParameterError(
            f"-T {name}={size} is not a size Docker accepts",
            fix=f"give one {from_text}up to {MAX_SIZE // 2**40}t: a number with k, m, g or t "
            "(powers of 1024) such as 512m or 4g, or null for none",
        )
    return docker_size(value)
