"""Fail closed: a hook of the egress proxy's addons that raises ends what it was judging.

Runs elsewhere: in the proxy's container, beside the addon; standard library only (``shipped``).

mitmproxy logs an exception raised by an addon's hook as "Addon error" and then carries on as if
the hook had returned: a request the hook was about to refuse is forwarded unchanged. Every hook of
the proxy's addons is therefore wrapped in ``fail_closed``: whatever it raises, the flow (HTTP or
TCP) is killed, or the connection it was deciding on (a client's, a server's) is refused, and the
proxy logs one JSON line ``{"killed": WHAT, "why": "hook: Type: message", "client": ADDRESS}``.

No import of mitmproxy: it works on what mitmproxy hands a hook by its attributes. As every addon
imports it, it also holds the names they share: ``DECISION``, ``ASKED``, ``SERVER``.
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from typing import Any, TypeVar

Hook = TypeVar("Hook", bound=Callable[..., Any])

DECISION = "inspect_gaia.decision"
"""``flow.metadata`` key: ``(decision, why)`` of a request the guard or the replay answered itself,
set by ``addon.py`` and ``replay.py``, read by the recorder (``recorder.py``)."""
ASKED = "inspect_gaia.url"
"""``flow.metadata`` key: the URL a refused request with a body asked for, whose host the guard
replaced (``addon.py``), recorded as asked (``recorder.py``)."""
SERVER = "inspect_gaia.server"
"""``flow.metadata`` key: ``host:port`` the proxy connects to (or would have) for a request, as the
guard judged it (``addon.py``), recorded beside its URL (``recorder.py``)."""


def fail_closed(hook: Hook) -> Hook:
    """``hook`` (a method of one flow, client or connection), killing its subject if it raises."""

    @functools.wraps(hook)
    def guarded(self: Any, subject: Any) -> Any:
        try:
            return hook(self, subject)
        except Exception as ex:
            kill(subject, f"{hook.__name__}: {type(ex).__name__}: {ex}")
            return None

    return guarded  # type: ignore[return-value]


def kill(subject: Any, why: str) -> None:
    """End ``subject`` (a flow, a client, a server connection's hook data) and log why.

    Cannot raise on what it is handed: each step that reads the subject is guarded, and the log
    line is JSON with every character escaped (a surrogate-escaped byte included).
    """
    try:
        response = getattr(subject, "response", None)
        if response is not None or hasattr(subject, "request"):
            subject.response = None  # an answer the hook made before it failed is not sent either
    except Exception:
        pass
    try:
        if getattr(subject, "killable", False):
            subject.kill()
        else:
            target = getattr(subject, "server", None) or subject
            target.error = f"inspect_gaia egress proxy failed closed ({why[:200]})"
    except Exception as ex:
        why += f"; and the kill failed: {type(ex).__name__}"
    log({"killed": _what(subject), "why": why[:2000], "client": _client(subject)})


def _what(subject: Any) -> str:
    try:
        request = getattr(subject, "request", None)
        if request is not None:
            return f"{request.method} {request.pretty_url}"[:2000]
        return type(subject).__name__
    except Exception:
        return type(subject).__name__


def _client(subject: Any) -> str:
    try:
        client = getattr(subject, "client_conn", None) or getattr(subject, "client", None)
        return str((client or subject).peername[0])
    except Exception:
        return "?"


def log(record: dict[str, Any]) -> None:
    """One JSON line on stdout, in one write (the supervisor writes to the same pipe)."""
    sys.stdout.write(json.dumps({"inspect_gaia": record}) + "\n")
    sys.stdout.flush()
