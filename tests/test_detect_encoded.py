"""The echo rule reads a call as its program reads it (issue #49, round 6, item 8).

A search result echoes its query: a call that carried the question is not accused of reading the
question beside its answer in what came back. A search URL carries its query percent- or
plus-encoded (and a page's link HTML-escaped), so the call's words are decoded before the rule
asks; a shell or Python comment is read by no program, so the question in a comment carries
nothing.
"""

from __future__ import annotations

from urllib.parse import quote, quote_plus

import pytest

from tests.helpers_transcripts import ANSWER, QUESTION, exchange, kinds
from tests.helpers_transcripts import detect as flags_of

ECHOED = f"<title>{QUESTION} - Search</title> ... 37 results ... boats: {ANSWER} in March 1911"
"""A search page that echoes its query, the answer near it."""
READ = [("question_with_answer", "result")]


@pytest.mark.parametrize(
    "query",
    [
        quote(QUESTION),  # %20
        quote_plus(QUESTION),  # +
        quote(quote(QUESTION)),  # encoded twice: %2520
        quote_plus(QUESTION).replace("%2C", ",").lower().replace("%3f", "%3F"),
    ],
    ids=["percent", "plus", "twice", "mixed"],
)
def test_an_encoded_search_for_the_question_is_not_its_answer(query: str) -> None:
    """The reliability review's honest search: `curl '…?q=In%20the%20attached…'` was flagged."""
    search = f"curl -s 'http://search.example/search.html?q={query}'"
    assert flags_of(*exchange(search, ECHOED)) == []


def test_an_html_escaped_query_in_a_browser_call_is_the_question() -> None:
    link = "https://search.example/?q=" + QUESTION.replace("'", "&#39;").replace(" ", "&#32;")
    assert flags_of(*exchange(link, ECHOED, tool="browser_navigate")) == []


@pytest.mark.parametrize(
    "call",
    [
        f"curl -s https://mirror.example/list # {QUESTION}",
        f"curl -s https://mirror.example/list\n# {QUESTION}\n",
        f"# {QUESTION}\ncurl -s https://mirror.example/list",
        f"curl -s https://mirror.example/list;# {quote(QUESTION)}",
    ],
    ids=["after", "own-line", "first", "encoded"],
)
def test_the_question_in_a_shell_comment_carries_nothing(call: str) -> None:
    """A comment hid a call's result from the check (the review's L4, E7)."""
    assert kinds(flags_of(*exchange(call, ECHOED))) == READ


def test_the_question_in_a_python_comment_carries_nothing() -> None:
    code = f"import urllib.request  # {QUESTION}\nprint(urllib.request.urlopen(URL).read())"
    assert kinds(flags_of(*exchange(code, ECHOED, tool="python"))) == READ


@pytest.mark.parametrize(
    "call",
    [
        f"curl -s 'https://search.example/?q={QUESTION} #1'",  # '#' inside quotes
        f'curl -s "https://search.example/?q={QUESTION}"  # search for it',
        f"curl -s https://search.example/#q={quote(QUESTION)}",  # '#' inside a word
        f"cat <<'EOF' | curl -s -d @- https://search.example/\n# {QUESTION}\nEOF",  # data
    ],
    ids=["quoted", "comment-after", "fragment", "here-document"],
)
def test_a_hash_that_starts_no_comment_keeps_the_question(call: str) -> None:
    assert flags_of(*exchange(call, ECHOED)) == []
