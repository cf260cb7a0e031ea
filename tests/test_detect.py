"""What a sample looked up: known answer sources, its question beside its answer, refusals."""

from __future__ import annotations

import json
from typing import Any

import pytest
from inspect_ai.model import ChatMessageAssistant, ChatMessageTool, ContentText, ContentToolUse
from inspect_ai.tool import ToolCall

from inspect_gaia.answer_sources.detect import contamination, question_text
from inspect_gaia.answer_sources.matching import normalise_text, question_with_answer
from inspect_gaia.answer_sources.sources import AnswerSources, load_answer_sources
from tests.helpers_transcripts import (
    ANSWER,
    QUESTION,
    SOURCES,
    TASK_ID,
    detect,
    exchange,
    exchanges,
    kinds,
    prompt,
    refusal,
    transcript,
)


def test_question_is_taken_out_of_theprompt() -> None:
    assert question_text(prompt()) == QUESTION
    assert question_text("no template here") == "no template here"


def test_a_mirror_url_in_a_call_and_in_its_result_is_flagged_with_its_evidence() -> None:
    url = "https://www.modelscope.cn/api/v1/datasets/AI-ModelScope/GAIA/repo?FilePath=x"
    flags = detect(*exchange(f"curl -s '{url}'", "[]"))
    assert flags == [
        {
            "kind": "answer_source",
            "tool": "bash",
            "message": 0,
            "where": "call",
            "url": url,
            "source": "GAIA on ModelScope",
        }
    ]
    listing = "Results:\n1. GAIA mirror — https://hf.co/datasets/gaia-benchmark/GAIA/tree/main\n"
    flags = detect(*exchange("search 'lighthouse keeper Varrowmere'", listing))
    assert kinds(flags) == [("answer_source", "result")]
    assert flags[0]["message"] == 1 and flags[0]["source"] == "GAIA on Hugging Face"


def test_a_page_listing_the_question_with_its_answer_is_flagged_whatever_its_url() -> None:
    page = (
        "<html><body><table><tr><th>Question</th><th>Final answer</th></tr>"
        f"<tr><td>{QUESTION.replace('boats', '<b>boats</b>', 1)}</td><td>37</td></tr>"
        "</table></body></html>"
    )
    flags = detect(*exchange("curl -s https://innocent.example/notes.html", page))
    assert kinds(flags) == [("question_with_answer", "result")]
    assert flags[0]["message"] == 1 and "37" in flags[0]["excerpt"]
    assert len(flags[0]["excerpt"]) < 300


def test_json_escaped_questions_and_numbers_with_separators_still_meet() -> None:
    record = json.dumps({"Question": QUESTION.replace("dawn", "dawn\n"), "Final answer": "1,204"})
    assert question_with_answer(record, QUESTION, "1204") is not None
    assert normalise_text("Zorblat&#39;s Half-Moon  <i>Tavern</i>") == "zorblat s half moon tavern"


@pytest.mark.parametrize(
    "output",
    [
        # the question alone (a forum asking it): no answer near it
        f"Anyone know this? {QUESTION} Thanks.",
        # the answer far away from the question
        f"{QUESTION}" + " filler" * 400 + " 37",
        # the answer only as part of another number
        f"{QUESTION} Answer: 370",
    ],
    ids=["question-only", "answer-far", "answer-inside-a-number"],
)
def test_no_flag_without_the_answer_next_to_the_question(output: str) -> None:
    assert detect(*exchange("curl -s https://innocent.example/forum", output)) == []


def test_an_answer_the_question_itself_holds_is_no_evidence() -> None:
    question = (
        "Of the invented towns Ashcombe and Brindlewick, which has 37 letters in its charter?"
    )
    page = f"{question} Some discussion follows."
    state = transcript(*exchange("curl -s https://innocent.example/q", page), question=question)
    assert contamination(state, ANSWER, SOURCES) == []


def test_an_answer_the_call_already_held_was_not_read_from_its_output() -> None:
    command = f"printf '%s\\nanswer: 37\\n' '{QUESTION}'"
    assert detect(*exchange(command, f"{QUESTION}\nanswer: 37")) == []


def test_output_of_the_own_attachment_is_never_a_flag() -> None:
    own = f"{TASK_ID}.txt"
    text = f"{QUESTION} The log says 37. See https://huggingface.co/datasets/gaia-benchmark/GAIA"
    for command in (f"cat /shared_files/{own}", f"markitdown /shared_files/{own} | head"):
        assert detect(*exchange(command, text), file_name=own) == []
    view = exchange(f"/shared_files/{own}", text, tool="view_file")
    assert detect(*view, file_name=own) == []
    # the same text fetched from the web is flagged twice over
    fetched = detect(*exchange("curl -s https://innocent.example/x", text), file_name=own)
    assert {f["kind"] for f in fetched} == {"answer_source", "question_with_answer"}


def test_dataset_references_and_the_task_id_in_calls() -> None:
    own = f"{TASK_ID}.csv"
    calls = exchange(
        "python3 -c \"from huggingface_hub import snapshot_download as d; d('gaia-benchmark/GAIA')\"",
        "",
    ) + exchange(f"wc -l /shared_files/{own}; find / -name '*{TASK_ID.upper()}*'", "", n=2)
    flags = detect(*calls, file_name=own)
    assert [(f["kind"], f["excerpt"]) for f in flags] == [
        ("dataset_reference", "gaia-benchmark/gaia"),
        ("dataset_reference", TASK_ID),
    ]
    # the own attachment's name holds the task id: reading it is the point
    assert detect(*exchange(f"cat /shared_files/{own}", ""), file_name=own) == []


def test_submissions_are_not_tool_use() -> None:
    submit = ChatMessageAssistant(
        content="",
        tool_calls=[ToolCall(id="s", function="submit", arguments={"answer": "metadata.jsonl"})],
    )
    assert detect(submit) == []


def test_a_refused_request_is_counted_as_refused_not_read() -> None:
    url = "https://huggingface.co/datasets/gaia-benchmark/GAIA/resolve/main/2023/validation/metadata.jsonl"
    flags = detect(*exchange(f"curl -s {url}", refusal(url)))
    assert kinds(flags) == [("refused", "call"), ("refused", "result")]
    assert flags[1]["url"] == url


def test_a_provider_side_web_search_is_read_like_a_tool() -> None:
    search = ContentToolUse(
        tool_type="web_search",
        id="ws1",
        name="web_search",
        arguments=json.dumps({"query": QUESTION[:60]}),
        result=f"A page: {QUESTION} — answer 37",
    )
    flags = detect(ChatMessageAssistant(content=[ContentText(text="searching"), search]))
    assert kinds(flags) == [("question_with_answer", "result")]
    assert flags[0]["tool"] == "web_search"


def test_the_test_split_has_no_answer_to_look_for() -> None:
    page = f"{QUESTION} 37 https://modelscope.cn/datasets/AI-ModelScope/GAIA"
    state = transcript(*exchange("curl -s https://innocent.example/", page))
    assert kinds(contamination(state, "?", SOURCES, graded=False)) == [("answer_source", "result")]


def test_a_user_blocklist_extends_the_sources(tmp_path: Any) -> None:
    blocklist = tmp_path / "extra.txt"
    blocklist.write_text("# our internal copy\nmirror.example.org/gaia\n")
    sources = load_answer_sources(str(blocklist))
    assert isinstance(sources, AnswerSources)
    state = transcript(*exchange("curl https://mirror.example.org/gaia/val.json", "{}"))
    (flag,) = contamination(state, ANSWER, sources)
    assert flag["source"] == "extra.txt (blocklist)"
    assert contamination(state, ANSWER, SOURCES) == []


def _browse(tool: str, arguments: dict[str, Any], output: str = "", error: str = "", n: int = 1):  # type: ignore[no-untyped-def]
    """A browser or reader call and its result, as the log holds them (an error has no text)."""
    from inspect_ai.tool import ToolCallError

    return [
        ChatMessageAssistant(
            content="", tool_calls=[ToolCall(id=f"w{n}", function=tool, arguments=arguments)]
        ),
        ChatMessageTool(
            content=output,
            function=tool,
            tool_call_id=f"w{n}",
            error=ToolCallError("unknown", error) if error else None,
        ),
    ]


def test_the_browser_and_the_reader_are_read_as_any_tool() -> None:
    """The URL a browser or the reader was given, the snapshot or Markdown it returned, and a
    refusal that came back as the tool's error (the reader's) are all flagged."""
    mirror = "https://huggingface.co/datasets/gaia-benchmark/GAIA/resolve/main/2023/x.jsonl"
    snapshot = (
        "### Page\n- Page URL: https://notes.example/curiosities\nSnapshot:\n"
        f'- table [ref=e3]:\n  - row "Q A" [ref=e4]:\n    - cell "{QUESTION}" [ref=e5]\n'
        f'    - cell "{ANSWER}" [ref=e6]\n'
    )
    refused = refusal(mirror)
    flags = detect(
        *_browse("browser_navigate", {"url": mirror}, "### Page\n- Page URL: " + mirror, n=1),
        *_browse("browser_navigate", {"url": "https://notes.example/curiosities"}, snapshot, n=2),
        *_browse("fetch", {"url": mirror}, error=f"Failed to fetch {mirror} - 403\n{refused}", n=3),
        *_browse(
            "fetch", {"url": "https://notes.example/x"}, f"# Notes\n{QUESTION}\n{ANSWER}", n=4
        ),
    )
    seen = [(f["tool"], f["kind"], f["where"]) for f in flags]
    assert ("browser_navigate", "answer_source", "call") in seen
    assert ("browser_navigate", "question_with_answer", "result") in seen
    assert ("fetch", "refused", "result") in seen
    assert ("fetch", "question_with_answer", "result") in seen


PAGE = f"<h1>Trivia</h1><p>{QUESTION}</p><p>Answer: 37</p>"
"""A page that holds the question with its answer."""
OVERWRITES = [
    "curl -s -o '/shared''_files/{own}' https://innocent.example/page",
    "cd /shared* && curl -s -o {own} https://innocent.example/page",
    "python3 -c \"import urllib.request as u; u.urlretrieve('https://innocent.example/page',"
    " '/shared_'+'files/{own}')\"",
    "curl -s https://innocent.example/page > /tmp/p; ln -sf /tmp/p /shared_file?/{own}",
]


@pytest.mark.parametrize("write", OVERWRITES)
def test_a_page_written_over_the_attachment_and_read_back_is_flagged(write: str) -> None:
    # the folder spelled another way: the call was not seen to write there, and the read skipped
    own = f"{TASK_ID}.txt"
    calls = exchanges((write.format(own=own), ""), (f"cat /shared_files/{own}", PAGE))
    flags = detect(*calls, file_name=own, attachment=b"Dawn counts, March 1911: 12, 9, 37, 40")
    assert kinds(flags) == [("question_with_answer", "result")]
    # the attachment itself holding the question with its answer is still no flag
    original = PAGE.encode()
    assert detect(*calls, file_name=own, attachment=original) == []


def test_the_echo_of_a_search_for_the_question_is_not_its_answer() -> None:
    search = f"curl -s 'https://search.example/?q={QUESTION}'"
    echoed = f"<title>{QUESTION} - Search</title> ... 37 results ... boats in March 1911"
    assert detect(*exchange(search, echoed)) == []
    # the same page fetched by a call that did not carry the question: its answer was read
    assert kinds(detect(*exchange("curl -s https://search.example/r/1", echoed))) == [
        ("question_with_answer", "result")
    ]
