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


def offered_tools(samples: Iterable[EvalSample]) -> list[str] | None:
    """The tools the model was offered in the samples' model calls, in first-offered order.

    None when no model call was logged (nothing to tell from).
    """
    names: dict[str, None] = {}
    called = False
    for sample in samples:
        for event in sample.events:
            if isinstance(event, ModelEvent):
                called = True
                names.update(dict.fromkeys(tool.name for tool in event.tools))
    return list(names) if called else None


def read_scaffold(log: EvalLog) -> Scaffold | None:
    """The solver that replaced the task's agent, its arguments and the tools really offered.

    ``None`` for a run of the task's own agent: its provenance is right as it stands.
    """
    if not log.eval.solver:
        return None
    tools = offered_tools(log.samples or [])
    return Scaffold(
        solver=log.eval.solver,
        solver_args=dict(log.eval.solver_args or {}) or None,
        tools=None if tools is None else tuple(tools),
    )
