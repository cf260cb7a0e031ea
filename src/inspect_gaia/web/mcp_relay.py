"""Runs inside the sandbox: holds one stdio MCP server and relays requests to it over a socket.

Runs elsewhere: in the sample's sandbox, under its ``python3``; standard library only (``shipped``).

Copied into the sample's sandbox and run with its ``python3`` (standard library only, nothing of
this package is importable there). ``serve DIR [--tools A,B] -- COMMAND …`` starts the server
(offering only tools A, B… when given: the others are refused here), initialises the
MCP session with it once, then answers on the Unix socket ``DIR/relay.sock``: each connection
carries one request (``{"method": …, "params": …}``, one JSON line) and gets the server's
JSON-RPC answer back (one JSON line, at most ``MAX_ANSWER`` bytes: a longer one becomes an MCP error
that says so). ``call DIR SECONDS`` is that connection for a caller with
only an exec: the request on stdin, the answer on stdout, waiting for the socket while the server
starts. So a request costs one short exec in a sandbox whose server stays up, where inspect's
sandbox MCP transport runs its tools CLI once per request (``web/session.py``).

Exit statuses of ``call``: 0 an answer (which may be the server's error), 3 the server failed to
start or ended (its last stderr on stderr), 4 no server within SECONDS. ``stop PID`` kills the
relay and everything under it.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from typing import IO, Any

PROTOCOL_VERSION = "2025-06-18"
SOCKET = "relay.sock"
FAILED = "failed"
"""A file in DIR saying why the server is gone (its exit status and stderr's tail)."""
STDERR = "server.log"
MAX_ANSWER = 8 << 20
"""Bytes of one answer's JSON line: the sandbox's exec keeps only the last 10 MiB of output."""


class Relay:
    """One server's stdin and stdout, shared by the connections that carry its requests."""

    def __init__(self, directory: str, command: list[str]) -> None:
        """Start ``command`` with its stderr in ``directory``."""
        self.directory = directory
        self.stderr = open(os.path.join(directory, STDERR), "ab")
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr
        )
        self.lock = threading.Lock()
        self.waiting: dict[int, tuple[threading.Event, list[dict[str, Any]]]] = {}
        self.next_id = 1
        self.ended = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()

    def request(self, method: str, params: Any) -> dict[str, Any]:
        """Send one request and wait for its answer; an ``error`` when the server has ended."""
        done = threading.Event()
        answer: list[dict[str, Any]] = []
        with self.lock:
            ident = self.next_id
            self.next_id += 1
            self.waiting[ident] = (done, answer)
        message = {"jsonrpc": "2.0", "id": ident, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        while not done.wait(0.5):
            if self.ended.is_set():
                break
        with self.lock:
            self.waiting.pop(ident, None)
        return answer[0] if answer else {"relay_error": self.why()}

    def send(self, message: dict[str, Any]) -> None:
        """One JSON-RPC message to the server (a dead server's pipe is noticed by the reader)."""
        stdin = self.process.stdin
        assert stdin is not None
        with self.lock:
            try:
                stdin.write(json.dumps(message).encode() + b"\n")
                stdin.flush()
            except OSError:
                pass

    def _read(self) -> None:
        stdout = self.process.stdout
        assert stdout is not None
        for line in stdout:
            try:
                message = json.loads(line)
            except ValueError:
                continue  # not JSON-RPC: a stray print of the server's
            if not isinstance(message, dict):
                continue
            if "method" in message and "id" in message:  # the server asks us: we offer nothing
                error = {"code": -32601, "message": "the client offers no methods"}
                self.send({"jsonrpc": "2.0", "id": message["id"], "error": error})
                continue
            with self.lock:
                waiter = self.waiting.get(message.get("id"))  # type: ignore[arg-type]
            if waiter is not None:  # a notification, or an answer no one waits for, is dropped
                waiter[1].append(message)
                waiter[0].set()
        self.process.wait()
        self.ended.set()

    def why(self) -> str:
        """Why the server is gone: its exit status and the end of what it wrote to stderr."""
        self.process.poll()
        self.stderr.flush()
        with open(os.path.join(self.directory, STDERR), "rb") as log:
            log.seek(0, os.SEEK_END)
            log.seek(max(0, log.tell() - 600))
            tail = log.read().decode(errors="replace").strip()
        status = self.process.returncode
        ended = "the server ended" if status is None else f"the server exited with status {status}"
        return f"{ended}: {tail}" if tail else ended


def serve(directory: str, command: list[str], tools: frozenset[str] = frozenset()) -> int:
    """Start the server, initialise it, then relay requests until it ends.

    ``tools``: the only tools it lists and lets be called (empty: all of the server's).
    """
    relay = Relay(directory, command)
    initialize = {
        "protocolVersion": PROTOCOL_VERSION,
        "capabilities": {},
        "clientInfo": {"name": "inspect-gaia-relay", "version": "1"},
    }
    answer = relay.request("initialize", initialize)
    if "result" not in answer:
        return _failed(directory, answer.get("relay_error") or json.dumps(answer.get("error")))
    relay.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(os.path.join(directory, SOCKET + ".new"))
    os.rename(os.path.join(directory, SOCKET + ".new"), os.path.join(directory, SOCKET))
    listener.listen(64)
    listener.settimeout(0.5)
    answering: list[threading.Thread] = []
    while not relay.ended.is_set():
        try:
            connection, _ = listener.accept()
        except TimeoutError:
            continue
        answering = [thread for thread in answering if thread.is_alive()]
        thread = threading.Thread(target=_answer, args=(relay, connection, tools), daemon=True)
        answering.append(thread)
        answering[-1].start()
    os.unlink(os.path.join(directory, SOCKET))
    status = _failed(directory, relay.why())
    for thread in answering:  # the requests in flight are told why before the relay goes
        thread.join(5)
    return status


def _failed(directory: str, why: str) -> int:
    with open(os.path.join(directory, FAILED), "w", encoding="utf-8") as file:
        file.write(why)
    return 3


def _answer(relay: Relay, connection: socket.socket, tools: frozenset[str]) -> None:
    with connection, connection.makefile("rwb") as stream:
        request = json.loads(stream.readline())
        method, params = request["method"], request.get("params")
        refused = _refused(method, params, tools)
        answer = refused or relay.request(method, params)
        if method == "tools/list" and tools and isinstance(answer.get("result"), dict):
            listed = answer["result"].get("tools") or []
            answer["result"]["tools"] = [t for t in listed if t.get("name") in tools]
        stream.write(bounded(answer) + b"\n")
        stream.flush()


def _refused(method: str, params: Any, tools: frozenset[str]) -> dict[str, Any] | None:
    """An error for a call of a tool the harness leaves out (``--tools``), else ``None``."""
    name = params.get("name") if isinstance(params, dict) else None
    if method != "tools/call" or not tools or name in tools:
        return None
    return {"error": {"code": -32601, "message": f"{name} is not offered in this harness"}}


def bounded(answer: dict[str, Any]) -> bytes:
    """``answer`` as one JSON line, or an MCP error if that line is over ``MAX_ANSWER`` bytes.

    Characters are written as UTF-8 (``ensure_ascii`` would make a CJK character 6 bytes), and a
    lone surrogate as its ``\\u`` escape, so any answer encodes.
    """
    line = json.dumps(answer, ensure_ascii=False).encode("utf-8", errors="backslashreplace")
    if len(line) <= MAX_ANSWER:
        return line
    message = (
        f"the answer is {len(line) / 2**20:.1f} MiB, over the relay's {MAX_ANSWER // 2**20} MiB:"
        " ask for less of it (a part of the page, a smaller max_length, a file)"
    )
    return json.dumps({"error": {"code": -32000, "message": message}}).encode()


def call(directory: str, seconds: float, source: IO[bytes], sink: IO[bytes]) -> int:
    """Relay the request on ``source`` and write its answer to ``sink`` (statuses: module's)."""
    request = source.read()
    deadline = time.monotonic() + seconds
    path = os.path.join(directory, SOCKET)
    while True:
        if _said_why(directory):
            return 3
        connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            connection.connect(path)
            break
        except OSError:
            connection.close()
            if time.monotonic() > deadline:
                sys.stderr.write(f"no server answered within {seconds:g} s")
                return 4
            time.sleep(0.02)
    with connection, connection.makefile("rwb") as stream:
        stream.write(request.strip() + b"\n")
        stream.flush()
        answer = stream.readline()
    if not answer:  # the relay itself was stopped mid-request
        if not _said_why(directory):
            sys.stderr.write("the relay ended before the server answered")
        return 3
    sink.write(answer)
    sink.flush()
    return 0


def _said_why(directory: str) -> bool:
    """Write why the server is gone to stderr, if the relay has said (``FAILED``)."""
    try:
        with open(os.path.join(directory, FAILED), encoding="utf-8") as file:
            sys.stderr.write(file.read())
    except FileNotFoundError:
        return False
    return True


def stop(pid: int) -> int:
    """Kill the relay ``pid`` and every process under it.

    The tree is collected before the first kill: Chromium's processes would otherwise be
    re-parented away from it as their parents die.
    """
    children: dict[int, list[int]] = {}
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:  # pid (comm) state ppid ...: comm may hold spaces and parentheses
            with open(f"/proc/{entry}/stat", "rb") as stat:
                parent = int(stat.read().rsplit(b")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(parent, []).append(int(entry))
    tree, pending = [], [pid]
    while pending:
        tree.append(pending.pop())
        pending.extend(children.get(tree[-1], []))
    for each in tree:
        try:
            os.kill(each, signal.SIGKILL)
        except OSError:
            pass  # gone meanwhile
    return 0


def main(argv: list[str]) -> int:
    """``serve DIR -- COMMAND …``, ``call DIR SECONDS`` or ``stop PID`` (module's docstring)."""
    if len(argv) > 3 and argv[0] == "serve" and argv[2] == "--":
        return serve(argv[1], argv[3:])
    if len(argv) > 5 and argv[0] == "serve" and argv[2] == "--tools" and argv[4] == "--":
        return serve(argv[1], argv[5:], frozenset(filter(None, argv[3].split(","))))
    if len(argv) == 3 and argv[0] == "call":
        return call(argv[1], float(argv[2]), sys.stdin.buffer, sys.stdout.buffer)
    if len(argv) == 2 and argv[0] == "stop" and argv[1].isdigit():
        return stop(int(argv[1]))
    sys.stderr.write(
        "usage: mcp_relay.py serve DIR [--tools A,B] -- COMMAND … | call DIR SECONDS | stop PID\n"
    )
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
