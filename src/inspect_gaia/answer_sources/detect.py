"""Did a sample look its answer up? Evidence from its transcript, for ``Score.metadata``.

Five kinds of flag, each with where it was seen (the tool, the index of the message in the
sample's messages, ``call`` or ``result``) and its evidence (the URL, or a short excerpt):

* ``answer_source``: a tool call or a tool result names a known answer source (a URL under a rule
  of ``answer_sources.yaml`` or the run's ``blocklist``): the dataset, a mirror, a Space that
  hard-codes answers.
* ``question_with_answer``: a tool result holds this sample's question (a long enough prefix of
  it) and its gold answer near each other, once both are normalised: the signature of a page that
  lists GAIA questions with their answers, whatever its URL.
* ``dataset_reference``: a tool call names the dataset without a URL (a repository id, its
  metadata path) or this sample's task id (outside a name made from its own attachment).
* ``refused``: the run's egress proxy refused a request to an answer source
  (``-T block_answer_sources=true``): the sample tried, and read nothing there.
* ``unscanned``: a tool result held images (a screenshot) or other media (``images``, ``other``):
  the text sent with them is read, the pictures are not (no OCR). Not a read; a limit of the scan.

Every tool result is read, with four exceptions that are the sample's own work or a search's
echo, never a page:

* the output of a call that only reads the sample's own attachment, decided per command by
  parsing the call (``ownfile``), not by a word in it: ``cat /shared_files/x.pdf; curl …`` is
  read; so is everything after a call that may have written into ``/shared_files``;
* a URL of a listed source that the agent itself wrote in a call (that call is flagged);
* the question beside its answer in the result of a call that carried the question (a search
  page echoes its query): the call's words read as its program reads them, without a shell or
  Python comment (``comments``) and decoded as a server decodes a URL (``matching.decoded``);
* the question beside its answer when the agent itself wrote them so, in a call (notes it saved
  and reads back, a ``printf``): the words around the answer in the result are words of such a
  call. A command that merely holds the answer's digits (``head -41``) is no such call, nor one
  that holds the question more than once, or candidates (``answer 1 answer 2 …``:
  ``matching.note_contexts``).

Text is cleaned before it is matched: zero-width characters go, non-breaking and thin spaces
between digit groups are thousands separators, other spaces are spaces. Only the proxy's own
refusal sentence is cut out of a result before its URLs are matched (not the rest of its line),
only when it names a source and rule of this run's list and a URL no longer than the proxy
writes; the question beside its answer is looked for in the whole result. Two pages of the
browser's snapshot or the reader's page are read joined too (``parts``), and images in a result
are counted ``unscanned``. Each kind keeps its first ``MAX_FLAGS`` flags; the rest are
counted in one ``omitted`` entry per kind and place, so no cap hides a later kind of read, and
refusals are counted in full. Every step is linear in the text it reads (a model writes it). A
flag never changes the score: it is for the reader of the log.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from typing import Any

from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageTool, ContentToolUse
from inspect_ai.solver import TaskState

from ..defaults import OMITTED, SUBMIT_TOOL
from ..egress.urlrules import MAX_TARGET, REFUSAL, Rule, all_matches, find_urls, normalise
from ..questions.dataset import DEFAULT_INPUT_PROMPT
from .comments import uncommented, words
from .matching import (
    PREFIX_CHARS,
    WINDOW,
    answers_by_question,
    clean_text,
    context,
    decoded,
    excerpt,
    normalise_text,
    note_contexts,
)
from .ownfile import (
    derived_name,
    may_write_attachment,
    pattern_operands,
    reads_only_attachment,
)
from .parts import Pages, continues, result_text, unscanned
from .sources import AnswerSources

MAX_FLAGS = 25
"""Flags kept per kind and place (the first ones); ``omitted`` entries count the rest."""
MAX_ATTACHMENT = 16 << 20
"""Bytes of the attachment the detection compares a read of it with (the rest is not)."""

_QUESTION_LEAD = DEFAULT_INPUT_PROMPT.split("{question}")[0].rsplit("}", 1)[-1].strip()
"""The template's words right before the question ("Here is the question:")."""
_URL_RUN = re.compile(r"[^\s\"'<>`|\\^{}]+")
"""A run of characters a URL may hold (``urlrules``' URL finder never crosses its ends)."""
_REFUSAL = re.compile(
    re.escape(REFUSAL)
    .replace(re.escape("{url}"), rf"(?P<url>\S{{1,{len('https://') + MAX_TARGET}}})")
    .replace(re.escape("{source}"), r"(?P<source>[^\n]{1,200}?)")
    .replace(re.escape("{rule}"), r"(?P<rule>[^\s)]{1,1000})")
)
"""The egress proxy's refusal sentence (``egress/addon.py``), as it writes it: its URL is at most
``MAX_TARGET`` characters after the scheme (a longer target is refused unread), so a longer one is
forged, and its listed URL is read as any other."""


def question_text(input_text: str) -> str:
    """The GAIA question inside a sample's input (the prompt template around it removed)."""
    _, found, question = input_text.rpartition(_QUESTION_LEAD)
    return (question if found else input_text).strip()


def contamination(
    state: TaskState,
    target: str,
    sources: AnswerSources,
    graded: bool = True,
    attachment: bytes | None = None,
) -> list[dict[str, Any]]:
    """Every flag of the sample's transcript in message order, up to ``MAX_FLAGS`` of a kind.

    The first ``MAX_FLAGS`` of each kind in calls, and in results, are kept; ``omitted`` entries at
    the end count the rest.

    Args:
        state: The sample's final state.
        target: Its gold answer (unused when not ``graded``).
        sources: Known answer sources (URL rules and mentions).
        graded: Whether the answer is known (not the test split): only then is a tool result
            searched for the question with its answer.
        attachment: The sample's attachment as the host has it (its bytes), when known: a call
            that reads the attachment is then judged by what its result holds that the file does
            not (``ownfile``'s spelling rule only when it is not known).
    """
    return _capped(_Scan(state, target if graded else "", sources, attachment).flags())


def _capped(flags: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The first ``MAX_FLAGS`` flags of each kind and place, then a count of the rest of each."""
    kept: list[dict[str, Any]] = []
    seen: Counter[tuple[str, str]] = Counter()
    for flag in flags:
        seen[flag["kind"], flag["where"]] += 1
        if seen[flag["kind"], flag["where"]] <= MAX_FLAGS:
            kept.append(flag)
    return kept + [
        {"kind": OMITTED, "of": kind, "where": where, "count": count - MAX_FLAGS}
        for (kind, where), count in seen.items()
        if count > MAX_FLAGS
    ]


class _Scan:
    def __init__(
        self, state: TaskState, answer: str, sources: AnswerSources, attachment: bytes | None
    ) -> None:
        self.messages: list[ChatMessage] = list(state.messages)
        self.sources = sources
        self.answer = answer.strip()
        self.question = question_text(state.input_text)
        self.wanted = normalise_text(self.question)
        self.gold = normalise_text(self.answer)
        self.own_file = str((state.metadata or {}).get("file_name") or "").lower()
        self.task_id = str(state.sample_id).lower()
        self.own_untouched = True
        """No call so far may have written into the attachment's folder."""
        self.written_urls: set[tuple[str, str] | None] = set()
        """Listed URLs the agent wrote in its calls (flagged there, not again in a result)."""
        self.notes: set[str] = set()
        """Contexts of the answer in the agent's notes: its calls that hold the question once with
        the answer beside it (``note_contexts``, ``_answer_read``)."""
        self.pages = Pages()
        """The last page of the browser or the reader, to read with the next (``_across_pages``)."""
        self.own_evidence: set[tuple[str, str]] | None = None
        """What the attachment itself would be flagged for (kind, URL), when its bytes are known."""
        if attachment is not None and self.own_file:
            text = attachment[:MAX_ATTACHMENT].decode("utf-8", errors="replace")
            self.own_evidence = {_evidence(f) for f in self._result_flags(0, "", text)}

    def flags(self) -> list[dict[str, Any]]:
        """Every flag, in message order (a call's before its result's)."""
        found: list[dict[str, Any]] = []
        calls: dict[str, tuple[list[dict[str, Any]], bool, bool, bool]] = {}
        for index, message in enumerate(self.messages):
            if isinstance(message, ChatMessageAssistant):
                for call in message.tool_calls or []:
                    if call.function == SUBMIT_TOOL:
                        continue
                    text = clean_text(words(call.arguments))
                    said = uncommented(call.function, call.arguments)  # "": all comment
                    said = text if said is None else clean_text(said)
                    patterns = pattern_operands(call.function, call.arguments)
                    own = self._call_flags(index, call.function, text, patterns)
                    self._remember_note(said)
                    reads_own = self._reads_own(call.function, call.arguments, text)
                    echo, more = (
                        self._carries_question(said),
                        continues(call.function, call.arguments),
                    )
                    calls[call.id] = (own, reads_own, echo, more)
                    found += own
                for use in _server_tool_uses(message):
                    arguments = clean_text(use.arguments)
                    own = self._call_flags(index, use.name, arguments)
                    self._remember_note(arguments)
                    echo = self._carries_question(arguments)
                    result = self._result_flags(index, use.name, use.result, echo=echo)
                    _mark_refused(own, result)
                    found += own + result
            elif isinstance(message, ChatMessageTool) and message.function != SUBMIT_TOOL:
                own, reads_own, echo, more = calls.get(
                    message.tool_call_id or "", ([], False, False, False)
                )
                if reads_own and self.own_evidence is None and self.own_untouched:
                    continue  # the attachment's content, not a page (judged by the call's words)
                text = result_text(message)
                result = self._result_flags(index, message.function or "?", text, echo=echo)
                if reads_own and self.own_evidence is not None:  # judged by the file's content
                    result = [f for f in result if _evidence(f) not in self.own_evidence]
                _mark_refused(own, result)
                fresh = not echo and not any(f["kind"] == "question_with_answer" for f in result)
                result += self._across_pages(index, message.function or "?", text, fresh, more)
                found += result + (
                    [] if reads_own and self.own_untouched else unscanned(message, index)
                )
        return found

    def _reads_own(self, function: str, arguments: dict[str, Any], text: str) -> bool:
        """Whether a call only reads the attachment; a call that may write there ends that."""
        if may_write_attachment(function, arguments, text):
            self.own_untouched = False
        return reads_only_attachment(function, arguments, self.own_file)

    def _call_flags(
        self, index: int, tool: str, text: str, patterns: list[str] | None = None
    ) -> list[dict[str, Any]]:
        where = {"tool": tool, "message": index, "where": "call"}
        matches = list(_unique(all_matches(self.sources.rules, text)))
        self.written_urls.update(_key(url) for url, _ in matches)
        flags = [
            {"kind": "answer_source", **where, "url": url, "source": rule.source}
            for url, rule in matches
        ]
        rest = _without_urls(text).lower()  # a URL is judged by its rules, not by its words
        for mention, source in self.sources.mentions:
            if mention in rest:
                flags.append(
                    {"kind": "dataset_reference", **where, "excerpt": mention, "source": source}
                )
        searched = any(self.task_id in clean_text(p).lower() for p in patterns or [])
        if self.task_id and (searched or self._names_task_id(rest)):
            flags.append(
                {
                    "kind": "dataset_reference",
                    **where,
                    "excerpt": self.task_id,
                    "source": "this sample's task id",
                }
            )
        return flags

    def _names_task_id(self, text: str) -> bool:
        """The task id, other than in a name made from the attachment (which is named after it)."""
        at = text.find(self.task_id)
        while at >= 0:
            if not (self.own_file and derived_name(text, at, len(self.task_id))):
                return True
            at = text.find(self.task_id, at + 1)
        return False

    def _remember_note(self, text: str) -> None:
        """Keep the words of a call that holds the question: the agent wrote them itself.

        ``text`` is what the call says to its program (``comments.uncommented``): a comment is
        written nowhere, and read back from nowhere.
        """
        if not self.gold:
            return
        self.notes |= note_contexts(normalise_text(text), self.wanted, self.gold)

    def _carries_question(self, text: str) -> bool:
        """Whether a call's words hold the question (its result may then echo it: a search).

        ``text`` is what the call says to its program (no comment: ``comments``), read as it is
        and as a server decodes a URL (``matching.decoded``): a search URL carries its query
        encoded.
        """
        if not self.gold:
            return False
        prefix = self.wanted[:PREFIX_CHARS]
        return prefix in normalise_text(text) or prefix in normalise_text(decoded(text))

    def _result_flags(
        self, index: int, tool: str, text: str, echo: bool = False
    ) -> list[dict[str, Any]]:
        """The flags of a tool's result; ``echo``: its call held the question (see below).

        A result of a call that held the question is not searched for the question beside its
        answer: a search page echoes its query (in its title, its box, its snippets), and the
        honest search the browser is for would be accused. A result whose call did not hold the
        question still is.
        """
        where = {"tool": tool, "message": index, "where": "result"}
        flags: list[dict[str, Any]] = []
        whole = clean_text(text)
        refusals = self._refusals(whole)
        flags += [{"kind": "refused", **where, "url": r["url"], "excerpt": r[0]} for r in refusals]
        rest = _cut(whole, refusals)
        flags += [
            {"kind": "answer_source", **where, "url": url, "source": rule.source}
            for url, rule in _unique(all_matches(self.sources.rules, rest))
            if _key(url) not in self.written_urls
        ]
        if self.answer and not echo:  # the whole result: a refusal hides no page (a forged one)
            excerpt = self._answer_read(whole)
            if excerpt is not None:
                flags.append({"kind": "question_with_answer", **where, "excerpt": excerpt})
        return flags

    def _across_pages(
        self, index: int, tool: str, text: str, fresh: bool, more: bool
    ) -> list[dict[str, Any]]:
        """The question beside its answer across two consecutive pages of one paged tool.

        A question and its answer can land on two pages of the browser's snapshot or the reader's
        page (``parts.Pages``): a page that continues the one before it (``more``) is read again
        joined with it, when neither was flagged or echoed its call's question (``fresh``); the
        flag is the later page's. The work stays linear: each page is read in at most two joins.
        """
        for joined in self.pages.joined(tool, text, bool(self.answer) and fresh, more):
            excerpt = self._answer_read(clean_text(joined))
            if excerpt is not None:
                self.pages.last = None
                where = {"tool": tool, "message": index, "where": "result"}
                return [{"kind": "question_with_answer", **where, "excerpt": excerpt, "pages": 2}]
        return []

    def _refusals(self, text: str) -> list[re.Match[str]]:
        """The proxy's refusal sentences in ``text`` that name a source and rule of this list."""
        known = {(rule.source, rule.pattern) for rule in self.sources.rules}
        return [m for m in _REFUSAL.finditer(text) if (m["source"], m["rule"]) in known]

    def _answer_read(self, text: str) -> str | None:
        """An excerpt where ``text`` holds the question with its answer, unless the agent wrote it.

        It did when the words around the answer (one each side) are words of one of its calls
        that holds the question: notes it saved and reads back, a ``printf`` of both.
        """
        body = normalise_text(text)
        for _, at in answers_by_question(body, self.wanted, self.gold):
            if context(body, at, len(self.gold)) not in self.notes:
                return excerpt(text, self.answer) or excerpt(
                    body[max(0, at - WINDOW) : at + WINDOW], self.gold
                )
        return None


def _evidence(flag: dict[str, Any]) -> tuple[str, str]:
    """What a result's flag stands on: its kind and URL (the question beside the answer: none)."""
    return str(flag["kind"]), str(flag.get("url", ""))


def _cut(text: str, spans: list[re.Match[str]]) -> str:
    """``text`` without ``spans`` (what is around them stays, a space in their place)."""
    parts, at = [], 0
    for span in spans:
        parts.append(text[at : span.start()])
        at = span.end()
    return " ".join([*parts, text[at:]])


def _without_urls(text: str) -> str:
    """``text`` with every run of URL characters that holds a URL blanked out."""
    return " ".join(run for run in _URL_RUN.findall(text) if next(find_urls(run), None) is None)


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


def _server_tool_uses(message: ChatMessageAssistant) -> list[ContentToolUse]:
    """Tools the model provider ran itself (native web search): call and result in one part."""
    if isinstance(message.content, str):
        return []
    return [part for part in message.content if isinstance(part, ContentToolUse)]
