"""Which run a report or a comparison takes when a folder holds several runs of one model.

A folder such as inspect's default ``logs/`` collects runs over days: a ``--limit 10`` look, the
full run, a rerun. ``results.group_runs`` keeps separate runs of equal settings apart there, each
labelled by its run; ``report --latest`` keeps one per settings, and ``compare`` one per side.
The one kept is the newest *complete* run: finished (or retried to the end) and not cut down with
``--limit`` or ``--sample-id``, since a look at a few questions is not the result a user means by
the latest; when no run is complete, the newest. "Newest" is when a run started, so an eval-retry
made today does not make last week's run newer than yesterday's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .results import RunGroup, run_label


def complete(group: RunGroup) -> bool:
    """Finished (or retried to the end), and run on all the questions it selected."""
    return not group.incomplete and not any(run.subset for run in group.runs)


def started(group: RunGroup) -> str:
    """When the first run of ``group`` started (inspect's ISO time)."""
    return min(run.created for run in group.runs)


def latest(
    groups: Sequence[RunGroup], key: Callable[[RunGroup], str]
) -> tuple[list[RunGroup], list[RunGroup]]:
    """Of the groups with equal ``key``, the newest complete one (else the newest); and the rest.

    Returns:
        The groups kept, in input order, and the groups left out, newest first.
    """
    chosen: dict[str, RunGroup] = {}
    for group in sorted(groups, key=started):
        current = chosen.get(key(group))
        if current is None or complete(group) or not complete(current):
            chosen[key(group)] = group
    kept = [g for g in groups if any(g is c for c in chosen.values())]
    left = [g for g in sorted(groups, key=started, reverse=True) if not any(g is k for k in kept)]
    return kept, left


def describe(group: RunGroup, among: Sequence[RunGroup] = ()) -> str:
    """``gaia-bot [epochs=2] run 2026-12-05 08:54 3hX9kL2a (9 questions, 2 logs): logs/x.eval``.

    Args:
        group: The group to name.
        among: The groups it was chosen from: settings in which they differ are named.
    """
    keys = [
        k
        for k in group.settings
        if k != "model" and len({repr(g.settings.get(k)) for g in among}) > 1
    ]
    differs = ", ".join(f"{k}={group.settings[k]}" for k in keys)
    questions = len({s.task_id for s in group.samples})
    logs = len(group.runs)
    notes = [f"{questions} question{'s' * (questions != 1)}", f"{logs} log{'s' * (logs != 1)}"]
    if group.incomplete:
        notes.append("incomplete")
    if any(run.subset for run in group.runs):
        notes.append("--limit or --sample-id")
    first = min(group.runs, key=lambda r: r.created).source
    return (
        f"{group.model}{f' [{differs}]' if differs else ''} {group.run or run_label(group.runs)} "
        f"({', '.join(notes)}): {first}"
    )
