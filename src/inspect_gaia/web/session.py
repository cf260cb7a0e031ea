"""An MCP server in each sample's own sandbox: started at its first call, restarted after a crash.

inspect's ``mcp_server_sandbox()`` runs a stdio MCP server inside the sample's sandbox (through the
sandbox tools inspect injects there on first use: a binary shipped in the inspect_ai wheel, so the
image needs nothing of inspect's). Handed to ``basic_agent`` as a tool source, though, it would
be wrong for a browser twice over: ``use_tools`` lists its tools when the sample starts (starting
a server, and so a browser, for every sample, browsing or not), and each call then runs in a task
of its own, for which inspect opens a fresh connection: a fresh server, so the page the agent
navigated to is gone by the next click.

So each server here is *owned* by one background task of the sample (``inspect_ai.util.background``,
cancelled when the sample ends, before its sandbox is removed). The owner enters the server's
connection, lists its tools once, and waits; tool calls from any task use the tools it listed,
which are bound to that one connection. The model-facing tools are declared in this package with
fixed schemas, so nothing starts until the agent first calls one (a sample that never browses pays
nothing), and a call that finds the server dead or wedged stops it: the next call starts a fresh
one, and the agent is told that the page state is lost.

What counts as dead relies on inspect's own wording for transport failures and time-outs of a
sandbox MCP call (``_FATAL``): any other ``ToolError`` is the server's answer (a click on a
missing element, a page that failed to load) and leaves the server running.
"""

from __future__ import annotations

import weakref
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio
from inspect_ai.tool import Tool, ToolError, mcp_server_sandbox
from inspect_ai.util import background, sandbox

from .._compat import sample_active

_FATAL = ("MCP request failed before completing", "timed out", "MCP request timed out")
"""Prefixes and phrases of inspect's ToolErrors for a sandbox MCP call that never got an answer."""


@dataclass(frozen=True)
class Launch:
    """How to start one server in the sandbox: inspect's ``mcp_server_sandbox`` arguments."""

    command: str
    args: Sequence[str] = ()
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None


@dataclass
class _Running:
    """A started server of one sample: its tools, and the event that makes its owner stop it."""

    tools: dict[str, Tool]
    stop: anyio.Event
    generation: int


@dataclass
class _SampleServers:
    """One sample's servers by name, with the lock that serialises their starts."""

    running: dict[str, _Running] = field(default_factory=dict)
    starts: dict[str, int] = field(default_factory=dict)
    lock: anyio.Lock = field(default_factory=anyio.Lock)
    notes: dict[str, str] = field(default_factory=dict)
    """A message for the next result of a server (``restarted``: its page state is gone)."""
    memos: dict[str, dict[str, str]] = field(default_factory=dict)
    """What a server's tools remember about it in this sample (where its files are)."""


_SAMPLES: weakref.WeakKeyDictionary[object, _SampleServers] = weakref.WeakKeyDictionary()


def _servers() -> _SampleServers:
    sample = sample_active()
    if sample is None:
        raise ToolError("this tool runs only inside a sample (it needs the sample's sandbox)")
    servers = _SAMPLES.get(sample)
    if servers is None:
        servers = _SAMPLES[sample] = _SampleServers()
    return servers


class SandboxServer:
    """An MCP server of which each sample gets its own, in its own sandbox, on first use."""

    def __init__(
        self,
        name: str,
        launch: Callable[[], Awaitable[Launch]],
        *,
        timeout: int,
        start_timeout: int = 180,
    ) -> None:
        """A server named ``name`` (in messages), started by ``launch``'s command.

        Args:
            name: What the agent is told has stopped or restarted (``the browser``).
            launch: Prepares the sandbox (runs in the sample) and says what to start.
            timeout: Seconds one call may take, start excluded; past it the server is stopped.
            start_timeout: Seconds the start (launch, connection, tool list) may take.
        """
        self.name = name
        self.launch = launch
        self.timeout = timeout
        self.start_timeout = start_timeout

    async def call(self, tool: str, arguments: dict[str, Any]) -> Any:
        """Call ``tool`` of this sample's server, starting it first if need be.

        Returns:
            The tool's result as inspect converts MCP content (a list of ``Content``).

        Raises:
            ToolError: The server's own error, or why it could not start or answer (it is then
                stopped, and the next call starts a fresh one).
        """
        servers = _servers()
        running = await self._running(servers)
        try:
            with anyio.fail_after(self.timeout):
                result = await running.tools[tool](**arguments)
        except ToolError as ex:
            if any(phrase in str(ex) for phrase in _FATAL):
                self._stop(servers, running)
                await _sandbox_alive()
                raise ToolError(f"{ex} {self._lost()}") from ex
            raise
        except TimeoutError as ex:
            self._stop(servers, running)
            await _sandbox_alive()
            raise ToolError(
                f"{tool} did not answer within {self.timeout} s. {self._lost()}"
            ) from ex
        return result

    def memo(self) -> dict[str, str]:
        """This sample's notes about this server (kept across its restarts)."""
        return _servers().memos.setdefault(self.name, {})

    def note(self) -> str | None:
        """The message owed to the agent since the last call (a restart), once."""
        return _servers().notes.pop(self.name, None)

    def _lost(self) -> str:
        return f"{self.name.capitalize()} was stopped; the next call starts a fresh one."

    async def _running(self, servers: _SampleServers) -> _Running:
        async with servers.lock:
            running = servers.running.get(self.name)
            if running is not None:
                return running
            generation = servers.starts.get(self.name, 0) + 1
            servers.starts[self.name] = generation
            if generation > 1:
                servers.notes[self.name] = (
                    f"({self.name.capitalize()} was started again: pages opened before are gone.)"
                )
            try:
                running = await self._start(generation)
            except ToolError:
                await _sandbox_alive()
                raise
            servers.running[self.name] = running
            return running

    async def _start(self, generation: int) -> _Running:
        ready = anyio.Event()
        stop = anyio.Event()
        outcome: dict[str, Any] = {}

        async def own() -> None:
            # Never raises: an exception in a background task would end the whole sample.
            try:
                launch = await self.launch()
                server = mcp_server_sandbox(
                    name=self.name,
                    command=launch.command,
                    args=list(launch.args),
                    env=dict(launch.env),
                    cwd=launch.cwd,
                    timeout=self.timeout,
                )
                async with server:
                    tools = await server.tools()
                    outcome["tools"] = {_tool_name(t): t for t in tools}
                    ready.set()
                    await stop.wait()
            except Exception as ex:
                outcome.setdefault("error", ex)
            finally:
                ready.set()

        background(own)
        with anyio.move_on_after(self.start_timeout):
            await ready.wait()
        if "tools" not in outcome:
            stop.set()
            error = outcome.get("error")
            reason = (
                f"{type(error).__name__}: {error}"
                if error
                else f"no answer in {self.start_timeout} s"
            )
            raise ToolError(f"{self.name.capitalize()} did not start ({reason}).")
        return _Running(tools=outcome["tools"], stop=stop, generation=generation)

    def _stop(self, servers: _SampleServers, running: _Running) -> None:
        """Stop ``running`` (its owner closes the connection and kills it, in the background)."""
        if servers.running.get(self.name) is running:
            del servers.running[self.name]
        running.stop.set()


async def _sandbox_alive() -> None:
    """Raise ``SandboxUnavailableError`` when the sample's sandbox is gone (it ends the sample).

    inspect's sandbox MCP transport turns every failure into a tool error, a lost container
    included; the browser's tools would then go on failing in a sandbox that no longer exists.
    """
    await sandbox().exec(["true"], timeout=30)


def _tool_name(tool: Tool) -> str:
    from inspect_ai.tool import ToolDef

    return ToolDef(tool).name
