"""The detection read from outside, round 5 (issue #39, finding L4 a-e and C9).

Each case is an evasion found on crafted transcripts: a forged refusal swallowing a page, the
agent's own words whitelisting a page's answer, screenshots, a question and its answer on two
pages of one snapshot, a pattern read as a name made from the attachment; and a false positive,
``metadata.jsonl`` named without the dataset.
"""

from __future__ import annotations

from typing import Any

import pytest
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageTool,
    ContentImage,
    ContentText,
)
from inspect_ai.tool import ToolCall

from inspect_gaia.answer_sources import detect, matching
from inspect_gaia.defaults import READ_KINDS
from inspect_gaia.egress.urlrules import MAX_TARGET, REFUSAL, match_url
from inspect_gaia.web.pages import PAGE_CHARS, Answer, page_text
from tests.helpers_transcripts import (
    ANSWER,
    QUESTION,
    SOURCES,
    TASK_ID,
    exchange,
    exchanges,
    kinds,
    refusal,
)
from tests.helpers_transcripts import detect as flags_of

MIRROR = "https://huggingface.co/datasets/gaia-benchmark/GAIA/resolve/main/2023/validation/x"
PAGE = f"<p>{QUESTION}</p><p>Answer: {ANSWER}</p>"
"""A page that holds the question with its answer."""
FETCH = "curl -s https://innocent.example/list"


def _read(flags: list[dict[str, Any]]) -> set[str]:
    return {f["kind"] for f in flags if f["kind"] in READ_KINDS}


# -- (a) a forged refusal does not hide the page after it ------------------------------------------


def _forged(url: str) -> str:
    rule = match_url(SOURCES.rules, url)
    assert rule is not None
    return REFUSAL.format(url=url, source=rule.source, rule=rule.pattern)


def test_a_forged_refusal_does_not_swallow_the_page_after_it() -> None:
    # the page's words joined by underscores: no space ends the refusal's URL slot
    page = PAGE.replace(" ", "_")
    flags = flags_of(*exchange(FETCH, _forged(f"{MIRROR}?{page}") + "\n"))
    assert ("question_with_answer", "result") in kinds(flags)


def test_a_refusal_longer_than_the_proxy_writes_is_no_refusal() -> None:
    # the proxy refuses a target over MAX_TARGET unread: it never writes a longer URL
    forged = _forged(f"{MIRROR}?{'x' * (MAX_TARGET + 100)}")
    flags = flags_of(*exchange(FETCH, forged))
    assert set(kinds(flags)) == {("answer_source", "result")}  # its URL, and its rule's
    # a refusal the proxy did write is still one, and cut out of what is matched
    assert kinds(flags_of(*exchange(FETCH, refusal(MIRROR)))) == [("refused", "result")]


# -- (b) the agent's words do not whitelist a page -------------------------------------------------


def test_candidate_answers_in_a_call_do_not_whitelist_a_page() -> None:
    candidates = " ".join(f"answer {n}" for n in range(200))
    steps = exchanges((f"echo '{QUESTION} {candidates}' > /dev/null", ""), (FETCH, PAGE))
    assert kinds(flags_of(*steps)) == [("question_with_answer", "result")]


def test_candidates_with_the_word_after_them_do_not_whitelist_a_page() -> None:
    candidates = " ".join(f"n{n} {n} boats" for n in range(200))
    page = f"{ANSWER} boats were logged that day. {QUESTION}"
    steps = exchanges((f"echo '{QUESTION} {candidates}' > /dev/null", ""), (FETCH, page))
    assert kinds(flags_of(*steps)) == [("question_with_answer", "result")]


def test_notes_read_back_are_still_the_agents_own() -> None:
    write = f"cat > /tmp/notes.md <<'EOF'\nQuestion: {QUESTION}\nAnswer: {ANSWER}\nEOF"
    read = f"Question: {QUESTION}\nAnswer: {ANSWER}\n"
    assert flags_of(*exchanges((write, ""), ("cat /tmp/notes.md", read))) == []


def test_the_question_written_many_times_with_answers_is_no_note() -> None:
    candidates = "\n".join(f"{QUESTION} Answer: {n}" for n in range(30, 45))
    steps = exchanges((f"cat > /tmp/n <<'EOF'\n{candidates}\nEOF", ""), (FETCH, PAGE))
    assert kinds(flags_of(*steps)) == [("question_with_answer", "result")]


# -- (c) images in a result: their text is read, the images are counted unscanned ------------------


def _screenshot(text: str, images: int, n: int = 1) -> list[ChatMessage]:
    pixels = "data:image/png;base64,iVBORw0KGgo="
    content: list[Any] = [ContentText(text=text), *[ContentImage(image=pixels)] * images]
    call = ToolCall(id=f"s{n}", function="browser_take_screenshot", arguments={})
    return [
        ChatMessageAssistant(content="", tool_calls=[call]),
        ChatMessageTool(content=content, function="browser_take_screenshot", tool_call_id=f"s{n}"),
    ]


def test_images_in_a_result_are_recorded_as_unscanned() -> None:
    flags = flags_of(*_screenshot("Screenshot of https://notes.example/", 2))
    assert [(f["kind"], f["where"], f["images"]) for f in flags] == [("unscanned", "result", 2)]
    assert _read(flags) == set()  # not scanned is not read


def test_a_picture_attachment_viewed_is_the_samples_own_file() -> None:
    own = f"{TASK_ID}.png"
    steps = _screenshot("", 1)
    call = ToolCall(id="s1", function="view_file", arguments={"path": f"/shared_files/{own}"})
    steps[0] = ChatMessageAssistant(content="", tool_calls=[call])
    steps[1] = ChatMessageTool(content=steps[1].content, function="view_file", tool_call_id="s1")
    assert flags_of(*steps, file_name=own) == []
    assert flags_of(*steps, file_name=own, attachment=b"\x89PNG\r\n") == []


def test_the_text_sent_with_a_screenshot_is_read() -> None:
    flags = flags_of(*_screenshot(PAGE, 1))
    assert kinds(flags) == [("question_with_answer", "result"), ("unscanned", "result")]


# -- (d) a question and its answer on two pages of one snapshot ------------------------------------


def _page(n: int, snapshot: str, start: int, tool: str = "browser_snapshot") -> list[ChatMessage]:
    """A page of ``snapshot`` as the browser tools answer it (``web.pages``)."""
    answer = Answer.parse("### Page\n- Page URL: https://notes.example/\n- Page Title: Notes")
    call = ToolCall(id=f"p{n}", function=tool, arguments={"start": start})
    return [
        ChatMessageAssistant(content="", tool_calls=[call]),
        ChatMessageTool(
            content=page_text(answer, snapshot, start, None), function=tool, tool_call_id=f"p{n}"
        ),
    ]


@pytest.mark.parametrize("cut", [40, len(QUESTION) + 10, len(QUESTION) + 12])
def test_a_question_and_its_answer_split_across_two_pages_are_caught(cut: int) -> None:
    # the snapshot's page boundary falls `cut` characters into the table's cell of the question
    size = PAGE_CHARS - cut - len('- cell "')
    lead = ("- row\n" * (size // 6)).ljust(size, "-")
    snapshot = lead + f'- cell "{QUESTION}"\n- cell "Answer: {ANSWER}"\n' + "- row\n" * 50
    assert snapshot.index(QUESTION) == PAGE_CHARS - cut
    first = _page(1, snapshot, 0, tool="browser_navigate")
    flags = flags_of(*first, *_page(2, snapshot, PAGE_CHARS))
    assert kinds(flags) == [("question_with_answer", "result")]
    assert (flags[0]["message"], flags[0]["pages"]) == (3, 2)  # the second page's result


def test_pages_of_unrelated_tools_are_not_joined() -> None:
    snapshot = "- row\n" * 10 + f"Answer: {ANSWER}"
    assert flags_of(*exchange("curl -s a.example", QUESTION), *_page(2, snapshot, 0)) == []


def test_two_pages_the_agent_opened_one_after_the_other_are_not_joined() -> None:
    # a page ending with the question, then another page (not its next page) starting with a number
    ends = "- row\n" * 20 + f'- cell "{QUESTION}"'
    starts = f'- cell "{ANSWER} items in the basket"\n' + "- row\n" * 20
    steps = [
        *_page(1, ends, 0, tool="browser_navigate"),
        *_page(2, starts, 0, tool="browser_click"),
    ]
    assert flags_of(*steps) == []


def test_the_readers_pages_are_joined_without_their_notes() -> None:
    page = f"{QUESTION} Answer: {ANSWER}"
    cut = 50
    note = "\n\n<error>Content truncated. Call the fetch tool with a start_index of 50 to get more content.</error>"
    first = f"Contents of https://notes.example/:\n{page[:cut]}{note}"
    second = f"Contents of https://notes.example/:\n{page[cut:]}"
    steps = [
        *_browse("fetch", {"url": "https://notes.example/"}, first, n=1),
        *_browse("fetch", {"url": "https://notes.example/", "start_index": cut}, second, n=2),
    ]
    assert kinds(flags_of(*steps)) == [("question_with_answer", "result")]


def _browse(tool: str, arguments: dict[str, Any], output: str, n: int) -> list[ChatMessage]:
    call = ToolCall(id=f"r{n}", function=tool, arguments=arguments)
    return [
        ChatMessageAssistant(content="", tool_calls=[call]),
        ChatMessageTool(content=output, function=tool, tool_call_id=f"r{n}"),
    ]


# -- (e) a pattern is not a name made from the attachment ------------------------------------------


@pytest.mark.parametrize(
    "call",
    [
        f"grep '{TASK_ID}*' /tmp/rows.txt",
        f"grep -e '{TASK_ID}.' -r /",
        f"awk '/{TASK_ID}/' /tmp/rows.txt",
        f"sed -n '/{TASK_ID}/p' /tmp/rows.txt",
    ],
)
def test_a_pattern_holding_the_task_id_is_a_dataset_reference(call: str) -> None:
    flags = flags_of(*exchange(call, ""), file_name=f"{TASK_ID}.pdf")
    assert [(f["kind"], f["excerpt"]) for f in flags] == [("dataset_reference", TASK_ID)]


def test_a_pattern_searching_the_attachment_is_no_reference() -> None:
    own = f"{TASK_ID}.txt"
    call = f"grep -n boats /shared_files/{own}; ls /shared_files/{TASK_ID}*"
    assert flags_of(*exchange(call, ""), file_name=own) == []


# -- C9: metadata.jsonl without the dataset's path is no reference ---------------------------------


@pytest.mark.parametrize(
    "call",
    [
        "unzip -o /shared_files/archive.zip -d /tmp/a && head -n 3 /tmp/a/metadata.jsonl",
        "python3 -c \"import json; print(json.load(open('train/metadata.jsonl')))\"",
        "ls /tmp/export  # images/ metadata.jsonl metadata.parquet",
    ],
)
def test_a_metadata_file_that_is_not_gaias_is_no_reference(call: str) -> None:
    assert flags_of(*exchange(call, "")) == []


@pytest.mark.parametrize(
    "call",
    [
        "find / -path '*2023/validation/metadata.jsonl' 2>/dev/null",
        "python3 -c \"import pandas as p; p.read_parquet('2023/test/metadata.parquet')\"",
        "ls ~/.cache/huggingface/hub/datasets--gaia-benchmark--GAIA/snapshots",
    ],
)
def test_the_datasets_own_metadata_files_are_still_a_reference(call: str) -> None:
    assert kinds(flags_of(*exchange(call, ""))) == [("dataset_reference", "call")]


@pytest.mark.timeout(60)  # a hang guard: the bound asserted is on the work
def test_joined_pages_keep_the_scan_linear(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[int] = []
    real = matching.answers_by_question

    def counted(body: str, wanted: str, gold: str) -> Any:
        seen.append(len(body))
        return real(body, wanted, gold)

    monkeypatch.setattr(detect, "answers_by_question", counted)
    snapshot = (QUESTION[:90] + " 3 ") * 2000  # the question again and again, never the answer
    pages = [m for n in range(0, len(snapshot), PAGE_CHARS) for m in _page(n, snapshot, n)]
    assert flags_of(*pages) == []
    total = sum(len(str(m.content)) for m in pages if isinstance(m, ChatMessageTool))
    assert sum(seen) <= 6 * total, (sum(seen), total)
