"""The sandbox's command runner, run here as gaia-docker starts it in a container (no Docker).

The runner is started with the same command line and bootstrap as in a sandbox, and spoken to in
its frames; what each command sees and returns must be what ``docker exec`` gives it (the Docker
tests compare the two in a real container).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from inspect_gaia.sandboxes.docker import channel
from inspect_gaia.sandboxes.docker.exec_server import HEADER, alive
from inspect_gaia.shipped import EXEC_SERVER, source


class Runner:
    """A runner process on this machine and a blocking client of its frames."""

    def __init__(self) -> None:
        cmd = [sys.executable, *channel.RUNNER[1:]]
        self.process = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert self.process.stdin is not None and self.process.stdout is not None
        self.stdin, self.stdout = self.process.stdin, self.process.stdout
        self.stdin.write(json.dumps(source(EXEC_SERVER)).encode() + b"\n")
        self.stdin.flush()
        self.next_id = 1

    def frame(self) -> tuple[int, bytes, bytes]:
        request, kind, size = HEADER.unpack(self.stdout.read(HEADER.size))
        return request, kind, self.stdout.read(size)

    def start(
        self,
        cmd: list[str],
        cwd: str = "/",
        env: dict[str, str] | None = None,
        data: bytes | None = None,
    ) -> int:
        request, self.next_id = self.next_id, self.next_id + 1
        spec = {"cmd": cmd, "cwd": cwd, "env": env or {}, "input": data is not None}
        payload = json.dumps(spec).encode() + b"\0" + (data or b"")
        self.stdin.write(HEADER.pack(request, b"R", len(payload)) + payload)
        self.stdin.flush()
        return request

    def kill(self, request: int) -> None:
        self.stdin.write(HEADER.pack(request, b"K", 0))
        self.stdin.flush()

    def finish(self, request: int) -> tuple[str, bytes, bytes]:
        """Frames until ``request`` ends: its exit status (or ``F...``), stdout, stderr."""
        out, err = b"", b""
        while True:
            seen, kind, payload = self.frame()
            assert seen == request, "one command at a time here"
            if kind == b"O":
                out += payload
            elif kind == b"E":
                err += payload
            else:
                return (kind + payload).decode(), out, err

    def run(self, cmd: list[str], **kwargs: object) -> tuple[str, bytes, bytes]:
        return self.finish(self.start(cmd, **kwargs))  # type: ignore[arg-type]


@pytest.fixture
def runner() -> Iterator[Runner]:
    started = Runner()
    assert started.frame()[1] == b"H"
    yield started
    started.process.kill()
    started.process.wait()


def test_the_hello_says_which_user_commands_run_as() -> None:
    started = Runner()
    request, kind, payload = started.frame()
    started.process.kill()
    assert (request, kind) == (0, b"H")
    assert json.loads(payload)["uid"] == os.getuid()


def test_a_command_returns_its_status_and_both_outputs(runner: Runner) -> None:
    assert runner.run(["sh", "-c", "echo out; echo err >&2; exit 3"]) == ("X3", b"out\n", b"err\n")


def test_a_command_killed_by_a_signal_reports_128_plus_the_signal_as_docker_does(
    runner: Runner,
) -> None:
    assert runner.run(["sh", "-c", "kill -9 $$"])[0] == "X137"


def test_cwd_env_and_input_reach_the_command(runner: Runner, tmp_path: Path) -> None:
    status, out, _ = runner.run(
        ["sh", "-c", 'pwd; echo "$GAIA_X"; cat'],
        cwd=str(tmp_path),
        env={"GAIA_X": "1"},
        data=b"typed",
    )
    assert (status, out) == ("X0", f"{tmp_path}\n1\ntyped".encode())


def test_without_input_stdin_is_empty(runner: Runner) -> None:
    assert runner.run(["cat"]) == ("X0", b"", b"")


def test_the_runners_environment_is_passed_on_and_added_to(runner: Runner) -> None:
    _, out, _ = runner.run(["sh", "-c", "echo $PATH"], env={"EXTRA": "x"})
    assert out.decode().strip() == os.environ["PATH"]


def test_a_command_that_cannot_start_is_refused_not_run(runner: Runner, tmp_path: Path) -> None:
    status, _, _ = runner.run(["true"], cwd=str(tmp_path / "missing"))
    assert status.startswith("F") and "missing" in status
    assert runner.run(["no-such-program-here"])[0].startswith("F")


def test_a_background_child_holding_the_output_is_waited_for_2_seconds_then_left(
    runner: Runner,
) -> None:
    start = time.monotonic()
    status, out, _ = runner.run(["sh", "-c", "sleep 30 & echo started"])
    took = time.monotonic() - start
    assert (status, out) == ("X0", b"started\n")
    assert 1.8 <= took < 10


def test_kill_ends_the_command_and_its_children(runner: Runner) -> None:
    request = runner.start(["sh", "-c", "sleep 60 & sleep 60; echo never"])
    time.sleep(0.3)
    runner.kill(request)
    start = time.monotonic()
    status, out, _ = runner.finish(request)
    assert status == "X137" and out == b""
    assert time.monotonic() - start < 5  # the children went with it: no 2 s drain


def test_a_kill_that_arrives_as_the_command_starts_still_kills_it(runner: Runner) -> None:
    """A command cancelled at once: its K arrives while the runner is still starting it."""
    for _ in range(5):
        request = runner.start(["sh", "-c", "sleep 5; echo never"])
        runner.kill(request)
        start = time.monotonic()
        status, out, _ = runner.finish(request)
        assert (status, out) == ("X137", b"")
        assert time.monotonic() - start < 4


def test_commands_run_concurrently_and_their_frames_do_not_mix(runner: Runner) -> None:
    slow = runner.start(["sh", "-c", "sleep 1; echo slow"])
    fast = runner.start(["sh", "-c", "echo fast"])
    ended: dict[int, bytes] = {}
    outputs: dict[int, bytes] = {slow: b"", fast: b""}
    while len(ended) < 2:
        request, kind, payload = runner.frame()
        if kind == b"O":
            outputs[request] += payload
        elif kind == b"X":
            ended[request] = payload
    assert list(ended) == [fast, slow]
    assert outputs == {slow: b"slow\n", fast: b"fast\n"}


def test_large_output_arrives_whole(runner: Runner) -> None:
    status, out, _ = runner.run(["head", "-c", "3000000", "/dev/zero"])
    assert status == "X0" and len(out) == 3_000_000


def test_sigterm_leaves_the_runner_alone_and_commands_get_default_signals(runner: Runner) -> None:
    runner.process.send_signal(signal.SIGTERM)
    time.sleep(0.2)
    assert runner.process.poll() is None
    # A handled signal is reset for the command: the command dies of SIGTERM as usual.
    assert runner.run(["sh", "-c", "kill -TERM $$; sleep 5"])[0] == "X143"


def test_the_runner_exits_when_its_connection_closes(runner: Runner) -> None:
    runner.stdin.close()
    assert runner.process.wait(timeout=5) == 0


class ToolsServer:
    """inspect's sandbox tools' server as their CLI reaches it: JSON-RPC posted on a Unix socket.

    A poll answers ``running`` while the process it names exists, else ``completed``; with output
    when the process is one of ``talking``.
    """

    def __init__(self, path: Path) -> None:
        import socketserver
        from http.server import BaseHTTPRequestHandler

        self.asked: list[dict[str, Any]] = []
        self.talking: set[int] = set()
        asked, talking = self.asked, self.talking

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                asked.append(request)
                pid = (request.get("params") or {}).get("pid")
                state = "running" if pid and alive(pid) else "completed"
                result = {"state": state, **({"stdout": "said"} if pid in talking else {})}
                body = json.dumps({"jsonrpc": "2.0", "result": result, "id": 1})
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body.encode())

            def log_message(self, format: str, *args: Any) -> None:
                return

            def address_string(self) -> str:
                return "unix"

        self.server = socketserver.ThreadingUnixStreamServer(str(path), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def tools(tmp_path: Path) -> Iterator[tuple[str, dict[str, str], Path]]:
    """A stand-in tools CLI (it says when it ran) and the socket its server would listen on."""
    cli = tmp_path / "inspect-sandbox-tools"
    cli.write_text("#!/bin/sh\necho the-cli-ran\n")
    cli.chmod(0o755)
    socket_path = tmp_path / "tools.sock"
    yield str(cli), {"INSPECT_SANDBOX_TOOLS_SOCKET": str(socket_path)}, socket_path


def _rpc(method: str, **params: object) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "method": method, "params": params, "id": 7}).encode()


def test_the_sandbox_tools_calls_are_posted_to_their_server_without_their_cli(
    runner: Runner, tools: tuple[str, dict[str, str], Path]
) -> None:
    cli, env, socket_path = tools
    server = ToolsServer(socket_path)
    try:
        start = _rpc("exec_remote_start", command="true")
        # as gaia-docker sends it: inside its timeout wrapper
        wrapped = ["/usr/bin/timeout", "-k", "5s", "120s", cli, "exec"]
        status, out, _ = runner.run(wrapped, env=env, data=start)
        assert (status, json.loads(out)["result"]) == ("X0", {"state": "completed"})
        assert out.endswith(b"\n") and b"the-cli-ran" not in out
        assert server.asked == [json.loads(start)]
        # a poll of a running process is answered once it has ended: one call, not one per 5 s
        worker = subprocess.Popen(["sleep", "0.6"])
        began = time.monotonic()
        _, out, _ = runner.run(
            [cli, "exec"], env=env, data=_rpc("exec_remote_poll", pid=worker.pid)
        )
        worker.wait()
        assert time.monotonic() - began >= 0.5
        assert json.loads(out)["result"] == {"state": "completed"}
        # one with output is answered at once: the tools keep it until the host has it
        talker = subprocess.Popen(["sleep", "20"])
        server.talking.add(talker.pid)
        began = time.monotonic()
        poll = _rpc("exec_remote_poll", pid=talker.pid)
        _, out, _ = runner.run([cli, "exec"], env=env, data=poll)
        talker.kill()
        talker.wait()
        assert time.monotonic() - began < 5
        assert json.loads(out)["result"] == {"state": "running", "stdout": "said"}
        # any other call is the CLI's (its own methods run in the CLI)
        assert runner.run([cli, "exec"], env=env, data=_rpc("version"))[1] == b"the-cli-ran\n"
    finally:
        server.close()


def test_the_tools_server_is_found_beside_their_cli(
    runner: Runner, tools: tuple[str, dict[str, str], Path]
) -> None:
    """inspect_ai 0.3.285's tools (v35) listen in ``.server/`` beside their CLI."""
    cli, _, _ = tools
    folder = Path(cli).parent / ".server"
    folder.mkdir()
    server = ToolsServer(folder / "sandbox-tools.sock")
    try:
        _, out, _ = runner.run([cli, "exec"], data=_rpc("exec_remote_kill", pid=0, ack_seq=0))
        assert json.loads(out)["result"] == {"state": "completed"} and server.asked
    finally:
        server.close()


def test_with_no_server_listening_the_tools_cli_runs_and_starts_it(
    runner: Runner, tools: tuple[str, dict[str, str], Path]
) -> None:
    cli, env, _ = tools
    status, out, _ = runner.run([cli, "exec"], env=env, data=_rpc("exec_remote_start"))
    assert (status, out) == ("X0", b"the-cli-ran\n")
