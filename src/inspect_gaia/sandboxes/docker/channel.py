"""How a sandbox's commands run: one ``docker exec`` per sandbox that runs every command.

A ``docker exec`` per command costs an API round trip, a runc start and about 20 ms of the
engine's CPU; at 64 samples at once on 2 CPUs that is more CPU than the model's pace leaves. So
gaia-docker starts ``exec_server`` once per sandbox (the image's ``python3``, sent over the exec's
stdin) and sends it the commands as frames over the same connection (``ExecChannel``, read and
written with anyio: no worker thread per command). What a command sees is what ``docker exec``
gives it (see ``exec_server``). Both the runner's exec and a command's own go through
``exec_stream``, which speaks the engine's exec protocol.

``Commands`` makes the choice, per sandbox. The channel is an optimisation, never a requirement: a
command goes through an exec of its own (``exec_stream.run``), as it would without the channel,
when the run is plain (``INSPECT_GAIA_PLAIN_DOCKER=1``), when the image has no ``python3``, when
it runs as another ``user`` (or as root and the runner is not root), or when the runner could not
start it. A channel that breaks (its runner killed from inside the sample) ends the commands it
was running with code -1 and a word on stderr, and later commands get an exec each.
"""

from __future__ import annotations

import itertools
import json
import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass, field

import anyio
from inspect_ai.util import ExecResult, SandboxEnvironmentLimits, SandboxUnavailableError

from ..._compat import CircularByteBuffer, InjectedWrapper, classify_exec_failure
from ...shipped import EXEC_SERVER, source
from . import client, engine, exec_stream
from .exec_server import HEADER as _HEADER
from .exec_stream import GONE, STDERR, STDOUT, Attached

logger = logging.getLogger(__name__)

_BOOT = "import sys,json;exec(json.loads(sys.stdin.buffer.readline()))"
RUNNER = ["python3", "-I", "-S", "-c", _BOOT]
"""The runner's command line, as ``ps`` in the sandbox shows it."""
_MAX_FRAME = 16 * 1024 * 1024
"""A frame claiming more is garbage (the runner sends at most 64 KiB): the channel is broken."""
_START_WITHIN = 20.0
"""Seconds the runner has to say hello (a busy machine starts python3 slowly)."""
_TURN = 0.05
"""Seconds a command waiting on another task's reads looks again whether the reading is free."""
BROKEN = "the sandbox's command channel closed while the command ran"
_TIMEOUT_BIN = "/usr/bin/timeout"
_STOP_SEEN_WITHIN = 3.0
"""Seconds a silently killed command waits to see its container stopped (``stops_within``)."""


@dataclass
class _Command:
    out: CircularByteBuffer
    err: CircularByteBuffer
    code: int | None = None
    refused: bool = False
    done: bool = False
    finished: anyio.Event = field(default_factory=anyio.Event)
    """Set with ``done``: a command whose frames another task read wakes at once."""


@dataclass
class ExecChannel:
    """A started runner in one container; ``run`` sends it commands."""

    attached: Attached
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
        attached: Attached | None = None
        try:
            attached = await exec_stream.attach(container, RUNNER, stdin=True)
            channel = cls(attached)
            await channel._send_raw(json.dumps(source(EXEC_SERVER)).encode() + b"\n")
            with anyio.fail_after(_START_WITHIN):
                while not channel.hello and not channel.broken:
                    await channel._receive()
            if channel.broken:
                raise RuntimeError(channel.runner_stderr.decode(errors="replace")[-300:])
            attached = None
            return channel
        except Exception as ex:
            logger.info(f"commands go through docker exec: no command channel ({ex!r})")
            return None
        finally:
            if attached is not None:
                await attached.aclose()

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
            except GONE:
                self._break()
                return None
            while not command.done:
                # One task reads for all. Waiting for its turn behind a reader whose own command
                # runs on (a held poll) would leave this one done but unseen: wait for its own
                # end instead, and read when no one else does.
                if self.read_lock.locked():
                    with anyio.move_on_after(_TURN):
                        await command.finished.wait()
                    continue
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
        await self.attached.aclose()

    # -- frames ---------------------------------------------------------------------------------

    async def _send(self, request: int, kind: bytes, payload: bytes) -> None:
        await self._send_raw(_HEADER.pack(request, kind, len(payload)) + payload)

    async def _send_raw(self, data: bytes) -> None:
        # Shielded: a frame cut short by a cancellation would leave the runner reading the next
        # one from its middle. A send takes microseconds (the runner reads its stdin at once).
        with anyio.CancelScope(shield=True):
            async with self.send_lock:
                await self.attached.send(data)

    async def _receive(self) -> None:
        """Read one chunk (cancellation loses nothing) and hand out what it completes."""
        frames = await self.attached.receive()
        if frames is None:
            self._break()
            return
        for stream, payload in frames:
            if stream == STDOUT:
                self.frames += payload
            elif stream == STDERR:
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
                command.finished.set()
            elif kind == b"F":
                logger.info(f"runner could not start {payload.decode(errors='replace')}")
                command.refused, command.done = True, True
                command.finished.set()

    def _break(self) -> None:
        self.broken = True
        for command in self.commands.values():
            command.done = True
            command.finished.set()


class Commands:
    """One sandbox's commands: through its channel, started with the first, else an exec each."""

    def __init__(self, container: str, name: str, *, channel: bool = True) -> None:
        """``channel=False``: every command gets an exec of its own (a plain run)."""
        self.container = container
        self.name = name
        self.channel: ExecChannel | None = None
        self._tried = not channel
        self._lock = anyio.Lock()

    async def exec(
        self,
        cmd: list[str],
        data: bytes | None,
        workdir: str,
        env: Mapping[str, str] | None,
        user: str | None,
        timeout: int | None,
    ) -> ExecResult[str]:
        """``cmd``'s result as inspect's ``SandboxEnvironment.exec`` gives it (and raises)."""
        wrapped = cmd
        if timeout is not None:
            # The in-container wrapper kills the command's process tree; the engine would
            # otherwise leave it running after the host gives up on it.
            wrapped = [_TIMEOUT_BIN, "-k", "5s", f"{timeout}s", *cmd]
        limit = SandboxEnvironmentLimits.MAX_EXEC_OUTPUT_SIZE
        start = time.monotonic()
        with anyio.fail_after(None if timeout is None else timeout + 15):
            code, out, err = await self.run(wrapped, data, workdir, env, user, limit)
        stdout = out.decode("utf-8", errors="replace")
        stderr = err.decode("utf-8", errors="replace")
        if timeout is not None and code in (124, 137, 143):
            if code == 124 or time.monotonic() - start >= timeout:
                error = TimeoutError(f"Command timed out after {timeout} seconds")
                if stdout or stderr:
                    error.truncated_output = stdout + stderr  # type: ignore[attr-defined]
                raise error
        result = ExecResult(success=code == 0, returncode=code, stdout=stdout, stderr=stderr)
        # The engine's own launch failures (runc's messages, our timeout wrapper's) read as the
        # compose CLI's do, so inspect's classifier tells them from the command's own failures.
        wrapper = InjectedWrapper(wrapped[0], cmd[0]) if wrapped is not cmd and cmd else None
        failure = classify_exec_failure(result, wrapper=wrapper)
        if failure is not None:
            raise failure
        # No exit status (the exec vanished with its container), or killed without a word: if
        # the container is gone, the sandbox is, and the sample cannot go on in it.
        if code < 0 or (code > 128 and not stdout.strip() and not stderr.strip()):
            if await client.call(client.stops_within, self.container, _STOP_SEEN_WITHIN):
                raise SandboxUnavailableError(
                    f"The sandbox is not running and cannot execute: command ended with code "
                    f"{code}, and its container {self.name} is gone or has exited"
                )
        return result

    async def run(
        self,
        cmd: list[str],
        data: bytes | None,
        workdir: str,
        env: Mapping[str, str] | None,
        user: str | None,
        limit: int,
    ) -> tuple[int, bytes, bytes]:
        """Exit code, stdout and stderr (tails of at most ``limit`` bytes) of ``cmd``.

        Through the channel when it can (as root: if its runner is), else an exec of its own.

        Raises:
            SandboxUnavailableError: The container is gone, or the engine stopped answering.
        """
        channel = await self._channel() if user in (None, "root", "0") else None
        if channel is not None and (user is None or channel.uid == 0):
            ran = await channel.run(cmd, data, workdir, env, limit)
            if ran is not None and channel.broken and not await client.call(client.answers):
                raise SandboxUnavailableError(engine.engine_stopped(ConnectionError()))
            if ran is not None:
                return ran
        try:
            return await exec_stream.run(self.container, cmd, data, workdir, env, user, limit)
        except Exception as ex:
            if client.engine_unreachable(ex):
                raise SandboxUnavailableError(engine.engine_stopped(ex)) from ex
            raise

    async def close(self) -> None:
        """Close the channel, if one was started (no more commands go to it)."""
        self._tried = True
        channel, self.channel = self.channel, None
        if channel is not None:
            await channel.close()

    async def _channel(self) -> ExecChannel | None:
        """The channel, started with the first command; None once it is broken or unusable."""
        if not self._tried:
            async with self._lock:
                if not self._tried:
                    self.channel = await ExecChannel.open(self.container)
                    self._tried = True
        if self.channel is not None and self.channel.broken:
            await self.close()
        return self.channel


def _uid(hello: bytes) -> int | None:
    """The ``uid`` of the runner's hello; None when it does not say one."""
    try:
        uid = json.loads(hello).get("uid")
    except (ValueError, AttributeError):
        return None
    return uid if type(uid) is int else None
