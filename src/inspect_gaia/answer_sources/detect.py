"""Did a sample look its answer up? Evidence from its transcript, for ``Score.metadata``.

Four kinds of flag, each with where it was seen (the tool, the index of the message in the
sample's messages, ``call`` or ``result``) and its evidence (the URL, or a short excerpt):

* ``answer_source``: a tool call or a tool result names a known answer source (a URL under a rule
  of ``answer_sources.yaml`` or the run's ``blocklist``): the dataset, a mirror, a Space that
  hard-codes answers.
* ``question_with_answer``: a tool result holds this sample's question (a long enough prefix of
  it) and its gold answer near each other, once both are normalised: the signature of a page that
  lists GAIA questions with their answers, whatever its URL.
* ``dataset_reference``: a tool call names the dataset without a URL (a repository id, a metadata
  file name) or this sample's task id (outside its own attachment's name).
* ``refused``: the run's egress proxy refused a request to an answer source
  (``-T block_answer_sources=true``): the sample tried, and read nothing there.

Output of a call that reads the sample's own attachment (it names ``/shared_files`` or the file,
and no URL) is never flagged. A flag never changes the score: it is for the reader of the log.
"""

from __future__ import annotations

import html
import re
import unicodedata
from collections.abc import Iterator
from typing import Any

from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageTool, ContentToolUse
from inspect_ai.solver import TaskState

from ..agent import SUBMIT_TOOL
from ..dataset import DEFAULT_INPUT_PROMPT, SHARED_FILES_DIR
from .sources import AnswerSources
from .urlrules import REFUSAL_MARKER, Rule, all_matches, find_urls, normalise

KINDS = ("answer_source", "question_with_answer", "dataset_reference", "refused")
READ_KINDS = frozenset(KINDS) - {"refused"}
"""Kinds that say the sample saw (or asked for, unrefused) an answer source."""
PREFIX_CHARS = 80
"""Normalised characters of the question that must appear in a tool result (all, if shorter)."""
WINDOW = 1000
"""Normalised characters before and after the question within which the answer must appear."""
EXCERPT = 80
"""Characters of context kept each side of the evidence in an excerpt."""
MAX_FLAGS = 25
"""Flags kept per sample (the first ones): the report counts samples, not flags."""

_QUESTION_LEAD = DEFAULT_INPUT_PROMPT.split("{question}")[0].rsplit("}", 1)[-1].strip()
"""The template's words right before the question ("Here is the question:")."""


def question_text(input_text: str) -> str:
    """The GAIA question inside a sample's input (the prompt template around it removed)."""
    _, found, question = input_text.rpartition(_QUESTION_LEAD)
    return (question if found else input_text).strip()


def normalise_text(text: str) -> str:
    """Lower case, words only: HTML tags and entities, JSON escapes and punctuation are spaces.

    Thousands separators inside numbers are dropped, so ``12,500`` and ``12500`` meet.
    """
    text = html.unescape(text)
    text = re.sub(r"<[^<>]{0,300}>", " ", text)
    text = re.sub(r"\\u([0-9a-fA-F]{4})", lambda m: chr(int(m.group(1), 16)), text)
    text = re.sub(r"\\[nrt\"/\\]", " ", text)
    text = re.sub(r"(?<=\d),(?=\d{3}(?!\d))", "", text)
    text = unicodedata.normalize("NFKC", text).casefold()
    return re.sub(r"[\W_]+", " ", text).strip()


def question_with_answer(text: str, question: str, answer: str) -> str | None:
    """An excerpt of ``text`` when it holds the question's prefix with the answer near it.

    The answer must be a whole-word match within ``WINDOW`` normalised characters of the
    question, and outside the question's own words (an answer the question itself contains is no
    evidence).
    """
    wanted, gold = normalise_text(question), normalise_text(answer)
    if not wanted or not gold:
        return None
    prefix = wanted[:PREFIX_CHARS]
    body = normalise_text(text)
    start = body.find(prefix)
    while start >= 0:
        length = len(prefix)
        while (
            length < len(wanted)
            and start + length < len(body)
            and body[start + length] == wanted[length]
        ):
            length += 1
        around = (
            body[max(0, start - WINDOW) : start]
            + " | "
            + body[start + length : start + length + WINDOW]
        )
        if f" {gold} " in f" {around} ":
            return _excerpt(text, answer) or _excerpt(around, gold) or gold
        start = body.find(prefix, start + 1)
    return None


def _excerpt(text: str, needle: str) -> str | None:
    at = text.casefold().find(needle.casefold())
    if at < 0:
        return None
    start, end = max(0, at - EXCERPT), at + len(needle) + EXCERPT
    snippet = re.sub(r"\s+", " ", text[start:end]).strip()
    return ("…" if start else "") + snippet + ("…" if end < len(text) else "")


def contamination(
    state: TaskState, target: str, sources: AnswerSources, graded: bool = True
) -> list[dict[str, Any]]:
    """Every flag of the sample's transcript (the first ``MAX_FLAGS``), in message order.

    Args:
        state: The sample's final state.
        target: Its gold answer (unused when not ``graded``).
        sources: Known answer sources (URL rules and mentions).
        graded: Whether the answer is known (not the test split): only then is a tool result
            searched for the question with its answer.
    """
    scan = _Scan(state, target if graded else "", sources)
    return scan.flags()[:MAX_FLAGS]


class _Scan:
    def __init__(self, state: TaskState, answer: str, sources: AnswerSources) -> None:
        self.messages: list[ChatMessage] = list(state.messages)
        self.sources = sources
        self.answer = answer.strip()
        self.question = question_text(state.input_text)
        self.own_file = str((state.metadata or {}).get("file_name") or "").lower()
        self.task_id = str(state.sample_id).lower()

    def flags(self) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = []
        calls: dict[str, tuple[str, list[dict[str, Any]]]] = {}
        for index, message in enumerate(self.messages):
            if isinstance(message, ChatMessageAssistant):
                for call in message.tool_calls or []:
                    if call.function == SUBMIT_TOOL:
                        continue
                    text = "\n".join(_strings(call.arguments))
                    own = self._call_flags(index, call.function, text)
                    calls[call.id] = (text, own)
                    found += own
                for use in _server_tool_uses(message):
                    own = self._call_flags(index, use.name, use.arguments)
                    result = self._result_flags(index, use.name, use.result, use.arguments)
                    _mark_refused(own, result)
                    found += own + result
            elif isinstance(message, ChatMessageTool) and message.function != SUBMIT_TOOL:
                call_text, own = calls.get(message.tool_call_id or "", ("", []))
                # a tool's error is its result too (the reader's refused page, a browser's error)
                error = message.error.message if message.error else ""
                text = "\n".join(filter(None, [message.text, error]))
                result = self._result_flags(index, message.function or "?", text, call_text)
                _mark_refused(own, result)
                found += result
        return found

    def _call_flags(self, index: int, tool: str, text: str) -> list[dict[str, Any]]:
        where = {"tool": tool, "message": index, "where": "call"}
        flags = [
            {"kind": "answer_source", **where, "url": url, "source": rule.source}
            for url, rule in _unique(all_matches(self.sources.rules, text))
        ]
        rest = text.lower()
        for url in find_urls(text):  # a URL is judged by its rules, not by the words in it
            rest = rest.replace(url.lower(), " ")
        for mention, source in self.sources.mentions:
            if mention in rest:
                flags.append(
                    {"kind": "dataset_reference", **where, "excerpt": mention, "source": source}
                )
        if self.own_file:  # its own attachment is named after the task id
            rest = rest.replace(self.own_file, " ")
        if self.task_id and self.task_id in rest:
            flags.append(
                {
                    "kind": "dataset_reference",
                    **where,
                    "excerpt": self.task_id,
                    "source": "this sample's task id",
                }
            )
        return flags

    def _result_flags(
        self, index: int, tool: str, text: str, call_text: str
    ) -> list[dict[str, Any]]:
        if self._reads_own_attachment(call_text):
            return []
        where = {"tool": tool, "message": index, "where": "result"}
        flags: list[dict[str, Any]] = []
        kept: list[str] = []
        for line in text.splitlines():
            if REFUSAL_MARKER in line:
                url = next(find_urls(line.split(REFUSAL_MARKER, 1)[1]), "")
                flags.append({"kind": "refused", **where, "url": url, "excerpt": line.strip()})
            else:
                kept.append(line)
        rest = "\n".join(kept)
        flags += [
            {"kind": "answer_source", **where, "url": url, "source": rule.source}
            for url, rule in _unique(all_matches(self.sources.rules, rest))
        ]
        known = f" {normalise_text(self.answer)} " in f" {normalise_text(call_text)} "
        if self.answer and not known:  # an answer the call already held was not read here
            excerpt = question_with_answer(rest, self.question, self.answer)
            if excerpt is not None:
                flags.append({"kind": "question_with_answer", **where, "excerpt": excerpt})
        return flags

    def _reads_own_attachment(self, call_text: str) -> bool:
        lowered = call_text.lower()
        names_file = SHARED_FILES_DIR in lowered or bool(self.own_file and self.own_file in lowered)
        return names_file and next(find_urls(call_text), None) is None


def _mark_refused(call_flags: list[dict[str, Any]], result_flags: list[dict[str, Any]]) -> None:
    """A call's request that the proxy refused did not read the source: its flag says so."""
    refused = {_key(f["url"]) for f in result_flags if f["kind"] == "refused"}
    for flag in call_flags:
        if flag["kind"] == "answer_source" and _key(flag["url"]) in refused:
            flag["kind"] = "refused"


def _key(url: str) -> tuple[str, str] | None:
    return normalise(url)


def _unique(matches: list[tuple[str, Rule]]) -> Iterator[tuple[str, Rule]]:
    seen: set[tuple[str, str] | None] = set()
    for url, rule in matches:
        if _key(url) not in seen:
            seen.add(_key(url))
            yield url, rule


def _strings(value: object) -> Iterator[str]:
    """Every string inside a tool call's arguments (nested lists and dicts included)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _strings(item)
    elif value is not None:
        yield str(value)


def _server_tool_uses(message: ChatMessageAssistant) -> list[ContentToolUse]:
    """Tools the model provider ran itself (native web search): call and result in one part."""
    if isinstance(message.content, str):
        return []
    return [part for part in message.content if isinstance(part, ContentToolUse)]
