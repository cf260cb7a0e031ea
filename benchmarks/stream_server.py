"""The scripted model of the benchmarks, served to both harnesses, with streaming replies.

Replies are chosen by ``tests/scripted_model.py``'s ``ScriptedModel`` (stateless: the question in
the first user message picks the scenario entry, the number of assistant turns picks the step).
This server adds what evalscope's GAIA needs on top of the plain chat-completions reply that
inspect's ``openai-api`` provider reads: with ``stream: true`` the reply is server-sent events, one
chunk with the whole message (content or tool calls), one chunk carrying ``finish_reason``
(evalscope fails with "Stream ended without a finish reason" without it), a usage chunk with no
choices when ``stream_options.include_usage`` asks for one, then ``data: [DONE]``.

It answers HTTP/1.1 with keep-alive, so a client's connection pool is reused as against a real
endpoint, and counts requests (all, streamed) for the run checks.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from scripted_model import ScriptedModel

USAGE = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}


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


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    model: ScriptedModel
    counts: Counts

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        request = json.loads(self.rfile.read(length) or b"{}")
        if not self.path.endswith("/chat/completions"):
            self._json(404, {"error": {"message": f"no route {self.path}"}})
            return
        if self.model.latency:
            time.sleep(self.model.latency)
        stream = bool(request.get("stream"))
        self.counts.add(stream)
        choice = self.model.reply(request)
        if "http_error" in choice:
            status = int(choice["http_error"])
            self._json(status, {"error": {"message": "scripted failure", "code": status}})
            return
        base = {
            "id": f"chatcmpl-{time.time_ns()}",
            "created": int(time.time()),
            "model": request.get("model", "scripted"),
        }
        if stream:
            usage = bool((request.get("stream_options") or {}).get("include_usage"))
            self._send(200, "text/event-stream", sse_events(base, choice, usage))
            return
        body = {
            **base,
            "object": "chat.completion",
            "choices": [{"index": 0, "logprobs": None, **choice}],
            "usage": USAGE,
        }
        self._json(200, body)

    def _json(self, status: int, body: dict[str, Any]) -> None:
        self._send(status, "application/json", json.dumps(body).encode())

    def _send(self, status: int, content_type: str, data: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        return


@contextmanager
def serve(model: ScriptedModel, counts: Counts | None = None) -> Iterator[str]:
    """Serve ``model`` on an ephemeral 127.0.0.1 port; yields the base URL (``.../v1``)."""
    attributes = {"model": model, "counts": counts or Counts()}
    handler = type("Handler", (_Handler,), attributes)
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
