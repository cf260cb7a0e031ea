"""The agents benchmark's Markdown report (``benchmarks.agents``): medians of its rounds, ratios."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence

from benchmarks.agent_samples import GROUPS, AgentRun, Plan
from benchmarks.report import machine, public_command

BASE = "basic"
RESERVED_GIB = 2.0
"""Memory a machine keeps for itself, Docker and the inspect process (its peak RSS here is under
0.5 GiB at 32 samples at once), before sandboxes: what ``fits`` leaves out."""
SIZES_GIB = (8, 16, 32, 64)


def fits(peak_mib: float, size_gib: float) -> int:
    """Sandboxes of ``peak_mib`` that fit in a machine of ``size_gib`` (``RESERVED_GIB`` kept)."""
    return int((size_gib - RESERVED_GIB) * 1024 // peak_mib) if peak_mib > 0 else 0


def _median(runs: Sequence[AgentRun], value: Callable[[AgentRun], float]) -> float:
    return statistics.median(value(run) for run in runs) if runs else float("nan")


def _ideal(plan: Plan, level: int) -> float:
    return (plan.turns[level] + 1) * plan.latency


def _turns(run: AgentRun) -> int:
    """The run's model calls: each sample's shell calls and its answer."""
    return (run.turns + 1) * run.at_once


def report(
    plan: Plan, runs: list[AgentRun], started: str, minutes: float, argv: Sequence[str]
) -> str:
    """The report: per sample at 1 at once, wall against the ideal per level, memory and fit."""
    names = sorted({(r.agent, r.variant) for r in runs}, key=lambda k: (plan.agents.index(k[0]), k))

    def of(agent: str, variant: str, level: int) -> list[AgentRun]:
        return [r for r in runs if (r.agent, r.variant, r.at_once) == (agent, variant, level)]

    def label(agent: str, variant: str) -> str:
        return agent + (f" ({variant})" if variant else "")

    low = min(plan.levels)
    lines = [
        "## Agents at GAIA's scale",
        "",
        f"Machine: {machine()}. {started}, {minutes:.0f} min. "
        f"Command: `{public_command(argv, 'benchmarks.agents')}`. Image: `{plan.image}`.",
        "",
        f"Each sample: {plan.turns[low]} shell call(s) of its agent's own tool, then the answer "
        f"(the default agent: `submit`; the others: `FINAL ANSWER:`), every model reply after "
        f"{plan.latency:g} s; at {max(plan.levels)} at once, {plan.turns[max(plan.levels)]} shell "
        f"call(s). Medians of {plan.rounds} round(s), the agents in turn within each round. "
        "Turn: one model call. Inspect CPU: the `inspect eval` process's (`os.wait4`), per model "
        "turn of the run; sandbox CPU: its containers' cgroups (`cpuacct`, read every 0.25 s), per "
        "turn; memory: each sandbox's cgroup as `docker stats` counts it, at its peak and at its "
        "median reading (a sandbox waits on its model most of its life), median over sandboxes. "
        "Sample: inspect's `total_time` of the sample (its sandbox's start to its score); added "
        "over basic: that less the default agent's in the same round (median of the rounds); "
        "process wall: the whole `inspect eval` process, start-up included. To first request: "
        "from the end of inspect's `init` span (container up, attachment copied) to the first "
        "model event; after last reply: from the last model event's end to the score event.",
        "",
        f"### Per sample, {low} at once",
        "",
        "| agent | sample s | added over basic, s | process wall s | to first request s "
        "| after last reply s | inspect CPU s per turn | sandbox CPU s per turn "
        "| sandbox MiB at peak | while waiting |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    base = of(BASE, "", low)
    for agent, variant in names:
        mine = of(agent, variant, low)
        if not mine:
            continue
        added = [r.times.sample - b.times.sample for r, b in zip(mine, base, strict=False)] or [
            float("nan")
        ]
        lines.append(
            f"| {label(agent, variant)} | {_median(mine, lambda r: r.times.sample):.1f} "
            f"| {statistics.median(added):+.1f} "
            f"| {_median(mine, lambda r: r.measured.wall):.1f} "
            f"| {_median(mine, lambda r: r.times.to_first_request):.2f} "
            f"| {_median(mine, lambda r: r.times.after_last_reply):.2f} "
            f"| {_median(mine, lambda r: r.measured.cpu / _turns(r)):.2f} "
            f"| {_median(mine, lambda r: r.sandbox_cpu / _turns(r)):.2f} "
            f"| {_median(mine, lambda r: r.memory['peak']):.0f} "
            f"| {_median(mine, lambda r: r.memory['waiting']):.0f} |"
        )
    lines += [
        "",
        "### Wall ÷ the model-bound ideal, by samples at once",
        "",
        "Ideal: one wave of samples, each `(shell calls + 1) × latency`. In brackets: over the "
        "default agent's at the same level, in the same round (median of the rounds).",
        "",
        "| agent | " + " | ".join(f"{n} at once" for n in plan.levels) + " |",
        "|" + " --- |" * (len(plan.levels) + 1),
    ]
    for agent, variant in names:
        cells = []
        for level in plan.levels:
            mine, base = of(agent, variant, level), of(BASE, "", level)
            if not mine:
                cells.append("—")
                continue
            ratio = statistics.median(r.measured.wall / _ideal(plan, level) for r in mine)
            over = [r.measured.wall / b.measured.wall for r, b in zip(mine, base, strict=False)]
            cells.append(f"{ratio:.2f}" + (f" ({statistics.median(over):.2f}×)" if over else ""))
        lines.append(f"| {label(agent, variant)} | " + " | ".join(cells) + " |")
    top = max(plan.levels)
    lines += [
        "",
        f"### Memory per sandbox, and how many fit ({top} at once)",
        "",
        f"Sandboxes that fit: (machine − {RESERVED_GIB:g} GiB for the system, Docker and the "
        "inspect process) ÷ the sandbox's peak (the largest any sandbox reached in brackets).",
        "",
        "| agent | MiB at peak (largest) | MiB while waiting | inspect peak RSS MiB | "
        + " | ".join(f"fit in {g} GiB" for g in SIZES_GIB)
        + " |",
        "|" + " --- |" * (4 + len(SIZES_GIB)),
    ]
    for agent, variant in names:
        mine = of(agent, variant, top)
        if not mine:
            continue
        peak = _median(mine, lambda r: r.memory["peak"])
        largest = max(r.memory["largest"] for r in mine)
        lines.append(
            f"| {label(agent, variant)} | {peak:.0f} ({largest:.0f}) "
            f"| {_median(mine, lambda r: r.memory['waiting']):.0f} "
            f"| {_median(mine, lambda r: r.measured.rss_mb):.0f} | "
            + " | ".join(str(fits(peak, g)) for g in SIZES_GIB)
            + " |"
        )
    lines += _by_process(plan, runs, label)
    lines += ["", "Each run (wall s, inspect CPU s, sandbox CPU s, machine busy):", ""]
    for r in runs:
        lines.append(
            f"- {label(r.agent, r.variant)}, {r.at_once} at once: {r.measured.wall:.1f}, "
            f"{r.measured.cpu:.1f}, {r.sandbox_cpu:.1f}, {r.measured.machine_busy:.0%}"
        )
    return "\n".join(lines) + "\n"


def _by_process(plan: Plan, runs: list[AgentRun], label: Callable[[str, str], str]) -> list[str]:
    """Whose processes used the sandboxes' CPU, per sample (``--processes``); none without it."""
    measured = [r for r in runs if r.cpu_groups]
    if not measured:
        return []
    lines = [
        "",
        "### Whose the sandboxes' CPU is, seconds per sample",
        "",
        "Each process of a sandbox read from the host's `/proc` at every poll (user + system, its "
        "last reading) and filed by its command line; unseen: the cgroup's CPU beyond the "
        "processes read (those that started and ended between two polls). Medians of the rounds.",
        "",
        "| agent | at once | " + " | ".join(GROUPS) + " | all |",
        "|" + " --- |" * (len(GROUPS) + 3),
    ]
    keys = sorted({(r.agent, r.variant, r.at_once) for r in measured}, key=lambda k: (k[2], k))
    for agent, variant, level in keys:
        mine = [r for r in measured if (r.agent, r.variant, r.at_once) == (agent, variant, level)]
        cells = [
            statistics.median(r.cpu_groups.get(group, 0.0) / r.at_once for r in mine)
            for group in GROUPS
        ]
        lines.append(
            f"| {label(agent, variant)} | {level} | "
            + " | ".join(f"{c:.2f}" for c in cells)
            + f" | {_median(mine, lambda r: r.sandbox_cpu / r.at_once):.2f} |"
        )
    return lines
