"""The scripted model of the benchmarks, served to both harnesses, counting what it answers.

Replies are chosen by ``support/scripted_model.py``'s ``ScriptedModel`` (the question in the first
user message picks the scenario entry, the number of assistant turns picks the step), and sent as
it sends them: whole, or with ``stream: true`` as server-sent events (the message in pieces, the
finish reason that evalscope needs — it fails with "Stream ended without a finish reason" without
one —, a usage chunk when ``stream_options.include_usage`` asks, then ``data: [DONE]``).

Like the tests' server it answers HTTP/1.1 with keep-alive, so a client's connection pool is
reused as against a real endpoint; this one also counts the requests it answers (all, streamed)
for the run checks.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from support import scripted_model
from support.scripted_model import ChatHandler, ScriptedModel


@dataclass
class Counts:
    """Requests served so far (all of them, and those answered as a stream)."""

    requests: int = 0
    streamed: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, streamed: bool) -> None:
        """Count one request."""
        with self.lock:
            self.requests += 1
            self.streamed += streamed


class _CountingHandler(ChatHandler):
    counts: Counts

    def reply(self, request: dict[str, Any], choice: dict[str, Any]) -> None:
        self.counts.add(bool(request.get("stream")))
        super().reply(request, choice)


@contextmanager
def serve(model: ScriptedModel, counts: Counts | None = None) -> Iterator[str]:
    """Serve ``model`` on an ephemeral 127.0.0.1 port; yields the base URL (``.../v1``)."""
    with scripted_model.serve(model, _CountingHandler, counts=counts or Counts()) as url:
        yield url
