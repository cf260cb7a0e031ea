"""The host's side of a sandbox's command channel: one ``docker exec`` that runs every command.

A ``docker exec`` per command costs an API round trip, a runc start and about 20 ms of the
engine's CPU; at 64 samples at once on 2 CPUs that is more CPU than the model's pace leaves. So
gaia-docker starts ``exec_server`` once per sandbox (the image's ``python3``, sent over the exec's
stdin) and sends it the commands as frames over the same connection, read and written here with
anyio (no worker thread per command). What a command sees is what ``docker exec`` gives it (see
``exec_server``).

The channel is an optimisation, never a requirement: with no ``python3`` in the image, an engine
that is not on a local Unix socket (``DOCKER_HOST=tcp://...``), a command run as another
``user``, or a command the runner could not start, the command goes through ``docker exec`` as
before. A channel that breaks (its runner killed from inside the sample) ends the commands it was
running with code -1 and a word on stderr, and later commands go through ``docker exec``.
"""

from __future__ import annotations

import itertools
import json
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import anyio
from anyio.abc import SocketStream

from .._compat import CircularByteBuffer
from . import client
from .exec_server import HEADER as _HEADER

logger = logging.getLogger(__name__)

_SERVER = (Path(__file__).parent / "exec_server.py").read_text()
_BOOT = "import sys,json;exec(json.loads(sys.stdin.buffer.readline()))"
RUNNER = ["python3", "-I", "-S", "-c", _BOOT]
"""The runner's command line, as ``ps`` in the sandbox shows it."""
_MUX = 8
"""Docker's multiplexed stream: 8-byte headers (stream, 3 zero bytes, size), then payloads."""
_MAX_FRAME = 16 * 1024 * 1024
"""A frame claiming more is garbage (the runner sends at most 64 KiB): the channel is broken."""
_START_WITHIN = 20.0
"""Seconds the runner has to say hello (a busy machine starts python3 slowly)."""
BROKEN = "the sandbox's command channel closed while the command ran"
_GONE = (anyio.EndOfStream, OSError, anyio.BrokenResourceError, anyio.ClosedResourceError)
"""What a read or write raises once the connection is gone."""


def engine_socket() -> str | None:
    """The engine's Unix socket, as docker-py reads ``DOCKER_HOST``; None for any other host."""
    host = os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"
    if host.startswith("unix://"):
        return host[len("unix://") :]
    return None


@dataclass
class _Command:
    out: CircularByteBuffer
    err: CircularByteBuffer
    code: int | None = None
    refused: bool = False
    done: bool = False


@dataclass
class ExecChannel:
    """A started runner in one container; ``run`` sends it commands."""

    stream: SocketStream
    buffer: bytearray
    frames: bytearray = field(default_factory=bytearray)
    commands: dict[int, _Command] = field(default_factory=dict)
    ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    send_lock: anyio.Lock = field(default_factory=anyio.Lock)
    read_lock: anyio.Lock = field(default_factory=anyio.Lock)
    hello: bool = False
    uid: int | None = None
    """The user the runner's commands run as (said in its hello); None: not known."""
    broken: bool = False
    runner_stderr: bytes = b""

    @classmethod
    async def open(cls, container: str) -> ExecChannel | None:
        """Start the runner in ``container``; None if it cannot run there (use ``docker exec``)."""
        path = engine_socket()
        if path is None:
            return None
        stream: SocketStream | None = None
        try:
            exec_id, api_version = await client.call(_create, container)
            stream = await anyio.connect_unix(path)
            rest = await _upgrade(stream, api_version, exec_id)
            channel = cls(stream, bytearray(rest))
            channel._parse()
            await channel._send_raw(json.dumps(_SERVER).encode() + b"\n")
            with anyio.fail_after(_START_WITHIN):
                while not channel.hello and not channel.broken:
                    await channel._receive()
            if channel.broken:
                raise RuntimeError(channel.runner_stderr.decode(errors="replace")[-300:])
            stream = None
            return channel
        except Exception as ex:
            logger.info(f"commands go through docker exec: no command channel ({ex!r})")
            return None
        finally:
            if stream is not None:
                await _close_quietly(stream)

    async def run(
        self,
        cmd: list[str],
        data: bytes | None,
        workdir: str,
        env: Mapping[str, str] | None,
        limit: int,
    ) -> tuple[int, bytes, bytes] | None:
        """Run ``cmd``: its exit code, stdout and stderr (tails of at most ``limit`` bytes).

        None when the command did not run (the runner could not start it, or the channel is
        broken): the caller runs it through ``docker exec``.
        """
        if self.broken:
            return None
        request = next(self.ids)
        command = self.commands[request] = _Command(
            CircularByteBuffer(limit), CircularByteBuffer(limit)
        )
        spec = {"cmd": cmd, "cwd": workdir, "env": dict(env or {}), "input": data is not None}
        try:
            try:
                await self._send(request, b"R", json.dumps(spec).encode() + b"\0" + (data or b""))
            except _GONE:
                self._break()
                return None
            while not command.done:
                async with self.read_lock:
                    if not command.done:
                        await self._receive()
        except BaseException:
            if not command.done and not self.broken:  # cancelled: end it in the sandbox too
                with anyio.move_on_after(2, shield=True):
                    await self._send(request, b"K", b"")
            raise
        finally:
            del self.commands[request]
        if command.refused:
            return None
        if command.code is None:
            command.err.write(f"\n[{BROKEN}]\n".encode())
            return -1, command.out.getvalue(), command.err.getvalue()
        return command.code, command.out.getvalue(), command.err.getvalue()

    async def close(self) -> None:
        """Close the connection (the runner then exits; its commands go with the container)."""
        self.broken = True
        await _close_quietly(self.stream)

    # -- frames ---------------------------------------------------------------------------------

    async def _send(self, request: int, kind: bytes, payload: bytes) -> None:
        await self._send_raw(_HEADER.pack(request, kind, len(payload)) + payload)

    async def _send_raw(self, data: bytes) -> None:
        # Shielded: a frame cut short by a cancellation would leave the runner reading the next
        # one from its middle. A send takes microseconds (the runner reads its stdin at once).
        with anyio.CancelScope(shield=True):
            async with self.send_lock:
                await self.stream.send(data)

    async def _receive(self) -> None:
        """Read one chunk (cancellation loses nothing) and hand out what it completes."""
        try:
            self.buffer += await self.stream.receive()
        except _GONE:
            self._break()
            return
        self._parse()

    def _parse(self) -> None:
        while len(self.buffer) >= _MUX:
            size = int.from_bytes(self.buffer[4:8], "big")
            if len(self.buffer) < _MUX + size:
                break
            stream, payload = self.buffer[0], bytes(self.buffer[_MUX : _MUX + size])
            del self.buffer[: _MUX + size]
            if stream == 1:
                self.frames += payload
            elif stream == 2:
                self.runner_stderr = (self.runner_stderr + payload)[-4096:]
        self._dispatch()

    def _dispatch(self) -> None:
        while len(self.frames) >= _HEADER.size:
            request, kind, size = _HEADER.unpack_from(self.frames)
            if size > _MAX_FRAME:
                self._break()
                return
            if len(self.frames) < _HEADER.size + size:
                return
            payload = bytes(self.frames[_HEADER.size : _HEADER.size + size])
            del self.frames[: _HEADER.size + size]
            if kind == b"H":
                self.hello, self.uid = True, _uid(payload)
                continue
            command = self.commands.get(request)
            if command is None or command.done:
                continue  # a command given up on (cancelled)
            if kind == b"O":
                command.out.write(payload)
            elif kind == b"E":
                command.err.write(payload)
            elif kind == b"X":
                try:
                    command.code = int(payload)
                except ValueError:  # not the runner's frame (the stream was written into)
                    self._break()
                    return
                command.done = True
            elif kind == b"F":
                logger.info(f"runner could not start {payload.decode(errors='replace')}")
                command.refused, command.done = True, True

    def _break(self) -> None:
        self.broken = True
        for command in self.commands.values():
            command.done = True


def _create(container: str) -> tuple[str, str]:
    api = client.api()
    exec_id = api.exec_create(container, RUNNER, stdin=True, stdout=True, stderr=True)["Id"]
    return str(exec_id), str(api.api_version)


async def _upgrade(stream: SocketStream, api_version: str, exec_id: str) -> bytes:
    """Start the exec as an upgraded connection (as the docker CLI does); what followed the head."""
    body = b'{"Detach": false, "Tty": false}'
    head = (
        f"POST /v{api_version}/exec/{exec_id}/start HTTP/1.1\r\n"
        "Host: docker\r\nContent-Type: application/json\r\n"
        f"Connection: Upgrade\r\nUpgrade: tcp\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode()
    await stream.send(head + body)
    received = b""
    while b"\r\n\r\n" not in received:
        if len(received) > 65536:
            raise RuntimeError("the engine's answer to an exec start has no end of headers")
        received += await stream.receive()
    response, _, rest = received.partition(b"\r\n\r\n")
    status = response.split(b"\r\n", 1)[0]
    if b" 101 " not in status + b" ":
        raise RuntimeError(f"the engine refused to start the runner: {status.decode()}")
    return rest


async def _close_quietly(stream: SocketStream) -> None:
    try:
        await stream.aclose()
    except Exception:
        pass


def _uid(hello: bytes) -> int | None:
    """The ``uid`` of the runner's hello; None when it does not say one."""
    try:
        uid = json.loads(hello).get("uid")
    except (ValueError, AttributeError):
        return None
    return uid if type(uid) is int else None
