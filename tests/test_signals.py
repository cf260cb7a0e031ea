"""SIGTERM and SIGHUP become a Ctrl-C while a run's sandboxes exist."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import uvicorn

from inspect_gaia.sandboxes import signals
from tests.helpers import STARTED_AS, started_as


@pytest.fixture
def restored(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No install in force (tests that start providers by hand leave theirs), handlers restored."""
    saved = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGHUP)}
    monkeypatch.setattr(signals, "_users", 0)
    monkeypatch.setattr(signals, "_installed", {})
    yield
    for signum, handler in saved.items():
        signal.signal(signum, handler)


def test_the_default_action_is_replaced_and_given_back(restored: None) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signals.install()
    signals.install()
    assert signal.getsignal(signal.SIGTERM) is signals._forward
    signals.uninstall()
    assert signal.getsignal(signal.SIGTERM) is signals._forward, "nested: still in use"
    signals.uninstall()
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


def test_an_ignored_signal_stays_ignored(restored: None) -> None:
    """``nohup`` means: do not stop on SIGHUP."""
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    signals.install()
    assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
    signals.uninstall()


def test_a_handler_of_someone_elses_is_left_alone(restored: None) -> None:
    def theirs(signum: int, frame: object) -> None: ...

    signal.signal(signal.SIGTERM, theirs)
    signals.install()
    assert signal.getsignal(signal.SIGTERM) is theirs
    signals.uninstall()
    assert signal.getsignal(signal.SIGTERM) is theirs


def _patched_handle_exit(server: uvicorn.Server, signum: int, frame: object) -> None:
    """What importing sse_starlette (MCP) puts in place of ``uvicorn.Server.handle_exit``."""


class _PatchedServer(uvicorn.Server):
    handle_exit = _patched_handle_exit  # type: ignore[assignment]


@pytest.mark.parametrize("server_class", [uvicorn.Server, _PatchedServer], ids=["plain", "patched"])
def test_uvicorns_shut_down_and_reraise_handler_is_replaced(
    restored: None, server_class: type[uvicorn.Server]
) -> None:
    """inspect's control server serves with uvicorn, which captures SIGTERM on the main thread;
    re-raised after its shut-down, the signal killed the run with every sandbox left behind."""
    server = server_class(uvicorn.Config(app="unused:app"))
    signal.signal(signal.SIGTERM, server.handle_exit)
    signals.install()
    assert signal.getsignal(signal.SIGTERM) is signals._forward
    signals.uninstall()
    assert signal.getsignal(signal.SIGTERM) == server.handle_exit


_RUN_SAMPLE = """
async def run() -> None:
    async with anyio.create_task_group() as group:
        group.start_soon(sample)

try:
    anyio.run(run)
except (KeyboardInterrupt, asyncio.CancelledError):
    pass
"""
"""What both programs in an event loop end with: ``sample()`` in a task group, as inspect runs it."""

_IN_A_LOOP = (
    """
import anyio, asyncio
from inspect_gaia.sandboxes import signals

async def sample() -> None:
    signals.install()
    print("ready", flush=True)
    try:
        await anyio.sleep(30)
    except asyncio.CancelledError:
        print("cleaning up", flush=True)
        raise
"""
    + _RUN_SAMPLE
)

_NO_LOOP = """
import time
from inspect_gaia.sandboxes import signals

signals.install()
print("ready", flush=True)
try:
    time.sleep(30)
except KeyboardInterrupt:
    print("cleaning up", flush=True)
"""

_STOPS = [
    (how, signum)
    for how, ignored in STARTED_AS.items()
    for signum in (signal.SIGTERM, signal.SIGHUP)
    if signum not in ignored
]


@pytest.mark.parametrize("program", [_IN_A_LOOP, _NO_LOOP], ids=["event-loop", "no-loop"])
@pytest.mark.parametrize(("started", "signum"), _STOPS, ids=[f"{h}-{s.name}" for h, s in _STOPS])
def test_the_signal_interrupts_like_ctrl_c_and_the_exit_status_names_it(
    program: str, started: str, signum: signal.Signals
) -> None:
    """However the run was started (issue #17: a script's background job ignores SIGINT, and the
    interrupt sent as a SIGINT was dropped while the run went on to the end)."""
    process = subprocess.Popen(
        [sys.executable, "-c", program],
        stdout=subprocess.PIPE,
        text=True,
        preexec_fn=started_as(started),
    )
    assert process.stdout is not None and process.stdout.readline() == "ready\n"
    time.sleep(0.1)
    process.send_signal(signum)
    output, _ = process.communicate(timeout=20)
    assert output == "cleaning up\n"
    assert process.returncode == 128 + signum


def test_sigint_ignored_stays_ignored(restored: None) -> None:
    """The forwarder delivers the interrupt without un-ignoring SIGINT (the job's Ctrl-C shield)."""
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        signals.install()
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
        signals.uninstall()
    finally:
        signal.signal(signal.SIGINT, previous)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except FileNotFoundError:
        return False


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="descendants are found through /proc")
def test_what_the_run_started_is_stopped_too_as_by_a_signal_to_the_group() -> None:
    """The compose sandbox's `docker compose exec` is the docker CLI and its compose plugin; the
    plugin, left running, held the command's output open and the stopped run waited on it."""
    program = (
        "import subprocess, time\n"
        "from inspect_gaia.sandboxes import signals\n"
        "signals.install()\n"
        "shell = subprocess.Popen(['sh', '-c', 'sleep 300 & echo $!; wait'], stdout=subprocess.PIPE)\n"
        "print(shell.stdout.readline().decode().strip(), flush=True)\n"
        "try:\n"
        "    time.sleep(30)\n"
        "except KeyboardInterrupt:\n"
        "    time.sleep(1)\n"
    )
    process = subprocess.Popen(
        [sys.executable, "-c", program],
        stdout=subprocess.PIPE,
        text=True,
        preexec_fn=started_as("terminal"),
    )
    assert process.stdout is not None
    grandchild = int(process.stdout.readline())
    assert _alive(grandchild)
    process.send_signal(signal.SIGTERM)
    process.communicate(timeout=20)
    assert process.returncode == 128 + signal.SIGTERM
    deadline = time.monotonic() + 5
    while _alive(grandchild) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(grandchild)


_ORPHANED_COMMAND = (
    """
import asyncio, os, subprocess, sys
import anyio
from inspect_gaia.sandboxes import signals

COMMAND = [sys.executable, "-c", "import time; time.sleep(300)", "compose", "--ansi", "never",
           "--project-name", "inspect-gaia-itest", "-f", "compose.yaml", "exec", "default", "sleep"]

def orphan(stdout: int) -> None:
    # started by a child that exits at once, as the docker CLI killed under its compose plugin
    subprocess.Popen([sys.executable, "-c",
                      f"import subprocess, sys; "
                      f"print(subprocess.Popen({COMMAND!r}, stdout=1, stderr=subprocess.DEVNULL).pid, file=sys.stderr)"],
                     stdout=stdout).wait()

async def sample() -> None:
    signals.install()
    signals.watch_project("inspect-gaia-itest")
    print("ready", flush=True)
    try:
        await anyio.sleep(30)
    except asyncio.CancelledError:
        # the command was being started as the signal came: the one pass over this process's
        # descendants missed it, and inspect waits (shielded) for its output pipe to close
        read, write = os.pipe()
        orphan(write)
        os.close(write)
        with anyio.CancelScope(shield=True):
            while await anyio.to_thread.run_sync(os.read, read, 1024):
                pass
        print("cleaning up", flush=True)
        raise
"""
    + _RUN_SAMPLE
)


def test_a_compose_command_started_as_the_signal_came_is_stopped_too() -> None:
    """CI (stop 25): a compose run went on 120 s after SIGTERM, one `docker compose exec` still
    running. A command whose docker CLI was starting at that instant can leave its compose plugin
    running outside the process tree, holding the output pipe inspect waits on: a command of
    the run's compose projects is stopped whenever it is found, not only at the signal."""
    process = subprocess.Popen(
        [sys.executable, "-c", _ORPHANED_COMMAND],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=started_as("background"),
    )
    assert process.stdout is not None and process.stdout.readline() == "ready\n"
    process.send_signal(signal.SIGTERM)
    try:
        output, errors = process.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        output, errors = process.communicate()
    command = int(errors.split()[0])  # removed by its pid whatever happened
    if _alive(command):
        os.kill(command, signal.SIGKILL)
    assert output == "cleaning up\n", "the run went on after the signal"
    assert process.returncode == 128 + signal.SIGTERM


def test_a_control_server_cancelled_by_the_stop_leaves_no_traceback(
    restored: None, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """inspect's control server (uvicorn serving a starlette app) is cancelled, not shut down,
    when a stop signal cancels the run; its lifespan task is cancelled only as the loop closes,
    and starlette reports that as a failed shutdown whose message is a whole traceback (a CI run
    printed it after SIGHUP). The stop is ours: that record is dropped, other errors are not."""
    from starlette.applications import Starlette

    async def serve_then_cancel() -> None:
        sock = socket.socket(socket.AF_UNIX)
        sock.bind(str(tmp_path / f"ctl{len(list(tmp_path.iterdir()))}.sock"))
        server = uvicorn.Server(uvicorn.Config(Starlette(), log_config=None, log_level="warning"))
        serving = asyncio.create_task(server.serve(sockets=[sock]))
        while not server.started:
            await asyncio.sleep(0.01)
        serving.cancel()  # what the stop's cancelled wait_for does to inspect's serve task
        with contextlib.suppress(asyncio.CancelledError):
            await serving
        logging.getLogger("uvicorn.error").error("a real failure")

    signals.install()
    signals.uninstall()  # the quieting outlives the install: the loop closes after task_cleanup
    with caplog.at_level(logging.WARNING, logger="uvicorn.error"):
        asyncio.run(serve_then_cancel())
        # and a loop closed with the lifespan task still pending, collected later (GeneratorExit)
        loop = asyncio.new_event_loop()
        loop.run_until_complete(serve_then_cancel())
        loop.close()
        gc.collect()
    messages = [r.getMessage() for r in caplog.records if r.name == "uvicorn.error"]
    assert messages == ["a real failure"] * 2
