"""SIGTERM and SIGHUP end a run the way Ctrl-C does.

``timeout``, schedulers, systemd and a closed terminal stop a process with SIGTERM or SIGHUP, whose
default action kills Python at once: no cleanup, every sandbox and the run's network left behind,
the log never finalised. inspect handles SIGINT (it cancels the run, cleans up and marks the log
``cancelled``), so while a run's sandboxes exist the two signals are turned into a SIGINT; once
that cleanup is done the process exits with the status the signal implies (128 + its number), so
a supervisor still sees that it was stopped.

The interrupt is delivered without a SIGINT: a POSIX shell starts a script's background job
(``inspect eval … &``, ``nohup cmd &`` in a script, some job runners) with SIGINT ignored, and a
SIGINT sent to the process itself was dropped while the run went on to the end (and uvicorn, while
it holds SIGINT, re-raises it only after restoring the ignored disposition). So the forwarder does
what ``asyncio.run``'s handler does on a first Ctrl-C, cancel the run's root task (found when the
forwarder is installed); a second signal raises ``KeyboardInterrupt`` as a second Ctrl-C does.
Without an asyncio loop (trio, or no loop) it runs SIGINT's Python handler, or raises
``KeyboardInterrupt``. SIGINT's own disposition is never changed.

One pass over the descendants is not enough for the compose sandbox: a ``docker compose exec``
whose docker CLI was starting as the signal came can leave its compose plugin running outside the
process tree (the CLI gone, the plugin re-parented), holding the output pipe inspect waits on,
shielded, until the sandbox's command ends (CI saw a run go on 120 s after SIGTERM). So from the
first signal until the process ends, every ``exec`` of a compose project this process started
(``watch_project``) is signalled too, wherever it is found, every ``SWEEP_SECONDS``. Only those:
the run's own clean-up (``docker compose down``) must go on.

Installed by the Docker providers' ``task_init`` and removed by their ``task_cleanup``. A signal
the process ignores (``nohup``) stays ignored, and a handler someone else installed is left alone,
except uvicorn's: inspect's control server (``inspect ctl``) serves on the main thread, and uvicorn
captures SIGTERM while it serves only to shut the server down and raise the signal again, which
would kill the process with its sandboxes still running. The same server is cancelled rather than
shut down when the run is (inspect's ``ControlServer.stop`` gives up as the run's scope is
cancelled), which leaves its lifespan task to be cancelled as the loop closes: starlette reports
that as a failed shutdown whose message is a whole traceback, printed after a clean stop. From the
first install that one record is dropped (``_QuietCancelledLifespan``); uvicorn's other errors are
not.
"""

from __future__ import annotations

import asyncio
import atexit
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from types import FrameType
from typing import Any

import anyio

_SIGNALS = tuple(
    s for s in (getattr(signal, "SIGTERM", None), getattr(signal, "SIGHUP", None)) if s
)
_installed: dict[int, object] = {}
_users = 0
_lock = threading.Lock()
_received: list[int] = []
_root_task: asyncio.Task[Any] | None = None
_projects: set[str] = set()
"""Compose projects of this process whose commands a stop signal stops too."""

SWEEP_SECONDS = 1.0
"""How often, after a stop signal, the compose projects' commands are looked for again."""


class _QuietCancelledLifespan(logging.Filter):
    """Drop uvicorn's report of a lifespan task cancelled as the loop closed (module's note)."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()  # starlette's traceback.format_exc() as the message
        if not (message.startswith("Traceback") and "in lifespan" in message):
            return True
        # cancelled as the loop closed, or its coroutine closed after the loop was gone
        cancelled = message.rstrip().endswith("asyncio.exceptions.CancelledError")
        return not (cancelled or "GeneratorExit" in message)


_QUIET = _QuietCancelledLifespan()


def _forward(signum: int, frame: FrameType | None) -> None:
    if not _received:
        atexit.register(_exit_as_signalled)
    _received.append(signum)
    if len(_received) == 1:
        _signal_descendants(signum)
        stopping = frozenset(_projects)
        _stop_commands(signum, stopping)
        threading.Thread(
            target=_sweep, args=(signum, stopping), name="inspect-gaia-stop", daemon=True
        ).start()
    root = _root_task
    if root is not None and not root.done() and len(_received) == 1:
        # What asyncio.run's own SIGINT handler does on a first Ctrl-C, without a SIGINT.
        root.cancel()
        root.get_loop().call_soon_threadsafe(lambda: None)
        return
    interrupt = signal.getsignal(signal.SIGINT)
    if root is None and callable(interrupt) and not _is_uvicorns(interrupt):
        interrupt(signal.SIGINT, frame)  # trio's cancel, or Python's KeyboardInterrupt
    else:
        raise KeyboardInterrupt  # a second signal, as a second Ctrl-C: stop now


def _signal_descendants(signum: int) -> None:
    """Pass the signal on to every process this one started, as a signal to the group would.

    A terminal's Ctrl-C reaches the whole foreground process group; a supervisor's SIGTERM
    reaches only this process. inspect then stops its subprocesses one level down, and what they
    started lives on: the compose sandbox's ``docker compose exec`` is the docker CLI running its
    compose plugin, which keeps the command's output pipe open until the command ends, while
    inspect waits, shielded, for that pipe to close. Linux only (``/proc``).
    """
    children: dict[int, list[int]] = {}
    for pid, stat in _each_process("stat"):
        try:  # pid (comm) state ppid ...: comm may hold spaces and parentheses
            parent = int(stat.rsplit(b")", 1)[1].split()[1])
        except (IndexError, ValueError):
            continue
        children.setdefault(parent, []).append(pid)
    pending = list(children.get(os.getpid(), []))
    while pending:
        pid = pending.pop()
        pending.extend(children.get(pid, []))
        _kill_quietly(pid, signum)


def _sweep(signum: int, stopping: frozenset[str]) -> None:
    while True:
        time.sleep(SWEEP_SECONDS)
        _stop_commands(signum, stopping | _projects)


def _stop_commands(signum: int, projects: frozenset[str]) -> None:
    """Signal every ``docker compose … exec`` of ``projects``, whatever its parent (Linux only)."""
    if not projects:
        return
    for pid, cmdline in _each_process("cmdline"):
        command = compose_command(cmdline.decode(errors="replace").split("\0"))
        if command is not None and command[1] == "exec" and command[0] in projects:
            _kill_quietly(pid, signum)


def _each_process(name: str) -> Iterator[tuple[int, bytes]]:
    """``(pid, /proc/<pid>/<name>)`` of every other process; none without ``/proc``."""
    for entry in os.scandir("/proc") if os.path.isdir("/proc") else ():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                with open(f"{entry.path}/{name}", "rb") as file:
                    yield int(entry.name), file.read()
            except OSError:
                continue


def _kill_quietly(pid: int, signum: int) -> None:
    try:
        os.kill(pid, signum)
    except OSError:
        pass  # gone meanwhile


def compose_command(argv: list[str]) -> tuple[str, str] | None:
    """``(project, subcommand)`` of a compose command line as inspect builds it, else None.

    ``docker compose [--ansi A] [--progress P] --project-name NAME [-f FILE] SUBCOMMAND …`` (the
    CLI), or the same after the compose plugin's path (``docker-compose compose …``).
    """
    if "compose" not in argv or "--project-name" not in argv:
        return None
    at = argv.index("--project-name")
    rest = argv[at + 2 :]
    if rest[:1] == ["-f"]:
        rest = rest[2:]
    return (argv[at + 1], rest[0]) if rest else None


def _find_root_task() -> asyncio.Task[Any] | None:
    """The task at the top of the running asyncio task tree, or None (no loop, or trio)."""
    try:
        asyncio.get_running_loop()
        current = anyio.get_current_task()
        by_id = {task.id: task for task in anyio.get_running_tasks()}
    except (RuntimeError, LookupError):
        return None
    while current.parent_id is not None and current.parent_id in by_id:
        current = by_id[current.parent_id]
    return next((task for task in asyncio.all_tasks() if id(task) == current.id), None)


def _exit_as_signalled() -> None:
    # Last words of a process stopped by a signal: flush what is buffered, then exit with the
    # status a shell reports for that signal (the rest of the exit handlers are skipped).
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(128 + _received[0])


def _replaceable(handler: object) -> bool:
    """No handler of its own, or a uvicorn server's shut-down-then-reraise one (module's note).

    Recognised by the object it is bound to, not by where the function is defined: importing
    sse_starlette (MCP) replaces ``uvicorn.Server.handle_exit`` with a function of its own.
    """
    return handler in (signal.SIG_DFL, None) or _is_uvicorns(handler)


def _is_uvicorns(handler: object) -> bool:
    owner = getattr(handler, "__self__", None)
    return any(cls.__module__.startswith("uvicorn.") for cls in type(owner).__mro__)


def install() -> None:
    """Forward SIGTERM and SIGHUP to SIGINT until the matching ``uninstall`` (nestable)."""
    global _users, _root_task
    if threading.current_thread() is not threading.main_thread():
        return
    with _lock:
        _users += 1
        if _users > 1:
            return
        _root_task = _find_root_task()
        uvicorn_errors = logging.getLogger("uvicorn.error")
        if _QUIET not in uvicorn_errors.filters:
            uvicorn_errors.addFilter(_QUIET)
        for signum in _SIGNALS:
            if _replaceable(signal.getsignal(signum)):
                _installed[signum] = signal.signal(signum, _forward)


def uninstall() -> None:
    """Undo one ``install``; the last one restores the previous handlers."""
    global _users, _root_task
    if threading.current_thread() is not threading.main_thread():
        return
    with _lock:
        if _users == 0:
            return
        _users -= 1
        if _users:
            return
        for signum, previous in _installed.items():
            if signal.getsignal(signum) is _forward:
                signal.signal(signum, previous)  # type: ignore[arg-type]
        _installed.clear()
        _root_task = None


def watch_project(name: str) -> None:
    """A compose project this process started: a stop signal stops its commands too."""
    _projects.add(name)


def forget_project(name: str) -> None:
    """The project was cleaned up."""
    _projects.discard(name)
