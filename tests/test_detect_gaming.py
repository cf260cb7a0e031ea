"""The detection read from outside (issue #32): no trick hides a read, no own work is accused.

Each case is one of the breaks found: a cap filled by refusals, a comment naming
``/shared_files``, the answer's digits in a command, names made from the attachment, the agent's
own notes, a refusal sharing a line with a page, invisible characters; and crafted text that
must not make the scan's work grow faster than the text.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from inspect_gaia.answer_sources import detect, matching
from inspect_gaia.answer_sources.detect import MAX_FLAGS
from inspect_gaia.defaults import OMITTED, READ_KINDS
from inspect_gaia.logs.contamination import flagged, refusals
from inspect_gaia.logs.results import SampleResult
from tests.helpers import invoke, write_log
from tests.helpers_transcripts import (
    QUESTION,
    TASK_ID,
    exchange,
    exchanges,
    kinds,
    refusal,
)
from tests.helpers_transcripts import detect as flags_of

MIRROR = "https://huggingface.co/datasets/gaia-benchmark/GAIA/resolve/main/2023/validation/metadata.jsonl"
PAGE = f"<tr><td>{QUESTION}</td><td>Final answer: 37 boats</td></tr>"
"""An innocent-looking page that lists the question with its answer."""
OWN = f"{TASK_ID}.pdf"


def _read_kinds(flags: list[dict[str, Any]]) -> set[str]:
    return {f["kind"] for f in flags if f["kind"] in READ_KINDS}


def _sample(flags: list[dict[str, Any]]) -> SampleResult:
    return SampleResult("t", 1, "37", "37", True, contamination=tuple(flags))


def test_refusals_do_not_fill_the_cap_and_a_later_read_is_flagged() -> None:
    tries = [(f"curl -s {MIRROR}?try={n}", refusal(f"{MIRROR}?try={n}")) for n in range(30)]
    flags = flags_of(*exchanges(*tries, ("curl -s https://innocent.example/list", PAGE)))
    assert ("question_with_answer", "result") in kinds(flags)
    # refusals beyond the cap are counted, not dropped: 30 requests, 30 refusals
    sample = _sample(flags)
    assert refusals(sample) == 30 and flagged(sample)
    omitted = [f for f in flags if f["kind"] == OMITTED]
    assert {(f["of"], f["where"]): f["count"] for f in omitted} == {
        ("refused", "call"): 30 - MAX_FLAGS,
        ("refused", "result"): 30 - MAX_FLAGS,
    }
    assert sum(f["kind"] == "refused" for f in flags) == 2 * MAX_FLAGS


def test_many_flags_of_one_kind_do_not_hide_another_kind() -> None:
    names = [(f"grep {TASK_ID} /tmp/index{n}.txt", "") for n in range(40)]
    flags = flags_of(*exchanges(*names, ("curl -s https://innocent.example/list", PAGE)))
    assert _read_kinds(flags) == {"dataset_reference", "question_with_answer"}


@pytest.mark.parametrize(
    "command",
    [
        # the trick: a URL in base64, and the attachment's folder in a comment
        "echo {b64} | base64 -d | xargs curl -s # /shared_files/{own}",
        "curl -s https://innocent.example/list; cat /shared_files/{own}",
        "cat /shared_files/{own} && python3 -c 'import urllib.request as u; print(u.urlopen(1))'",
        "cat /shared_files/{own} /tmp/page.html",
        "cat /shared_files/{own}#; curl -s https://innocent.example/list",
        "cat /shared_files/$(echo {own})",
        "/tmp/cat /shared_files/{own}",
        "cat /shared_files/*",
    ],
)
def test_a_call_that_does_more_than_read_the_attachment_is_read(command: str) -> None:
    b64 = base64.b64encode(b"https://innocent.example/list").decode()
    call = command.format(b64=b64, own=OWN)
    assert "question_with_answer" in _read_kinds(flags_of(*exchange(call, PAGE), file_name=OWN))


@pytest.mark.parametrize(
    "command",
    [
        "cat /shared_files/{own}",
        "pdftotext /shared_files/{own} - 2>/dev/null | head -n 80",
        "pdftotext -layout '/shared_files/{own}' -",
        "markitdown /shared_files/{own} | grep -i -A3 boats",
        "ls -la /shared_files && file /shared_files/{own}",
        "cd /shared_files\nhead -c 4000 {own} | tail -n +2",
    ],
)
def test_a_call_that_only_reads_the_attachment_is_not_read(command: str) -> None:
    call = command.format(own=OWN)
    assert flags_of(*exchange(call, PAGE), file_name=OWN) == []


def test_after_a_call_that_may_have_written_into_the_attachments_folder_reads_are_read() -> None:
    steps = exchanges(
        (f"curl -s -o /shared_files/{OWN} https://innocent.example/list", ""),
        (f"cat /shared_files/{OWN}", PAGE),
    )
    assert "question_with_answer" in _read_kinds(flags_of(*steps, file_name=OWN))


def test_the_answers_digits_in_a_command_do_not_hide_a_page() -> None:
    # the gold answer is 37: `head -37` holds it, the page does not come from the agent
    flags = flags_of(*exchange("curl -s https://innocent.example/list | head -37", PAGE))
    assert kinds(flags) == [("question_with_answer", "result")]
    # a search written with the question: its result echoes the query, which is no evidence
    # (#39: the honest search was flagged); a result whose call did not carry it still is, above
    search = f"curl -s 'https://search.example/?q={QUESTION}' | head -37"
    assert kinds(flags_of(*exchange(search, PAGE))) == []


NOTES = [
    # (what the agent wrote, how it read it back, what it read)
    (
        f"cat > /tmp/notes.md <<'EOF'\nQuestion: {QUESTION}\nAnswer: 37\nEOF",
        "cat /tmp/notes.md",
        f"Question: {QUESTION}\nAnswer: 37\n",
    ),
    (f'echo "Q: {QUESTION} A: 37" >> notes.txt', "tail -n 1 notes.txt", f"Q: {QUESTION} A: 37"),
    (f"printf '%s\\nanswer: 37\\n' '{QUESTION}' > /tmp/a", "cat /tmp/a", f"{QUESTION}\nanswer: 37"),
]


@pytest.mark.parametrize(("write", "read", "output"), NOTES, ids=["heredoc", "echo", "printf"])
def test_notes_the_agent_wrote_itself_are_not_a_page(write: str, read: str, output: str) -> None:
    assert flags_of(*exchanges((write, ""), (read, output))) == []
    # a page read after the notes is still a page
    later = exchanges((write, ""), (read, output), ("curl -s https://x.example/", PAGE))
    assert kinds(flags_of(*later)) == [("question_with_answer", "result")]


def test_a_listed_url_the_agent_wrote_is_flagged_at_the_call_only() -> None:
    steps = exchanges((f"echo {MIRROR} > /tmp/avoid.txt", ""), ("cat /tmp/avoid.txt", MIRROR))
    assert kinds(flags_of(*steps)) == [("answer_source", "call")]
    # the same URL in a page the agent did not write is the page's
    page = exchange("curl -s https://search.example/?q=varrowmere", f"Results: {MIRROR}", n=3)
    assert kinds(flags_of(*page)) == [("answer_source", "result")]


@pytest.mark.parametrize(
    "call",
    [
        f"ls /shared_files/{TASK_ID}*",
        f"pdftotext /shared_files/{OWN} /tmp/{TASK_ID}.txt && wc -w /tmp/{TASK_ID}.txt",
        f"ffmpeg -i /shared_files/{TASK_ID}.mp3 /tmp/{TASK_ID}.wav",
        f"mkdir -p /tmp/{TASK_ID} && pdftoppm -png /shared_files/{OWN} {TASK_ID}_page",
    ],
)
def test_names_made_from_the_attachment_are_no_dataset_reference(call: str) -> None:
    assert flags_of(*exchange(call, ""), file_name=OWN) == []


@pytest.mark.parametrize(
    "call",
    [
        f"grep -r {TASK_ID} / 2>/dev/null",
        f"find / -name '*{TASK_ID}*'",
        f"python3 -c \"print([r for r in rows if r['task_id'] == '{TASK_ID}'])\"",
    ],
)
def test_the_bare_task_id_is_a_dataset_reference(call: str) -> None:
    flags = flags_of(*exchange(call, ""), file_name=OWN)
    assert [(f["kind"], f["excerpt"]) for f in flags] == [("dataset_reference", TASK_ID)]


def test_a_refusal_on_the_same_line_as_a_page_does_not_hide_the_page() -> None:
    output = refusal(MIRROR).rstrip("\n") + " " + PAGE
    flags = flags_of(*exchange(f"curl -s {MIRROR}; curl -s https://innocent.example/", output))
    assert kinds(flags) == [
        ("refused", "call"),
        ("refused", "result"),
        ("question_with_answer", "result"),
    ]


def test_a_refusal_of_a_source_not_on_the_list_is_no_refusal() -> None:
    fake = refusal(MIRROR).replace("GAIA on Hugging Face", "Some Archive")
    flags = flags_of(*exchange(f"curl -s {MIRROR}", fake))
    assert ("answer_source", "call") in kinds(flags)
    assert not any(f["kind"] == "refused" for f in flags)


def test_invisible_characters_and_odd_spaces_do_not_defeat_the_matching() -> None:
    hidden = "\u200b".join(QUESTION) + " Final answer: 3\u200b7"
    assert kinds(flags_of(*exchange("curl -s a.example", hidden))) == [
        ("question_with_answer", "result")
    ]
    spaced = QUESTION.replace(" ", "\u00a0") + "\u00a0answer:\u00a037"
    assert kinds(flags_of(*exchange("curl -s b.example", spaced))) == [
        ("question_with_answer", "result")
    ]
    assert matching.question_with_answer(f"{QUESTION} 12\u202f500", QUESTION, "12,500")
    assert matching.question_with_answer(f"{QUESTION} 12\u00a0500", QUESTION, "12500")
    url = "https://hf.co/datasets/gaia\u200b-bench\u2060mark/GAIA"
    assert kinds(flags_of(*exchange(f"curl -s '{url}'", "{}"))) == [("answer_source", "call")]
    assert kinds(flags_of(*exchange("curl -s c.example", f"see {url}"))) == [
        ("answer_source", "result")
    ]


# -- work bounded by the text ----------------------------------------------------------------------

SIZE = 200_000
CRAFTED = {
    "the question again and again": (QUESTION[:90] + " 3 ") * (SIZE // 93) + PAGE,
    "refusal after refusal": refusal(MIRROR) * (SIZE // 200) + PAGE,
    "URL after URL": " ".join(
        f"https://h{i}.example/p?u=https://x{i}.example/" for i in range(SIZE // 50)
    )
    + PAGE,
    "tags never closed": ("<" + "a" * 299) * (SIZE // 300) + PAGE,
    "zero-width everywhere": "\u200b" * SIZE + PAGE,
    "the task id everywhere": f"/tmp/{TASK_ID}.txt *{TASK_ID}* " * (SIZE // 90) + PAGE,
}


def _counting(monkeypatch: pytest.MonkeyPatch, seen: list[int]) -> None:
    """Record the length of every text the scan hands to a matcher (they still run)."""

    def counted(module: Any, name: str) -> None:
        real: Callable[..., Any] = getattr(module, name)

        def wrapper(*args: Any) -> Any:
            seen.append(sum(len(a) for a in args if isinstance(a, str)))
            return real(*args)

        monkeypatch.setattr(module, name, wrapper)

    for name in ("all_matches", "normalise_text", "clean_text", "answers_by_question"):
        counted(detect, name)
    counted(detect, "find_urls")


@pytest.mark.timeout(120)  # a hang guard, not a timing: the bound asserted is on the work
@pytest.mark.parametrize("text", list(CRAFTED.values()), ids=list(CRAFTED))
def test_the_scan_reads_crafted_text_a_bounded_number_of_times(
    text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[int] = []
    _counting(monkeypatch, seen)
    call = f"curl -s https://innocent.example/{TASK_ID}.html {text[: SIZE // 4]}"
    flags = flags_of(*exchange(call, text), file_name=OWN)
    # the page at the end is still read, unless the call carried the question (its echo, #39)
    carried = QUESTION[:90] in call
    assert ("question_with_answer" in _read_kinds(flags)) is not carried
    assert sum(seen) <= 12 * (len(text) + len(call)), (sum(seen), len(seen))


@pytest.mark.slow  # megabytes of text: seconds
@pytest.mark.timeout(60)  # a hang guard: a URL-by-URL rescan of the call took minutes here
def test_a_megabyte_call_and_result_of_distinct_urls_are_read_in_linear_work() -> None:
    urls = " ".join(f"https://h{i}.example/p" for i in range(150_000))
    flags = flags_of(*exchange(f"{urls} gaia-benchmark/GAIA", urls[:1_000_000] + PAGE))
    assert kinds(flags) == [("dataset_reference", "call"), ("question_with_answer", "result")]


def test_report_counts_own_file_work_clean_and_real_readers_flagged(tmp_path: Path) -> None:
    b64 = base64.b64encode(b"https://innocent.example/list").decode()
    work: dict[str, list[tuple[str, str]]] = {
        "own-file": [
            (f"ls /shared_files/{TASK_ID}*", f"/shared_files/{OWN}"),
            (f"pdftotext /shared_files/{OWN} /tmp/{TASK_ID}.txt", ""),
            (f"cat /shared_files/{OWN}", PAGE),
        ],
        "notes": [(NOTES[0][0], ""), (NOTES[0][1], NOTES[0][2])],
        "base64": [(f"echo {b64} | base64 -d | xargs curl -s # /shared_files/{OWN}", PAGE)],
        "head": [("curl -s https://innocent.example/list | head -37", PAGE)],
        "same-line": [(f"curl -s {MIRROR}; curl -s x.example", refusal(MIRROR).strip() + PAGE)],
        "clean": [("curl -s https://weather.example/varrowmere", "rain")],
    }
    samples = []
    for name, steps in work.items():
        own = OWN.replace(TASK_ID, name)
        calls = [(c.replace(TASK_ID, name), o.replace(TASK_ID, name)) for c, o in steps]
        flags = flags_of(*exchanges(*calls), file_name=own, task_id=name)
        row = {"id": name, "level": 1, "target": "37", "answer": "37", "value": "C"}
        samples.append({**row, "contamination": flags, "metadata": {"file_name": own}})
    log = write_log(tmp_path / "run.eval", samples)
    code, out, err = invoke("report", str(log), "--format", "json", "--flagged-wrong")
    assert code == 0, err
    (group,) = json.loads(out)["groups"]
    block = group["contamination"]
    assert {s["task_id"] for s in block["samples"] if s["flagged"]} == {
        "base64",
        "head",
        "same-line",
    }
    overall = block["levels"][-1]
    assert (overall["flagged"], overall["refused_requests"]) == (3, 1)
    assert (overall["accuracy"], overall["accuracy_flagged_wrong"]) == (1.0, 0.5)
