"""The egress proxy's supervisor (``egress/supervise.py``), run for real around a stand-in proxy.

The stand-in answers every request on 127.0.0.1 as the addon answers the supervisor's probe; it is
killed, stopped and broken here as mitmdump could be in the proxy's container.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from inspect_gaia.egress import supervise
from inspect_gaia.egress.load import Loads

pytestmark = pytest.mark.slow

STAND_IN = r"""
import os, socket, sys
print(f"pid {os.getpid()}", flush=True)
server = socket.create_server(("127.0.0.1", int(sys.argv[1])))
while True:
    conn, _ = server.accept()
    conn.recv(4096)
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
    conn.close()
"""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Supervised:
    """The supervisor's process, and its stdout line by line."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.process = process
        self.records: queue.Queue[dict[str, Any]] = queue.Queue()
        self.pids: list[int] = []
        """Each start of the stand-in, as it printed it."""
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            if line.startswith("pid "):
                self.pids.append(int(line.split()[1]))
            elif line.startswith('{"inspect_gaia"'):
                self.records.put(dict(json.loads(line)["inspect_gaia"]))

    def next_record(self, timeout: float = 30) -> dict[str, Any]:
        """The next ``inspect_gaia`` record it wrote."""
        return self.records.get(timeout=timeout)


@contextmanager
def supervising(*command: str, env: dict[str, str] | None = None) -> Iterator[Supervised]:
    port = _free_port()
    args = [sys.executable, supervise.__file__, str(port), "--", *command]
    process = subprocess.Popen(
        [arg.replace("PORT", str(port)) for arg in args],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
    )
    try:
        yield Supervised(process)
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()


def test_a_killed_proxy_is_started_again_and_said_so() -> None:
    with supervising(sys.executable, "-c", STAND_IN, "PORT") as run:
        assert run.next_record() == {"up": 0}
        os.kill(run.pids[0], signal.SIGKILL)
        down = run.next_record()
        assert down["down"] == "killed by signal 9" and down["since"] == 0.0
        assert run.next_record() == {"up": 1}
        assert len(run.pids) == 2 and run.pids[1] != run.pids[0]
        run.process.send_signal(signal.SIGTERM)  # as `docker stop` does, through Docker's init
        assert run.process.wait(timeout=30) == 0


def test_the_down_line_names_the_client_that_held_most_of_the_proxy(tmp_path: Path) -> None:
    """Not the last one in: an honest sandbox fetching on while the flooder held the proxy."""
    published = tmp_path / "load.json"
    with supervising(
        sys.executable,
        "-c",
        STAND_IN,
        "PORT",
        env={"INSPECT_GAIA_EGRESS_LOAD_FILE": str(published)},
    ) as run:
        assert run.next_record() == {"up": 0}
        loads = Loads()  # as the addon counts and publishes them
        flooder, honest = loads.of("10.9.8.7"), loads.of("10.9.8.77")
        flooder.connections, flooder.open, flooder.requests = 60, 60, 60
        loads.hold("10.9.8.7", "conn-1", 1, 50_000)
        honest.connections, honest.open, honest.requests = 1, 1, 400
        loads.publish(str(published))
        os.kill(run.pids[0], signal.SIGKILL)
        down = run.next_record()
        assert down["down"] == "killed by signal 9" and down["client"] == "10.9.8.7", down
        assert down["load"] == {
            "connections": 60,
            "servers": 0,
            "held": 50_000,
            "open": 60,
            "requests": 60,
            "bytes": 0,
        }
        assert run.next_record() == {"up": 1}
        assert not published.exists(), "a new mitmdump is blamed for nothing of the last one's"
        loads.gone("conn-1")
        assert loads.of("10.9.8.7").held == 0


def test_a_proxy_that_keeps_failing_is_given_up() -> None:
    with supervising(sys.executable, "-c", "import sys; sys.exit(3)") as run:
        downs = [run.next_record() for _ in range(supervise.MAX_RESTARTS + 1)]
        assert all(d["down"] == "exited with code 3" for d in downs), downs
        assert "restarts within" in run.next_record()["gave_up"]
        assert run.process.wait(timeout=30) == 1


def test_the_oom_counter_reads_the_kernels_count() -> None:
    # in any container or cgroup: a number, never an error
    assert supervise.oom_kills() >= 0
    assert supervise.exit_reason(-9, supervise.oom_kills()) == "killed by signal 9"
    assert supervise.exit_reason(2, supervise.oom_kills()) == "exited with code 2"
