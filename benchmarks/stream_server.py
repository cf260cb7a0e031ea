"""The scripted model of the benchmarks, served to both harnesses, with streaming replies.

Replies are chosen by ``support/scripted_model.py``'s ``ScriptedModel`` (stateless: the question in
the first user message picks the scenario entry, the number of assistant turns picks the step).
This server adds what evalscope's GAIA needs on top of the plain chat-completions reply that
inspect's ``openai-api`` provider reads: with ``stream: true`` the reply is server-sent events, one
chunk with the whole message (content or tool calls), one chunk carrying ``finish_reason``
(evalscope fails with "Stream ended without a finish reason" without it), a usage chunk with no
choices when ``stream_options.include_usage`` asks for one, then ``data: [DONE]``.

It answers HTTP/1.1 with keep-alive, so a client's connection pool is reused as against a real
endpoint, and counts the requests it answers (all, streamed) for the run checks.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from support import scripted_model
from support.scripted_model import USAGE, ChatHandler, ScriptedModel


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


def sse_events(base: dict[str, Any], choice: dict[str, Any], usage: bool) -> bytes:
    """A chat completion as server-sent events: message, finish reason, usage, ``[DONE]``."""
    chunk = {**base, "object": "chat.completion.chunk"}
    message = choice["message"]
    delta: dict[str, Any] = {"role": "assistant", "content": message.get("content")}
    if message.get("tool_calls"):
        delta["tool_calls"] = [{"index": i, **call} for i, call in enumerate(message["tool_calls"])]
    events: list[dict[str, Any]] = [
        {**chunk, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
        {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}]},
    ]
    if usage:
        events.append({**chunk, "choices": [], "usage": USAGE})
    return ("".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n").encode()


class _StreamingHandler(ChatHandler):
    protocol_version = "HTTP/1.1"
    counts: Counts

    def reply(self, request: dict[str, Any], choice: dict[str, Any]) -> None:
        stream = bool(request.get("stream"))
        self.counts.add(stream)
        if not stream:
            super().reply(request, choice)
            return
        base = {
            "id": f"chatcmpl-{time.time_ns()}",
            "created": int(time.time()),
            "model": request.get("model", "scripted"),
        }
        usage = bool((request.get("stream_options") or {}).get("include_usage"))
        self.send_body(200, "text/event-stream", sse_events(base, choice, usage))


@contextmanager
def serve(model: ScriptedModel, counts: Counts | None = None) -> Iterator[str]:
    """Serve ``model`` on an ephemeral 127.0.0.1 port; yields the base URL (``.../v1``)."""
    with scripted_model.serve(model, _StreamingHandler, counts=counts or Counts()) as url:
        yield url
