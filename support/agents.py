"""A scaffold of the tests' own for ``--solver``: inspect's ``react`` with bash and python.

``inspect eval inspect_gaia/gaia --solver support/agents.py@gaia_react`` replaces the task's
``basic_agent``; the report must then pool it with nothing else and name it. The submission stays in
the messages (the task's scorer also finds one ``react`` drops, in the transcript: the README's own
agent is that case).
"""

from __future__ import annotations

from inspect_ai.agent import Agent, AgentSubmit, agent, react
from inspect_ai.tool import bash, python


@agent
def gaia_react(timeout: int = 60) -> Agent:
    """``react`` with ``bash`` and ``python`` (``timeout`` seconds per command) and ``submit``."""
    return react(
        tools=[bash(timeout), python(timeout)],
        submit=AgentSubmit(keep_in_messages=True),
    )
