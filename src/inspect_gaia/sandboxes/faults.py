"""Sandbox faults end a sample as an error: scored, shown, retryable, never silently skipped.

A sandbox that fails to start: inspect skips scoring a sample whose sandbox's ``sample_init``
raises, so such a sample would drop out of every metric's denominator (with the Docker Engine
stopped mid-run, a run reported the accuracy of the few samples that started). The Docker
providers therefore catch a failed start and hand inspect an ``UnstartedSandbox`` instead; the
agent's first step (``require_started``) then ends the sample with a one-line error before any
model call.

A sandbox that started but could not be set up (inspect copies the attachment in after the start,
and a failure there also skips scoring): ``SetUpGuard`` passes every call through to the started
sandbox (a ``PassThrough``: a wrapper, never a change of class), but records a failed set-up
copy instead of raising it, and ``require_started`` ends the sample just the same.

A sample file that could not be read: inspect reads each of a sample's ``files`` from the host
when the sample starts, and takes a path it cannot read (gone: a cache clean-up or a re-download
mid-run; or unreadable) as the file's inline text, so the sandbox would get a file holding the
host's path and the sample would run as if nothing happened. ``SetUpGuard`` recognises that copy
(``unread_sample_file``), drops it, and records it as a set-up failure naming the file.

A sandbox lost mid-sample (its container killed, the engine gone): inspect turns the
``SandboxUnavailableError`` of a tool call into a tool error the model sees, and the agent goes on
in a sandbox that no longer exists — answering from nothing, or looping to the message limit, with
the fault recorded nowhere. GAIA's tools (``ending_on_sandbox_loss``) end the sample instead.

Either way the sample is scored like any errored sample (``score_on_error``): it counts as wrong,
the log is marked as an error, and ``inspect eval-retry`` reruns exactly those samples.
"""

from __future__ import annotations

import copy
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Literal, TypeVar, overload

from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import Tool, ToolDef, ToolResult
from inspect_ai.util import (
    ExecResult,
    SandboxConnection,
    SandboxEnvironment,
    SandboxEnvironmentConfigType,
    SandboxUnavailableError,
    sandbox,
)
from typing_extensions import override

from .._compat import sample_active, unproxied

ST = TypeVar("ST", bound=SandboxEnvironment)


class SandboxStartError(RuntimeError):
    """The sample's sandbox did not start; the message says why and what to do."""


class SandboxLostError(RuntimeError):
    """The sample's sandbox stopped answering mid-sample; the message says why."""


class _StandIn(SandboxEnvironment):
    """An environment object only: the guarded provider starts and cleans up, never this class."""

    @override
    @classmethod
    async def sample_init(
        cls,
        task_name: str,
        config: SandboxEnvironmentConfigType | None,
        metadata: dict[str, str],
    ) -> dict[str, SandboxEnvironment]:
        """Not a provider: instances come from ``start_or_stand_in``."""
        raise NotImplementedError(f"{cls.__name__} is not a sandbox provider")

    @override
    @classmethod
    async def sample_cleanup(
        cls,
        task_name: str,
        config: SandboxEnvironmentConfigType | None,
        environments: dict[str, SandboxEnvironment],
        interrupted: bool,
    ) -> None:
        """Not a provider: the guarded provider cleans up what it started (see ``started``)."""
        raise NotImplementedError(f"{cls.__name__} is not a sandbox provider")


class UnstartedSandbox(_StandIn):
    """Stands in for a sandbox that failed to start: every use raises, with the cause."""

    def __init__(self, reason: str) -> None:
        """Remember why the sandbox did not start."""
        super().__init__()
        self.start_failure: str | None = reason
        self.reason = reason

    @override
    async def exec(
        self,
        cmd: list[str],
        input: str | bytes | None = None,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        user: str | None = None,
        timeout: int | None = None,
        timeout_retry: bool = True,
        concurrency: bool = True,
    ) -> ExecResult[str]:
        """Always raises: there is nothing to run the command in."""
        raise SandboxUnavailableError(self.reason)

    @override
    async def write_file(self, file: str, contents: str | bytes) -> None:
        """Accepted and dropped: the sample ends before anything could read it."""

    @overload
    async def read_file(self, file: str, text: Literal[True] = True) -> str: ...

    @overload
    async def read_file(self, file: str, text: Literal[False]) -> bytes: ...

    @override
    async def read_file(self, file: str, text: bool = True) -> str | bytes:
        """Always raises: there is nothing to read from."""
        raise SandboxUnavailableError(self.reason)


class PassThrough(_StandIn):
    """A started sandbox, wrapped: every call passes through to ``inner`` unless overridden.

    Composition, not re-classing: whatever environment inspect hands over is wrapped as it is, so
    an added behaviour (``SetUpGuard``'s, the compose sandbox's engine check) cannot silently go
    missing when inspect builds another type.
    """

    def __init__(self, inner: SandboxEnvironment) -> None:
        """Wrap ``inner``."""
        super().__init__()
        self.inner = inner

    @override
    async def exec(
        self,
        cmd: list[str],
        input: str | bytes | None = None,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        user: str | None = None,
        timeout: int | None = None,
        timeout_retry: bool = True,
        concurrency: bool = True,
    ) -> ExecResult[str]:
        """Run as the started sandbox does."""
        return await self.inner.exec(
            cmd, input, cwd, env, user, timeout, timeout_retry, concurrency
        )

    @override
    async def write_file(self, file: str, contents: str | bytes) -> None:
        """Write as the started sandbox does."""
        await self.inner.write_file(file, contents)

    @overload
    async def read_file(self, file: str, text: Literal[True] = True) -> str: ...

    @overload
    async def read_file(self, file: str, text: Literal[False]) -> bytes: ...

    @override
    async def read_file(self, file: str, text: bool = True) -> str | bytes:
        """Read as the started sandbox does."""
        if text:
            return await self.inner.read_file(file, text=True)
        return await self.inner.read_file(file, text=False)

    @override
    async def connection(self, *, user: str | None = None) -> SandboxConnection:
        """The started sandbox's connection."""
        return await self.inner.connection(user=user)

    @override
    def default_polling_interval(self) -> float:
        """The started sandbox's polling interval."""
        return self.inner.default_polling_interval()

    @override
    def as_type(self, sandbox_cls: type[ST]) -> ST:
        """The wrapper itself, or else the started sandbox, when of the type asked for."""
        if isinstance(self, sandbox_cls):
            return self
        return self.inner.as_type(sandbox_cls)


class SetUpGuard(PassThrough):
    """A started sandbox, passed through; a failed set-up copy ends the sample, not its scoring."""

    def __init__(self, inner: SandboxEnvironment, describe: Callable[[Exception], str]) -> None:
        """Guard ``inner``; ``describe`` turns a set-up failure into its one line."""
        super().__init__(inner)
        self.describe = describe
        self.start_failure: str | None = None
        self._set_up = False
        """Whether inspect's set-up (attachment copies, then its root-access probe) is over."""
        self._connection_asked = False

    @override
    async def exec(
        self,
        cmd: list[str],
        input: str | bytes | None = None,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        user: str | None = None,
        timeout: int | None = None,
        timeout_retry: bool = True,
        concurrency: bool = True,
    ) -> ExecResult[str]:
        """Run as the started sandbox does (the first exec, inspect's probe, ends the set-up)."""
        self._set_up = True
        return await super().exec(cmd, input, cwd, env, user, timeout, timeout_retry, concurrency)

    @override
    async def write_file(self, file: str, contents: str | bytes) -> None:
        """Write as the started sandbox does; a failure during set-up is recorded, not raised.

        A set-up copy that is inspect's stand-in for a sample file it could not read is never
        written: it is recorded as the set-up failure (``unread_sample_file``).
        """
        if not self._set_up:
            active = sample_active()
            unread = unread_sample_file(file, contents, active.sample.files if active else None)
            if unread is not None:
                self.start_failure = self.start_failure or unread
                return
        try:
            await self.inner.write_file(file, contents)
        except Exception as ex:
            if self._set_up:
                raise
            self.start_failure = self.describe(ex)

    @override
    async def connection(self, *, user: str | None = None) -> SandboxConnection:
        """The started sandbox's connection (inspect asks right after set-up).

        A sandbox that fails to say how to connect to it right after its set-up is not usable:
        that is recorded as a set-up failure, and the connection is reported unavailable (which
        inspect tolerates) rather than raised.
        """
        if self.start_failure is not None:
            raise NotImplementedError(self.start_failure)
        try:
            return await self.inner.connection(user=user)
        except NotImplementedError:
            raise
        except Exception as ex:
            if not self._connection_asked:  # inspect's own ask, right after the set-up
                self.start_failure = self.describe(ex)
            raise ConnectionError(self.describe(ex)) from ex
        finally:
            self._connection_asked = True


def unread_sample_file(
    file: str, contents: str | bytes, files: Mapping[str, str] | None
) -> str | None:
    """Why a set-up copy of ``file`` is not the sample file it stands for; ``None`` when it is.

    ``files`` is the sample's ``files`` (sandbox path -> host path). inspect copies a host path
    it cannot read as that path's text; such a copy (contents exactly the host path, which the
    host file, read again, does not hold) is named here, with the cause.
    """
    source = (files or {}).get(file)
    data = contents.encode() if isinstance(contents, str) else contents
    if source is None or data != source.encode():
        return None
    try:
        with open(source, "rb") as handle:  # a file that holds its own path is that file
            if handle.read(len(data) + 1) == data:
                return None
        cause = "it was missing or unreadable when the sample started"
    except OSError as ex:
        cause = ex.strerror or type(ex).__name__
    return (
        f"Attachment {file} could not be copied into the sandbox: its file on the host, "
        f"{source}, cannot be read ({cause}) — the dataset changed after the run loaded it (a "
        "cache clean-up or a re-download?): make sure the snapshot is complete, then rerun the "
        "errored samples with `inspect eval-retry`"
    )


async def start_or_stand_in(
    start: Awaitable[dict[str, SandboxEnvironment]],
    describe: Callable[[Exception], str],
) -> dict[str, SandboxEnvironment]:
    """The started environments, set-up guarded; or a stand-in saying (``describe``) what failed."""
    try:
        environments = await start
    except Exception as ex:
        return {"default": UnstartedSandbox(describe(ex))}
    return {name: SetUpGuard(env, describe) for name, env in environments.items()}


def started(environments: dict[str, SandboxEnvironment]) -> dict[str, SandboxEnvironment] | None:
    """The provider's own environments behind every wrapper; ``None`` when the start failed."""
    if any(isinstance(env, UnstartedSandbox) for env in environments.values()):
        return None
    return {name: _innermost(env) for name, env in environments.items()}


def _innermost(environment: SandboxEnvironment) -> SandboxEnvironment:
    while isinstance(environment, PassThrough):
        environment = environment.inner
    return environment


def not_started() -> str | None:
    """Why the current sample's sandbox did not start, or ``None`` when it did (or has none).

    A provider marks a sandbox that started but could not be set up (its attachment could not be
    copied in) by setting ``start_failure`` on it; an ``UnstartedSandbox`` always has it.
    """
    try:
        environment = unproxied(sandbox())
    except (ProcessLookupError, RuntimeError, ValueError):
        return None
    failure = getattr(environment, "start_failure", None)
    return failure if isinstance(failure, str) else None


@solver
def require_started() -> Solver:
    """End the sample at once, before any model call, when its sandbox did not start."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        reason = not_started()
        if reason is not None:
            raise SandboxStartError(reason)
        return state

    return solve


def ending_on_sandbox_loss(tool: Tool) -> Tool:
    """``tool``, unchanged for the model, except that a lost sandbox ends the sample."""
    definition = ToolDef(tool)

    async def execute(**kwargs: Any) -> ToolResult:
        try:
            return await definition.tool(**kwargs)  # type: ignore[no-any-return]
        except SandboxUnavailableError as ex:
            raise SandboxLostError(str(ex)) from ex

    # A copy with only the function swapped: every other field of the definition (a field a later
    # inspect adds included) is the tool's own.
    ending = copy.copy(definition)
    ending.tool = execute
    return ending.as_tool()
