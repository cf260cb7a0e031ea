"""SIGTERM and SIGHUP end a run the way Ctrl-C does.

``timeout``, schedulers, systemd and a closed terminal stop a process with SIGTERM or SIGHUP, whose
default action kills Python at once: no cleanup, every sandbox and the run's network left behind,
the log never finalised. inspect handles SIGINT (it cancels the run, cleans up and marks the log
``cancelled``), so while a run's sandboxes exist the two signals are turned into a SIGINT; once
that cleanup is done the process exits with the status the signal implies (128 + its number), so
a supervisor still sees that it was stopped.

Installed by the Docker providers' ``task_init`` and removed by their ``task_cleanup``. A signal
the process ignores (``nohup``) stays ignored, and a handler someone else installed is left alone,
except uvicorn's: inspect's control server (``inspect ctl``) serves on the main thread, and uvicorn
captures SIGTERM while it serves only to shut the server down and raise the signal again, which
would kill the process with its sandboxes still running.
"""

from __future__ import annotations

import atexit
import logging
import os
import signal
import sys
import threading
from types import FrameType

_SIGNALS = tuple(
    s for s in (getattr(signal, "SIGTERM", None), getattr(signal, "SIGHUP", None)) if s
)
_installed: dict[int, object] = {}
_users = 0
_lock = threading.Lock()
_received: list[int] = []


def _forward(signum: int, frame: FrameType | None) -> None:
    if not _received:
        atexit.register(_exit_as_signalled)
    _received.append(signum)
    os.kill(os.getpid(), signal.SIGINT)


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
    if handler in (signal.SIG_DFL, None):
        return True
    owner = getattr(handler, "__self__", None)
    return any(cls.__module__.startswith("uvicorn.") for cls in type(owner).__mro__)


def install() -> None:
    """Forward SIGTERM and SIGHUP to SIGINT until the matching ``uninstall`` (nestable)."""
    global _users
    if threading.current_thread() is not threading.main_thread():
        return
    with _lock:
        _users += 1
        if _users > 1:
            return
        for signum in _SIGNALS:
            if _replaceable(signal.getsignal(signum)):
                _installed[signum] = signal.signal(signum, _forward)


def uninstall() -> None:
    """Undo one ``install``; the last one restores the previous handlers."""
    global _users
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
