"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1 that talks like real models.

Tests drive it through inspect_ai's real ``openai-api`` provider (``openai-api/scripted/<name>``
with ``SCRIPTED_BASE_URL``/``SCRIPTED_API_KEY``), the same HTTP path a vLLM or OpenAI endpoint
takes. Each reply is chosen from the conversation it is sent: the question is found in the first
user message an entry's ``match`` occurs in; that entry gives the steps, and the number of
assistant turns so far picks the step (the last one repeats). The only state is how often a
conversation was tried (``"errors"``, below).

**Real models write prose beside their tool calls, and so does this one, by default**: every
tool call comes with a line of text (``PROSE``: ``Thought: I have the answer and will submit
it.`` beside ``submit``). A test that needs a quiet model says so (``"prose": False``).

What a step does (one of):

* ``{"bash": CMD}`` calls the bash tool; ``{"call": NAME, "args": {...}}`` calls any tool;
  ``{"calls": [STEP, ...]}`` makes several calls in one turn (each a ``bash``, ``call`` or
  ``submit`` step);
* ``{"submit": TEXT}`` submits TEXT; ``{"submit_output": True}`` submits the last tool result,
  stripped; ``{"submit_found": REGEX}`` submits REGEX's first group in the last tool result (or
  ``not found``);
* ``{"say": TEXT}`` replies with TEXT and no tool call (mid-task too: a turn without a call);
  ``{"answer_found": REGEX}`` replies ``FINAL ANSWER: `` and REGEX's first group in the last tool
  result, and beside ``bash`` or ``call`` it is the text of a turn that also calls the tool (an
  agent CLI's way to answer and finish);
* ``{"refuse": True}`` is an empty ``content_filter`` turn (a provider's filter);
  ``{"refuse": TEXT}`` is a model's own refusal (OpenAI's ``refusal`` field, finish ``stop``);
* ``{"http_error": STATUS}`` fails every try of the step with that HTTP status.

In a ``call``'s arguments, ``{ref:NAME}`` is the ``[ref=…]`` of the element named ``"NAME"`` in
the last tool result (a page snapshot), as a model reads it off the page.

How it says it (keys beside the action; per entry in ``Entry.options``, per run in
``ScriptedModel.options``; a step's own win over its entry's, which win over the run's):

* ``"prose": TEXT`` the text beside the step's tool calls, ``False`` none (a quiet model);
* ``"raw": TEXT`` the call's arguments sent as TEXT, verbatim: arguments that are not JSON;
* ``"reasoning": TEXT`` reasoning content (``reasoning_content``, as vLLM and DeepSeek send it);
* ``"errors": [429, 503, "drop", ...]`` the first tries of the step fail in turn, then it is
  played: a status (429 and 5xx with ``Retry-After: "retry_after"`` seconds, default 1), or
  ``"drop"``, the connection closed mid-reply (mid-stream when streamed). A try is counted per
  conversation (the same messages sent again is the same step tried again);
* ``"usage": False`` no ``usage`` in the reply (some servers send none);
* ``"chunk_delay": SECONDS`` between streamed chunks: slow streaming.

A request with ``stream: true`` (inspect's ``openai-api`` provider streams with ``-M stream=true``
or a ``stream_idle_timeout``; the agent bridge never asks it to: it calls ``Model.generate``) is
answered with server-sent events as an OpenAI server sends them: the role, the reasoning and the
text in pieces, each tool call's name and then its arguments in fragments, the finish reason, a
usage chunk when ``stream_options.include_usage`` asks, ``[DONE]``.

A step with ``"signal": EVENT`` (a ``threading.Event``) sets it when the step is asked for; one
with ``"wait": EVENT`` is sent once the event is set (at most ``WAIT`` seconds later): a test's way
to order what samples running together do. Every request body is kept in ``requests``.
"""

from __future__ import annotations

import hashlib
import json
import re
import socket
import threading
import time
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Step = dict[str, Any]
WAIT = 300.0
"""Seconds a ``"wait"`` step waits at most for its event."""
PROSE = {
    "bash": "I'll run a command in the shell to check this.",
    "call": "Let me use the {name} tool for this.",
    "submit": "Thought: I have the answer and will submit it.",
}
"""The text beside a tool call, by the kind of call (the last call of a turn chooses)."""
USAGE = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
DROP = "drop"
"""An ``"errors"`` item: the connection is closed in the middle of the reply."""


@dataclass(frozen=True)
class Entry:
    """A scenario entry: the steps played for a question that contains ``match``."""

    match: str
    steps: Sequence[Step]
    options: Mapping[str, Any] = field(default_factory=dict)
    """Keys applied to each of the entry's steps (``prose``, ``errors``, …)."""


@dataclass
class ScriptedModel:
    """The scenario (``entries``) and what was asked of it: the calls, tools offered, requests."""

    entries: list[Entry]
    latency: float = 0.0
    options: dict[str, Any] = field(default_factory=dict)
    """Keys applied to every step of the run (``{"prose": False}``: a quiet model)."""
    calls: list[str] = field(default_factory=list)
    tools_offered: list[list[str]] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    """Every request body, as sent."""
    tries: Counter[str] = field(default_factory=Counter)
    """How often each conversation was asked (by its SHA-256), for ``"errors"``."""
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def reply(self, request: dict[str, Any]) -> dict[str, Any]:
        """The choice that answers ``request`` (its entry's step for the turns so far).

        With ``"error"`` (a status or ``DROP``) instead when the step fails this try.
        """
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
        step = {**self.options, **entry.options, **entry.steps[min(turn, len(entry.steps) - 1)]}
        failure = self._failure(step, messages)
        if failure is not None:
            return failure
        if "signal" in step:
            step["signal"].set()
        if "wait" in step:
            step["wait"].wait(WAIT)
        choice = _choice(step, request, messages, turn)
        if step.get("reasoning"):
            choice["message"]["reasoning_content"] = str(step["reasoning"])
        choice["usage"] = step.get("usage", True) is not False
        choice["chunk_delay"] = float(step.get("chunk_delay", 0.0))
        return choice

    def _failure(self, step: Step, messages: list[dict[str, Any]]) -> dict[str, Any] | None:
        if "http_error" in step:
            return {"error": int(step["http_error"]), "retry_after": step.get("retry_after", 1)}
        errors = list(step.get("errors", []))
        if not errors:
            return None
        key = hashlib.sha256(json.dumps(messages, sort_keys=True).encode()).hexdigest()
        with self.lock:
            tried = self.tries[key]
            self.tries[key] += 1
        if tried >= len(errors):
            return None
        return {"error": errors[tried], "retry_after": step.get("retry_after", 1)}


def _choice(
    step: Step, request: dict[str, Any], messages: list[dict[str, Any]], turn: int
) -> dict[str, Any]:
    """The message and finish reason ``step`` answers with."""
    if "refuse" in step:
        if step["refuse"] is True:
            return {
                "message": {"role": "assistant", "content": ""},
                "finish_reason": "content_filter",
            }
        message = {"role": "assistant", "content": None, "refusal": str(step["refuse"])}
        return {"message": message, "finish_reason": "stop"}
    said = _found_answer(step["answer_found"], messages) if "answer_found" in step else None
    actions = step["calls"] if "calls" in step else [step]
    calls = [c for c in (_call(a, request, messages) for a in actions) if c is not None]
    if not calls:
        return _message(content=said if said is not None else str(step["say"]))
    if said is None and step.get("prose", True) is not False:
        kind, name = _kind(actions[-1]), calls[-1][0]
        said = str(step["prose"]) if "prose" in step else PROSE[kind].format(name=name)
    return _message(content=said, tools=calls, turn=turn, raw=step.get("raw"))


def _kind(action: Step) -> str:
    return next((k for k in ("bash", "call") if k in action), "submit")


def _call(
    action: Step, request: dict[str, Any], messages: list[dict[str, Any]]
) -> tuple[str, dict[str, Any]] | None:
    """The tool call ``action`` makes (name, arguments), or ``None`` for a step without one."""
    if "bash" in action:
        return "bash", {_bash_arg(request): action["bash"]}
    if "call" in action:
        return action["call"], {k: _refs(v, messages) for k, v in action.get("args", {}).items()}
    if "submit_found" in action:
        found = re.search(action["submit_found"], _last_tool_text(messages))
        return "submit", {"answer": found.group(1) if found else "not found"}
    if "submit" in action:
        return "submit", {"answer": action["submit"]}
    if "submit_output" in action:
        return "submit", {"answer": _last_tool_text(messages).strip()}
    return None


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
    content: str | None = None,
    tools: Sequence[tuple[str, dict[str, Any]]] = (),
    turn: int = 0,
    raw: str | None = None,
) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tools:
        message["tool_calls"] = [
            {
                "id": f"call_{turn}_{index}_{name}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(args) if raw is None else raw},
            }
            for index, (name, args) in enumerate(tools)
        ]
    return {"message": message, "finish_reason": "tool_calls" if tools else "stop"}


def _head(request: dict[str, Any], kind: str) -> dict[str, Any]:
    """What every completion (``kind``) and every chunk of one begins with."""
    model = request.get("model", "scripted")
    return {
        "id": f"chatcmpl-{time.time_ns()}",
        "object": kind,
        "created": int(time.time()),
        "model": model,
    }


def completion(request: dict[str, Any], choice: dict[str, Any]) -> dict[str, Any]:
    """A non-streamed chat completion carrying ``choice`` (with usage unless it says not)."""
    answer = {k: choice[k] for k in ("message", "finish_reason")}
    body = {**_head(request, "chat.completion"), "choices": [{"index": 0, **answer}]}
    return body | ({"usage": USAGE} if choice.get("usage", True) else {})


def chunks(request: dict[str, Any], choice: dict[str, Any]) -> list[dict[str, Any]]:
    """``choice`` as the chunks of a stream: role, reasoning and text in pieces, calls, finish."""
    base = _head(request, "chat.completion.chunk")
    message = choice["message"]

    def delta(**fields: Any) -> dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": fields, "finish_reason": None}]}

    out = [delta(role="assistant", content="")]
    for key in ("reasoning_content", "content", "refusal"):
        out += [delta(**{key: piece}) for piece in _pieces(message.get(key) or "")]
    for index, call in enumerate(message.get("tool_calls") or []):
        head = {"index": index, "id": call["id"], "type": "function"}
        out.append(delta(tool_calls=[{**head, "function": {"name": call["function"]["name"]}}]))
        for piece in _pieces(call["function"]["arguments"], size=12):
            out.append(delta(tool_calls=[{"index": index, "function": {"arguments": piece}}]))
    finish = {"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}
    out.append({**base, "choices": [finish]})
    if choice.get("usage", True) and (request.get("stream_options") or {}).get("include_usage"):
        out.append({**base, "choices": [], "usage": USAGE})
    return out


def _pieces(text: str, size: int = 0) -> list[str]:
    """``text`` cut as a server streams it: at words, or every ``size`` characters."""
    if size:
        return [text[i : i + size] for i in range(0, len(text), size)]
    return re.findall(r"\S*\s*", text)[:-1] if text else []


class ChatHandler(BaseHTTPRequestHandler):
    """The chat-completions endpoint; a subclass changes how a reply is sent (``reply``).

    HTTP/1.1 with keep-alive, as a real endpoint: a client's connections are reused, and a stream
    is chunked, so that a connection closed mid-stream is a broken reply, not its end.
    """

    protocol_version = "HTTP/1.1"
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
        if choice.get("error") == DROP:
            self.drop(request)
        elif "error" in choice:
            self.fail(int(choice["error"]), choice["retry_after"])
        else:
            self.reply(request, choice)

    def reply(self, request: dict[str, Any], choice: dict[str, Any]) -> None:
        """Send ``choice`` as the answer to ``request``: whole, or streamed when it asks."""
        if not request.get("stream"):
            self.send_json(200, completion(request, choice))
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        events = [f"data: {json.dumps(c)}\n\n" for c in chunks(request, choice)]
        for event in [*events, "data: [DONE]\n\n"]:
            self.write_part(event.encode())
            time.sleep(choice.get("chunk_delay", 0.0))
        self.write_part(b"")

    def fail(self, status: int, retry_after: Any) -> None:
        """An API error, as OpenAI sends one (``Retry-After`` with a 429 or a 5xx)."""
        kind = "rate_limit_exceeded" if status == 429 else "scripted_failure"
        body = {"error": {"message": f"scripted failure {status}", "type": kind, "code": status}}
        headers = {"Retry-After": str(retry_after)} if status == 429 or status >= 500 else {}
        self.send_body(status, "application/json", json.dumps(body).encode(), headers)

    def drop(self, request: dict[str, Any]) -> None:
        """Close the connection in the middle of the reply (of its stream when it streams)."""
        self.send_response(200)
        if request.get("stream"):
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            begun = chunks(request, _message(content="I was saying"))[:2]
            self.write_part("".join(f"data: {json.dumps(c)}\n\n" for c in begun).encode())
        else:
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", "4096")
            self.end_headers()
            self.wfile.write(b'{"id": "chatcmpl-dropped", "choices": [')
        self.wfile.flush()
        self.connection.shutdown(socket.SHUT_RDWR)
        self.close_connection = True

    def write_part(self, data: bytes) -> None:
        """Send part of a streamed (chunked) reply now; ``b""`` ends it."""
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def send_json(self, status: int, body: dict[str, Any]) -> None:
        """Send ``body`` as JSON."""
        self.send_body(status, "application/json", json.dumps(body).encode())

    def send_body(
        self, status: int, content_type: str, data: bytes, headers: Mapping[str, str] = {}
    ) -> None:
        """Send ``data`` whole, with its length (and ``headers``)."""
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for name, value in headers.items():
            self.send_header(name, value)
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

    ``handler`` and ``attributes`` (set on a subclass of it) let the benchmarks count replies.
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
