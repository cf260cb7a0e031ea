"""An MCP server in each sample's own sandbox: started at its first call, restarted after a crash.

The server runs inside the sample's sandbox under a small relay (``mcp_relay``, copied there at
the start) that holds its stdio for the whole sample and answers one request per short exec: one
command-channel round trip with gaia-docker. inspect's ``mcp_server_sandbox()`` would do the same
through the sandbox tools it injects, but runs their CLI (a PyInstaller binary) once per request,
which made a browser's start take 9-10 s and each navigate-and-snapshot about a second
(docs/benchmarks.md). Its tool source would also be wrong for a browser: ``use_tools`` lists the
tools when the sample starts (starting a browser for every sample, browsing or not), and each call
runs in a task of its own with a fresh connection, so a fresh server, and the page the agent
navigated to would be gone by the next click.

The model-facing tools are declared in this package with fixed schemas, so nothing starts until
the agent first calls one (a sample that never browses pays nothing). A call that finds the server
gone or wedged (the relay's exit status, or no answer in time) stops it, with everything it
started: the next call starts a fresh one, and the agent is told that the page state is lost. Any
other error is the server's answer (a click on a missing element, a page that failed to load) and
leaves it running.
"""

from __future__ import annotations

import json
import shlex
import weakref
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio
from inspect_ai.model import Content, ContentImage, ContentText
from inspect_ai.tool import ToolError
from inspect_ai.util import background, sandbox

from .._compat import sample_active
from ..shipped import MCP_RELAY, source

RELAY = "/tmp/inspect-gaia-mcp-relay.py"
"""Where ``mcp_relay`` is copied in the sandbox."""
_SERVE = """set -eu
dir=$(mktemp -d /tmp/gaia-mcp.XXXXXX)
python3 {relay} serve "$dir" {tools}-- {command} </dev/null >"$dir/relay.log" 2>&1 &
printf '%s\\n%s\\n' "$dir" "$!"
"""


@dataclass(frozen=True)
class Launch:
    """How to start one server in the sandbox: its command, arguments, environment and directory."""

    command: str
    args: Sequence[str] = ()
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    tools: Sequence[str] = ()
    """The only tools the relay lets be listed and called (empty: all the server's)."""


@dataclass
class _Running:
    """A started server of one sample: the relay's directory and process id in the sandbox."""

    directory: str
    pid: int


_MESSAGE = 4000
"""Characters of a server's error message the agent is shown."""


class _Gone(Exception):
    """The server did not answer: it ended, or passed its time (it is then stopped)."""


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

    async def call(self, tool: str, arguments: dict[str, Any]) -> list[Content]:
        """Call ``tool`` of this sample's server, starting it first if need be.

        Returns:
            The tool's result as inspect reads MCP content (a list of ``Content``).

        Raises:
            ToolError: The server's own error, or why it could not start or answer (it is then
                stopped, and the next call starts a fresh one).
        """
        servers = _servers()
        running = await self._running(servers)
        try:
            answer = await _request(
                running, "tools/call", {"name": tool, "arguments": arguments}, self.timeout
            )
        except _Gone as ex:
            self._stop(servers, running)
            await _sandbox_alive()
            raise ToolError(f"{tool}: {ex} {self._lost()}") from ex
        content = _content(answer.get("content") or [])
        if answer.get("isError"):
            raise ToolError("\n\n".join(c.text for c in content if isinstance(c, ContentText)))
        return content

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
                running = await self._start()
            except ToolError:
                await _sandbox_alive()
                raise
            servers.running[self.name] = running
            return running

    async def _start(self) -> _Running:
        try:
            launch = await self.launch()
            await sandbox().write_file(RELAY, source(MCP_RELAY))
            command = shlex.join([launch.command, *launch.args])
            started = await sandbox().exec(
                ["sh", "-c", _SERVE.format(relay=RELAY, tools=_tools(launch), command=command)],
                env=dict(launch.env),
                cwd=launch.cwd,
                timeout=60,
            )
            if not started.success:
                raise RuntimeError(started.stderr.strip()[-400:])
            directory, pid = started.stdout.split()
            running = _Running(directory=directory, pid=int(pid))
        except ToolError:
            raise
        except Exception as ex:
            raise ToolError(f"{self.name.capitalize()} did not start ({ex}).") from ex
        try:  # ready once it answers (the relay initialised the server before it listens)
            await _request(running, "tools/list", None, self.start_timeout)
        except _Gone as ex:
            _kill(running)
            raise ToolError(f"{self.name.capitalize()} did not start ({ex}).") from ex
        return running

    def _stop(self, servers: _SampleServers, running: _Running) -> None:
        """Stop ``running`` and everything it started (in the background)."""
        if servers.running.get(self.name) is running:
            del servers.running[self.name]
        _kill(running)


def _tools(launch: Launch) -> str:
    return f"--tools {shlex.quote(','.join(launch.tools))} " if launch.tools else ""


async def _request(
    running: _Running, method: str, params: dict[str, Any] | None, seconds: float
) -> dict[str, Any]:
    """The server's result for one request, through the relay.

    Raises:
        ToolError: The server answered with an error of its own.
        _Gone: No answer: the server ended, or did not answer within ``seconds``.
    """
    request = json.dumps({"method": method, "params": params})
    argv = ["python3", RELAY, "call", running.directory, f"{seconds:g}"]
    try:
        result = await sandbox().exec(argv, input=request, timeout=int(seconds) + 5)
    except TimeoutError as ex:
        raise _Gone(f"did not answer within {seconds:g} s.") from ex
    if not result.success:
        raise _Gone(result.stderr.strip()[-1500:] or f"the relay exited with {result.returncode}.")
    return _result(result.stdout)


def _result(stdout: str) -> dict[str, Any]:
    """The ``result`` of the relay's answer: untrusted, as anything in the sandbox may write it.

    Raises:
        ToolError: The server answered with an error of its own (its message, cut).
        _Gone: No answer of the relay's shape (the browser session ends; the next call starts a
            fresh one): not JSON (an answer cut by the exec's output limit too), not an object.
    """
    try:
        answer = json.loads(stdout)
    except ValueError:
        raise _Gone(f"its answer was not JSON ({len(stdout):,} characters).") from None
    if not isinstance(answer, dict):
        raise _Gone(f"its answer was a JSON {type(answer).__name__}, not an object.")
    if "relay_error" in answer:
        raise _Gone(str(answer["relay_error"])[:_MESSAGE])
    error = answer.get("error")
    if error is not None:
        message = error.get("message", error) if isinstance(error, dict) else error
        raise ToolError(str(message)[:_MESSAGE])
    result = answer.get("result")
    if result is None:
        return {}
    if not isinstance(result, dict):
        raise _Gone(f"its result was a JSON {type(result).__name__}, not an object.")
    return result


def _kill(running: _Running) -> None:
    async def kill() -> None:
        try:  # never raises: an exception in a background task would end the whole sample
            await sandbox().exec(["python3", RELAY, "stop", str(running.pid)], timeout=30)
        except Exception:
            pass  # the sandbox is gone, and the server with it

    background(kill)


def _content(items: Any) -> list[Content]:
    """MCP content as inspect reads it (text, images as data URLs, resources as their text)."""
    content: list[Content] = []
    for item in items if isinstance(items, list) else [items]:
        if not isinstance(item, dict):
            content.append(ContentText(text=f"({type(item).__name__} content omitted)"))
            continue
        kind = item.get("type")
        if kind == "text":
            content.append(ContentText(text=str(item.get("text", ""))))
        elif kind == "image":
            mime = item.get("mimeType") or "image/png"
            content.append(ContentImage(image=f"data:{mime};base64,{item.get('data', '')}"))
        elif kind == "resource_link":
            content.append(ContentText(text=f"{item.get('description')} ({item.get('uri')})"))
        elif kind == "resource" and isinstance(item.get("resource"), dict):
            content.append(ContentText(text=str(item["resource"].get("text", ""))))
        else:
            content.append(ContentText(text=f"({kind} content omitted)"))
    return content


async def _sandbox_alive() -> None:
    """Raise ``SandboxUnavailableError`` when the sample's sandbox is gone (it ends the sample).

    A relay that does not answer looks the same whether its server died or the whole container
    went; without this the browser's tools would go on failing in a sandbox that no longer exists.
    """
    await sandbox().exec(["true"], timeout=30)
