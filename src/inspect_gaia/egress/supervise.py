"""Keeps the egress proxy answering: mitmdump restarted in place when it dies or hangs.

Runs elsewhere: in the proxy's container, its command; standard library only (``shipped``).

Standard library only: the proxy container's command is
``python3 supervise.py PORT -- mitmdump ARGS…`` (under Docker's init). It starts mitmdump and asks
it, every ``PROBE_EVERY`` seconds, whether it answers (a request from the container's own loopback,
which the addon answers itself and never forwards). When mitmdump exits (killed at the container's
memory limit, crashed) or fails ``PROBE_FAILURES`` probes in a row (it is killed then), it is
started again at once in the same container: the same addresses, and the same CA (mitmproxy wrote
it into its confdir at the first start and reads it back), so the sandboxes' ``HTTP(S)_PROXY`` and
trust stores keep working. A restart takes about as long as mitmproxy's start, 1-2 s.

Restarting the process, not the container, is what keeps the address: a stopped container gives
its address back to the network, and the run's next sandbox may take it.

What the run learns, as JSON lines on stdout (the container's log, which the run follows:
``sandboxes/docker/egress_watch.py``):

* ``{"inspect_gaia": {"down": WHY, "since": S, "client": C, "load": L, "at": T}}``: at T (Unix
  time) mitmdump had not answered for S seconds (0 for an exit, seen at once; a hang dates from its
  last answer), for WHY (``out of memory…``, ``exited with code 1``, ``stopped answering``); C is
  the sandbox address that held most of the proxy then, and L what it held (connections, buffered
  bytes, requests in flight: ``load.py``, as the addon last published it), when one held any;
* ``{"inspect_gaia": {"up": N}}``: it answers, after N restarts (0: the first start);
* ``{"inspect_gaia": {"gave_up": WHY}}``: more than ``MAX_RESTARTS`` within ``RESTART_WINDOW``
  seconds; it exits, and the container stops, so the run ends the samples that need the web.

mitmdump's ``oom_score_adj`` is raised so that at the memory limit the kernel kills it, not this.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING or __package__:  # the package's name (the host imports it); and in the
    from .load import LOAD_FILE, heaviest  # proxy's container, the file beside this one
else:
    from load import LOAD_FILE, heaviest

PROBE_EVERY = 1.0
PROBE_TIMEOUT = 5.0
PROBE_FAILURES = 3
"""A busy proxy may be slow to answer one probe; three in a row (about 18 s) is a hang."""
START_TIMEOUT = 60.0
ANNOUNCE = 0.5
"""Seconds between saying a hung mitmdump is down and killing it (see ``Supervisor.once``)."""
MAX_RESTARTS = 5
RESTART_WINDOW = 300.0
_PROBE = b"GET http://inspect-gaia.health/ HTTP/1.0\r\n\r\n"
_OOM_COUNTERS = ("/sys/fs/cgroup/memory.events", "/sys/fs/cgroup/memory/memory.oom_control")


def log(record: dict[str, Any]) -> None:
    """One JSON line on stdout, in one write (mitmdump writes to the same pipe)."""
    sys.stdout.write(json.dumps({"inspect_gaia": record}) + "\n")
    sys.stdout.flush()


def answers(port: int, timeout: float) -> bool:
    """Whether the proxy on ``port`` answers a health request within ``timeout`` seconds."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as probe:
            probe.settimeout(timeout)
            probe.sendall(_PROBE)
            return probe.recv(64).startswith(b"HTTP/1.1 200")
    except OSError:
        return False


def oom_kills() -> int:
    """How many processes the kernel killed in this container for memory (cgroup v2 or v1)."""
    for path in _OOM_COUNTERS:
        try:
            with open(path, encoding="ascii") as counters:
                for line in counters:
                    name, _, value = line.partition(" ")
                    if name == "oom_kill":
                        return int(value)
        except (OSError, ValueError):
            continue
    return 0


def _killed_first() -> None:
    try:
        with open("/proc/self/oom_score_adj", "w", encoding="ascii") as adj:
            adj.write("1000")
    except OSError:
        pass


def exit_reason(code: int, oom_before: int) -> str:
    """What an exit status means, naming the memory limit when the kernel killed for it."""
    if oom_kills() > oom_before:
        return "out of memory (killed at the container's memory limit)"
    if code < 0:
        return f"killed by signal {-code}"
    return f"exited with code {code}"


class Supervisor:
    """mitmdump (``command``) on ``port``, kept answering."""

    def __init__(self, port: int, command: Sequence[str]) -> None:
        """Nothing is started until ``run``."""
        self.port = port
        self.command = list(command)
        self.child: subprocess.Popen[bytes] | None = None
        self.stopping = False
        self.restarts: list[float] = []

    def stop(self, *_: object) -> None:
        """SIGTERM/SIGINT: end mitmdump, then this."""
        self.stopping = True
        if self.child is not None and self.child.poll() is None:
            self.child.terminate()

    def run(self) -> int:
        """Start, watch, restart; the exit status once stopped or given up."""
        while True:
            self.once()
            if self.stopping:
                return 0
            now = time.monotonic()
            self.restarts = [t for t in self.restarts if now - t < RESTART_WINDOW] + [now]
            if len(self.restarts) > MAX_RESTARTS:
                log({"gave_up": f"{len(self.restarts)} restarts within {RESTART_WINDOW:.0f} s"})
                return 1

    def down(self, why: str, since: float) -> None:
        """Say that mitmdump is down (unless this is the supervisor stopping it)."""
        if not self.stopping:
            record: dict[str, Any] = {"down": why, "since": round(since, 3)}
            blamed = heaviest()
            if blamed is not None:
                record["client"], record["load"] = blamed
            log({**record, "at": round(time.time(), 3)})

    def once(self) -> None:
        """Run mitmdump until it stops answering, and say so.

        A hang is said ``ANNOUNCE`` seconds before mitmdump is killed: the connections the kill
        resets end their commands at once, and the run must know of the outage by then.
        """
        oom_before = oom_kills()
        try:  # what the last mitmdump's clients held is no blame for this one
            os.unlink(LOAD_FILE)
        except OSError:
            pass
        child = self.child = subprocess.Popen(self.command, preexec_fn=_killed_first)
        deadline = time.monotonic() + START_TIMEOUT
        while not answers(self.port, 1.0):
            code = child.poll()
            if code is not None:
                return self.down(exit_reason(code, oom_before), 0.0)
            if self.stopping or time.monotonic() > deadline:
                self.down("did not start answering", START_TIMEOUT)
                child.kill()
                child.wait()
                return None
            time.sleep(0.1)
        log({"up": len(self.restarts)})
        last_answer, failures = time.monotonic(), 0
        while True:
            try:
                code = child.wait(timeout=PROBE_EVERY)
                return self.down(exit_reason(code, oom_before), 0.0)
            except subprocess.TimeoutExpired:
                pass
            if answers(self.port, PROBE_TIMEOUT):
                last_answer, failures = time.monotonic(), 0
                continue
            failures += 1
            if failures >= PROBE_FAILURES:
                self.down("stopped answering", time.monotonic() - last_answer)
                time.sleep(ANNOUNCE)
                child.kill()
                child.wait()
                return None


def main(argv: Sequence[str]) -> int:
    """``supervise.py PORT -- COMMAND…``."""
    split = list(argv).index("--")
    supervisor = Supervisor(int(argv[0]), argv[split + 1 :])
    signal.signal(signal.SIGTERM, supervisor.stop)
    signal.signal(signal.SIGINT, supervisor.stop)
    return supervisor.run()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
