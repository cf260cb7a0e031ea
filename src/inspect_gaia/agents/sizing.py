"""How many agent sandboxes an engine holds: each agent's measured memory, checked before a run.

A sandbox running Claude Code holds a few hundred MiB while it waits on its model, against a few
MiB for the default agent's, so a run at the samples at once that suits the default agent can
exhaust the engine's memory with another agent: containers are then killed by the kernel (the
sample errors) or the machine swaps. ``PEAK_MIB`` is each agent's sandbox at its peak, as
``benchmarks/agents.py`` measured it (docs/benchmarks.md, "Agents at GAIA's scale": the median
sandbox's peak over three rounds at 32 at once, the scripted model); before the first sample, a
run whose samples at once times that figure exceeds the engine's memory (``docker info``'s
``MemTotal``) gets one warning line (``MemoryCheck``, an inspect hook registered only when a
``gaia`` task with another agent is created, as ``next_steps`` registers its own). The run goes
on: the figure is a scripted model's sandbox, and a real agent's commands use more or less.

The samples at once are the fewer of ``--max-samples`` and ``--max-sandboxes``; with neither,
inspect's adaptive limit, which grows up to ``ADAPTIVE_MAX`` while the model keeps up.
"""

from __future__ import annotations

import logging

from inspect_ai.hooks import Hooks, TaskStart, hooks

from ..logs.provenance import METADATA_KEY

logger = logging.getLogger(__name__)

PEAK_MIB: dict[str, float] = {
    "basic": 10,
    "claude_code": 190,
    "codex_cli": 110,
    "gemini_cli": 350,
    "mini_swe_agent": 290,
}
"""Each agent's sandbox at its peak, MiB (docs/benchmarks.md, "Agents at GAIA's scale": the median
sandbox's peak, median of 3 rounds at 32 at once, 2026-12-07)."""
ADAPTIVE_MAX = 100
"""The most samples inspect runs at once without ``--max-samples`` (its adaptive connections'
default maximum, inspect_ai 0.3.285)."""
MIB = 1024 * 1024


def memory_warning(agent: str, at_once: int, how: str, engine_bytes: int) -> str | None:
    """The warning for ``at_once`` sandboxes of ``agent`` on an engine of ``engine_bytes``.

    ``how`` says where ``at_once`` came from (``--max-samples 64``). ``None``: they fit.
    """
    peak = PEAK_MIB.get(agent)
    if peak is None or engine_bytes <= 0 or at_once * peak * MIB <= engine_bytes:
        return None
    fit = int(engine_bytes // (peak * MIB))
    return (
        f"-T agent={agent}: {at_once} sandboxes at once ({how}) × {peak:g} MiB each (its "
        f"measured peak, docs/benchmarks.md) is {at_once * peak / 1024:.1f} GiB, more than the "
        f"Docker engine's {engine_bytes / 1024**3:.1f} GiB — pass --max-samples {max(fit, 1)} "
        "or fewer (docs/agents.md)"
    )


def at_once(max_samples: int | None, max_sandboxes: int | None) -> tuple[int, str]:
    """How many sandboxes may run at once, and which setting says so."""
    given = [
        (value, f"{flag} {value}")
        for value, flag in ((max_samples, "--max-samples"), (max_sandboxes, "--max-sandboxes"))
        if value
    ]
    if not given:
        return ADAPTIVE_MAX, f"inspect's adaptive limit, up to {ADAPTIVE_MAX} without --max-samples"
    return min(given)


class MemoryCheck(Hooks):
    """Warns, as a task starts, when its agent's sandboxes at once exceed the engine's memory."""

    async def on_task_start(self, data: TaskStart) -> None:
        """One warning line when a ``gaia`` task's agent will not fit (see the module)."""
        record = (data.spec.metadata or {}).get(METADATA_KEY)
        agent = record.get("agent") if isinstance(record, dict) else None
        if not isinstance(agent, dict) or not isinstance(agent.get("name"), str):
            return
        from ..sandboxes.docker import client

        try:
            engine_bytes = int((await client.call(client.info)).get("MemTotal") or 0)
        except Exception:  # no engine to ask: the run's own checks say so
            return
        count, how = at_once(data.spec.config.max_samples, data.spec.config.max_sandboxes)
        line = memory_warning(agent["name"], count, how, engine_bytes)
        if line is not None:
            logger.warning(line)


_registered: list[type[Hooks]] = []


def check_memory_at_start() -> None:
    """Register ``MemoryCheck`` with inspect, once per process."""
    if not _registered:
        _registered.append(
            hooks(name="gaia_agent_memory", description="agent sandboxes against engine memory")(
                MemoryCheck
            )
        )
