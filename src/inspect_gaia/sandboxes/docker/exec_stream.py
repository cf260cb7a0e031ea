"""The Docker Engine's exec protocol, spoken once and asynchronously, for both ways to run commands.

gaia-docker runs a command either through an exec of its own (``run``: create, start, read, exit
status) or through the sandbox's runner (``channel``), itself one exec started here (``attach``)
whose frames ``channel`` then reads. Both go through this module:

* **the engine's address**: ``engine_address()`` reads ``DOCKER_HOST`` as the docker CLI does, for
  the whole package (``engine`` names it in messages, ``client`` hands it to docker-py);
* **the exec**: created (``POST /containers/{id}/exec``) and started on the same connection with
  ``Upgrade: tcp``, as the docker CLI starts one. The engine answers ``101`` and the connection
  then carries the command's stdin one way (half-closed after the input) and its output the other;
* **the framing**: the output is Docker's multiplexed stream (``Demux``: 8-byte headers of stream,
  3 zero bytes and size, then the payload); output that arrived with the upgrade's headers comes
  first.

Why not docker-py for this: its exec start holds a worker thread for the command's whole life,
needs a second one to feed stdin, and reaches the upgraded socket only through private attributes
(``_post_json``, ``response.raw._fp.fp``, ``._sock``). Here a command costs no thread, and
cancelling it closes its connection. docker-py still makes every other call (``client``,
``archive``): a container's lifecycle and its files are one request each and gain nothing here.
The price is a small HTTP/1.1 client below (a request, a response with a length or chunks, the
upgrade), and one connection per exec plus one for its exit status, none pooled.

It speaks to ``unix://`` sockets and to plain ``tcp://``. An engine reached over ``ssh://``, or
over TLS (``DOCKER_TLS_VERIFY``/``DOCKER_CERT_PATH``), is refused when a gaia-docker run starts
(``address_problem``, one line): ``-T sandbox=compose`` goes through the docker CLI, which speaks
both.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urlsplit

import anyio
from anyio.abc import SocketStream
from inspect_ai.util import SandboxUnavailableError

from ..._compat import CircularByteBuffer

DEFAULT_ADDRESS = "unix:///var/run/docker.sock"
API_TIMEOUT = 120
"""Seconds one API request may take (an exec's stream is bounded by the command's timeout)."""
STDOUT, STDERR = 1, 2
"""Stream numbers in the multiplexed stream's headers."""
_MUX = 8
GONE = (anyio.EndOfStream, OSError, anyio.BrokenResourceError, anyio.ClosedResourceError)
"""What a read or write raises once the connection is gone."""
_MAX_HEAD = 65536
_VERSIONS: dict[str, str] = {}
"""Engine address: the API version it speaks (asked once, as docker-py asks)."""


def engine_address() -> str:
    """The engine's address: ``DOCKER_HOST``, or the default socket when it is unset or empty."""
    return os.environ.get("DOCKER_HOST") or DEFAULT_ADDRESS


def address_problem(address: str | None = None) -> str | None:
    """Why gaia-docker cannot speak to the engine at ``address`` (``DOCKER_HOST``); else None."""
    parts = urlsplit(address or engine_address())
    if parts.scheme == "unix":
        return None
    if parts.scheme not in ("tcp", "http"):
        return f"is reached over {parts.scheme or 'an unknown scheme'}://"
    if os.environ.get("DOCKER_TLS_VERIFY") or os.environ.get("DOCKER_CERT_PATH"):
        return "is reached over TLS (DOCKER_TLS_VERIFY or DOCKER_CERT_PATH is set)"
    return None


class EngineError(Exception):
    """The engine answered a request with an error status."""

    def __init__(self, status: int, message: str) -> None:
        """Keep the status; the message is the engine's own."""
        super().__init__(f"{message} (engine status {status})")
        self.status = status


class EngineUnreachable(ConnectionError):
    """No connection to the engine (``client.engine_unreachable`` knows it)."""


class Demux:
    """Docker's multiplexed stream: whole ``(stream, payload)`` frames from chunks of any size."""

    def __init__(self) -> None:
        """Start with nothing buffered."""
        self.buffer = bytearray()

    def feed(self, data: bytes) -> list[tuple[int, bytes]]:
        """The frames ``data`` completes, in order; a frame cut short waits for the next chunk."""
        self.buffer += data
        frames = []
        while len(self.buffer) >= _MUX:
            end = _MUX + int.from_bytes(self.buffer[4:8], "big")
            if len(self.buffer) < end:
                break
            frames.append((self.buffer[0], bytes(self.buffer[_MUX:end])))
            del self.buffer[:end]
        return frames


@dataclass
class Attached:
    """A started exec: its connection carries stdin out and the multiplexed output in."""

    exec_id: str
    stream: SocketStream
    early: bytes
    """What came with the upgrade's headers (output a busy client read late)."""
    demux: Demux = field(default_factory=Demux)

    async def receive(self) -> list[tuple[int, bytes]] | None:
        """The frames the next chunk completes (maybe none); None once the stream has ended.

        One chunk is read and all it completes is returned at once, so a cancelled read loses
        nothing.
        """
        if self.early:
            chunk, self.early = self.early, b""
            return self.demux.feed(chunk)
        try:
            return self.demux.feed(await self.stream.receive())
        except GONE:
            return None

    async def send(self, data: bytes) -> None:
        """Write to the command's stdin."""
        await self.stream.send(data)

    async def aclose(self) -> None:
        """Close the connection (the command goes on: the engine does not end an exec for it)."""
        try:
            await self.stream.aclose()
        except Exception:
            pass


async def attach(
    container: str,
    cmd: list[str],
    *,
    stdin: bool,
    workdir: str | None = None,
    env: Mapping[str, str] | None = None,
    user: str | None = None,
) -> Attached:
    """Create an exec of ``cmd`` in ``container`` and start it attached (one connection).

    Raises:
        EngineError: The engine refused the create or the start (404: no such container; 409:
            it is not running).
        EngineUnreachable: No engine answers at ``engine_address()``.
    """
    spec: dict[str, Any] = {
        "AttachStdin": stdin,
        "AttachStdout": True,
        "AttachStderr": True,
        "Tty": False,
        "Privileged": False,
        "User": user or "",
        "Cmd": cmd,
        "Env": [f"{k}={v}" for k, v in env.items()] if env else None,
    }
    if workdir is not None:
        spec["WorkingDir"] = workdir
    connection = await _Connection.open()
    try:
        with anyio.fail_after(API_TIMEOUT):
            prefix = await connection.prefix()
            created = await connection.json(
                "POST", f"{prefix}/containers/{quote(container)}/exec", spec
            )
            exec_id = str(created["Id"])
            await connection.send(
                "POST",
                f"{prefix}/exec/{exec_id}/start",
                {"Detach": False, "Tty": False},
                upgrade=True,
            )
            status, headers = await connection.head()
            if status not in (101, 200):
                raise EngineError(status, _message(await connection.body(status, headers)))
    except BaseException:
        await connection.aclose()
        raise
    return Attached(exec_id, connection.stream, bytes(connection.buffer))


async def exit_code(exec_id: str) -> int:
    """The exec's exit status, once the engine has it (waiting up to a second, as the CLI does)."""
    connection = await _Connection.open()
    try:
        with anyio.fail_after(API_TIMEOUT):
            prefix = await connection.prefix()
            state: dict[str, Any] = {}
            for _ in range(50):
                state = await connection.json("GET", f"{prefix}/exec/{exec_id}/json")
                if not state.get("Running") and state.get("ExitCode") is not None:
                    return int(state["ExitCode"])
                await anyio.sleep(0.02)
            return int(state.get("ExitCode") or -1)
    finally:
        await connection.aclose()


async def run(
    container: str,
    cmd: list[str],
    data: bytes | None,
    workdir: str,
    env: Mapping[str, str] | None,
    user: str | None,
    limit: int,
) -> tuple[int, bytes, bytes]:
    """Run ``cmd`` as an exec of its own: its exit code and (tail-kept) stdout and stderr.

    Raises:
        SandboxUnavailableError: The container is gone or not running.
    """
    try:
        attached = await attach(
            container, cmd, stdin=data is not None, workdir=workdir, env=env, user=user
        )
    except EngineError as ex:
        if ex.status in (404, 409):
            raise SandboxUnavailableError(
                f"The sandbox is not running and cannot execute: {ex}"
            ) from ex
        raise
    out, err = CircularByteBuffer(limit), CircularByteBuffer(limit)
    try:
        async with anyio.create_task_group() as group:
            if data is not None:
                group.start_soon(_feed, attached, data)
            while (frames := await attached.receive()) is not None:
                for stream, payload in frames:
                    (out if stream == STDOUT else err).write(payload)
            group.cancel_scope.cancel()  # a command that exited without reading all its input
    finally:
        await attached.aclose()
    try:
        code = await exit_code(attached.exec_id)
    except EngineError as ex:
        if ex.status == 404:
            raise SandboxUnavailableError(f"The sandbox is gone: {ex}") from ex
        raise
    return code, out.getvalue(), err.getvalue()


async def _feed(attached: Attached, data: bytes) -> None:
    try:
        await attached.send(data)
        await attached.stream.send_eof()  # the command's stdin ends here
    except GONE:
        pass  # the command exited without reading all of its input


# -- HTTP/1.1, as much as the engine's API needs ---------------------------------------------------


@dataclass
class _Connection:
    address: str
    stream: SocketStream
    buffer: bytearray = field(default_factory=bytearray)

    @classmethod
    async def open(cls) -> _Connection:
        address = engine_address()
        parts = urlsplit(address)
        try:
            if parts.scheme == "unix":
                stream: SocketStream = await anyio.connect_unix(parts.path)
            else:
                stream = await anyio.connect_tcp(parts.hostname or "localhost", parts.port or 2375)
        except OSError as ex:
            reason = ex.strerror or str(ex) or type(ex).__name__
            raise EngineUnreachable(
                f"Cannot connect to the Docker Engine at {address} ({reason})"
            ) from ex
        return cls(address, stream)

    async def prefix(self) -> str:
        """``/v<API version>``: the engine's own, asked on first use (as docker-py does)."""
        version = _VERSIONS.get(self.address)
        if version is None:
            version = _VERSIONS[self.address] = str(
                (await self.json("GET", "/version"))["ApiVersion"]
            )
        return f"/v{version}"

    async def json(self, method: str, path: str, body: Any = None) -> Any:
        await self.send(method, path, body)
        status, headers = await self.head()
        content = await self.body(status, headers)
        if status >= 400:
            raise EngineError(status, _message(content))
        return json.loads(content) if content else {}

    async def send(self, method: str, path: str, body: Any = None, upgrade: bool = False) -> None:
        payload = b"" if body is None else json.dumps(body).encode()
        lines = [f"{method} {path} HTTP/1.1", "Host: docker"]
        if body is not None:
            lines += ["Content-Type: application/json", f"Content-Length: {len(payload)}"]
        if upgrade:
            lines += ["Connection: Upgrade", "Upgrade: tcp"]
        await self.stream.send(("\r\n".join(lines) + "\r\n\r\n").encode() + payload)

    async def head(self) -> tuple[int, dict[str, str]]:
        """The response's status and headers (names lower-cased); the rest stays buffered."""
        while (end := self.buffer.find(b"\r\n\r\n")) < 0:
            if len(self.buffer) > _MAX_HEAD:
                raise EngineError(0, "the engine's answer has no end of headers")
            await self._fill()
        head = bytes(self.buffer[:end]).decode("latin-1").split("\r\n")
        del self.buffer[: end + 4]
        try:
            status = int(head[0].split()[1])
        except (IndexError, ValueError):
            raise EngineError(0, f"not an HTTP answer: {head[0][:80]!r}") from None
        headers = {}
        for line in head[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        return status, headers

    async def body(self, status: int, headers: Mapping[str, str]) -> bytes:
        if status in (204, 304) or status < 200:
            return b""
        if headers.get("transfer-encoding", "").lower() == "chunked":
            chunks = bytearray()
            while True:
                size = int((await self._line()).split(b";")[0], 16)
                if size == 0:
                    while await self._line():  # trailers, then the empty line
                        pass
                    return bytes(chunks)
                chunks += await self._exactly(size)
                await self._exactly(2)
        if "content-length" in headers:
            return await self._exactly(int(headers["content-length"]))
        while True:  # no length: the body ends with the connection
            try:
                await self._fill()
            except EngineUnreachable:
                rest = bytes(self.buffer)
                self.buffer.clear()
                return rest

    async def aclose(self) -> None:
        try:
            await self.stream.aclose()
        except Exception:
            pass

    async def _fill(self) -> None:
        try:
            self.buffer += await self.stream.receive()
        except GONE as ex:
            raise EngineUnreachable(
                f"The Docker Engine at {self.address} closed the connection"
            ) from ex

    async def _line(self) -> bytes:
        while (end := self.buffer.find(b"\r\n")) < 0:
            await self._fill()
        line = bytes(self.buffer[:end])
        del self.buffer[: end + 2]
        return line

    async def _exactly(self, size: int) -> bytes:
        while len(self.buffer) < size:
            await self._fill()
        data = bytes(self.buffer[:size])
        del self.buffer[:size]
        return data


def _message(content: bytes) -> str:
    """The engine's error message (its JSON ``message``, else the text), on one line."""
    try:
        message = str(json.loads(content)["message"])
    except (ValueError, KeyError, TypeError):
        message = content.decode("utf-8", errors="replace")
    return (message.strip().splitlines() or ["(no message)"])[0][:300]
