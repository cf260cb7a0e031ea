"""Whole-process measurements: wall time, CPU, peak memory, and the sandboxes a run keeps alive.

Every harness run is a subprocess (``inspect eval ...`` or evalscope's driver), so start-up is in
every number. ``os.wait4`` gives that one child's resource usage (user + system CPU seconds and
peak RSS, of it and of any children it waited for). While it runs, a thread polls the Docker
Engine every 0.5 s for the run's containers (``docker ps``, through the SDK) and reads each
one's memory from its cgroup: the peak count, and at that moment the memory per sandbox as
``docker stats`` reports it (usage less inactive page cache). The engine's own CPU (``dockerd``
and ``containerd``, from /proc), the containers' CPU (cgroup v1's cpuacct) and how busy the
whole machine was (/proc/stat) are read before and after.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import docker

CGROUP_V1 = Path("/sys/fs/cgroup/memory/docker")
CGROUP_V2 = Path("/sys/fs/cgroup/system.slice")
CPUACCT_DOCKER = Path("/sys/fs/cgroup/cpuacct/docker/cpuacct.usage")
MB = 1024 * 1024


@dataclass
class Measured:
    """One whole-process run."""

    wall: float
    """Seconds from start to exit."""
    cpu: float
    """User + system CPU seconds of the process (and children it waited for)."""
    rss_mb: float
    """Peak resident memory of the process, MB."""
    engine_cpu: float = 0.0
    """CPU seconds dockerd + containerd spent during the run (the whole engine, shared)."""
    containers: int = 0
    """Most of the run's containers alive at once (polled every 0.5 s)."""
    sandbox_mb: float = 0.0
    """Mean memory per sandbox at that peak, MB (``docker stats``'s figure, from the cgroup)."""
    sandbox_max_mb: float = 0.0
    """Largest single sandbox seen during the run, MB."""
    output_bytes: int = 0
    """Size of what the run wrote (inspect: the .eval log; evalscope: its work directory)."""
    wrong: int = 0
    """Samples the harness scored wrong (the scripted model always answers right)."""
    machine_busy: float = 0.0
    """Share of the machine's CPU time that was busy during the run (all its CPUs, /proc/stat)."""
    containers_cpu: float = 0.0
    """CPU seconds spent inside all Docker containers during the run (cgroup v1's cpuacct for
    ``docker``; 0 where the engine's containers have no such parent group)."""


def container_memory(container_id: str) -> float | None:
    """A container's memory in MB, as ``docker stats`` counts it; None if its cgroup is gone."""
    for directory, usage_file, inactive_key in (
        (CGROUP_V1 / container_id, "memory.usage_in_bytes", "total_inactive_file"),
        (CGROUP_V2 / f"docker-{container_id}.scope", "memory.current", "inactive_file"),
    ):
        try:
            usage = int((directory / usage_file).read_text())
            stat = (directory / "memory.stat").read_text().split("\n")
        except (OSError, ValueError):
            continue
        inactive = next(
            (int(line.split()[1]) for line in stat if line.startswith(inactive_key + " ")), 0
        )
        return (usage - min(inactive, usage)) / MB
    return None


@dataclass
class ContainerPoll:
    """Polls the engine for a run's containers (``owned`` picks them out of ``docker ps``)."""

    filters: Mapping[str, Any]
    owned: Callable[[Mapping[str, Any], frozenset[int]], bool] = lambda container, pids: True
    interval: float = 0.5
    peak: int = 0
    peak_memory: list[float] = field(default_factory=list)
    largest: float = 0.0
    _stop: threading.Event = field(default_factory=threading.Event)
    _before: set[str] = field(default_factory=set)
    _client: Any = None

    def _ours(self, pids: frozenset[int]) -> list[str]:
        if self._client is None:
            self._client = docker.APIClient()
        listed = self._client.containers(filters=dict(self.filters))
        return [c["Id"] for c in listed if c["Id"] not in self._before and self.owned(c, pids)]

    def start(self) -> None:
        """Note the containers that exist already (another engineer's, another run's)."""
        self._before = set(self._ours(frozenset())) if self.filters else set()

    def run(self, pids: frozenset[int]) -> None:
        """Poll until ``stop``; the peak count and the memory per sandbox at that peak."""
        while not self._stop.wait(self.interval):
            try:
                alive = self._ours(pids)
            except docker.errors.DockerException:
                continue
            memory = [m for m in map(container_memory, alive) if m is not None]
            self.largest = max([self.largest, *memory])
            if len(alive) > self.peak or (len(alive) == self.peak and not self.peak_memory):
                self.peak, self.peak_memory = len(alive), memory

    def stop(self) -> None:
        """End the polling."""
        self._stop.set()


class Watcher(Protocol):
    """Something that watches a run's processes on a thread of its own until stopped."""

    def run(self, pids: frozenset[int]) -> None:
        """Watch until ``stop``."""

    def stop(self) -> None:
        """End the watch."""


def _engine_pids() -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "comm").read_text().strip() in ("dockerd", "containerd"):
                    pids.append(int(entry.name))
            except OSError:
                continue
    return pids


def _cpu_seconds(pids: Sequence[int]) -> float:
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / ticks  # utime, stime
    return total


def _machine_ticks() -> tuple[int, int]:
    """All CPUs' (busy, total) ticks since boot, from /proc/stat (idle and iowait are not busy)."""
    fields = [int(f) for f in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]
    return sum(fields) - fields[3] - fields[4], sum(fields)


def _containers_cpu() -> float:
    """CPU seconds of every Docker container since boot (0 without cgroup v1's cpuacct)."""
    try:
        return int(CPUACCT_DOCKER.read_text()) / 1e9
    except (OSError, ValueError):
        return 0.0


def run_measured(
    command: Sequence[str],
    env: Mapping[str, str],
    log: Path,
    poll: ContainerPoll | None = None,
    timeout: float = 3 * 3600,
) -> Measured:
    """Run ``command`` to its end (output to ``log``) and measure it; fails on a non-zero exit."""
    return run_measured_together([command], env, [log], poll, timeout)


def run_measured_together(
    commands: Sequence[Sequence[str]],
    env: Mapping[str, str],
    logs: Sequence[Path],
    poll: ContainerPoll | None = None,
    timeout: float = 3 * 3600,
    sandbox_poll: Watcher | None = None,
) -> Measured:
    """Start ``commands`` at once (output to ``logs``), measure them as one run until the last ends.

    Wall: from the start to the last exit; CPU: the processes' sum; peak RSS: the sum of their
    peaks (an upper bound on what they held at once); containers: those of any of them. Fails on
    a non-zero exit of any. ``sandbox_poll`` watches the processes beside ``poll``, on its own
    thread (``agent_samples.SandboxPoll``: each sandbox's CPU and memory).
    """
    engine = _engine_pids()
    engine_before = _cpu_seconds(engine)
    busy_before, total_before = _machine_ticks()
    containers_before = _containers_cpu()
    if poll is not None:
        poll.start()
    ended: dict[int, tuple[float, int, Any]] = {}

    def wait(pid: int) -> None:
        _, status, usage = os.wait4(pid, 0)
        ended[pid] = (time.perf_counter(), status, usage)

    start = time.perf_counter()
    processes: list[subprocess.Popen[bytes]] = []
    try:
        for command, log in zip(commands, logs, strict=True):
            with log.open("wb") as out:
                processes.append(
                    subprocess.Popen(list(command), env=dict(env), stdout=out, stderr=out)
                )
    except BaseException:  # one did not start: none is left running
        for process in processes:
            process.kill()
            process.wait()
        raise
    waiters = [threading.Thread(target=wait, args=(p.pid,), daemon=True) for p in processes]
    for waiter in waiters:
        waiter.start()
    watcher = None
    pids = frozenset(p.pid for p in processes)
    if poll is not None:
        watcher = threading.Thread(target=poll.run, args=(pids,), daemon=True)
        watcher.start()
    watching = None
    if sandbox_poll is not None:
        watching = threading.Thread(target=sandbox_poll.run, args=(pids,), daemon=True)
        watching.start()
    deadline = time.perf_counter() + timeout
    try:
        for waiter in waiters:
            waiter.join(max(0.0, deadline - time.perf_counter()))
    finally:  # timed out, or the benchmark itself was interrupted: never leave a run behind
        for process, waiter in zip(processes, waiters, strict=True):
            if process.pid not in ended:
                process.terminate()
                waiter.join(30)
                if process.pid not in ended:
                    process.kill()
                    waiter.join()
    busy, total = _machine_ticks()
    containers_cpu = _containers_cpu() - containers_before
    if poll is not None and watcher is not None:
        poll.stop()
        watcher.join()
    if sandbox_poll is not None and watching is not None:
        sandbox_poll.stop()
        watching.join()
    for process, command, log in zip(processes, commands, logs, strict=True):
        code = os.waitstatus_to_exitcode(ended[process.pid][1])
        process.returncode = code
        if code != 0:
            tail = log.read_text(errors="replace")[-3000:]
            raise RuntimeError(f"{command[0]} ... exited {code}; see {log}:\n{tail}")
    usages = [usage for _, _, usage in ended.values()]
    memory = poll.peak_memory if poll else []
    return Measured(
        wall=max(end for end, _, _ in ended.values()) - start,
        cpu=sum(u.ru_utime + u.ru_stime for u in usages),
        rss_mb=sum(u.ru_maxrss for u in usages) / 1024,
        engine_cpu=_cpu_seconds(engine) - engine_before,
        containers=poll.peak if poll else 0,
        sandbox_mb=sum(memory) / len(memory) if memory else 0.0,
        sandbox_max_mb=poll.largest if poll else 0.0,
        machine_busy=(busy - busy_before) / max(total - total_before, 1),
        containers_cpu=containers_cpu,
    )
