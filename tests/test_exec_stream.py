"""The exec protocol's own contract, without an engine: framing, answers, addresses (no Docker).

The engine's side is played by a socket pair here; the real engine is in
``test_docker_exec_stream.py``.
"""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from anyio.abc import SocketStream

from inspect_gaia.sandboxes.docker import client, exec_stream
from inspect_gaia.sandboxes.docker.engine import DockerProblem
from inspect_gaia.sandboxes.docker.exec_stream import (
    Demux,
    EngineError,
    EngineUnreachable,
    _Connection,
)
from inspect_gaia.sandboxes.docker.gaia_docker import GaiaDockerSandbox
from inspect_gaia.sandboxes.spec import gaia_compose

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["asyncio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def frame(stream: int, payload: bytes) -> bytes:
    return bytes([stream, 0, 0, 0]) + len(payload).to_bytes(4, "big") + payload


def test_frames_split_anywhere_are_put_back_together() -> None:
    data = frame(1, b"out ") + frame(2, b"err") + frame(1, b"") + frame(1, b"more" * 5000)
    for size in (1, 3, 8, 9, 4096, len(data)):
        demux, frames = Demux(), []
        for i in range(0, len(data), size):
            frames += demux.feed(data[i : i + size])
        assert frames == [(1, b"out "), (2, b"err"), (1, b""), (1, b"more" * 5000)], size
        assert not demux.buffer


@pytest.fixture
async def engine_side(anyio_backend: str) -> AsyncIterator[tuple[_Connection, SocketStream]]:
    ours, theirs = socket.socketpair()
    connection = _Connection("unix:///test", await SocketStream.from_socket(ours))
    peer = await SocketStream.from_socket(theirs)
    yield connection, peer
    await connection.aclose()
    await peer.aclose()


CHUNKED = (
    b"HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
    b'6\r\n{"Id":\r\n9;ext=1\r\n "abc123"\r\n1\r\n}\r\n0\r\n\r\n'
)
LENGTH = b'HTTP/1.1 201 Created\r\nContent-Length: 15\r\n\r\n{"Id":"abc123"}'


@pytest.mark.parametrize("answer", [CHUNKED, LENGTH], ids=["chunked", "length"])
async def test_an_answer_in_chunks_or_with_a_length_reads_the_same(
    engine_side: tuple[_Connection, SocketStream], answer: bytes
) -> None:
    connection, peer = engine_side
    for i in range(0, len(answer), 5):  # headers and chunks split anywhere
        await peer.send(answer[i : i + 5])
    assert await connection.json("POST", "/x", {}) == {"Id": "abc123"}
    request = await peer.receive()
    assert request.startswith(b"POST /x HTTP/1.1\r\n") and request.endswith(b"\r\n\r\n{}")


async def test_an_error_answer_is_the_engines_message_on_one_line(
    engine_side: tuple[_Connection, SocketStream],
) -> None:
    connection, peer = engine_side
    body = b'{"message":"container 4f2a is not running\\nsecond line"}'
    await peer.send(b"HTTP/1.1 409 Conflict\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
    with pytest.raises(EngineError) as raised:
        await connection.json("GET", "/x")
    assert raised.value.status == 409
    assert str(raised.value) == "container 4f2a is not running (engine status 409)"


@pytest.mark.parametrize("kind", ["no socket", "nothing listening"])
async def test_no_engine_at_the_address_is_an_unreachable_engine(
    anyio_backend: str, kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with socket.socket() as unused:  # a port nothing listens on (bound, never listening)
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
        address = (
            f"unix://{tmp_path}/docker.sock" if kind == "no socket" else f"tcp://127.0.0.1:{port}"
        )
        monkeypatch.setenv("DOCKER_HOST", address)
        with pytest.raises(EngineUnreachable) as raised:
            await exec_stream.run("c", ["true"], None, "/", None, None, 1024)
    assert client.engine_unreachable(raised.value)
    assert str(raised.value).startswith(f"Cannot connect to the Docker Engine at {address} (")
    assert "\n" not in str(raised.value)


@pytest.mark.parametrize(
    ("address", "env", "problem"),
    [
        (None, {}, None),
        ("unix:///run/user/1000/docker.sock", {}, None),
        ("tcp://127.0.0.1:2375", {}, None),
        ("tcp://127.0.0.1:2376", {"DOCKER_TLS_VERIFY": "1"}, "TLS"),
        ("tcp://127.0.0.1:2376", {"DOCKER_CERT_PATH": "/certs"}, "TLS"),
        ("unix:///var/run/docker.sock", {"DOCKER_TLS_VERIFY": "1"}, None),
        ("ssh://me@build-host", {}, "ssh://"),
        ("npipe:////./pipe/docker_engine", {}, "npipe://"),
    ],
)
def test_which_engine_addresses_gaia_docker_speaks_to(
    address: str | None, env: dict[str, str], problem: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("DOCKER_HOST", "DOCKER_TLS_VERIFY", "DOCKER_CERT_PATH"):
        monkeypatch.delenv(name, raising=False)
    for name, value in {**env, **({"DOCKER_HOST": address} if address else {})}.items():
        monkeypatch.setenv(name, value)
    assert exec_stream.engine_address() == (address or "unix:///var/run/docker.sock")
    found = exec_stream.address_problem()
    assert (found is None) if problem is None else (found is not None and problem in found)


async def test_a_run_on_an_ssh_engine_is_refused_in_one_line_before_it_starts(
    anyio_backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DOCKER_HOST", "ssh://me@build-host")
    with pytest.raises(DockerProblem) as raised:
        await GaiaDockerSandbox.task_init("t", gaia_compose(image="inspect-gaia/sandbox:bookworm"))
    assert str(raised.value) == (
        "Docker Engine at ssh://me@build-host is reached over ssh://, which gaia-docker does not "
        "speak — run with `-T sandbox=compose` (the docker CLI), or set DOCKER_HOST to a unix:// "
        "socket or a plain tcp:// address"
    )
