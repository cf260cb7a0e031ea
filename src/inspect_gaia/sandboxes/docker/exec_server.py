"""The command runner gaia-docker starts once in each sandbox (``channel`` is the host's side).

Runs elsewhere: in each sandbox, under the image's ``python3``; standard library only (``shipped``).

It runs inside the sample's container, under the image's ``python3`` (standard library only, so
any Python 3.7+ will do), started by one ``docker exec`` whose stdin and stdout carry frames both
ways. Each command then costs one fork in the container instead of a ``docker exec`` (an API
round trip, a runc start, about 20 ms of the engine's CPU and 80 ms of wall here).

A command runs as ``docker exec`` would run it: the exec's user and environment (the command's
``env`` added), its working directory, stdin from ``/dev/null`` unless it has input, its exit
status as the engine reports it (128 + N when killed by signal N), and its output read until both
pipes close or, once it has exited, for at most 2 seconds more (the engine's own wait for a
background child that keeps them open).

Frames: a 9-byte header (request id, kind, payload length; big-endian) and the payload.

inspect's sandbox tools (its agent bridge's ``exec_remote``) call their server in the sandbox by
running their own CLI (``inspect-sandbox-tools exec`` with a JSON-RPC request on stdin), a
bundled Python that costs 0.6 s of CPU to start, for every call: a bridged agent's two remote
processes are polled every 5 s each, so 32 agents at once asked for more CPU than 2 cores have
in these starts alone. The runner makes those ``exec_remote_*`` calls itself (``tools_call``):
the same request, posted to the same server socket the CLI posts to, its answer printed as the
CLI prints it; a poll of a running process that has nothing new is held until the process ends,
has output (the server is asked each ``ASK`` seconds), or ``HOLD`` seconds pass: the host learns
of the end at once, with one call where it made one every 5 s. Any other call, a server not yet
listening, or an answer too large for one response runs the CLI.

* host to runner: ``R`` run (JSON spec, a NUL byte, then the command's input), ``K`` kill;
* runner to host: ``H`` hello (once, when ready; JSON with the runner's ``uid``), ``O``/``E``
  stdout/stderr bytes, ``X`` exit status (decimal), ``F`` the command could not be started (the
  host then runs it through ``docker exec``, so the engine's own error reaches the caller).
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import IO

HEADER = struct.Struct(">IcI")
DRAIN_AFTER_EXIT = 2.0
"""Seconds output is still read once a command has exited (Docker waits as long)."""
TOOLS_CLI = "/inspect-sandbox-tools"
"""How the path of inspect's sandbox tools' CLI ends (``tools_call``)."""
HOLD = 30.0
"""Seconds a poll of a running remote process is held (inspect waits 120 s for one)."""
WATCH = 0.05
"""Seconds between looks at a held poll's process."""
ASK = 1.0
"""Seconds between asks of the server while a poll is held: output it holds goes to the host at
once (the tools keep a process's output until the host has it)."""


class Runner:
    """One runner: reads requests from ``inp``, writes frames to ``out``."""

    def __init__(self, inp: int, out: int) -> None:
        """Serve requests read from ``inp``, answering in frames on ``out``."""
        self.inp = inp
        self.out = out
        self.lock = threading.Lock()
        self.environment = initial_environment()
        self.finished: set[int] = set()
        self.processes: dict[int, subprocess.Popen[bytes]] = {}
        self.table = threading.Lock()
        """Guards ``processes`` and ``killed``: a kill and its command's start may cross."""
        self.killed: set[int] = set()
        """Requests killed before their command had started: killed as soon as it has."""

    def send(self, request: int, kind: bytes, payload: bytes = b"") -> None:
        """One frame to the host, unless the request has finished."""
        with self.lock:
            if request in self.finished:
                return
            data = HEADER.pack(request, kind, len(payload)) + payload
            view = memoryview(data)
            while view:
                view = view[os.write(self.out, view) :]
            if kind in (b"X", b"F"):
                self.finished.add(request)

    def serve(self) -> None:
        """Read requests until the host closes its end, each run in a thread of its own."""
        hello = {"python": sys.version.split()[0], "uid": os.getuid()}
        self.send(0, b"H", json.dumps(hello).encode())
        while True:
            header = self.read(HEADER.size)
            if header is None:
                return
            request, kind, size = HEADER.unpack(header)
            payload = self.read(size)
            if payload is None:
                return
            if kind == b"R":
                threading.Thread(target=self.run, args=(request, payload), daemon=True).start()
            elif kind == b"K":
                self.kill(request)

    def read(self, size: int) -> bytes | None:
        """Exactly ``size`` bytes of the host's stream, or ``None`` at its end."""
        chunks = []
        while size:
            chunk = os.read(self.inp, size)
            if not chunk:
                return None
            chunks.append(chunk)
            size -= len(chunk)
        return b"".join(chunks)

    def run(self, request: int, payload: bytes) -> None:
        """Run one command request and send its output, then its exit status."""
        spec_text, _, data = payload.partition(b"\0")
        spec = json.loads(spec_text.decode())
        env = dict(self.environment)
        env.update((k.encode(), v.encode()) for k, v in (spec.get("env") or {}).items())
        has_input = spec.get("input", False)
        answer = tools_call(spec["cmd"], env, data, lambda: request in self.killed)
        if answer is not None:
            self.send(request, b"O", answer)
            self.send(request, b"X", b"0")
            with self.table:
                self.killed.discard(request)
            return
        try:
            process = subprocess.Popen(
                spec["cmd"],
                cwd=spec["cwd"],
                env=env,
                stdin=subprocess.PIPE if has_input else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
        except (OSError, ValueError, subprocess.SubprocessError) as ex:
            self.send(request, b"F", str(ex).encode("utf-8", "replace"))
            return
        with self.table:
            self.processes[request] = process
            killed = request in self.killed
        if killed:
            stop(process)
        readers = [
            threading.Thread(target=self.pump, args=(request, process.stdout, b"O"), daemon=True),
            threading.Thread(target=self.pump, args=(request, process.stderr, b"E"), daemon=True),
        ]
        for reader in readers:
            reader.start()
        if has_input:
            threading.Thread(target=feed, args=(process.stdin, data), daemon=True).start()
        code = process.wait()
        deadline = time.monotonic() + DRAIN_AFTER_EXIT
        for reader in readers:
            reader.join(max(0.0, deadline - time.monotonic()))
        with self.table:
            self.processes.pop(request, None)
            self.killed.discard(request)
        self.send(request, b"X", str(128 - code if code < 0 else code).encode())

    def pump(self, request: int, pipe: IO[bytes], kind: bytes) -> None:
        """Send what ``pipe`` gives as frames of ``kind`` until it closes."""
        fd = pipe.fileno()
        while True:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            self.send(request, kind, chunk)
        pipe.close()

    def kill(self, request: int) -> None:
        """Kill a request's command (and its group), or mark it to be killed once it starts."""
        with self.table:
            process = self.processes.get(request)
            if process is None:
                if request not in self.finished:
                    self.killed.add(request)
                return
        stop(process)


def tools_call(
    cmd: list[str], env: dict[bytes, bytes], data: bytes, killed: Callable[[], bool]
) -> bytes | None:
    """What ``inspect-sandbox-tools exec`` would print for an ``exec_remote_*`` request, or None.

    ``None``: not such a call, no server listening yet (the CLI starts it), or an answer above the
    size the host takes whole (the CLI cuts it in pieces; a poll can be asked again, as inspect
    asks one again after a lost answer).
    """
    if cmd[:2] == ["/usr/bin/timeout", "-k"] and len(cmd) > 4:
        cmd = cmd[4:]  # the host's timeout wrapper (``channel``): a held poll ends well within
    if len(cmd) != 2 or cmd[1] != "exec" or not cmd[0].endswith(TOOLS_CLI):
        return None
    try:
        request = json.loads(data)
        method, params = str(request["method"]), request.get("params") or {}
    except (ValueError, KeyError, TypeError):
        return None
    if not method.startswith("exec_remote_"):
        return None
    # where the tools' server listens: its folder beside the CLI, unless the variable says
    beside = os.path.join(os.path.dirname(cmd[0]), ".server", "sandbox-tools.sock").encode()
    socket_path = env.get(b"INSPECT_SANDBOX_TOOLS_SOCKET") or beside
    poll = method == "exec_remote_poll"
    pid = params.get("pid")
    answer = _post(socket_path.decode(), data)
    if poll and isinstance(pid, int):
        held, settle = time.monotonic() + HOLD, None
        while answer is not None and _quiet(answer) and time.monotonic() < held:
            if killed():
                return None
            # ended: the server may read it as running a moment longer
            if not alive(pid):
                settle = settle or time.monotonic() + 2.0
                if time.monotonic() > settle:
                    break
            next_ask = time.monotonic() + (WATCH if settle else ASK)
            while time.monotonic() < next_ask and (settle or alive(pid)):
                time.sleep(WATCH)
            answer = _post(socket_path.decode(), data)
    limit = env.get(b"INSPECT_SANDBOX_JSON_RPC_RESPONSE_MAX_BYTES", b"")
    if answer is None or (poll and limit.isdigit() and len(answer) > int(limit)):
        return None
    return answer + b"\n"


def _quiet(answer: bytes) -> bool:
    """Whether a poll's answer says only that the process still runs: no output, no end."""
    try:
        result = json.loads(answer)["result"]
        return bool(
            result.get("state") == "running"
            and not result.get("stdout")
            and not result.get("stderr")
        )
    except (ValueError, KeyError, TypeError, AttributeError):
        return False


def alive(pid: object) -> bool:
    """Whether process ``pid`` runs (an ended one its parent has not reaped yet does not)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as file:
            return file.read().rpartition(b")")[2].split()[0] != b"Z"
    except (OSError, IndexError):
        return False


def _post(socket_path: str, body: bytes) -> bytes | None:
    """The server's answer to ``body``, posted as its CLI posts it; None when it is not there."""
    connection = http.client.HTTPConnection("localhost")
    try:
        unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        unix.connect(socket_path)
    except OSError:
        return None
    connection.sock = unix
    try:
        connection.request("POST", "/", body, {"Content-Type": "application/json"})
        return connection.getresponse().read()
    finally:
        connection.close()


def stop(process: subprocess.Popen[bytes]) -> None:
    """Kill a command and everything it started (its own session)."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except OSError:
        pass


def initial_environment() -> dict[bytes, bytes]:
    """The environment the exec gave the runner, before Python's start-up changed it.

    Python sets ``LC_CTYPE`` when the locale is C (PEP 538); a ``docker exec`` command would not
    see it. ``/proc/self/environ`` still holds the environment as the process started.
    """
    try:
        with open("/proc/self/environ", "rb") as file:
            entries = file.read().split(b"\0")
    except OSError:
        return dict(os.environb)
    return dict(entry.partition(b"=")[::2] for entry in entries if b"=" in entry)


def feed(pipe: IO[bytes], data: bytes) -> None:
    """Write ``data`` to a command's stdin, then close it (a command that exits early is fine)."""
    try:
        pipe.write(data)
    except OSError:
        pass  # the command exited without reading all of its input
    finally:
        try:
            pipe.close()
        except OSError:
            pass


def main() -> None:
    """Serve on stdin and stdout until the host closes them."""
    # A handler, not SIG_IGN: a handled signal is reset for the commands, an ignored one is not.
    # So `pkill python3` in a sample leaves the runner alone and the commands behave as usual.
    for number in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(number, lambda *_: None)
    Runner(0, 1).serve()


if __name__ == "__main__":
    main()
