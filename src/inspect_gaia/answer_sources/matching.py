"""Text matching for the detection: cleaning and normalising text, and a question beside its answer.

``detect`` matches a sample's question and gold answer in what its tools returned. Both sides are
normalised first (``normalise_text``), so HTML, JSON escapes, punctuation, case, thousands
separators and zero-width characters are no obstacle. A result then shows the question with its
answer when it holds the question's first ``PREFIX_CHARS`` normalised characters and the answer as
a whole word within ``WINDOW`` characters of it, outside the question's own words
(``answers_by_question``).

Everything here is linear in the text, since a model writes it: each regex is a single character
class or a bounded repeat, and the search skips each question it found whole before looking for
the next, giving each position of the answer once.
"""

from __future__ import annotations

import html
import re
import unicodedata
from collections.abc import Iterator
from urllib.parse import unquote_plus

from ..egress.urlrules import percent_decoded

PREFIX_CHARS = 80
"""Normalised characters of the question that must appear in a tool result (all, if shorter)."""
WINDOW = 1000
"""Normalised characters before and after the question within which the answer must appear."""
EXCERPT = 80
"""Characters of context kept each side of the evidence in an excerpt."""
NOTE_REPEATS = 3
"""Times the word beside the answer may be in a note outside its question (``note_contexts``)."""

_INVISIBLE = dict.fromkeys(map(ord, "\u00ad\u180e\u200b\u200c\u200d\u2060\ufeff"))
"""Zero-width characters and the soft hyphen: deleted, so ``3\u200b7`` is ``37``."""


def clean_text(text: str) -> str:
    """``text`` without zero-width characters (which would split a word or a URL in two)."""
    return text.translate(_INVISIBLE)


def decoded(text: str) -> str:
    """``text`` as a server reads a URL's query: HTML entities, then ``%XX`` and ``+``, decoded.

    A search URL carries its query percent- or plus-encoded (``q=In%20the%20attached``), and a
    link copied off a page HTML-escaped (``&amp;``): decoded, its words are the query's. Decoding
    stops when nothing changes, as the URL rules decode (``urlrules.percent_decoded``).
    """
    return percent_decoded(html.unescape(text), unquote_plus)


def normalise_text(text: str) -> str:
    """Lower case, words only: HTML tags and entities, JSON escapes and punctuation are spaces.

    Thousands separators inside numbers (``,``, a non-breaking or thin space) are dropped, so
    ``12,500``, ``12 500`` (U+00A0) and ``12500`` meet; zero-width characters are dropped.
    """
    text = html.unescape(text)
    text = re.sub(r"\\u([0-9a-fA-F]{4})", lambda m: chr(int(m.group(1), 16)), text)
    text = clean_text(text)
    text = re.sub(r"<[^<>]{0,300}>", " ", text)
    text = re.sub(r"\\[nrt\"/\\]", " ", text)
    text = re.sub(r"(?<=\d)[,\u00a0\u2007\u2009\u202f](?=\d{3}(?!\d))", "", text)
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
    body = normalise_text(text)
    for _, at in answers_by_question(body, wanted, gold):
        return excerpt(text, answer) or excerpt(body[max(0, at - WINDOW) : at + WINDOW], gold)
    return None


def answers_by_question(body: str, wanted: str, gold: str) -> Iterator[tuple[int, int]]:
    """``(question start, answer start)`` of each whole-word answer near the question in ``body``.

    Linear in ``body``: a question found is skipped whole before the next is looked for, and each
    answer position is given once.
    """
    prefix = wanted[:PREFIX_CHARS]
    given = -1
    start = body.find(prefix)
    while start >= 0:
        end = start + _common_length(body, start, wanted)
        for low, high in ((max(start - WINDOW, given + 1), start), (end, end + WINDOW)):
            at = body.find(gold, max(low, given + 1), high)
            while at >= 0:
                given = at
                if _whole_word(body, at, len(gold)):
                    yield start, at
                at = body.find(gold, at + 1, high)
        start = body.find(prefix, end)


def _common_length(body: str, start: int, wanted: str) -> int:
    """How many characters of ``wanted`` ``body`` holds from ``start`` (a binary search)."""
    low, high = 0, min(len(wanted), len(body) - start)
    while low < high:
        middle = (low + high + 1) // 2
        if body[start : start + middle] == wanted[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def _whole_word(body: str, at: int, length: int) -> bool:
    return (at == 0 or body[at - 1] == " ") and (
        at + length == len(body) or body[at + length] == " "
    )


def context(body: str, at: int, length: int) -> str:
    """The answer at ``body[at:at + length]`` with the normalised word before and after it."""
    start = body.rfind(" ", 0, max(at - 1, 0)) + 1 if at > 0 else 0
    end = body.find(" ", at + length + 1)
    return body[start : len(body) if end < 0 else end]


def note_contexts(body: str, wanted: str, gold: str) -> set[str]:
    """The contexts (``context``, and its two-word ends) a note lets through in a result.

    ``body`` is a normalised call of the agent. It is a note when it holds the question once, with
    the answer as a whole word near it; each such answer gives its context, unless a word beside
    it is in the note more than ``NOTE_REPEATS`` times outside the question: a list of candidates
    (``answer 1 answer 2 …``) whitelists nothing.
    """
    prefix = wanted[:PREFIX_CHARS]
    if not gold or body.count(prefix) != 1:
        return set()
    spaced, question = f" {body} ", f" {wanted} "
    size = len(gold.split())
    found: set[str] = set()
    for _, at in answers_by_question(body, wanted, gold):
        words = context(body, at, len(gold)).split()
        first = int(words[:size] != gold.split())  # 1: a word before the answer
        beside = words[:first] + words[first + size :]
        if any(
            spaced.count(f" {word} ") - question.count(f" {word} ") > NOTE_REPEATS
            for word in beside
        ):
            continue
        ends = (words, words[: first + size], words[first:])  # the answer at a result's end
        found.update(" ".join(end) for end in ends if len(end) > size)
    return found


def excerpt(text: str, needle: str) -> str | None:
    """``needle``'s first place in ``text`` with ``EXCERPT`` characters each side, on one line."""
    at = text.casefold().find(needle.casefold())
    if at < 0:
        return None
    start, end = max(0, at - EXCERPT), at + len(needle) + EXCERPT
    snippet = re.sub(r"\s+", " ", text[start:end]).strip()
    return ("…" if start else "") + snippet + ("…" if end < len(text) else "")
