"""What to do after a run, said as it ends: a test-split run's answers go to the leaderboard.

A validation run ends with inspect's scores; a test-split run ends with none (its answers are
private) and used to leave a newcomer with nothing to do next. An inspect hook (``on_task_end``)
prints the ``inspect-gaia submission`` command for the log's folder. It is registered only when a
test-split ``gaia`` task is created (``after_test_run``), not with the tasks at inspect's start:
inspect lists every hook registered then (``hooks enabled: 1``) at the top of every run, of any
task. Once registered it runs for every task of the process, so it looks for GAIA's record first
and says nothing of any other task's log; a hook that fails is only logged by inspect.
"""

from __future__ import annotations

import os

from inspect_ai.hooks import Hooks, TaskEnd, hooks
from inspect_ai.log import EvalLog

from .logs.provenance import METADATA_KEY


def next_step(log: EvalLog) -> str | None:
    """The line to print after ``log``'s run, or ``None`` (not a GAIA test-split run)."""
    record = (log.eval.metadata or {}).get(METADATA_KEY)
    if not isinstance(record, dict) or record.get("split") != "test":
        return None
    folder = os.path.dirname(log.location) if log.location else ""
    return (
        "GAIA test split: answers recorded, not graded (the answers are private) — next: "
        f"inspect-gaia submission {folder or '.'}/ -o submission.jsonl"
    )


class NextSteps(Hooks):
    """Prints ``next_step`` when a task ends."""

    async def on_task_end(self, data: TaskEnd) -> None:
        """Print the next step of a GAIA test-split run."""
        line = next_step(data.log)
        if line:
            print(line)


_registered: list[type[Hooks]] = []


def after_test_run() -> None:
    """Register ``NextSteps`` with inspect, once per process."""
    if not _registered:
        _registered.append(
            hooks(name="gaia_next_steps", description="after a GAIA test-split run")(NextSteps)
        )
