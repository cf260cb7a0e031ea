"""What one agent run's samples cost: per sandbox (CPU, memory) and per sample (from the log).

``Plan`` is what ``benchmarks.agents`` runs, ``AgentRun`` what one run measured (the report's
input, ``agent_report``).

``SandboxPoll`` watches a run's gaia-docker containers every ``interval`` seconds through the
cgroup v1 files of each (``cpuacct.usage``; memory as ``docker stats`` counts it:
``measure.container_memory``), and keeps each container's readings: its CPU seconds (the last
reading: up to one interval of its end is missed) and its memory at its peak and at the median
reading (a sample's sandbox spends most of its life waiting on its model, at the scripted reply
latency: the median is the memory while waiting).

With ``processes``, each reading also reads every process of the container from the host's
``/proc`` (its user and system CPU, kept at the last reading of each process) and files it under
``process_group`` by its command line: the agent's CLI, inspect's sandbox tools (the bridge's
server and model proxy, and inspect's checks), gaia-docker's command runner, or the commands the
agent ran. What the container used beyond the processes seen (those that ended between two
readings) is ``unseen``.

``sample_times`` reads, from the run's log, each sample's time from its sandbox being ready (the
end of inspect's ``init`` span: container started, attachment copied) to its first model request
(the first model event), and from its last model reply (that event's completion) to its score
(the score event).
"""

from __future__ import annotations

import os
import statistics
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import docker

from benchmarks.harnesses import OWNER_LABEL
from benchmarks.measure import Measured, container_memory

CPUACCT = Path("/sys/fs/cgroup/cpuacct/docker")
TICK = os.sysconf("SC_CLK_TCK")
GROUPS = ("agent", "inspect's sandbox tools", "gaia-docker's runner", "commands", "unseen")
"""What ``process_group`` files a sandbox's CPU under, in the report's order."""
_AGENT_WORDS = ("claude", "codex", "gemini", "/opt/node/", "mini-swe-agent", "/opt/mini")


def process_group(command_line: str) -> str:
    """Whose a sandbox process is, by its command line (``GROUPS``)."""
    if "inspect-sandbox-tools" in command_line or "inspect_sandbox_tools" in command_line:
        return GROUPS[1]
    if command_line.startswith("python3 -I -S -c"):
        return GROUPS[2]
    if any(word in command_line for word in _AGENT_WORDS):
        return GROUPS[0]
    return GROUPS[3]


def _processes(container_id: str) -> dict[int, tuple[str, float]]:
    """The container's processes now: host pid -> (``process_group``, CPU seconds so far)."""
    found: dict[int, tuple[str, float]] = {}
    try:
        pids = (CPUACCT / container_id / "cgroup.procs").read_text().split()
    except OSError:
        return found
    for pid in pids:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
            words = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except (OSError, UnicodeDecodeError):
            continue
        fields = stat[stat.rindex(")") + 2 :].split()  # after the command's name
        cpu = (int(fields[11]) + int(fields[12])) / TICK  # utime, stime
        found[int(pid)] = (process_group(words.strip()), cpu)
    return found


def _cpu_seconds(container_id: str) -> float | None:
    try:
        return int((CPUACCT / container_id / "cpuacct.usage").read_text()) / 1e9
    except (OSError, ValueError):
        return None


@dataclass
class Sandbox:
    """One container's readings."""

    cpu: float = 0.0
    memory: list[float] = field(default_factory=list)
    sample: bool = False
    """Seen under a sample's name: not a spare (``-spare-``) started ahead and never taken."""
    processes: dict[int, tuple[str, float]] = field(default_factory=dict)
    """Each process seen (``processes`` polls): its group and CPU seconds at its last reading."""

    def cpu_by_group(self) -> dict[str, float]:
        """The container's CPU seconds by ``GROUPS``; ``unseen``: beyond the processes read."""
        groups = dict.fromkeys(GROUPS, 0.0)
        for group, cpu in self.processes.values():
            groups[group] += cpu
        groups[GROUPS[-1]] = max(0.0, self.cpu - sum(groups.values()))
        return groups


@dataclass
class SandboxPoll:
    """Polls the containers of the processes ``pids`` until ``stop``."""

    interval: float = 0.25
    processes: bool = False
    """Also read each container's processes (``Sandbox.processes``)."""
    seen: dict[str, Sandbox] = field(default_factory=dict)
    _stop: threading.Event = field(default_factory=threading.Event)

    def run(self, pids: frozenset[int]) -> None:
        """Read every container of the run, each interval."""
        client = docker.APIClient()
        owners = {str(pid) for pid in pids}
        while not self._stop.wait(self.interval):
            try:
                listed = client.containers(filters={"label": ["inspect_gaia.sandbox"]})
            except docker.errors.DockerException:
                continue
            for container in listed:
                owner = str((container.get("Labels") or {}).get(OWNER_LABEL, "")).split("/")
                if len(owner) < 4 or owner[3] not in owners:
                    continue
                memory = container_memory(container["Id"])
                cpu = _cpu_seconds(container["Id"])
                box = self.seen.setdefault(container["Id"], Sandbox())
                box.sample |= not any("-spare-" in n for n in container.get("Names") or [])
                if memory is not None:
                    box.memory.append(memory)
                if cpu is not None:
                    box.cpu = max(box.cpu, cpu)
                if self.processes:
                    box.processes.update(_processes(container["Id"]))

    def stop(self) -> None:
        """End the polling."""
        self._stop.set()

    def used(self) -> list[Sandbox]:
        """The containers that ran a sample (a spare is renamed when a sample takes it)."""
        return [box for box in self.seen.values() if box.sample and box.memory]


@dataclass(frozen=True)
class SampleTimes:
    """Medians over a run's samples, seconds."""

    to_first_request: float
    """From the sandbox ready to the first model request."""
    after_last_reply: float
    """From the last model reply to the score."""
    sample: float
    """The sample's whole time (inspect's ``total_time``: its sandbox's start to its score)."""
    samples: int


def _seconds(a: datetime, b: datetime) -> float:
    return (b - a).total_seconds()


def _timings(events: list[Any]) -> tuple[float, float] | None:
    """From the sandbox ready to the first model request, and from the last reply to the score."""
    init = next((e for e in events if e.event == "span_begin" and e.type == "init"), None)
    ready = next(
        (e.timestamp for e in events if e.event == "span_end" and init and e.id == init.id), None
    )
    models = [e for e in events if e.event == "model"]
    score = next((e for e in events if e.event == "score"), None)
    if ready is None or not models or score is None or models[-1].completed is None:
        return None
    return (
        _seconds(ready, models[0].timestamp),
        _seconds(models[-1].completed, score.timestamp),
    )


def sample_times(out: Path) -> SampleTimes:
    """Medians of each sample's start-up and wind-down in the ``.eval`` logs under ``out``."""
    from inspect_ai.log import read_eval_log

    found = [
        (*t, float(sample.total_time or 0.0))
        for path in sorted(out.rglob("*.eval"))
        for sample in read_eval_log(str(path)).samples or []
        if (t := _timings(list(sample.events))) is not None
    ]
    if not found:
        raise RuntimeError(f"{out}: no sample with an init span, a model call and a score")
    return SampleTimes(
        to_first_request=statistics.median(t[0] for t in found),
        after_last_reply=statistics.median(t[1] for t in found),
        sample=statistics.median(t[2] for t in found),
        samples=len(found),
    )


def median_of(values: Iterator[float] | list[float]) -> float:
    """The median, 0 of nothing."""
    listed = list(values)
    return statistics.median(listed) if listed else 0.0


def memory_figures(boxes: list[Sandbox]) -> Mapping[str, float]:
    """Memory per sandbox, MiB: the medians of each one's peak and median reading; the largest."""
    return {
        "peak": median_of(max(b.memory) for b in boxes),
        "waiting": median_of(statistics.median(b.memory) for b in boxes),
        "largest": max((max(b.memory) for b in boxes), default=0.0),
    }


@dataclass
class AgentRun:
    """One agent at one level in one round."""

    agent: str
    variant: str
    at_once: int
    turns: int
    measured: Measured
    sandbox_cpu: float
    memory: dict[str, float]
    times: SampleTimes
    cpu_groups: dict[str, float] = field(default_factory=dict)
    """The sandboxes' CPU seconds by whose process used it (``--processes``; else empty)."""


@dataclass
class Plan:
    """What to run."""

    agents: tuple[str, ...]
    levels: tuple[int, ...]
    turns: dict[int, int]
    """Shell calls per sample at each level (fewer at the top level: 32 agents at once on a
    shared 2-CPU machine)."""
    latency: float
    rounds: int
    image: str
    variants: dict[str, Path | None] = field(default_factory=lambda: {"": None})
    """Variant name -> its frozen ``src/`` (``None``: the working tree's, frozen too)."""
    processes: bool = False
    """Also attribute each sandbox's CPU to its processes (``agent_samples.process_group``)."""
