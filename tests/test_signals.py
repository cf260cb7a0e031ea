"""SIGTERM and SIGHUP become a Ctrl-C while a run's sandboxes exist."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest
import uvicorn
from helpers import default_stop_signals

from inspect_gaia import _signals


@pytest.fixture
def restored(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No install in force (tests that start providers by hand leave theirs), handlers restored."""
    saved = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGHUP)}
    monkeypatch.setattr(_signals, "_users", 0)
    monkeypatch.setattr(_signals, "_installed", {})
    yield
    for signum, handler in saved.items():
        signal.signal(signum, handler)


def test_the_default_action_is_replaced_and_given_back(restored: None) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _signals.install()
    _signals.install()
    assert signal.getsignal(signal.SIGTERM) is _signals._forward
    _signals.uninstall()
    assert signal.getsignal(signal.SIGTERM) is _signals._forward, "nested: still in use"
    _signals.uninstall()
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


def test_an_ignored_signal_stays_ignored(restored: None) -> None:
    """``nohup`` means: do not stop on SIGHUP."""
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    _signals.install()
    assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
    _signals.uninstall()


def test_a_handler_of_someone_elses_is_left_alone(restored: None) -> None:
    def theirs(signum: int, frame: object) -> None: ...

    signal.signal(signal.SIGTERM, theirs)
    _signals.install()
    assert signal.getsignal(signal.SIGTERM) is theirs
    _signals.uninstall()
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
    _signals.install()
    assert signal.getsignal(signal.SIGTERM) is _signals._forward
    _signals.uninstall()
    assert signal.getsignal(signal.SIGTERM) == server.handle_exit


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=str)
def test_the_signal_interrupts_like_ctrl_c_and_the_exit_status_names_it(signum: int) -> None:
    program = (
        "import sys, time\n"
        "from inspect_gaia import _signals\n"
        "_signals.install()\n"
        "print('ready', flush=True)\n"
        "try:\n"
        "    time.sleep(30)\n"
        "except KeyboardInterrupt:\n"
        "    print('cleaning up', flush=True)\n"
    )
    process = subprocess.Popen(
        [sys.executable, "-c", program],
        stdout=subprocess.PIPE,
        text=True,
        preexec_fn=default_stop_signals,
    )
    assert process.stdout is not None and process.stdout.readline() == "ready\n"
    time.sleep(0.1)
    process.send_signal(signum)
    output, _ = process.communicate(timeout=20)
    assert output == "cleaning up\n"
    assert process.returncode == 128 + signum
