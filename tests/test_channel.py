"""The host's side of the command channel, read byte by byte and fed bad frames (no Docker).

The peer here writes what the engine would relay: Docker's multiplexed stream (8-byte headers)
carrying the runner's frames. The real runner and engine are in ``test_exec_server.py`` and
``test_docker_channel.py``; this is the parser's own contract: output reassembled from any
chunking, and a stream written into by someone else breaking the channel, never the sample.
"""

from __future__ import annotations

import json
import socket
from collections.abc import AsyncIterator, Callable

import anyio
import pytest
from anyio.abc import SocketStream

from inspect_gaia.sandboxes.docker.channel import BROKEN, ExecChannel, _uid
from inspect_gaia.sandboxes.docker.exec_server import HEADER
from inspect_gaia.sandboxes.docker.exec_stream import Attached

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["asyncio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
async def pair(anyio_backend: str) -> AsyncIterator[tuple[ExecChannel, SocketStream]]:
    ours, theirs = socket.socketpair()
    channel = ExecChannel(Attached("exec-id", await SocketStream.from_socket(ours), b""))
    peer = await SocketStream.from_socket(theirs)
    yield channel, peer
    await channel.close()
    await peer.aclose()


def relayed(request: int, kind: bytes, payload: bytes) -> bytes:
    """A runner frame as the engine relays it: in a stdout frame of Docker's stream."""
    frame = HEADER.pack(request, kind, len(payload)) + payload
    return bytes([1, 0, 0, 0]) + len(frame).to_bytes(4, "big") + frame


async def read_request(peer: SocketStream) -> tuple[int, bytes, bytes]:
    data = b""
    while len(data) < HEADER.size:
        data += await peer.receive()
    request, kind, size = HEADER.unpack(data[: HEADER.size])
    while len(data) < HEADER.size + size:
        data += await peer.receive()
    return request, kind, data[HEADER.size : HEADER.size + size]


Result = tuple[int, bytes, bytes] | None


async def exchange(
    channel: ExecChannel,
    peer: SocketStream,
    cmd: list[str],
    reply: Callable[[int], bytes],
    chunk: int = 1 << 16,
) -> tuple[Result, dict[str, object]]:
    """Run ``cmd``; the peer reads its request and answers ``reply(request id)``, ``chunk``
    bytes at a time. The command's result and the request's spec."""
    results: list[Result] = []

    async def run() -> None:
        results.append(await channel.run(cmd, None, "/", None, 1024))

    async with anyio.create_task_group() as group:
        group.start_soon(run)
        request, kind, payload = await read_request(peer)
        assert kind == b"R"
        answer = reply(request)
        for i in range(0, len(answer), chunk):
            await peer.send(answer[i : i + chunk])
            await anyio.sleep(0)
    return results[0], json.loads(payload.partition(b"\0")[0])


async def test_output_split_anywhere_is_put_back_together(
    pair: tuple[ExecChannel, SocketStream],
) -> None:
    def reply(request: int) -> bytes:
        return (
            relayed(request, b"O", b"hello ")
            + relayed(request, b"E", b"warn")
            + relayed(request, b"O", b"world")
            + relayed(request, b"X", b"3")
        )

    # one byte at a time: every header split somewhere
    result, spec = await exchange(*pair, ["echo"], reply, chunk=1)
    assert (spec["cmd"], spec["input"]) == (["echo"], False)
    assert result == (3, b"hello world", b"warn")
    assert not pair[0].broken


@pytest.mark.parametrize(
    "forged",
    [
        relayed(1, b"X", b"not a number"),
        bytes([1, 0, 0, 0, 0, 0, 0, 9]) + HEADER.pack(1, b"O", 1 << 30),  # a 1 GiB frame
    ],
    ids=["exit status", "frame size"],
)
async def test_a_stream_written_into_breaks_the_channel_not_the_sample(
    pair: tuple[ExecChannel, SocketStream], forged: bytes
) -> None:
    result, _ = await exchange(*pair, ["true"], lambda _: forged)
    assert result is not None and result[0] == -1 and BROKEN in result[2].decode()
    assert pair[0].broken
    # Later commands are not sent here (the sandbox runs them through docker exec).
    assert await pair[0].run(["true"], None, "/", None, 1024) is None


async def test_a_cancelled_command_is_killed_and_its_late_frames_dropped(
    pair: tuple[ExecChannel, SocketStream],
) -> None:
    channel, peer = pair
    with anyio.move_on_after(0.5):
        await channel.run(["sleep", "60"], None, "/", None, 1024)
    first, _, _ = await read_request(peer)
    request, kind, _ = await read_request(peer)
    assert (request, kind) == (first, b"K")

    def reply(second: int) -> bytes:
        late = relayed(first, b"O", b"late") + relayed(first, b"X", b"137")
        return late + relayed(second, b"O", b"ok") + relayed(second, b"X", b"0")

    assert (await exchange(channel, peer, ["echo"], reply))[0] == (0, b"ok", b"")


async def test_a_short_command_ends_at_once_beside_two_that_run_on(
    pair: tuple[ExecChannel, SocketStream],
) -> None:
    """Two long commands (held polls of inspect's sandbox tools) took turns reading; a short one
    behind them was answered but not seen until one of them ended (the bridge's model service
    stalled 30 s at a time)."""
    channel, peer = pair
    seen: dict[str, float] = {}

    async def run(name: str, cmd: list[str]) -> None:
        await channel.run(cmd, None, "/", None, 1024)
        seen[name] = anyio.current_time()

    async with anyio.create_task_group() as group:
        group.start_soon(run, "long-1", ["sleep", "30"])
        first, _, _ = await read_request(peer)
        group.start_soon(run, "long-2", ["sleep", "30"])
        second, _, _ = await read_request(peer)
        await anyio.sleep(0.1)  # both long ones now wait on the stream
        group.start_soon(run, "short", ["true"])
        short, _, _ = await read_request(peer)
        start = anyio.current_time()
        await peer.send(relayed(short, b"X", b"0"))
        with anyio.fail_after(5):
            while "short" not in seen:
                await anyio.sleep(0.01)
        assert seen["short"] - start < 1.0
        for request in (first, second):
            await peer.send(relayed(request, b"X", b"0"))


async def test_a_command_the_runner_could_not_start_is_left_to_docker_exec(
    pair: tuple[ExecChannel, SocketStream],
) -> None:
    def refused(request: int) -> bytes:
        return relayed(request, b"F", b"No such file or directory: 'missing'")

    assert (await exchange(*pair, ["missing"], refused))[0] is None
    assert not pair[0].broken


@pytest.mark.parametrize(
    ("hello", "uid"),
    [
        (b'{"python": "3.11.2", "uid": 0}', 0),
        (b'{"python": "3.11.2", "uid": 1000}', 1000),
        (b'{"python": "3.11.2"}', None),  # a runner that does not say
        (b'{"uid": "0"}', None),
        (b'{"uid": true}', None),
        (b"[0]", None),
        (b"\xff", None),
    ],
)
def test_only_a_hello_that_says_a_uid_makes_the_runner_root(hello: bytes, uid: int | None) -> None:
    """Commands as root go to the runner only when it said it is root (uid 0)."""
    assert _uid(hello) == uid
