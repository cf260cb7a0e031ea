"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1, for tests.

Tests drive it through inspect_ai's real ``openai-api`` provider (``openai-api/scripted/<name>``
with ``SCRIPTED_BASE_URL``/``SCRIPTED_API_KEY``), the same HTTP path a vLLM or OpenAI endpoint
takes. It keeps no state: each reply is chosen from the conversation it is sent. The question is
found in the first user message an entry's ``match`` occurs in; that entry gives the steps,
and the number of assistant turns so far picks the step (the last one repeats).

Steps: ``{"bash": CMD}`` calls the bash tool; ``{"call": NAME, "args": {...}}`` calls any tool;
``{"submit": TEXT}`` submits TEXT; ``{"submit_output": True}`` submits the last tool result,
stripped; ``{"submit_found": REGEX}`` submits REGEX's first group in the last tool result (or
``not found``); in a ``call``'s arguments, ``{ref:NAME}`` is the ``[ref=…]`` of the element named
``"NAME"`` in the last tool result (a page snapshot), as a model reads it off the page;
``{"say": TEXT}`` replies with plain text and no tool call; ``{"answer_found": REGEX}`` replies
``FINAL ANSWER: `` and REGEX's first group in the last tool result, and beside ``bash`` or ``call``
it is the text of a turn that also calls the tool (an agent CLI's way to answer and finish);
``{"refuse": True}`` is an empty
``content_filter`` turn; ``{"http_error": STATUS}`` fails the request with that HTTP status.
A step with ``"signal": EVENT`` (a ``threading.Event``) sets it when the step is asked for; one
with ``"wait": EVENT`` is sent once the event is set (at most ``WAIT`` seconds later): a test's way
to order what samples running together do.
Every request body is kept in ``requests``.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Step = dict[str, Any]
WAIT = 300.0
"""Seconds a ``"wait"`` step waits at most for its event."""


@dataclass(frozen=True)
class Entry:
    """A scenario entry: the steps played for a question that contains ``match``."""

    match: str
    steps: Sequence[Step]


@dataclass
class ScriptedModel:
    """The scenario (``entries``) and what was asked of it: the calls, tools offered, requests."""

    entries: list[Entry]
    latency: float = 0.0
    calls: list[str] = field(default_factory=list)
    tools_offered: list[list[str]] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    """Every request body, as sent."""

    def reply(self, request: dict[str, Any]) -> dict[str, Any]:
        """The choice that answers ``request``: its entry's step for the turns so far."""
        self.requests.append(request)
        messages: list[dict[str, Any]] = request["messages"]
        # the question: the first user message an entry matches (an agent CLI may send its own
        # instructions as a user message before it), else the first
        users = [_text(m) for m in messages if m["role"] == "user"]
        entry = next((e for text in users for e in self.entries if e.match in text), None)
        question = next((text for text in users if entry and entry.match in text), users[0])
        self.calls.append(entry.match if entry else "")
        self.tools_offered.append(
            [
                t.get("function", {}).get("name", t.get("type", "?"))
                for t in request.get("tools", [])
            ]
        )
        if entry is None:
            return _message(content=f"unscripted question: {question[-80:]!r}")
        turn = sum(1 for m in messages if m["role"] == "assistant")
        step = entry.steps[min(turn, len(entry.steps) - 1)]
        if "signal" in step:
            step["signal"].set()
        if "wait" in step:
            step["wait"].wait(WAIT)
        said = _found_answer(step["answer_found"], messages) if "answer_found" in step else None
        if "bash" in step:
            tool = ("bash", {_bash_arg(request): step["bash"]})
            return _message(content=said, tool=tool, turn=turn)
        if "refuse" in step:
            return {
                "message": {"role": "assistant", "content": ""},
                "finish_reason": "content_filter",
            }
        if "http_error" in step:
            return {"http_error": int(step["http_error"])}
        if "call" in step:
            args = {k: _refs(v, messages) for k, v in step.get("args", {}).items()}
            return _message(content=said, tool=(step["call"], args), turn=turn)
        if said is not None:
            return _message(content=said)
        if "submit_found" in step:
            found = re.search(step["submit_found"], _last_tool_text(messages))
            answer = found.group(1) if found else "not found"
            return _message(tool=("submit", {"answer": answer}), turn=turn)
        if "submit" in step:
            return _message(tool=("submit", {"answer": step["submit"]}), turn=turn)
        if "submit_output" in step:
            last_tool = next(m for m in reversed(messages) if m["role"] == "tool")
            return _message(tool=("submit", {"answer": _text(last_tool).strip()}), turn=turn)
        return _message(content=str(step["say"]))


def _found_answer(regex: str, messages: list[dict[str, Any]]) -> str:
    found = re.search(regex, _last_tool_text(messages))
    return f"FINAL ANSWER: {found.group(1) if found else 'not found'}"


def _last_tool_text(messages: list[dict[str, Any]]) -> str:
    return next((_text(m) for m in reversed(messages) if m["role"] == "tool"), "")


def _refs(value: Any, messages: list[dict[str, Any]]) -> Any:
    """``value`` with each ``{ref:NAME}`` replaced by that element's ref in the last tool result."""
    if not isinstance(value, str) or "{ref:" not in value:
        return value
    text = _last_tool_text(messages)

    def ref(match: re.Match[str]) -> str:
        found = re.search(rf'"{re.escape(match.group(1))}"[^\n]*?\[ref=(\w+)\]', text)
        return found.group(1) if found else "no-such-ref"

    return re.sub(r"\{ref:([^}]+)\}", ref, value)


def _bash_arg(request: dict[str, Any]) -> str:
    # The bash tool's argument name comes from the schema inspect sends, not from a guess.
    for tool in request.get("tools", []):
        function = tool.get("function", {})
        if function.get("name") == "bash":
            return str(function["parameters"]["required"][0])
    raise ValueError("the request offers no bash tool")


def _text(message: dict[str, Any]) -> str:
    content = message.get("content") or ""
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content if isinstance(part, dict))


def _message(
    content: str | None = None, tool: tuple[str, dict[str, Any]] | None = None, turn: int = 0
) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    finish = "stop"
    if tool is not None:
        name, arguments = tool
        message["tool_calls"] = [
            {
                "id": f"call_{turn}_{name}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)},
            }
        ]
        finish = "tool_calls"
    return {"message": message, "finish_reason": finish}


USAGE = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}


def completion(request: dict[str, Any], choice: dict[str, Any]) -> dict[str, Any]:
    """A non-streamed chat completion carrying ``choice``."""
    return {
        "id": f"chatcmpl-{time.time_ns()}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": request.get("model", "scripted"),
        "choices": [{"index": 0, "logprobs": None, **choice}],
        "usage": USAGE,
    }


class ChatHandler(BaseHTTPRequestHandler):
    """The chat-completions endpoint; a subclass changes how a reply is sent (``reply``)."""

    model: ScriptedModel

    def do_POST(self) -> None:
        """Answer a chat-completions request (after ``latency``), or fail it as scripted."""
        length = int(self.headers.get("Content-Length", "0"))
        request = json.loads(self.rfile.read(length) or b"{}")
        if not self.path.endswith("/chat/completions"):
            self.send_json(404, {"error": {"message": f"no route {self.path}"}})
            return
        if self.model.latency:
            time.sleep(self.model.latency)
        choice = self.model.reply(request)
        if "http_error" in choice:
            status = int(choice["http_error"])
            error = {"message": "scripted failure", "type": "invalid_request_error", "code": status}
            self.send_json(status, {"error": error})
            return
        self.reply(request, choice)

    def reply(self, request: dict[str, Any], choice: dict[str, Any]) -> None:
        """Send ``choice`` as the answer to ``request``."""
        self.send_json(200, completion(request, choice))

    def send_json(self, status: int, body: dict[str, Any]) -> None:
        """Send ``body`` as JSON."""
        self.send_body(status, "application/json", json.dumps(body).encode())

    def send_body(self, status: int, content_type: str, data: bytes) -> None:
        """Send ``data`` whole, with its length."""
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        """Log nothing (the default writes every request to stderr)."""
        return


@contextmanager
def serve(
    model: ScriptedModel, handler: type[ChatHandler] = ChatHandler, **attributes: Any
) -> Iterator[str]:
    """Serve ``model`` on an ephemeral 127.0.0.1 port; yields the base URL (``.../v1``).

    ``handler`` and ``attributes`` (set on a subclass of it) let the benchmarks stream replies.
    """
    server = ThreadingHTTPServer(
        ("127.0.0.1", 0), type("Handler", (handler,), {"model": model, **attributes})
    )
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
