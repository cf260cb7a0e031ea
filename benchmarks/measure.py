"""Whole-process measurements: wall time, CPU, peak memory, and the sandboxes a run keeps alive.

Every harness run is a subprocess (``inspect eval ...`` or evalscope's driver), so start-up is in
every number. ``os.wait4`` gives that one child's resource usage (user + system CPU seconds and
peak RSS, of it and of any children it waited for). While it runs, a thread polls the Docker
Engine every 0.5 s for the run's containers (``docker ps``, through the SDK) and reads each
one's memory from its cgroup: the peak count, and at that moment the memory per sandbox as
``docker stats`` reports it (usage less inactive page cache). The engine's own CPU (``dockerd``
and ``containerd``, from /proc) is read before and after.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import docker

CGROUP_V1 = Path("/sys/fs/cgroup/memory/docker")
CGROUP_V2 = Path("/sys/fs/cgroup/system.slice")
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


def _container_memory(container_id: str) -> float | None:
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
    owned: Callable[[Mapping[str, Any], int], bool] = lambda container, pid: True
    interval: float = 0.5
    peak: int = 0
    peak_memory: list[float] = field(default_factory=list)
    largest: float = 0.0
    _stop: threading.Event = field(default_factory=threading.Event)
    _before: set[str] = field(default_factory=set)
    _client: Any = None

    def _ours(self, pid: int) -> list[str]:
        if self._client is None:
            self._client = docker.APIClient()
        listed = self._client.containers(filters=dict(self.filters))
        return [c["Id"] for c in listed if c["Id"] not in self._before and self.owned(c, pid)]

    def start(self) -> None:
        """Note the containers that exist already (another engineer's, another run's)."""
        self._before = set(self._ours(-1)) if self.filters else set()

    def run(self, pid: int) -> None:
        """Poll until ``stop``; the peak count and the memory per sandbox at that peak."""
        while not self._stop.wait(self.interval):
            try:
                alive = self._ours(pid)
            except docker.errors.DockerException:
                continue
            memory = [m for m in map(_container_memory, alive) if m is not None]
            self.largest = max([self.largest, *memory])
            if len(alive) > self.peak or (len(alive) == self.peak and not self.peak_memory):
                self.peak, self.peak_memory = len(alive), memory

    def stop(self) -> None:
        """End the polling."""
        self._stop.set()


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


def run_measured(
    command: Sequence[str],
    env: Mapping[str, str],
    log: Path,
    poll: ContainerPoll | None = None,
    timeout: float = 3 * 3600,
) -> Measured:
    """Run ``command`` to its end (output to ``log``) and measure it; fails on a non-zero exit."""
    engine = _engine_pids()
    engine_before = _cpu_seconds(engine)
    if poll is not None:
        poll.start()
    ended: list[tuple[float, int, Any]] = []

    def wait(pid: int) -> None:
        _, status, usage = os.wait4(pid, 0)
        ended.append((time.perf_counter(), status, usage))

    with log.open("wb") as out:
        start = time.perf_counter()
        process = subprocess.Popen(list(command), env=dict(env), stdout=out, stderr=out)
    waiter = threading.Thread(target=wait, args=(process.pid,), daemon=True)
    waiter.start()
    watcher = None
    if poll is not None:
        watcher = threading.Thread(target=poll.run, args=(process.pid,), daemon=True)
        watcher.start()
    try:
        waiter.join(timeout)
    finally:  # timed out, or the benchmark itself was interrupted: never leave the run behind
        if not ended:
            process.terminate()
            waiter.join(30)
            if not ended:
                process.kill()
                waiter.join()
    end, status, usage = ended[0]
    wall = end - start
    process.returncode = os.waitstatus_to_exitcode(status)
    if poll is not None and watcher is not None:
        poll.stop()
        watcher.join()
    if process.returncode != 0:
        tail = log.read_text(errors="replace")[-3000:]
        raise RuntimeError(f"{command[0]} ... exited {process.returncode}; see {log}:\n{tail}")
    memory = poll.peak_memory if poll else []
    return Measured(
        wall=wall,
        cpu=usage.ru_utime + usage.ru_stime,
        rss_mb=usage.ru_maxrss / 1024,
        engine_cpu=_cpu_seconds(engine) - engine_before,
        containers=poll.peak if poll else 0,
        sandbox_mb=sum(memory) / len(memory) if memory else 0.0,
        sandbox_max_mb=poll.largest if poll else 0.0,
    )
