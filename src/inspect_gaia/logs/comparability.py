"""Which runs may be pooled into one score, and why a score is not a plain pass@1 GAIA score.

Runs are pooled when their ``comparable_settings`` are equal, and every run's have one shape
(``pooled_settings``) whatever wrote it: this package's typed ``gaia`` record
(``provenance.GaiaProvenance``), or another harness's GAIA task, which writes no record
(``foreign.ForeignProvenance``). Besides the record, the settings hold what the task cannot write in
it, read from the log by ``scaffold``: a solver that replaced the agent (``Scaffold``).
``comparability_flags`` reads the settings alone, so it flags every harness's runs alike.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from ..defaults import DEFAULT_MAX_ATTEMPTS, DEFAULT_MESSAGE_LIMIT, DEFAULT_TOOLS
from ..web import BROWSER_TOOLS

if TYPE_CHECKING:
    from .sandbox_ran import SandboxRan

OWN_HARNESS = "inspect_gaia"
"""The harness of a run with a ``gaia`` record; another harness's runs are never pooled with it."""

INSPECT_LIMITS = (
    "message_limit",
    "token_limit",
    "turn_limit",
    "time_limit",
    "working_limit",
    "cost_limit",
)
GENERATE_OPTIONS = ("temperature", "top_p", "max_tokens", "reasoning_effort")
"""inspect's run options that change results: the limits, and generation settings when given."""


@dataclass(frozen=True)
class Scaffold:
    """A solver that replaced the task's agent (``inspect eval --solver``), as the log records it.

    The task's record, written before the solver was swapped, still lists the agent's tools; the
    tools the model was really offered replace them. Read by ``scaffold.read_scaffold``.
    """

    solver: str
    solver_args: dict[str, Any] | None
    tools: tuple[str, ...] | None
    """Offered in the samples' model calls, in first-offered order; ``None``: no call logged."""


class Pooled(Protocol):
    """A run's record that says what must be equal to pool the run: every harness's has one.

    ``provenance.GaiaProvenance`` (this package's runs) and ``foreign.ForeignProvenance`` (another
    harness's); ``results.comparable_settings`` asks whichever a run has.
    """

    def comparable_settings(
        self,
        *,
        model: str,
        task_version: str,
        epochs: int,
        run_config: Mapping[str, Any],
        scaffold: Scaffold | None = None,
        sandbox_ran: SandboxRan | None = None,
    ) -> dict[str, Any]:
        """The settings in ``pooled_settings``' shape."""
        ...


PROBE_FLAG = "a probe of the sandbox (inspect_gaia/gaia_probe): it answered nothing, no score"
"""The flag of a probe run's group (never pooled with a run that answered)."""
_RECORD_ONLY = (
    *("command_timeout", "sandbox", "image", "network", "cpus", "memory", "pids", "disk"),
    *("prompt_template_sha256", "question_set", "block_answer_sources", "agent", "web_replay"),
    "probe",
)
"""Settings only a ``gaia`` record tells (another harness's run: ``None``)."""


def pooled_settings(
    *,
    model: str,
    split: str,
    harness: str,
    task_version: str,
    epochs: int,
    scaffold: Scaffold | None,
    tools: Sequence[str] | None,
    multimodal: bool,
    max_attempts: int,
    run_config: Mapping[str, Any],
    record: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """``comparable_settings`` in one shape for every harness.

    A ``scaffold``'s tools replace the task's ``tools``; ``record`` holds the settings only a
    ``gaia`` record tells (``_RECORD_ONLY``), ``None`` for another harness's run.
    """
    record = dict.fromkeys(_RECORD_ONLY) if record is None else record
    assert tuple(record) == _RECORD_ONLY, "every run's settings have the same keys"
    offered = scaffold.tools if scaffold else tools
    return {
        "model": model,
        "split": split,
        "harness": harness,
        "task_version": task_version,
        "epochs": epochs,
        "solver": scaffold.solver if scaffold else None,
        "solver_args": scaffold.solver_args if scaffold else None,
        "tools": None if offered is None else list(offered),
        "multimodal": multimodal,
        "max_attempts": max_attempts,
        **run_config,
        **record,
    }


def _named(tools: Sequence[str]) -> list[str]:
    """The tools as a flag names them: the browser's ten as one ``browser (10 tools)``."""
    browser = [tool for tool in tools if tool in BROWSER_TOOLS]
    named = [tool for tool in tools if tool not in BROWSER_TOOLS]
    if browser:
        first = list(tools).index(browser[0])
        named.insert(first, f"browser ({len(browser)} tools)")
    return named


def tools_label(tools: Sequence[str]) -> str:
    """The tools as a group's label names them, against the default ``bash, submit``.

    ``+python``; the browser's ten as one ``+browser``; ``-bash`` for a default tool not offered;
    ``none`` for no tool at all. A browser run's label was the twelve names (a 15-line cell).
    """
    if not tools:
        return "none"
    added = [f"+{tool}" for tool in _named(tools) if tool not in DEFAULT_TOOLS]
    return (
        ", ".join(
            [t.split(" (")[0] for t in added] + [f"-{t}" for t in DEFAULT_TOOLS if t not in tools]
        )
        or "default"
    )


def comparability_flags(settings: Mapping[str, Any]) -> list[str]:
    """Why a run's score is not a plain pass@1 GAIA score with inspect_gaia's default agent.

    Args:
        settings: A run's (or a group's) ``comparable_settings``.
    """
    flags: list[str] = []
    if settings.get("probe"):
        flags.append(PROBE_FLAG)
    harness = settings.get("harness", OWN_HARNESS)
    if harness != OWN_HARNESS:
        flags.append(f"another harness: {harness} gaia {settings.get('task_version')}")
    if settings.get("solver"):
        flags.append(f"custom solver: {settings['solver']}")
    if settings.get("agent"):
        flags.append(f"agent: {settings['agent']}")
    attempts = settings.get("max_attempts") or DEFAULT_MAX_ATTEMPTS
    if attempts > 1:
        flags.append(f"oracle retries, not pass@1 (max_attempts={attempts})")
    tools = settings.get("tools", DEFAULT_TOOLS)
    if tools is None:
        flags.append("tools unknown (no model call logged)")
    elif list(tools) != list(DEFAULT_TOOLS) and not settings.get("agent"):
        flags.append(f"non-default tools: {', '.join(_named(tools)) or 'none'}")
    if settings.get("multimodal"):
        flags.append("multimodal: true")
    limit = settings.get("message_limit")
    if limit is not None and limit != DEFAULT_MESSAGE_LIMIT:
        flags.append(f"message limit {limit} (default {DEFAULT_MESSAGE_LIMIT})")
    if settings.get("web_replay"):
        flags.append(f"replayed web: archive sha256 {str(settings['web_replay'])[:12]}")
    blocked = settings.get("block_answer_sources")
    if blocked:
        flags.append(
            f"answer sources blocked by the run's egress proxy (list sha256 {blocked[:12]})"
        )
    return flags
