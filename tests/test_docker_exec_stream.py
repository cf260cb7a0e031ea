"""exec_stream against the real engine: an exec's output, input, exit status and connections.

(The parser's own contract, without an engine, is in ``test_exec_stream.py``.)
"""

from __future__ import annotations

import os
import socket
import subprocess
import threading
import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

import anyio
import pytest
from inspect_ai.util import SandboxUnavailableError

from inspect_gaia.sandboxes.docker import client, exec_stream
from inspect_gaia.sandboxes.docker.exec_stream import Attached, _Connection
from inspect_gaia.sandboxes.docker.gaia_docker import GaiaDockerSandbox
from inspect_gaia.sandboxes.spec import gaia_compose
from tests.helpers import SANDBOX_IMAGE

pytestmark = [pytest.mark.docker, pytest.mark.anyio]

LIMIT = 1 << 20


@pytest.fixture(params=["asyncio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def container(sandbox_image: str) -> Iterator[str]:
    name = f"gaia-test-exec-{uuid.uuid4().hex[:8]}"
    started = client.start_container(
        name,
        {"image": SANDBOX_IMAGE, "command": ["tail", "-f", "/dev/null"], "host_config": {}},
        {"inspect_gaia.sandbox": "gaia-docker", "inspect_gaia.test": "exec-stream"},
    )
    try:
        yield started
    finally:
        client.remove_container(started)


async def run(container: str, cmd: list[str], data: bytes | None = None, **kw: Any) -> Any:
    env, user = kw.get("env"), kw.get("user")
    return await exec_stream.run(container, cmd, data, kw.get("cwd", "/"), env, user, LIMIT)


async def test_output_that_arrives_with_the_upgrade_response_is_kept(
    anyio_backend: str, container: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At 64 samples at once a client reads the upgrade response late, and the command's output
    arrives in the same read: docker-py left it in http.client's buffer, and the exec returned
    exit 0 and no output (1 of 165 samples of the GAIA-size load answered '')."""
    head, attach = _Connection.head, exec_stream.attach
    early: list[bytes] = []

    async def late(self: _Connection) -> tuple[int, dict[str, str]]:
        await anyio.sleep(0.5)  # the command has run and written by now
        return await head(self)

    async def seen(*args: Any, **kwargs: Any) -> Attached:
        attached = await attach(*args, **kwargs)
        early.append(attached.early)
        return attached

    monkeypatch.setattr(_Connection, "head", late)
    monkeypatch.setattr(exec_stream, "attach", seen)
    result = await run(container, ["sh", "-c", "echo twenty; echo oops >&2"])
    assert result == (0, b"twenty\n", b"oops\n")
    assert early[0], "the output came with the headers"


async def test_what_an_exec_is_given_and_gives_back(anyio_backend: str, container: str) -> None:
    env = {"GREETING": "hello there", "EMPTY": ""}
    shown = await run(
        container,
        ["sh", "-c", "pwd; id -un; echo $GREETING; env | grep -c ^EMPTY="],
        None,
        cwd="/tmp",
        env=env,
        user="nobody",
    )
    assert shown == (0, b"/tmp\nnobody\nhello there\n1\n", b"")
    assert (await run(container, ["sh", "-c", "exit 7"]))[0] == 7
    assert (await run(container, ["sh", "-c", "kill -9 $$"]))[0] == 137
    tail = await exec_stream.run(container, ["sh", "-c", "seq 1 100000"], None, "/", None, None, 64)
    assert tail[1].endswith(b"99999\n100000\n") and len(tail[1]) == 64


async def test_input_is_fed_and_ended_even_when_the_command_does_not_read_it(
    anyio_backend: str, container: str
) -> None:
    data = os.urandom(3 * 1024 * 1024)
    assert await run(container, ["sh", "-c", "wc -c"], data) == (0, b"3145728\n", b"")
    assert await run(container, ["cat"], b"") == (0, b"", b"")
    assert await run(container, ["cat"]) == (0, b"", b""), "no input: stdin is not attached"
    with anyio.fail_after(20):  # 64 MiB nobody reads: the feeder is given up, not waited for
        assert await run(container, ["true"], bytes(64 * 1024 * 1024)) == (0, b"", b"")


async def test_execs_leave_no_connection_open(
    anyio_backend: str, container: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    opened = 0
    real = _Connection.open.__func__  # type: ignore[attr-defined]

    async def counted(cls: type[_Connection]) -> _Connection:
        nonlocal opened
        opened += 1
        return await real(cls)  # type: ignore[no-any-return]

    monkeypatch.setattr(_Connection, "open", classmethod(counted))
    await run(container, ["true"])  # the API version is asked once, first
    before, opened = len(os.listdir("/proc/self/fd")), 0
    for i in range(20):
        assert await run(container, ["echo", str(i)]) == (0, f"{i}\n".encode(), b"")
    assert opened == 40, "one to start the exec, one for its exit status"
    assert len(os.listdir("/proc/self/fd")) == before


async def test_a_container_that_is_gone_or_stopped_is_an_unavailable_sandbox(
    anyio_backend: str, container: str
) -> None:
    subprocess.run(["docker", "kill", container], capture_output=True, check=True)
    with pytest.raises(SandboxUnavailableError, match="not running and cannot execute: .*409"):
        await run(container, ["true"])
    with pytest.raises(SandboxUnavailableError, match="not running and cannot execute: .*404"):
        await run(f"gaia-test-none-{uuid.uuid4().hex[:8]}", ["true"])


# -- an engine on tcp:// -------------------------------------------------------------------------


def _forward(listener: socket.socket, target: str) -> None:
    """Relay each connection to ``listener`` to the Unix socket ``target``, half-closes too."""

    def pipe(source: socket.socket, sink: socket.socket) -> None:
        try:
            while chunk := source.recv(65536):
                sink.sendall(chunk)
            sink.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    while True:
        try:
            client_side, _ = listener.accept()
        except OSError:
            return
        engine_side = socket.socket(socket.AF_UNIX)
        engine_side.connect(target)
        for a, b in ((client_side, engine_side), (engine_side, client_side)):
            threading.Thread(target=pipe, args=(a, b), daemon=True).start()


@pytest.fixture
async def tcp_engine(anyio_backend: str, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[str]:
    """``DOCKER_HOST=tcp://127.0.0.1:<port>``, relayed to the engine's Unix socket."""
    target = exec_stream.engine_address().removeprefix("unix://")
    listener = socket.create_server(("127.0.0.1", 0))
    threading.Thread(target=_forward, args=(listener, target), daemon=True).start()
    address = f"tcp://127.0.0.1:{listener.getsockname()[1]}"
    monkeypatch.setenv("DOCKER_HOST", address)
    try:
        yield address
    finally:
        listener.close()


async def test_an_engine_on_tcp_runs_the_channel_and_execs_of_their_own(
    tcp_engine: str, sandbox_image: str
) -> None:
    """``DOCKER_HOST=tcp://``: commands went through an exec each, without the channel."""
    config = gaia_compose(image=SANDBOX_IMAGE)
    await GaiaDockerSandbox.task_init("tcp-check", config)
    envs = await GaiaDockerSandbox.sample_init("tcp-check", config, {})
    try:
        sandbox = envs["default"].as_type(GaiaDockerSandbox)
        first = await sandbox.exec(["sh", "-c", "cat; echo done"], input="in\n")
        assert (first.returncode, first.stdout) == (0, "in\ndone\n")
        assert sandbox.commands.channel is not None, "through the channel"
        other = await sandbox.exec(["id", "-un"], user="nobody")  # an exec of its own
        assert other.stdout == "nobody\n"
    finally:
        await GaiaDockerSandbox.sample_cleanup("tcp-check", config, envs, False)
        await GaiaDockerSandbox.task_cleanup("tcp-check", config, True)
