"""The scaffold a run really used: the solver that replaced the task's agent, and its tools.

``inspect eval inspect_gaia/gaia --solver X`` (or ``eval(..., solver=X)``) runs X instead of the
task's ``basic_agent``: inspect records X's name and arguments in the log (``eval.solver``,
``eval.solver_args``), while the task's provenance, written before the solver was swapped, still
lists the default agent's tools. Here the log is read for what ran: the solver and its arguments,
and the tools the model was offered (the names in the samples' model calls), which replace the
provenance's ``tools``. A scaffold is a setting like any other (``provenance.comparable_settings``
decides): a run with another solver is never pooled with the default agent, and is labelled and
flagged (``custom solver: <name>``).
"""

from __future__ import annotations

from collections.abc import Iterable

from inspect_ai.event import ModelEvent
from inspect_ai.log import EvalLog, EvalSample

from .comparability import Scaffold


def offered_in(sample: EvalSample, names: dict[str, None]) -> bool:
    """Add the tools offered in ``sample``'s model calls to ``names``; whether it made any call."""
    called = False
    for event in sample.events:
        if isinstance(event, ModelEvent):
            called = True
            names.update(dict.fromkeys(tool.name for tool in event.tools))
    return called


def offered_tools(samples: Iterable[EvalSample]) -> list[str] | None:
    """The tools the model was offered in the samples' model calls, in first-offered order.

    None when no model call was logged (nothing to tell from).
    """
    names: dict[str, None] = {}
    called = False
    for sample in samples:
        called = offered_in(sample, names) or called
    return list(names) if called else None


def read_scaffold(log: EvalLog, tools: list[str] | None) -> Scaffold | None:
    """The solver that replaced the task's agent, its arguments and the tools really offered.

    ``tools``: offered in the samples' model calls (``offered_tools``), read as the samples are.
    ``None`` for a run of the task's own agent: its provenance is right as it stands.
    """
    if not log.eval.solver:
        return None
    return Scaffold(
        solver=log.eval.solver,
        solver_args=dict(log.eval.solver_args or {}) or None,
        tools=None if tools is None else tuple(tools),
    )
